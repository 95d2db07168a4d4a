/* core/retry/breaker.c - one circuit breaker per provider
 *
 * The breaker sees each create once, after its retries: retries absorb
 * transient faults, and the breaker opens only on a provider that keeps
 * failing, so that selection goes down the fallback chain at once instead
 * of spending every request's retries on it.  Failures of the request
 * itself (bad limits, unknown template) move it neither way.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "context.h"
#include "retry/retry.h"
#include "provider-int.h"

struct core_breaker {
    pthread_mutex_t lock;
    sbx_breaker_state state;
    unsigned failures;      /* consecutive, while closed */
    unsigned in_flight;     /* half-open trials under way */
    uint64_t opened_at;     /* core_retry_now() when it opened */
};

int core_breakers_init(struct sbx_ctx *ctx)
{
    size_t n = ctx->n_providers;

    if (n == 0)
        return SBX_OK;
    ctx->breakers = calloc(n, sizeof *ctx->breakers);
    if (!ctx->breakers)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (pthread_mutex_init(&ctx->breakers[i].lock, NULL) != 0) {
            while (i-- > 0)
                pthread_mutex_destroy(&ctx->breakers[i].lock);
            free(ctx->breakers);
            ctx->breakers = NULL;
            return core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a mutex");
        }
    }
    return SBX_OK;
}

void core_breakers_free(struct sbx_ctx *ctx)
{
    if (!ctx->breakers)
        return;
    for (size_t i = 0; i < ctx->n_providers; i++)
        pthread_mutex_destroy(&ctx->breakers[i].lock);
    free(ctx->breakers);
    ctx->breakers = NULL;
}

static struct core_breaker *breaker_of(const struct sbx_ctx *ctx,
                                       const struct sbx_provider *p)
{
    if (!ctx || !ctx->breakers || !p || p < ctx->providers ||
        p >= ctx->providers + ctx->n_providers)
        return NULL;
    return &ctx->breakers[p - ctx->providers];
}

/* Failures that say the provider is in trouble, not the request. */
static bool counts_as_failure(int rc)
{
    switch (rc) {
    case SBX_E_INVAL:
    case SBX_E_LIMIT:
    case SBX_E_NOT_FOUND:
    case SBX_E_PATH:
    case SBX_E_NOTSUP:
    case SBX_E_DECLINED:
    case SBX_E_EXISTS:
    case SBX_E_NOMEM:
        return false;
    default:
        return true;
    }
}

int core_breaker_acquire(struct sbx_ctx *ctx, struct sbx_provider *p, bool *trial)
{
    struct core_breaker *b = breaker_of(ctx, p);
    uint64_t open_time, now;
    int rc = SBX_OK;

    *trial = false;
    if (!b)
        return SBX_OK;
    open_time = core_resil_get(ctx, p, CORE_RS_OPEN_TIME);
    now = core_retry_now();
    pthread_mutex_lock(&b->lock);
    if (b->state == SBX_BREAKER_OPEN && now - b->opened_at >= open_time) {
        b->state = SBX_BREAKER_HALF_OPEN;
        b->in_flight = 0;
    }
    if (b->state == SBX_BREAKER_OPEN) {
        uint64_t left = open_time - (now - b->opened_at);
        rc = core_error_set(SBX_E_PROVIDER_UNAVAILABLE, p->name,
                            "provider '%s' is skipped: its circuit breaker is open after "
                            "%u failed creates in a row (next try in %llu ms; "
                            "[breaker] in polysandbox.ini)",
                            p->name, b->failures,
                            (unsigned long long)((left + 999999) / 1000000));
    } else if (b->state == SBX_BREAKER_HALF_OPEN) {
        if (b->in_flight < core_resil_get(ctx, p, CORE_RS_TRIALS)) {
            b->in_flight++;
            *trial = true;
        } else {
            rc = core_error_set(SBX_E_PROVIDER_UNAVAILABLE, p->name,
                                "provider '%s' is skipped: its circuit breaker is "
                                "half-open and its trial create is under way",
                                p->name);
        }
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void core_breaker_record(struct sbx_ctx *ctx, struct sbx_provider *p, bool trial,
                         int rc, bool backend)
{
    struct core_breaker *b = breaker_of(ctx, p);
    bool failed = rc != SBX_OK && backend && counts_as_failure(rc);
    bool neutral = rc != SBX_OK && !failed;

    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    if (trial) {
        if (b->in_flight > 0)
            b->in_flight--;
        /* Another trial may have settled it already. */
        if (b->state == SBX_BREAKER_HALF_OPEN && !neutral) {
            if (failed) {
                b->state = SBX_BREAKER_OPEN;
                b->opened_at = core_retry_now();
            } else {
                b->state = SBX_BREAKER_CLOSED;
                b->failures = 0;
            }
        }
    } else if (b->state == SBX_BREAKER_CLOSED && !neutral) {
        /* Calls that began before the breaker opened do not move it. */
        if (failed && ++b->failures >= core_resil_get(ctx, p, CORE_RS_FAILURES)) {
            b->state = SBX_BREAKER_OPEN;
            b->opened_at = core_retry_now();
        } else if (!failed) {
            b->failures = 0;
        }
    }
    pthread_mutex_unlock(&b->lock);
}

/* ---- the public view -------------------------------------------------------- */

sbx_breaker_state sbx_provider_breaker(const sbx_provider *p)
{
    const struct sbx_ctx *ctx = p ? p->handle.ctx : NULL;
    struct core_breaker *b = breaker_of(ctx, p);
    sbx_breaker_state s;

    if (!b)
        return SBX_BREAKER_CLOSED;
    pthread_mutex_lock(&b->lock);
    s = b->state;
    if (s == SBX_BREAKER_OPEN &&
        core_retry_now() - b->opened_at >= core_resil_get(ctx, p, CORE_RS_OPEN_TIME))
        s = SBX_BREAKER_HALF_OPEN;
    pthread_mutex_unlock(&b->lock);
    return s;
}

unsigned sbx_provider_breaker_failures(const sbx_provider *p)
{
    struct core_breaker *b = breaker_of(p ? p->handle.ctx : NULL, p);
    unsigned n;

    if (!b)
        return 0;
    pthread_mutex_lock(&b->lock);
    n = b->failures;
    pthread_mutex_unlock(&b->lock);
    return n;
}

const char *sbx_breaker_state_name(sbx_breaker_state s)
{
    switch (s) {
    case SBX_BREAKER_CLOSED: return "closed";
    case SBX_BREAKER_OPEN: return "open";
    case SBX_BREAKER_HALF_OPEN: return "half-open";
    default: return "unknown";
    }
}
