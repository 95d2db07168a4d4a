/* core/run/sandbox-find.c - listing sandboxes by label, and get-or-create
 *
 * Providers filter listings themselves where their backend can (a daemon's
 * label filter, a service's metadata query); the core checks every
 * sandbox against the filter again, so a provider that filters loosely or
 * not at all still gives the same answer as the others.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "opts-int.h"
#include "retry/retry.h"
#include "error.h"
#include "strv.h"
#include "owner.h"
#include "labels.h"
#include "run/sandbox-int.h"
#include "context.h"
#include "provider-int.h"

/* ---- listing ---------------------------------------------------------------- */

/* One walk of a provider's list: the filter checked again, then @inner. */
typedef struct list_walk {
    const sbx_kv_v1 *filter;
    size_t n_filter;
    sbx_list_cb_v1 inner;
    void *ud;
    bool called;    /* @inner saw a sandbox: no retry from here on */
} list_walk;

static int walk_cb(void *ud, const char *id, const sbx_kv_v1 *labels, size_t n,
                   uint64_t created)
{
    list_walk *w = ud;

    if (!id || !core_kv_includes(labels, n, w->filter, w->n_filter))
        return 0;
    w->called = true;
    return w->inner(w->ud, id, labels, n, created);
}

/* List @p's sandboxes matching @filter, with retries until the first
 * sandbox reached @inner. */
static int list_on(sbx_ctx *ctx, struct sbx_provider *p, const sbx_kv_v1 *filter,
                   size_t n_filter, sbx_list_cb_v1 inner, void *ud)
{
    list_walk w = {filter, n_filter, inner, ud, false};
    core_retry rt;
    int rc;

    if (!p->ops.list)
        return core_error_set(SBX_E_NOTSUP, p->name, "provider '%s' cannot list sandboxes",
                              p->name);
    core_retry_begin(&rt, ctx, p, 0);
    do {
        core_error_clear();
        rc = p->ops.list(p->pctx, filter, n_filter, walk_cb, &w);
    } while (rc != SBX_OK && !w.called && core_error_tls()->code == rc &&
             core_retry_again(&rt, rc));
    if (rc != SBX_OK && core_error_tls()->code == SBX_OK)
        return core_provider_failed(p, "list", rc);
    return rc;
}

/* The public callback takes "KEY=VALUE" strings. */
typedef struct list_relay {
    sbx_list_cb cb;
    void *ud;
} list_relay;

static int relay_cb(void *ud, const char *id, const sbx_kv_v1 *labels, size_t n,
                    uint64_t created)
{
    list_relay *lr = ud;
    char **strs = calloc(n + 1, sizeof *strs);
    int rc = 0;

    if (!strs)
        return SBX_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *v = labels[i].value ? labels[i].value : "";
        size_t len = strlen(labels[i].key) + strlen(v) + 2;
        if (!(strs[i] = malloc(len))) {
            rc = SBX_E_NOMEM;
            break;
        }
        snprintf(strs[i], len, "%s=%s", labels[i].key, v);
    }
    if (rc == 0)
        rc = lr->cb(lr->ud, id, (const char *const *)strs, n, created);
    core_strv_free(strs);
    return rc;
}

