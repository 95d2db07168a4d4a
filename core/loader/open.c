/* core/loader.c - find, validate and initialise provider modules
 *
 * Discovery: every NAME.so in the provider path (first directory wins),
 * plus every providers.d/NAME.ini (whose `module` overrides the search),
 * at context creation; it opens no module.  An enabled provider is loaded
 * the first time it is needed (core_provider_ensure: selected, listed with
 * its state, probed): opened with libltdl on an absolute path, never a
 * bare name, validated in the fixed order of provider.h, and only then
 * initialised.  Loading a module costs its dependencies' relocations (a
 * network provider pulls in dozens of libraries), which a run on another
 * provider should not pay.  Each rejection is its own SBX_E_LOAD_* code
 * with a message naming the file and the field.  A module that reached
 * init is made resident and never closed; one rejected before init is
 * closed again.
 *
 * Ownership: ctx->providers (and every string in it) is owned here and
 * freed by core_loader_unload_all.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core-int.h"

#define DESCRIPTOR_SYMBOL "sandbox_provider_v1"

/* The ABI 1.0 minimum sizes.  Later minors append after these, so these
 * stay the 1.0 figures forever (do not replace them with sizeof). */
#define DESC_MIN_SIZE offsetof(sbx_provider_v1, reserved)
#define OPS_MIN_SIZE (offsetof(sbx_provider_ops_v1, doctor) + \
                      sizeof(((sbx_provider_ops_v1 *)0)->doctor))
#define DESC_HEADER_SIZE offsetof(sbx_provider_v1, name)

/* Names end up in sbx_error.provider (64 bytes with its NUL). */
#define NAME_MAX_LEN 63

/* libltdl keeps global, unlocked state (handle list, lt_dlerror): every
 * lt_* call goes through this lock, whichever context asks. */
static pthread_mutex_t ltdl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t ltdl_once = PTHREAD_ONCE_INIT;
static int ltdl_init_errors;
static char ltdl_init_message[256];

static void ltdl_init(void)
{
    ltdl_init_errors = lt_dlinit();
    if (ltdl_init_errors) {
        const char *e = lt_dlerror();
        snprintf(ltdl_init_message, sizeof ltdl_init_message, "%s",
                 e ? e : "unknown error");
    }
}

/* ---- small helpers ------------------------------------------------------ */

