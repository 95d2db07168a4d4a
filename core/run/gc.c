/* core/run/gc.c - reaping sandboxes whose time-to-live has passed
 *
 * Every sandbox the core creates carries labels (core/labels.c):
 * polysandbox.owner = UID@HOST of the creating process and, when it was
 * given a time-to-live, polysandbox.expires (Unix seconds).  A process that
 * crashes leaves its sandboxes behind; sbx_gc finds those of its owner
 * whose polysandbox.expires has passed and destroys them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "labels.h"

typedef struct victim {
    char *id;
    long long expires;
} victim;

typedef struct gc_scan {
    const char *owner;      /* NULL: any owner */
    long long now;
    victim *v;
    size_t n;
    bool nomem;
} gc_scan;

static int on_sandbox(void *ud, const char *id, const char *const *labels, size_t n,
                      uint64_t created)
{
    gc_scan *s = ud;
    const char *owner = core_label_value(labels, n, CORE_LABEL_OWNER);
    const char *exp = core_label_value(labels, n, CORE_LABEL_EXPIRES);
    victim *nv;

    (void)created;
    /* Only sandboxes the core labelled, with a time-to-live that passed. */
    if (!owner || (s->owner && strcmp(owner, s->owner) != 0) ||
        !core_label_expired(exp, s->now))
        return 0;
    if (!(nv = realloc(s->v, (s->n + 1) * sizeof *nv)) || !(nv[s->n].id = strdup(id))) {
        if (nv)
            s->v = nv;
        s->nomem = true;
        return SBX_E_NOMEM;
    }
    nv[s->n++].expires = strtoll(exp, NULL, 10);
    s->v = nv;
    return 0;
}

/* Reap on one provider.  Returns the listing's status; each sandbox's
 * outcome goes to @cb. */
static int gc_one(sbx_ctx *ctx, const char *provider, unsigned flags, const char *owner,
                  sbx_gc_cb cb, void *ud)
{
    gc_scan s = {(flags & SBX_GC_ANY_OWNER) ? NULL : owner, (long long)time(NULL), NULL, 0,
                 false};
    char filter[400];
    const char *fv[1] = {filter};
    int rc;
    bool stop = false;

    /* The provider can filter on the owner itself (a daemon or a service
     * then sends only ours). */
    snprintf(filter, sizeof filter, "%s=%s", CORE_LABEL_OWNER, owner);
    rc = sbx_list_labeled(ctx, provider, fv, s.owner ? 1 : 0, on_sandbox, &s);

    if (s.nomem)
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; rc == SBX_OK && !stop && i < s.n; i++) {
        sbx_sandbox *sb = NULL;
        int e = SBX_OK;
        char msg[CORE_MSG_MAX] = "";

        if (!(flags & SBX_GC_DRY_RUN)) {
            e = sbx_sandbox_open(ctx, provider, s.v[i].id, &sb);
            if (e == SBX_OK)
                e = sbx_sandbox_destroy(sb);
            if (e != SBX_OK)
                snprintf(msg, sizeof msg, "%s", core_error_tls()->message);
        }
        stop = cb && cb(ud, provider, s.v[i].id, (int64_t)s.v[i].expires, e,
                        e == SBX_OK ? NULL : msg) != 0;
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i].id);
    free(s.v);
    return rc;
}

int sbx_gc(sbx_ctx *ctx, const char *provider, unsigned flags, sbx_gc_cb cb, void *ud)
{
    char owner[320];
    int rc = SBX_OK;
    struct sbx_error first = {0};

    core_error_clear();
    if (!ctx)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_gc: NULL context");
    core_owner(owner, sizeof owner);
    if (provider)
        return gc_one(ctx, provider, flags, owner, cb, ud);
    /* Every ready provider that can list; a failure on one does not stop
     * the others, and the first is reported. */
    for (size_t i = 0; i < sbx_ctx_provider_count(ctx); i++) {
        const sbx_provider *p = sbx_ctx_provider(ctx, i);
        int e;

        if (sbx_provider_get_state(p) != SBX_PROVIDER_READY ||
            !(sbx_provider_capabilities(p) & SBX_CAP_LIST))
            continue;
        e = gc_one(ctx, sbx_provider_name(p), flags, owner, cb, ud);
        if (e != SBX_OK && rc == SBX_OK) {
            rc = e;
            first = *core_error_tls();
        }
    }
    if (rc != SBX_OK)
        *core_error_tls() = first;
    else
        core_error_clear();
    return rc;
}
