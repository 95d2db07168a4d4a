/* core/run/health.c - one health probe of a provider
 *
 * The provider's own health op when it has one (a cheap ping by contract);
 * else a list, which reaches the backend without making anything; else a
 * real create and destroy, the only proof left.
 */
#include "config.h"

#include <stdio.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "run/sandbox-int.h"
#include "clock.h"
#include "provider-int.h"

bool sbx_provider_is_optional(const sbx_provider *p)
{
    return p && p->conf && p->conf->optional;
}

/* Stop at the first sandbox: reaching the backend is all we wanted. */
static int first_only(void *ud, const char *id, const sbx_kv_v1 *labels, size_t n,
                      uint64_t created)
{
    (void)id;
    (void)labels;
    (void)n;
    (void)created;
    *(bool *)ud = true;
    return 1;
}

static int probe(sbx_ctx *ctx, struct sbx_provider *p)
{
    int rc;

    core_error_clear();
    if (p->ops.health) {
        rc = p->ops.health(p->pctx);
    } else if (p->ops.list) {
        bool stopped = false;
        rc = p->ops.list(p->pctx, NULL, 0, first_only, &stopped);
        if (stopped && rc == 1)
            rc = SBX_OK;
    } else {
        sbx_create_opts *o = sbx_create_opts_new();
        sbx_sandbox *sb = NULL;
        if (!o)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        rc = sbx_create_opts_set_provider(o, p->name);
        if (rc == SBX_OK)
            rc = sbx_sandbox_create(ctx, o, &sb);
        sbx_create_opts_free(o);
        if (rc == SBX_OK)
            rc = sbx_sandbox_destroy(sb);
        return rc;
    }
    if (rc != SBX_OK && core_error_tls()->code == SBX_OK)
        core_error_set(rc, p->name, "provider '%s': health probe failed (%s)", p->name,
                       sbx_strerror(rc));
    else if (rc != SBX_OK)
        core_error_tls()->code = rc;
    return rc;
}

int sbx_provider_health(sbx_ctx *ctx, const char *provider, uint64_t *latency_ns)
{
    struct sbx_provider *p;
    uint64_t t0;
    int rc;

    core_error_clear();
    if (latency_ns)
        *latency_ns = 0;
    if (!ctx)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_provider_health: NULL context");
    if (!provider)
        provider = sbx_ctx_default_provider(ctx);
    if (!provider)
        return core_error_set(SBX_E_PROVIDER_UNAVAILABLE, NULL,
                              "no provider is ready (see 'polysandbox providers')");
    if (!(p = core_provider_get(ctx, provider)))
        return core_error_tls()->code;
    t0 = core_now_ns();
    rc = probe(ctx, p);
    if (latency_ns)
        *latency_ns = core_now_ns() - t0;
    return rc;
}
