/* core/run/orphans.c - sandboxes whose destroy failed, destroyed later
 *
 * A destroy that still fails after its retries (the service kept failing
 * for the whole retry budget) leaves a sandbox that nobody can reach any
 * more: sbx_sandbox_destroy has freed its handle and the caller moves on.
 * Its id is kept on the context instead of being forgotten: one more try
 * follows each later destroy that succeeds on the same provider (the
 * service is answering again), and every kept one is tried again, with
 * fresh retries, when the context is freed.  What still fails then is
 * logged; its time-to-live (every sandbox of sbx_run has one) and
 * `polysandbox gc` are what is left.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "run/sandbox-int.h"
#include "run/orphans.h"
#include "context.h"
#include "retry/retry.h"
#include "loader/loader.h"
#include "provider-int.h"

struct core_orphan {
    struct sbx_provider *p;
    char id[SBX_ID_MAX];
};

/* Says that @id of @p stays behind (@why), and what will reap it. */
static void left_behind(struct sbx_provider *p, const char *id, const char *why)
{
    core_host_table()->log(&p->handle, SBX_LOG_WARNING,
                           "sandbox %s could not be destroyed (%s): its time-to-live reaps "
                           "it, or `polysandbox gc` once that has passed", id, why);
}

void core_orphan_keep(struct sbx_ctx *ctx, struct sbx_provider *p, const char *id)
{
    struct core_orphan *v;

    pthread_mutex_lock(&ctx->lock);
    v = realloc(ctx->orphans, (ctx->n_orphans + 1) * sizeof *v);
    if (v) {
        ctx->orphans = v;
        v[ctx->n_orphans].p = p;
        snprintf(v[ctx->n_orphans].id, sizeof v[ctx->n_orphans].id, "%s", id);
        ctx->n_orphans++;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (!v)
        left_behind(p, id, "out of memory to keep it for another try");
}

/* Takes out the last kept sandbox of @p (NULL: any) into @out. */
static bool take(struct sbx_ctx *ctx, struct sbx_provider *p, struct core_orphan *out)
{
    bool found = false;

    pthread_mutex_lock(&ctx->lock);
    for (size_t i = ctx->n_orphans; i-- > 0 && !found;) {
        if (p && ctx->orphans[i].p != p)
            continue;
        *out = ctx->orphans[i];
        memmove(&ctx->orphans[i], &ctx->orphans[i + 1],
                (ctx->n_orphans - i - 1) * sizeof *ctx->orphans);
        ctx->n_orphans--;
        found = true;
    }
    if (ctx->n_orphans == 0) {
        free(ctx->orphans);
        ctx->orphans = NULL;
    }
    pthread_mutex_unlock(&ctx->lock);
    return found;
}

void core_orphans_retry_one(struct sbx_ctx *ctx, struct sbx_provider *p)
{
    struct sbx_error saved = *core_error_tls();
    struct core_orphan o;

    if (!take(ctx, p, &o))
        return;
    if (core_destroy_by_id(o.p, o.id) != SBX_OK)
        core_orphan_keep(ctx, o.p, o.id);
    *core_error_tls() = saved;
}

void core_orphans_reap(struct sbx_ctx *ctx)
{
    struct sbx_error saved = *core_error_tls();
    struct core_orphan o;

    while (take(ctx, NULL, &o)) {
        core_retry rt;
        int rc;

        core_retry_begin(&rt, ctx, o.p, 0);
        do {
            core_error_clear();
            rc = core_destroy_by_id(o.p, o.id);
        } while (rc != SBX_OK && core_retry_again(&rt, rc));
        if (rc != SBX_OK)
            left_behind(o.p, o.id, core_error_tls()->message);
    }
    *core_error_tls() = saved;
}
