/* core/loader/open.c - open, validate and initialise a provider module
 *
 * An enabled provider is loaded the first time it is needed
 * (core_provider_ensure: selected, listed with its state, probed): opened
 * with libltdl on an absolute path, never a bare name, validated in the
 * fixed order of provider.h (core/loader/validate.c), and only then
 * initialised.  Loading a module costs its dependencies' relocations (a
 * network provider pulls in dozens of libraries), which a run on another
 * provider should not pay.  Each rejection is its own SBX_E_LOAD_* code
 * with a message naming the file and the field.  A module that reached
 * init is made resident and never closed; one rejected before init is
 * closed again.  Discovery, which opens nothing, is core/loader/discover.c.
 *
 * Ownership: ctx->providers (and every string in it) is owned by the
 * loader and freed by core_loader_unload_all.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "strv.h"
#include "owner.h"
#include "context.h"
#include "loader/loader-int.h"
#include "loader/validate.h"
#include "loader/loader.h"
#include "provider-int.h"

#define DESCRIPTOR_SYMBOL "sandbox_provider_v1"

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
        core_loader_reject(p, SBX_E_LOAD_OPEN, "cannot open: %s", strerror(errno));
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
    core_loader_reject(p, rc, "%s", e->message);
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
        return core_loader_reject(p, SBX_E_LOAD_OPEN, "libltdl failed to initialise: %s",
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
        return core_loader_reject(p, SBX_E_LOAD_OPEN, "cannot open: %s", err);
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
 * Record @v, a failed check of @p, as its reason: a message about a
 * [settings] entry as it is, any other after the module's path.  Returns
 * @rc, or SBX_E_NOMEM (the state recorded all the same).  Frees the
 * message.
 */
static int record_verdict(struct sbx_provider *p, int rc, core_verdict *v)
{
    if (v->code == SBX_OK)
        return rc;
    if (v->located) {
        p->state = SBX_PROVIDER_UNAVAILABLE;
        p->reason_code = v->code;
        free(p->reason);
        p->reason = v->message;
        v->message = NULL;
        return rc;
    }
    if (!v->message) {
        p->state = SBX_PROVIDER_UNAVAILABLE;
        p->reason_code = v->code;
        free(p->reason);
        p->reason = NULL;
        return SBX_E_NOMEM;
    }
    if (core_loader_reject(p, v->code, "%s", v->message) != SBX_OK)
        rc = SBX_E_NOMEM;
    free(v->message);
    v->message = NULL;
    return rc;
}

/* Steps 3 to 10 (core/loader/validate.c) on the descriptor @sym: copies
 * it into p->desc and p->ops, records the first failed check. */
static int validate(struct sbx_provider *p, const void *sym)
{
    core_verdict v;
    int rc = core_validate_header(sym, &p->desc, &p->ops, &v);

    if (rc == SBX_OK && v.code == SBX_OK)
        rc = core_validate_strings(&p->desc, p->path, p->name,
                                   p->conf ? p->conf->file : NULL, &v);
    if (rc == SBX_OK && v.code == SBX_OK)
        rc = core_validate_ops(&p->desc, &p->ops, &v);
    if (rc == SBX_OK && v.code == SBX_OK && p->conf)
        rc = core_validate_settings(&p->desc, p->name, p->conf->settings,
                                    p->conf->n_settings, &v);
    return record_verdict(p, rc, &v);
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
        rc = core_loader_reject(p, SBX_E_LOAD_NO_SYMBOL,
                    "no symbol '" DESCRIPTOR_SYMBOL "' (not a PolySandbox provider)");
    else
        rc = validate(p, sym);
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
        rc = core_loader_reject(p, SBX_E_LOAD_INIT, "%s", e->message);
        core_error_clear();
        return rc;
    }
    /* p->handle was set at discovery: other threads may read it now. */
    free(p->state_dir);
    p->state_dir = core_loader_join_path(base, p->name);
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
        rc = core_loader_reject(p, SBX_E_LOAD_INIT, "init failed: %s", e->message);
    else
        rc = core_loader_reject(p, SBX_E_LOAD_INIT,
                    "init returned %d without setting an error", rc);
    core_error_clear();
    return rc;
}

/* ---- entry points ------------------------------------------------------------ */


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
    if (core_loader_hidden(p))
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
    core_loader_free_list(ctx->providers, ctx->n_providers);
    ctx->providers = NULL;
    ctx->n_providers = 0;
    ctx->n_inits = 0;
}
