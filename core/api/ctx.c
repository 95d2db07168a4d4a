/* core/api/ctx.c - sbx_ctx_new and sbx_ctx_free: a context's life
 *
 * Opening a context joins every wing: the configuration, the secrets'
 * protection, the loader, the breakers and the warm pools; freeing it
 * undoes them in reverse.  It sits above core/run/ and core/pool/, so
 * that neither calls the other to start or stop (the pool uses the
 * public API, core/run/ knows nothing of pools).
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "config/config-load.h"
#include "run/orphans.h"
#include "pool/pool.h"
#include "context.h"
#include "secrets/secrets.h"
#include "retry/retry.h"
#include "loader/loader.h"

int sbx_ctx_new(sbx_ctx **out, const char *config_dir)
{
    return sbx_ctx_new_with(out, config_dir, NULL);
}

int sbx_ctx_new_with(sbx_ctx **out, const char *config_dir,
                     const char *const *overrides)
{
    sbx_ctx *ctx;
    int rc;

    core_error_clear();
    if (!out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_ctx_new: out is NULL");
    *out = NULL;
    ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return core_error_set(SBX_E_NOMEM, NULL, "cannot allocate a context");
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a mutex");
    }
    if (pthread_mutex_init(&ctx->load_lock, NULL) != 0) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a mutex");
    }
    *out = ctx;
    rc = core_config_load(&ctx->cfg, config_dir, overrides);
    if (rc != SBX_OK)
        return rc;
    rc = core_secret_ctx_protect(&ctx->cfg);
    if (rc != SBX_OK)
        return rc;
    /* Modules are loaded when first needed, not here. */
    rc = core_loader_discover(ctx);
    if (rc != SBX_OK)
        return rc;
    rc = core_breakers_init(ctx);
    if (rc != SBX_OK)
        return rc;
    rc = core_pools_start(ctx);
    if (rc != SBX_OK)
        return rc;
    core_error_clear();
    return SBX_OK;
}

void sbx_ctx_free(sbx_ctx *ctx)
{
    if (!ctx)
        return;
    core_pools_stop(ctx);   /* its sandboxes go before their providers */
    core_orphans_reap(ctx);     /* and those it failed to destroy */
    core_breakers_free(ctx);    /* before unload, which forgets the count */
    core_loader_unload_all(ctx);
    core_config_free(&ctx->cfg);
    pthread_mutex_destroy(&ctx->load_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}
