/* core/context.h - the context, struct sbx_ctx
 *
 * Ground floor, because every wing reads it; core/run/context.c and
 * core/api/ctx.c make it.
 */
#ifndef POLYSANDBOX_CONTEXT_H
#define POLYSANDBOX_CONTEXT_H

#include <pthread.h>
#include <stddef.h>

#include <polysandbox/sandbox.h>

#include "conf.h"

struct sbx_ctx {
    core_config cfg;
    struct sbx_provider *providers;
    size_t n_providers;
    pthread_mutex_t lock;          /* orphans */
    pthread_mutex_t load_lock;     /* core_provider_ensure's */
    unsigned n_inits;              /* providers initialised (load_lock) */
    struct core_breaker *breakers; /* one per provider (core/retry/breaker.c) */
    struct core_pools *pools;      /* core/pool/pool.c, or NULL: none */
    struct core_orphan *orphans;   /* core/run/orphans.c (lock) */
    size_t n_orphans;
};

#endif /* POLYSANDBOX_CONTEXT_H */