static bool valid_name(const char *s, size_t len)
{
    if (len == 0 || len > NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static char *join_path(const char *dir, const char *file)
{
    char *out;
    size_t dl = strlen(dir);
    const char *sep = (dl > 0 && dir[dl - 1] == '/') ? "" : "/";

    if (asprintf(&out, "%s%s%s", dir, sep, file) < 0)
        return NULL;
    return out;
}

static void provider_free_fields(struct sbx_provider *p)
{
    free(p->name);
    free(p->path);
    free(p->reason);
    free(p->state_dir);
    core_strv_free(p->credential_keys);
    memset(p, 0, sizeof *p);
}

/*
 * Record why @p is unavailable: "PATH: <message>" (or "CONF: ..." when
 * there is no module path).  Returns SBX_OK, or SBX_E_NOMEM when the
 * message could not be allocated (the state is recorded all the same).
 */
static int reject(struct sbx_provider *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int reject(struct sbx_provider *p, int code, const char *fmt, ...)
{
    char *msg = NULL, *full = NULL;
    const char *where = p->path ? p->path : (p->conf ? p->conf->file : p->name);
    va_list ap;
    int n;

    p->state = SBX_PROVIDER_UNAVAILABLE;
    p->reason_code = code;
    free(p->reason);
    p->reason = NULL;
    va_start(ap, fmt);
    n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return SBX_E_NOMEM;
    if (asprintf(&full, "%s: %s", where, msg) < 0) {
        free(msg);
        return SBX_E_NOMEM;
    }
    free(msg);
    p->reason = full;
    return SBX_OK;
}

/* ---- discovery ------------------------------------------------------------ */

struct plist {
    struct sbx_provider *v;
    size_t n, cap;
};

static struct sbx_provider *plist_find(struct plist *l, const char *name,
                                       size_t len)
{
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->v[i].name) == len && !memcmp(l->v[i].name, name, len))
            return &l->v[i];
    return NULL;
}

/* Append a zeroed entry named @name (first @len bytes); NULL on ENOMEM. */
static struct sbx_provider *plist_add(struct plist *l, const char *name,
                                      size_t len)
{
    struct sbx_provider *p;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct sbx_provider *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    p = &l->v[l->n];
    memset(p, 0, sizeof *p);
    p->name = strndup(name, len);
    if (!p->name)
        return NULL;
    p->state = SBX_PROVIDER_DISABLED;
    l->n++;
    return p;
}

static void plist_free(struct plist *l)
{
    for (size_t i = 0; i < l->n; i++)
        provider_free_fields(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/*
 * Add every NAME.so of @dir not already found in an earlier directory.
 * Describes the directory in @searched ("DIR" or "DIR (why skipped)") for
 * the "not found" message.  Returns SBX_OK or SBX_E_NOMEM.
 */
static int scan_dir(struct plist *l, const char *dir, FILE *searched)
{
    DIR *d;
    struct dirent *de;

    if (dir[0] != '/') {
        /* Never resolve modules against the current directory. */
        fprintf(searched, "%s (not absolute, ignored)", dir);
        return SBX_OK;
    }
    d = opendir(dir);
    if (!d) {
        fprintf(searched, "%s (%s)", dir,
                errno == ENOENT ? "missing" : strerror(errno));
        return SBX_OK;
    }
    fprintf(searched, "%s", dir);
    for (;;) {
        struct sbx_provider *p;
        struct stat st;
        char *path;
        size_t len;

        errno = 0;
        de = readdir(d);
        if (!de) {
            if (errno)
                fprintf(searched, " (read error: %s)", strerror(errno));
            break;
        }
        len = strlen(de->d_name);
        if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
            continue;
        if (!valid_name(de->d_name, len - 3) || plist_find(l, de->d_name, len - 3))
            continue;
        path = join_path(dir, de->d_name);
        if (!path)
            goto nomem;
        /* Follow links (packagers use them) but take regular files only. */
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        p = plist_add(l, de->d_name, len - 3);
        if (!p) {
            free(path);
            goto nomem;
        }
        p->path = path;
    }
    closedir(d);
    return SBX_OK;
nomem:
    closedir(d);
    return SBX_E_NOMEM;
}

/* Attach each providers.d conf to its entry (adding it when needed). */

static int apply_confs(struct plist *l, const core_config *cfg,
                       const char *searched)
{
    for (size_t i = 0; i < cfg->n_providers; i++) {
        const core_provider_conf *c = &cfg->providers[i];
        size_t len = strlen(c->name);
        struct sbx_provider *p = plist_find(l, c->name, len);

        if (!p && !c->module && !c->enabled)
            continue; /* neither found nor wanted: nothing to list */
        if (!p) {
            p = plist_add(l, c->name, len);
            if (!p)
                return SBX_E_NOMEM;
        }
        p->conf = c;
        p->priority = c->priority;
        p->state = c->enabled ? SBX_PROVIDER_UNAVAILABLE : SBX_PROVIDER_DISABLED;
        if (c->module) {
            free(p->path);
            p->path = NULL;
            if (c->module[0] != '/') {
                if (c->enabled &&
                    reject(p, SBX_E_CONFIG,
                           "module '%s' is not an absolute path (the current "
                           "directory is never searched)", c->module))
                    return SBX_E_NOMEM;
                continue;
            }
            p->path = strdup(c->module);
            if (!p->path)
                return SBX_E_NOMEM;
        } else if (!p->path && c->enabled) {
            if (reject(p, SBX_E_LOAD_OPEN, "enabled, but no %s.so in %s",
                       c->name, searched))
                return SBX_E_NOMEM;
        }
    }
    return SBX_OK;
}

/* ---- validation ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Is @key in the NULL-terminated @keys (may be NULL)? */
static bool key_listed(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

/* A sealed value for a key that is not a credential. */
static int reject_sealed(struct sbx_provider *p, const core_setting *s)
{
    char *creds = NULL;
    size_t clen = 0;
    FILE *f = open_memstream(&creds, &clen);
    int rc;

    if (!f)
        return SBX_E_NOMEM;
    for (size_t k = 0; p->desc.secret_keys && p->desc.secret_keys[k]; k++)
        fprintf(f, "%s%s", k ? ", " : "", p->desc.secret_keys[k]);
    if (!p->desc.secret_keys || !p->desc.secret_keys[0])
        fputs("none", f);
    if (fclose(f) != 0) {
        free(creds);
        return SBX_E_NOMEM;
    }
    p->state = SBX_PROVIDER_UNAVAILABLE;
    p->reason_code = SBX_E_CONFIG;
    free(p->reason);
    rc = asprintf(&p->reason, "%s:%d: '%s' of provider '%s' holds a sealed value but is "
                  "not a credential, and only credentials are opened (credentials: %s)",
                  s->file, s->line, s->key, p->name, creds);
    free(creds);
    if (rc < 0) {
        p->reason = NULL;
        return SBX_E_NOMEM;
    }
    return SBX_OK;
}

/* Step 10: each [settings] key must be one the provider declares. */
static int check_settings(struct sbx_provider *p)
{
    const core_provider_conf *c = p->conf;
    const char *const *keys = p->desc.config_keys;

    for (size_t i = 0; c && i < c->n_settings; i++) {
        const core_setting *s = &c->settings[i];
        char *accepted = NULL;
        size_t alen = 0;
        FILE *f;
        bool any = false;
        int rc;

        /* the core's own (config-providers.c), whoever declares it */
        if (key_listed(p->desc.secret_keys, s->key) || !strcmp(s->key, "unenforced_limits"))
            continue;
        if (key_listed(keys, s->key)) {
            /* Only credentials are opened: a sealed value anywhere else
             * would reach the provider as the sealed text. */
            if (strncmp(s->value, "sealed:", 7) == 0)
                return reject_sealed(p, s);
            continue;
        }
        f = open_memstream(&accepted, &alen);
        if (!f)
            return SBX_E_NOMEM;
        for (size_t k = 0; keys && keys[k]; k++, any = true)
            fprintf(f, "%s%s", any ? ", " : "", keys[k]);
        for (size_t k = 0; p->desc.secret_keys && p->desc.secret_keys[k]; k++) {
            if (key_listed(keys, p->desc.secret_keys[k]))
                continue;
            fprintf(f, "%s%s", any ? ", " : "", p->desc.secret_keys[k]);
            any = true;
        }
        if (!any)
            fputs("none", f);
        if (fclose(f) != 0) {
            free(accepted);
            return SBX_E_NOMEM;
        }
        /* The message starts with FILE:LINE of the setting, not the .so. */
        p->state = SBX_PROVIDER_UNAVAILABLE;
        p->reason_code = SBX_E_CONFIG;
        free(p->reason);
        p->reason = NULL;
        if (s->line > 0)
            rc = asprintf(&p->reason,
                          "%s:%d: unknown key '%s' for provider '%s' (accepted: %s)",
                          s->file, s->line, s->key, p->name, accepted);
        else
            rc = asprintf(&p->reason,
                          "%s: unknown key '%s' for provider '%s' (accepted: %s)",
                          s->file, s->key, p->name, accepted);
        free(accepted);
        if (rc < 0) {
            p->reason = NULL;
            return SBX_E_NOMEM;
        }
        return SBX_OK;
    }
    return SBX_OK;
}

/* Steps 8 and 9: mandatory ops, then capabilities against ops. */
static int check_ops(struct sbx_provider *p)
{
    static const struct {
        size_t off;
        const char *name;
    } mandatory[] = {
        {offsetof(sbx_provider_ops_v1, init), "init"},
        {offsetof(sbx_provider_ops_v1, fini), "fini"},
        {offsetof(sbx_provider_ops_v1, create), "create"},
        {offsetof(sbx_provider_ops_v1, exec), "exec"},
        {offsetof(sbx_provider_ops_v1, destroy), "destroy"},
    };
    const sbx_provider_ops_v1 *o = &p->ops;
    uint64_t caps = p->desc.capabilities;
    const struct {
        uint64_t bit;
        const char *cap;
        bool first, second;
        const char *op1, *op2;
    } pairs[] = {
        {SBX_CAP_FILES, "files", o->upload != NULL, o->download != NULL,
         "upload", "download"},
        {SBX_CAP_PERSISTENT, "persistent", o->attach != NULL, o->release != NULL,
         "attach", "release"},
        {SBX_CAP_LIST, "list", o->list != NULL, true, "list", NULL},
        {SBX_CAP_ZYGOTE, "zygote", o->exec_zygote != NULL, true, "exec_zygote", NULL},
    };

    for (size_t i = 0; i < sizeof mandatory / sizeof mandatory[0]; i++) {
        void (*fn)(void);
        memcpy(&fn, (const char *)o + mandatory[i].off, sizeof fn);
        if (!fn)
            return reject(p, SBX_E_LOAD_MISSING_OP,
                          "mandatory op '%s' is NULL", mandatory[i].name);
    }
    /* The cancel capability has no op: the exec spec's cancel_fd, which a
     * provider built before ABI 1.3 does not know. */
    if ((caps & SBX_CAP_CANCEL) && p->desc.abi_minor < 3)
        return reject(p, SBX_E_LOAD_CAPS,
                      "capabilities claim 'cancel' but the provider was built against ABI "
                      "1.%u, whose exec spec has no cancel_fd (1.3 has)",
                      (unsigned)p->desc.abi_minor);
    if ((caps & SBX_CAP_STDIN_STREAM) && p->desc.abi_minor < 4)
        return reject(p, SBX_E_LOAD_CAPS,
                      "capabilities claim 'stdin_stream' but the provider was built against "
                      "ABI 1.%u, whose exec spec has no stdin_fd (1.4 has)",
                      (unsigned)p->desc.abi_minor);
    if ((caps & SBX_CAP_SIGNAL) && p->desc.abi_minor < 8)
        return reject(p, SBX_E_LOAD_CAPS,
                      "capabilities claim 'signal' but the provider was built against "
                      "ABI 1.%u, whose exec spec has no signal_fd (1.8 has)",
                      (unsigned)p->desc.abi_minor);
    if ((caps & SBX_CAP_EGRESS) && p->desc.abi_minor < 11)
        return reject(p, SBX_E_LOAD_CAPS,
                      "capabilities claim 'egress' but the provider was built against "
                      "ABI 1.%u, whose create spec has no egress (1.11 has)",
                      (unsigned)p->desc.abi_minor);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        bool claimed = (caps & pairs[i].bit) != 0;
        if (claimed && !pairs[i].first)
            return reject(p, SBX_E_LOAD_CAPS,
                          "capabilities claim '%s' but op '%s' is NULL",
                          pairs[i].cap, pairs[i].op1);
        if (claimed && !pairs[i].second)
            return reject(p, SBX_E_LOAD_CAPS,
                          "capabilities claim '%s' but op '%s' is NULL",
                          pairs[i].cap, pairs[i].op2);
        if (!claimed && pairs[i].first)
            return reject(p, SBX_E_LOAD_CAPS,
                          "op '%s' is set but capabilities lack '%s'",
                          pairs[i].op1, pairs[i].cap);
        if (!claimed && pairs[i].op2 && pairs[i].second)
            return reject(p, SBX_E_LOAD_CAPS,
                          "op '%s' is set but capabilities lack '%s'",
                          pairs[i].op2, pairs[i].cap);
    }
    return SBX_OK;
}

/* Steps 6 and 7: strings, name characters, name against the file name. */
static int check_strings(struct sbx_provider *p)
{
    const struct {
        const char *field, *value;
    } strs[] = {
        {"name", p->desc.name},
        {"version", p->desc.version},
        {"description", p->desc.description},
        {"license", p->desc.license},
    };
    const char *base = base_name(p->path);
    size_t blen = strlen(base), nlen;

    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        if (!strs[i].value)
            return reject(p, SBX_E_LOAD_STRING, "%s is NULL", strs[i].field);
        if (!strs[i].value[0])
            return reject(p, SBX_E_LOAD_STRING, "%s is empty", strs[i].field);
    }
    nlen = strnlen(p->desc.name, NAME_MAX_LEN + 1);
    if (nlen > NAME_MAX_LEN)
        return reject(p, SBX_E_LOAD_BAD_NAME,
                      "name is longer than %d characters", NAME_MAX_LEN);
    if (!valid_name(p->desc.name, nlen))
        return reject(p, SBX_E_LOAD_BAD_NAME,
                      "name '%s' has characters outside [a-z0-9_]", p->desc.name);
    if (blen > 3 && !strcmp(base + blen - 3, ".so"))
        blen -= 3;
    if (nlen != blen || memcmp(p->desc.name, base, blen) != 0)
        return reject(p, SBX_E_LOAD_NAME_MISMATCH,
                      "name is '%s' but the file is '%s' (they must match)",
                      p->desc.name, base);
    if (strcmp(p->desc.name, p->name) != 0)
        return reject(p, SBX_E_LOAD_NAME_MISMATCH,
                      "name is '%s' but it is configured as '%s' (%s)",
                      p->desc.name, p->name, p->conf ? p->conf->file : "?");
    return SBX_OK;
}

/*
 * Steps 3 to 5 on the exported descriptor @sym: header, then the copies
 * into p->desc / p->ops.  Only reads min(struct_size, ours) bytes.
 */
static int check_header_and_copy(struct sbx_provider *p, const void *sym)
{
    sbx_provider_v1 hdr;
    size_t n;

    memset(&hdr, 0, sizeof hdr);
    memcpy(&hdr, sym, DESC_HEADER_SIZE);
    if (hdr.magic != SBX_PROVIDER_MAGIC)
        return reject(p, SBX_E_LOAD_BAD_MAGIC,
                      "magic is 0x%08x, expected 0x%08x (not a PolySandbox provider)",
                      (unsigned)hdr.magic, (unsigned)SBX_PROVIDER_MAGIC);
    if (hdr.abi_major != SBX_ABI_MAJOR)
        return reject(p, SBX_E_LOAD_ABI_MAJOR,
                      "abi_major is %u, this core speaks ABI %d (rebuild the "
                      "provider against this core's SDK)",
                      (unsigned)hdr.abi_major, SBX_ABI_MAJOR);
    if (hdr.abi_minor > SBX_ABI_MINOR)
        return reject(p, SBX_E_LOAD_ABI_MINOR,
                      "abi_minor is %u, newer than this core's ABI %d.%d "
                      "(upgrade polysandbox)",
                      (unsigned)hdr.abi_minor, SBX_ABI_MAJOR, SBX_ABI_MINOR);
    if (hdr.struct_size < DESC_MIN_SIZE)
        return reject(p, SBX_E_LOAD_SIZE,
                      "struct_size is %u, ABI %d.0 needs at least %zu",
                      (unsigned)hdr.struct_size, SBX_ABI_MAJOR, DESC_MIN_SIZE);
    if (hdr.ops_size < OPS_MIN_SIZE)
        return reject(p, SBX_E_LOAD_SIZE,
                      "ops_size is %u, ABI %d.0 needs at least %zu",
                      (unsigned)hdr.ops_size, SBX_ABI_MAJOR, OPS_MIN_SIZE);

    /* Missing tail slots of an older minor stay zero (= NULL). */
    memset(&p->desc, 0, sizeof p->desc);
    memset(&p->ops, 0, sizeof p->ops);
    n = hdr.struct_size < sizeof p->desc ? hdr.struct_size : sizeof p->desc;
    memcpy(&p->desc, sym, n);
    if (!p->desc.ops)
        return reject(p, SBX_E_LOAD_MISSING_OP, "ops is NULL");
    n = hdr.ops_size < sizeof p->ops ? hdr.ops_size : sizeof p->ops;
    memcpy(&p->ops, p->desc.ops, n);
    for (size_t i = 0; i < sizeof p->desc.reserved / sizeof p->desc.reserved[0]; i++)
        if (p->desc.reserved[i] != 0)
            return reject(p, SBX_E_LOAD_RESERVED,
                          "reserved[%zu] is 0x%llx, must be 0", i,
                          (unsigned long long)p->desc.reserved[i]);
    return SBX_OK;
}

/*
 * Why lt_dlopenadvise failed, into @err.  libltdl reports every failure as
 * "file not found", losing the dynamic linker's reason ("undefined symbol:
 * x", "invalid ELF header"), so ask the file system, then dlopen itself.
 * Called with ltdl_lock held.
 */
static void diagnose_open_failure(const char *path, char *err, size_t len)
{
    const char *lterr = lt_dlerror();
    struct stat st;
    void *h;

    if (stat(path, &st) != 0) {
        snprintf(err, len, "%s", strerror(errno));
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, len, "not a regular file");
        return;
    }
    /* The same open libltdl just failed: expected to fail the same way. */
    h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, len, "%s", e ? e : "unknown dynamic linker error");
        return;
    }
    dlclose(h);
    snprintf(err, len, "libltdl: %s", lterr ? lterr : "unknown error");
}

