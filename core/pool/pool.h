/* core/pool/pool.h - warm pools, as the context and sbx_run use them
 * (core/pool/pool.c)
 */
#ifndef POLYSANDBOX_POOL_POOL_H
#define POLYSANDBOX_POOL_POOL_H

#include <stdbool.h>

#include <polysandbox/sandbox.h>

struct sbx_ctx;

/* A sandbox lent to sbx_run by a pool; given back with core_pool_release. */
typedef struct core_pool_lease core_pool_lease;

/* Check the pool configuration and start filling the pools (background
 * threads).  SBX_E_CONFIG names FILE:LINE of the bad setting. */
int core_pools_start(struct sbx_ctx *ctx);
/* Stop the threads and destroy every sandbox the pools hold.  Called by
 * sbx_ctx_free before the providers go. */
void core_pools_stop(struct sbx_ctx *ctx);
/*
 * core_pool_take:
 * A ready sandbox of the pool whose key (provider, template, limits)
 * matches @copts, or NULL when no pool matches or none is ready (a miss:
 * the caller creates one as usual).  Never touches the thread's error.
 * (transfer full) *lease, to be given back with core_pool_release.
 */
sbx_sandbox *core_pool_take(struct sbx_ctx *ctx, const sbx_create_opts *copts,
                            core_pool_lease **lease);
/* Give a lent sandbox back: it is destroyed (in the background), or with
 * reuse = true and @healthy, reset and made ready again.  Frees @lease. */
void core_pool_release(core_pool_lease *lease, bool healthy);
/* The name of the pool that lent @lease (transfer none, the context's). */
const char *core_pool_lease_name(const core_pool_lease *lease);

#endif /* POLYSANDBOX_POOL_POOL_H */