/* Split "KEY=VALUE" strings into pairs pointing into them. */
static int parse_filter(const char *const *filter, size_t n, sbx_kv_v1 **out)
{
    sbx_kv_v1 *kv;

    *out = NULL;
    if (n == 0)
        return SBX_OK;
    if (!filter)
        return core_error_set(SBX_E_INVAL, NULL, "label filter: NULL with a count of %zu", n);
    if (!(kv = calloc(n, sizeof *kv)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *eq = filter[i] ? strchr(filter[i], '=') : NULL;
        if (!eq || eq == filter[i]) {
            free(kv);
            return core_error_set(SBX_E_INVAL, NULL,
                                  "label filter '%s' is not KEY=VALUE with a non-empty KEY",
                                  filter[i] ? filter[i] : "(null)");
        }
        kv[i].key = filter[i];  /* the whole string: the caller cuts it */
        kv[i].value = eq + 1;
    }
    *out = kv;
    return SBX_OK;
}

int sbx_list_labeled(sbx_ctx *ctx, const char *provider, const char *const *filter,
                     size_t n_filter, sbx_list_cb cb, void *ud)
{
    struct sbx_provider *p;
    list_relay lr = {cb, ud};
    sbx_kv_v1 *kv = NULL;
    char **keys = NULL;
    int rc;

    core_error_clear();
    if (!ctx || !cb)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_list: NULL argument");
    if ((rc = parse_filter(filter, n_filter, &kv)) != SBX_OK)
        return rc;
    /* The keys as strings of their own. */
    if (n_filter && !(keys = calloc(n_filter + 1, sizeof *keys))) {
        free(kv);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < n_filter; i++) {
        if (!(keys[i] = strndup(kv[i].key, (size_t)(kv[i].value - 1 - kv[i].key)))) {
            rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
            goto out;
        }
        kv[i].key = keys[i];
    }
    if (!(p = core_provider_or_default(ctx, provider))) {
        rc = core_error_tls()->code;
        goto out;
    }
    rc = list_on(ctx, p, kv, n_filter, relay_cb, &lr);
out:
    core_strv_free(keys);
    free(kv);
    return rc;
}

int sbx_list(sbx_ctx *ctx, const char *provider, sbx_list_cb cb, void *ud)
{
    return sbx_list_labeled(ctx, provider, NULL, 0, cb, ud);
}

/* ---- get-or-create ------------------------------------------------------------ */

typedef struct candidate {
    char *id;
    uint64_t created;
} candidate;

typedef struct find_scan {
    long long now;
    candidate *c;
    size_t n;
} find_scan;

static int on_candidate(void *ud, const char *id, const sbx_kv_v1 *labels, size_t n,
                        uint64_t created)
{
    find_scan *s = ud;
    candidate *nc;

    /* Past its time-to-live: sbx_gc reaps it, nobody should start on it. */
    if (core_label_expired(core_kv_value(labels, n, CORE_LABEL_EXPIRES), s->now))
        return 0;
    if (!(nc = realloc(s->c, (s->n + 1) * sizeof *nc)))
        return SBX_E_NOMEM;
    s->c = nc;
    if (!(nc[s->n].id = strdup(id)))
        return SBX_E_NOMEM;
    nc[s->n++].created = created;
    return 0;
}

/* Oldest first, so every caller settles on the same one. */
static int by_age(const void *a, const void *b)
{
    const candidate *x = a, *y = b;

    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int by_pair(const void *a, const void *b)
{
    const sbx_kv_v1 *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    return c ? c : strcmp(x->value, y->value);
}

/* Take the lock that serialises get-or-create of one (provider, labels)
 * among the processes sharing the state directory: a file named by a
 * hash of them under STATE_DIR/locks.  Returns the locked descriptor, or
 * -1 with the thread error set. */
static int lock_labels(const sbx_ctx *ctx, const char *provider, sbx_kv_v1 *kv, size_t n)
{
    crypto_generichash_state st;
    unsigned char h[16];
    char hex[2 * sizeof h + 1], *dir = NULL, *path = NULL;
    int fd = -1;

    if (sodium_init() < 0) {
        core_error_set(SBX_E_INTERNAL, NULL, "libsodium failed to initialise");
        return -1;
    }
    qsort(kv, n, sizeof *kv, by_pair);
    crypto_generichash_init(&st, NULL, 0, sizeof h);
    crypto_generichash_update(&st, (const unsigned char *)provider, strlen(provider) + 1);
    for (size_t i = 0; i < n; i++) {
        crypto_generichash_update(&st, (const unsigned char *)kv[i].key, strlen(kv[i].key) + 1);
        crypto_generichash_update(&st, (const unsigned char *)kv[i].value,
                                  strlen(kv[i].value) + 1);
    }
    crypto_generichash_final(&st, h, sizeof h);
    sodium_bin2hex(hex, sizeof hex, h, sizeof h);
    if (asprintf(&dir, "%s/locks", ctx->cfg.state_dir) < 0 ||
        asprintf(&path, "%s/get-or-create-%s", dir, hex) < 0) {
        core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    /* Ours only: a lock another user could open, they could hold for
     * ever. */
    if (core_private_dir(ctx->cfg.state_dir, "state directory") != SBX_OK ||
        core_private_dir(dir, "lock directory") != SBX_OK)
        goto out;
    /* O_NONBLOCK: a FIFO must not hang the open (it is refused below). */
    if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600)) < 0) {
        core_error_set(SBX_E_IO, NULL, "get-or-create: cannot open the lock %s: %s", path,
                       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        goto out;
    }
    struct stat fst;
    memset(&fst, 0, sizeof fst);
    if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_uid != geteuid()) {
        char who[160];
        core_owner_name(fst.st_uid, who, sizeof who);
        core_error_set(SBX_E_PERM, NULL, "get-or-create: the lock %s is not a file of this "
                       "user's (owner %s): refused (remove it)", path, who);
        close(fd);
        fd = -1;
        goto out;
    }
    /* Bounded: the holder only lists, opens or creates, all with deadlines. */
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            core_error_set(SBX_E_IO, NULL, "get-or-create: cannot lock %s: %s", path,
                           strerror(errno));
            close(fd);
            fd = -1;
            break;
        }
    }