/* Its constructors run with our privileges (root's, often): the module
 * and every directory above it must be root's or ours, writable by no
 * one else.  False: rejected (SBX_E_LOAD_UNSAFE, or out of memory). */
static bool module_trusted(struct sbx_provider *p)
{
    struct stat st, lst;
    struct sbx_error *e = core_error_tls();
    int rc;

    if (stat(p->path, &st) != 0 || lstat(p->path, &lst) != 0) {
        reject(p, SBX_E_LOAD_OPEN, "cannot open: %s", strerror(errno));
        return false;
    }
    /* The link's directory (packagers link modules) and the file's. */
    rc = core_owner_check(&st, p->path, "provider module", SBX_E_LOAD_UNSAFE);
    if (rc == SBX_OK)
        rc = core_owner_check_parents(p->path, "provider module", SBX_E_LOAD_UNSAFE);
    if (rc == SBX_OK && S_ISLNK(lst.st_mode)) {
        char *real = core_canonical(p->path);
        rc = real ? core_owner_check_parents(real, "provider module", SBX_E_LOAD_UNSAFE)
                  : core_error_set(SBX_E_LOAD_OPEN, NULL, "cannot resolve %s: %s", p->path,
                                   strerror(errno));
        free(real);
    }
    if (rc == SBX_OK)
        return true;
    reject(p, rc, "%s", e->message);
    core_error_clear();
    return false;
}

