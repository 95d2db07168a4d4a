/* core/pool/pool-int.h - warm pools: what core/pool/pool.c (the threads and sbx_run's
 * side) and core/pool/pool-config.c (reading a pool's settings) share
 *
 * Not installed; nothing here is exported.
 */
#ifndef POLYSANDBOX_POOL_INT_H
#define POLYSANDBOX_POOL_INT_H

#include <polysandbox/sandbox.h>

#include "run/opts-int.h"
#include "error.h"
#include "conf.h"
#include "pool/pool.h"

#define WAIT_SAMPLES 1024           /* hits kept for the median wait */
#define MAX_SIZE 1024
#define MAX_PARALLEL 64
#define BACKOFF_MIN_NS UINT64_C(100000000)       /* 100 ms */
#define BACKOFF_MAX_NS UINT64_C(30000000000)     /* 30 s */
#define MARGIN_EXTRA_NS UINT64_C(60000000000)    /* 1 min */
#define DEFAULT_IDLE "10m"
#define DEFAULT_TTL "1h"

#define POOL_KEYS "provider, template, size, parallel, idle_timeout, replace_idle, " \
    "reuse, reset, warm, ttl"

typedef struct entry {
    sbx_sandbox *sb;
    uint64_t born;      /* monotonic ns at creation */
    uint64_t since;     /* monotonic ns it became ready */
} entry;

/* A growable FIFO of entries. */
typedef struct queue {
    entry *v;
    size_t n, cap;
} queue;

struct core_pool {
    sbx_ctx *ctx;
    char *name;

    /* the key */
    char *provider;
    char *template_name;
    uint64_t limits[SBX_LIMIT_COUNT];

    /* the configuration */
    size_t size, parallel;
    uint64_t idle_ns;       /* 0: never */
    uint64_t ttl_ns;
    uint64_t max_age_ns;    /* ttl minus the longest run: retire after this */
    bool replace_idle, reuse;
    char *reset;
    char *warm;             /* code run with the template in each new sandbox, or NULL */
    sbx_create_opts *copts;
    sbx_exec_opts *reset_opts;
    sbx_exec_opts *warm_opts;
    bool active;            /* false: its provider is not ready; every take misses */

    pthread_mutex_t lock;
    pthread_cond_t work;    /* workers wait here */
    pthread_cond_t ready_cv;/* takers and sbx_pool_wait wait here */
    bool lock_ok, work_ok, ready_ok;
    pthread_t *threads;
    size_t n_threads;

    queue ready, dirty, doomed;
    size_t creating, resetting, destroying, in_use, waiters;
    bool stop, dormant;
    uint64_t backoff_ns, retry_at;
    char last_error[CORE_MSG_MAX + 64];

    /* statistics */
    uint64_t hits, misses, created, destroyed, failures, expired, reused;
    uint64_t reset_failed, destroy_failed;
    uint64_t create_ns_sum;
    uint64_t wait_ns_sum;
    uint64_t waits[WAIT_SAMPLES];
};

struct core_pools {
    struct core_pool **v;
    size_t n;
};

struct core_pool_lease {
    struct core_pool *pl;
    entry e;
};

/* Build pool @c of @ctx, checked (SBX_E_CONFIG naming FILE:LINE) but not
 * started.  (transfer full) *out, free with core_pool_free. */
int core_pool_new(sbx_ctx *ctx, const core_pool_conf *c, struct core_pool **out);
void core_pool_free(struct core_pool *pl);

#endif /* POLYSANDBOX_POOL_INT_H */
