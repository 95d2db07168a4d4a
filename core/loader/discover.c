/* core/loader/discover.c - find the providers of a context, open nothing
 *
 * Discovery: every NAME.so in the provider path (first directory wins),
 * plus every providers.d/NAME.ini (whose `module` overrides the search),
 * at context creation, sorted by [core] order, priority and name.  It
 * judges what needs no module (disabled, enabled without one, a relative
 * module path); loading is core/loader/open.c's, the first time a
 * provider is needed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "strv.h"
#include "conf.h"
#include "context.h"
#include "loader/loader-int.h"
#include "loader/validate.h"
#include "loader/loader.h"
#include "provider-int.h"

/* ---- shared with core/loader/open.c (loader-int.h) -------------------------- */

char *core_loader_join_path(const char *dir, const char *file)
{
    char *out;
    size_t dl = strlen(dir);
    const char *sep = (dl > 0 && dir[dl - 1] == '/') ? "" : "/";

    if (asprintf(&out, "%s%s%s", dir, sep, file) < 0)
        return NULL;
    return out;
}

/* Free the strings of @p and zero it. */
static void provider_free_fields(struct sbx_provider *p)
{
    free(p->name);
    free(p->path);
    free(p->reason);
    free(p->state_dir);
    core_strv_free(p->credential_keys);
    memset(p, 0, sizeof *p);
}

int core_loader_reject(struct sbx_provider *p, int code, const char *fmt, ...)
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
        if (!core_provider_name_valid(de->d_name, len - 3) || plist_find(l, de->d_name, len - 3))
            continue;
        path = core_loader_join_path(dir, de->d_name);
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
                    core_loader_reject(p, SBX_E_CONFIG,
                           "module '%s' is not an absolute path (the current "
                           "directory is never searched)", c->module))
                    return SBX_E_NOMEM;
                continue;
            }
            p->path = strdup(c->module);
            if (!p->path)
                return SBX_E_NOMEM;
        } else if (!p->path && c->enabled) {
            if (core_loader_reject(p, SBX_E_LOAD_OPEN, "enabled, but no %s.so in %s",
                       c->name, searched))
                return SBX_E_NOMEM;
        }
    }
    return SBX_OK;
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

bool core_loader_hidden(const struct sbx_provider *p)
{
    return p->state == SBX_PROVIDER_UNAVAILABLE && p->reason_code != 0 &&
           p->conf && p->conf->optional;
}

void core_loader_free_list(struct sbx_provider *v, size_t n)
{
    struct plist l = {v, n, n};

    plist_free(&l);
}

/* ---- entry point ------------------------------------------------------------ */

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
            p->hidden = core_loader_hidden(p);
            p->loaded = true;
        }
    }
    ctx->providers = l.v;
    ctx->n_providers = l.n;
    core_error_clear();
    return SBX_OK;
}