/* Open @p->path with the given scope; on failure records the reason. */
static int open_module(struct sbx_provider *p, bool global, lt_dlhandle *out)
{
    lt_dladvise advise;
    lt_dlhandle h = NULL;
    char err[512] = "";

    *out = NULL;
    if (!module_trusted(p))
        return SBX_OK; /* rejected, the reason recorded */
    pthread_once(&ltdl_once, ltdl_init);
    if (ltdl_init_errors)
        return reject(p, SBX_E_LOAD_OPEN, "libltdl failed to initialise: %s",
                      ltdl_init_message);
    pthread_mutex_lock(&ltdl_lock);
    if (lt_dladvise_init(&advise) == 0) {
        /* Exact path only: no extension guessing, no search path. */
        if ((global ? lt_dladvise_global(&advise) : lt_dladvise_local(&advise)) == 0)
            h = lt_dlopenadvise(p->path, advise);
        lt_dladvise_destroy(&advise);
    }
    if (!h)
        diagnose_open_failure(p->path, err, sizeof err);
    pthread_mutex_unlock(&ltdl_lock);
    if (!h)
        return reject(p, SBX_E_LOAD_OPEN, "cannot open: %s", err);
    *out = h;
    return SBX_OK;
}

static void close_module(lt_dlhandle h)
{
    pthread_mutex_lock(&ltdl_lock);
    /* Fails harmlessly (keeps it mapped) when another context made it
     * resident. */
    (void)lt_dlclose(h);
    pthread_mutex_unlock(&ltdl_lock);
}