out:
    free(dir);
    free(path);
    return fd;
}

/* The labels a match must carry: the caller's, plus our owner, the
 * persistent mark and, when one is asked for, the template. */
static int match_labels(const sbx_create_opts *o, const char *owner, sbx_kv_v1 **out,
                        size_t *n)
{
    sbx_kv_v1 *kv = calloc(o->labels.n + 3, sizeof *kv);
    size_t k = 0;

    if (!kv)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < o->labels.n; i++)
        kv[k++] = o->labels.items[i];
    kv[k++] = (sbx_kv_v1){CORE_LABEL_OWNER, owner};
    kv[k++] = (sbx_kv_v1){CORE_LABEL_PERSISTENT, "1"};
    if (o->template_name)
        kv[k++] = (sbx_kv_v1){CORE_LABEL_TEMPLATE, o->template_name};
    *out = kv;
    *n = k;
    return SBX_OK;
}

/* Open the oldest match; *out stays NULL when none is left. */
static int open_match(sbx_ctx *ctx, struct sbx_provider *p, const sbx_kv_v1 *kv, size_t n,
                      sbx_sandbox **out)
{
    find_scan s = {(long long)time(NULL), NULL, 0};
    int rc = list_on(ctx, p, kv, n, on_candidate, &s);

    if (rc == SBX_E_NOMEM && core_error_tls()->code != SBX_E_NOMEM)
        core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (rc == SBX_OK && s.n > 1)
        qsort(s.c, s.n, sizeof *s.c, by_age);
    for (size_t i = 0; rc == SBX_OK && i < s.n && !*out; i++) {
        rc = sbx_sandbox_open(ctx, p->name, s.c[i].id, out);
        if (rc == SBX_E_NOT_FOUND) {
            rc = SBX_OK;        /* destroyed since it was listed */
            core_error_clear();
        } else if (rc != SBX_OK) {
            struct sbx_error *e = core_error_tls();
            char msg[CORE_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", e->message);
            core_error_set(rc, p->name, "get-or-create: sandbox '%s' carries the labels "
                           "but cannot be opened: %s", s.c[i].id, msg);
        }
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.c[i].id);
    free(s.c);
    return rc;
}

int sbx_sandbox_get_or_create(sbx_ctx *ctx, const sbx_create_opts *opts, sbx_sandbox **out,
                              bool *created)
{
    struct sbx_provider *p;
    struct sbx_create_opts mine;
    sbx_kv_v1 *kv = NULL;
    size_t n = 0;
    char owner[320];
    int rc, fd;

    core_error_clear();
    if (created)
        *created = false;
    if (!ctx || !opts || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_sandbox_get_or_create: NULL argument");
    *out = NULL;
    if (opts->labels.n == 0)
        return core_error_set(SBX_E_INVAL, NULL,
                              "get-or-create needs at least one label to find the sandbox by");
    if (!(p = core_provider_or_default(ctx, opts->provider)))
        return core_error_tls()->code;
    if (!p->ops.list || !p->ops.attach || !p->ops.release)
        return core_error_set(SBX_E_NOTSUP, p->name,
                              "provider '%s' cannot find sandboxes again (get-or-create needs "
                              "listing and persistent sandboxes)", p->name);
    core_owner(owner, sizeof owner);
    if ((rc = match_labels(opts, owner, &kv, &n)) != SBX_OK)
        return rc;
    if ((fd = lock_labels(ctx, p->name, kv, n)) < 0) {
        free(kv);
        return core_error_tls()->code;
    }
    rc = open_match(ctx, p, kv, n, out);
    if (rc == SBX_OK && !*out) {
        /* None: ours, persistent (later calls find it), on this provider
         * only (a fallback would hide it from the next lookup). */
        mine = *opts;
        mine.persistent = true;
        mine.provider = (char *)p->name; /* a shallow copy, never freed */
        rc = sbx_sandbox_create(ctx, &mine, out);
        if (rc == SBX_OK && created)
            *created = true;
    }
    close(fd);  /* drops the lock */
    free(kv);
    return rc;
}