/*
 * Steps 1 to 10 for one enabled provider.  On success p->lib holds the
 * open handle and p->state is still UNAVAILABLE with reason_code 0 (init
 * comes later).  On rejection the module is closed, the copies are zeroed
 * (they may point into unmapped code) and the reason recorded.
 */
static int load_module(struct sbx_provider *p)
{
    bool global = false;
    lt_dlhandle h;
    const void *sym;
    int rc;

again:
    rc = open_module(p, global, &h);
    if (rc != SBX_OK || p->reason_code)
        return rc;
    pthread_mutex_lock(&ltdl_lock);
    sym = lt_dlsym(h, DESCRIPTOR_SYMBOL);
    pthread_mutex_unlock(&ltdl_lock);
    if (!sym)
        rc = reject(p, SBX_E_LOAD_NO_SYMBOL,
                    "no symbol '" DESCRIPTOR_SYMBOL "' (not a PolySandbox provider)");
    else if ((rc = check_header_and_copy(p, sym)) == SBX_OK && !p->reason_code &&
             (rc = check_strings(p)) == SBX_OK && !p->reason_code &&
             (rc = check_ops(p)) == SBX_OK && !p->reason_code)
        rc = check_settings(p);
    if (rc != SBX_OK || p->reason_code) {
        close_module(h);
        memset(&p->desc, 0, sizeof p->desc);
        memset(&p->ops, 0, sizeof p->ops);
        return rc;
    }
    if ((p->desc.flags & SBX_PROVIDER_F_GLOBAL_SYMBOLS) && !global) {
        /* The scope is fixed at open time and the flag is only readable
         * after it: reopen with global scope and validate again (the file
         * may have changed in between). */
        close_module(h);
        global = true;
        goto again;
    }
    p->lib = h;
    return SBX_OK;
}

/* Step 11: init, with the handle and state directory set before. */
static int init_provider(struct sbx_ctx *ctx, struct sbx_provider *p)
{
    const char *base = ctx->cfg.state_dir ? ctx->cfg.state_dir : STATEDIR;
    struct sbx_error *e;
    void *pctx = NULL;
    int rc;

    /* Ours and private before any provider keeps sandboxes below it (in
     * /tmp another user could have made it first). */
    if (core_private_dir(base, "state directory") != SBX_OK) {
        e = core_error_tls();
        rc = reject(p, SBX_E_LOAD_INIT, "%s", e->message);
        core_error_clear();
        return rc;
    }
    /* p->handle was set at discovery: other threads may read it now. */
    free(p->state_dir);
    p->state_dir = join_path(base, p->name);
    if (!p->state_dir)
        return SBX_E_NOMEM;
    /* From here plugin code runs: it must never be unmapped again. */
    pthread_mutex_lock(&ltdl_lock);
    (void)lt_dlmakeresident((lt_dlhandle)p->lib);
    pthread_mutex_unlock(&ltdl_lock);

    core_error_clear();
    rc = p->ops.init(core_host_table(), &p->handle, &pctx);
    if (rc == 0) {
        p->pctx = pctx;
        p->state = SBX_PROVIDER_READY;
        p->reason_code = 0;
        return SBX_OK;
    }
    e = core_error_tls();
    if (e->code != SBX_OK && e->message[0])
        rc = reject(p, SBX_E_LOAD_INIT, "init failed: %s", e->message);
    else
        rc = reject(p, SBX_E_LOAD_INIT,
                    "init returned %d without setting an error", rc);
    core_error_clear();
    return rc;
}

/* ---- ordering ------------------------------------------------------------- */

/* Index of @name in [core] order, or -1. */
static long order_rank(const core_config *cfg, const char *name)
{
    for (long i = 0; cfg->provider_order && cfg->provider_order[i]; i++)
        if (!strcmp(cfg->provider_order[i], name))
            return i;
    return -1;
}

/* [core] order first (in its order), then priority desc, then name. */
static int provider_cmp(const core_config *cfg, const struct sbx_provider *a,
                        const struct sbx_provider *b)
{
    long ra = order_rank(cfg, a->name), rb = order_rank(cfg, b->name);

    if (ra != rb) {
        if (ra < 0)
            return 1;
        if (rb < 0)
            return -1;
        return ra < rb ? -1 : 1;
    }
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Insertion sort: a handful of providers, and no qsort_r needed. */
static void sort_providers(const core_config *cfg, struct sbx_provider *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct sbx_provider tmp = v[i];
        size_t j = i;
        while (j > 0 && provider_cmp(cfg, &v[j - 1], &tmp) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = tmp;
    }
}

static bool drop_it(const struct sbx_provider *p)
{
    return p->state == SBX_PROVIDER_UNAVAILABLE && p->reason_code != 0 &&
           p->conf && p->conf->optional;
}

/* ---- entry points ------------------------------------------------------------ */

int core_loader_discover(struct sbx_ctx *ctx)
{
    const core_config *cfg = &ctx->cfg;
    struct plist l = {NULL, 0, 0};
    char *searched = NULL;
    size_t slen = 0;
    FILE *f;
    int rc = SBX_OK;

    f = open_memstream(&searched, &slen);
    if (!f)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory loading providers");
    for (size_t i = 0; cfg->provider_path && cfg->provider_path[i]; i++) {
        if (i > 0)
            fputs(", ", f);
        if ((rc = scan_dir(&l, cfg->provider_path[i], f)) != SBX_OK)
            break;
    }
    if (!cfg->provider_path || !cfg->provider_path[0])
        fputs("(an empty provider path)", f);
    if (fclose(f) != 0 && rc == SBX_OK)
        rc = SBX_E_NOMEM;
    if (rc == SBX_OK)
        rc = apply_confs(&l, cfg, searched);
    free(searched);
    if (rc != SBX_OK) {
        plist_free(&l);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory loading providers");
    }

    /* Optional failures stay in the array (hidden), so the order is the
     * one of the providers that will be listed, whatever loads later. */
    sort_providers(cfg, l.v, l.n);
    for (size_t i = 0; i < l.n; i++) {
        struct sbx_provider *p = &l.v[i];

        /* Final from here on: entries move no more. */
        p->handle.ctx = ctx;
        p->handle.prov = p;
        /* Disabled, or judged without its module (none found, a relative
         * module path): nothing to load, the verdict is already final.
         * The context is not shared yet, so plain stores do. */
        if (!(p->conf && p->conf->enabled && p->path && !p->reason_code)) {
            p->hidden = drop_it(p);
            p->loaded = true;
        }
    }
    ctx->providers = l.v;
    ctx->n_providers = l.n;
    core_error_clear();
    return SBX_OK;
}

/* Steps 1 to 11 for @p, with ctx->load_lock held.  Leaves a final state:
 * READY, or UNAVAILABLE with its reason (out of memory included, as this
 * provider's failure: there is no caller to return it to). */
static void load_one(struct sbx_ctx *ctx, struct sbx_provider *p)
{
    int rc = load_module(p);

    if (rc == SBX_OK && !p->reason_code)
        rc = init_provider(ctx, p);
    if (rc != SBX_OK) {
        p->state = SBX_PROVIDER_UNAVAILABLE;
        if (!p->reason_code)
            p->reason_code = SBX_E_NOMEM;
        if (!p->reason)
            p->reason = strdup("out of memory loading the provider");
    }
    if (p->state == SBX_PROVIDER_READY)
        p->init_seq = ++ctx->n_inits;
    /* Written only when it changes: only optional providers can be hidden,
     * and their readers go through core_provider_ensure first. */
    if (drop_it(p))
        p->hidden = true;
}

void core_provider_ensure(const struct sbx_provider *cp)
{
    /* Entries are never const objects: the API hands out const views. */
    struct sbx_provider *p = (struct sbx_provider *)cp;
    struct sbx_ctx *ctx;
    struct sbx_error saved;

    if (!p || __atomic_load_n(&p->loaded, __ATOMIC_ACQUIRE))
        return;
    ctx = p->handle.ctx;
    pthread_mutex_lock(&ctx->load_lock);
    if (!p->loaded) {
        /* Loading is not the caller's operation: its error stays. */
        saved = *core_error_tls();
        load_one(ctx, p);
        *core_error_tls() = saved;
        __atomic_store_n(&p->loaded, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->load_lock);
}

/* Copies of @keys (NULL-terminated, may be NULL) into @out: an empty list
 * for none.  SBX_E_NOMEM leaves *out NULL. */
static int copy_keys(const char *const *keys, char ***out)
{
    char **v = calloc(1, sizeof *v);

    for (size_t i = 0; v != NULL && keys && keys[i]; i++) {
        if (core_strv_push(&v, keys[i]) != SBX_OK) {
            core_strv_free(v);
            v = NULL;
        }
    }
    *out = v;
    return v ? SBX_OK : SBX_E_NOMEM;
}

/* Steps 1 to 10 on a scratch copy of @p, which keeps its state and reason:
 * the descriptor's credential keys, then the module closed again (it never
 * reached init, so no code of it is left running). */
static void peek_keys(struct sbx_provider *p)
{
    struct sbx_provider tmp;

    memset(&tmp, 0, sizeof tmp);
    tmp.name = p->name;
    tmp.path = p->path;
    tmp.conf = p->conf;
    if (load_module(&tmp) == SBX_OK && !tmp.reason_code) {
        (void)copy_keys(tmp.desc.secret_keys, &p->credential_keys);
        close_module((lt_dlhandle)tmp.lib);
    }
    free(tmp.reason);
}

const char *const *core_provider_credential_keys(const struct sbx_provider *cp)
{
    struct sbx_provider *p = (struct sbx_provider *)cp;
    struct sbx_ctx *ctx;

    if (!p)
        return NULL;
    core_provider_ensure(p);
    ctx = p->handle.ctx;
    pthread_mutex_lock(&ctx->load_lock);
    if (!p->peeked) {
        /* Loading is not the caller's operation: its error stays. */
        struct sbx_error saved = *core_error_tls();
        if (p->state == SBX_PROVIDER_READY)
            (void)copy_keys(p->desc.secret_keys, &p->credential_keys);
        else if (p->path)
            peek_keys(p);
        *core_error_tls() = saved;
        p->peeked = true;
    }
    pthread_mutex_unlock(&ctx->load_lock);
    return (const char *const *)p->credential_keys;
}

void core_loader_unload_all(struct sbx_ctx *ctx)
{
    struct plist l;

    if (!ctx || !ctx->providers)
        return;
    /* fini in reverse order of init; modules stay mapped. */
    for (unsigned seq = ctx->n_inits; seq > 0; seq--) {
        for (size_t i = 0; i < ctx->n_providers; i++) {
            struct sbx_provider *p = &ctx->providers[i];
            if (p->init_seq != seq)
                continue;
            if (p->state == SBX_PROVIDER_READY && p->ops.fini)
                p->ops.fini(p->pctx);
            p->pctx = NULL;
        }
    }
    l.v = ctx->providers;
    l.n = l.cap = ctx->n_providers;
    plist_free(&l);
    ctx->providers = NULL;
    ctx->n_providers = 0;
    ctx->n_inits = 0;
}
