/* tests/bench/bench-pool.c - sbx_run through a warm pool against sbx_run
 * without one, in the same process and run
 *
 * Usage: bench-pool [-p PROVIDER] [-T TEMPLATE] [-n RUNS] [-s SIZE]
 *                   [-j PARALLEL] [-- ARGV...]
 *
 * Two contexts on the same configuration: one with no pool, one with the
 * pool "bench" of SIZE sandboxes for the same key (provider, template,
 * default limits).  Runs ARGV (default /bin/true) RUNS times in each,
 * one at a time, alternating blocks of ten so both see the same machine,
 * and prints the median and p90 latency of one sbx_run (what its caller
 * waits for) in each, their ratio, and the pool's hits and misses.
 * A pooled run still pays for the exec; the create happens ahead and the
 * destroy after, in the pool's threads.  A "ready" line gives the pooled
 * runs that found a sandbox ready (the others wait for the refill, so
 * they measure the pool's create rate rather than the run).
 *
 * A benchmark: it asserts nothing about speed.  Exits 1 when a run fails.
 * Needs the environment tests/bench/run.sh sets (POLYSANDBOX_CONFIG_DIR,
 * _PROVIDER_PATH, _STATE_DIR).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#define BLOCK 10
#define WAIT_NS (UINT64_C(300) * 1000000000u)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Appends "key=value" to $BENCH_SAVE, if set, for run.sh's summary. */
static void save(const char *key, double v)
{
    const char *path = getenv("BENCH_SAVE");
    FILE *f;

    if (!path || !*path)
        return;
    if (!(f = fopen(path, "a"))) {
        fprintf(stderr, "bench-pool: BENCH_SAVE %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "%s=%.6f\n", key, v);
    fclose(f);
}

static sbx_ctx *new_ctx(const char *const *ov)
{
    sbx_ctx *ctx = NULL;

    if (sbx_ctx_new_with(&ctx, NULL, ov) != SBX_OK) {
        fprintf(stderr, "bench-pool: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
        sbx_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

/* One sbx_run; its latency, or 0 when it failed. */
static uint64_t one_run(sbx_ctx *ctx, const sbx_create_opts *co, const sbx_exec_opts *x)
{
    sbx_result *r = NULL;
    uint64_t t0 = now_ns(), dt;
    int rc = sbx_run(ctx, co, x, &r);

    dt = now_ns() - t0;
    if (rc != SBX_OK || sbx_result_status(r) != SBX_RUN_OK) {
        fprintf(stderr, "bench-pool: run failed: %s\n",
                rc != SBX_OK ? sbx_error_message(sbx_ctx_last_error(ctx))
                : sbx_result_error(r) ? sbx_result_error(r)
                : sbx_run_status_name(sbx_result_status(r)));
        dt = 0;
    }
    sbx_result_free(r);
    return dt;
}

static void report(const char *what, uint64_t *lat, long n)
{
    qsort(lat, (size_t)n, sizeof *lat, cmp_u64);
    printf("  %-10s median %8.2f ms   p90 %8.2f ms   (%ld runs)\n", what,
           (double)lat[n / 2] / 1e6, (double)lat[(n * 9) / 10] / 1e6, n);
}

static void usage(void)
{
    fputs("usage: bench-pool [-p PROVIDER] [-T TEMPLATE] [-n RUNS] [-s SIZE] "
          "[-j PARALLEL] [-- ARGV...]\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *provider = NULL, *tmpl = NULL;
    long runs = 200, size = 4, parallel = 2;
    const char *def_argv[] = {"/bin/true", NULL};
    const char *const *cmd = def_argv;
    char o_size[64], o_par[64], o_prov[160], o_tmpl[160];
    const char *ov[6];
    size_t n_ov = 0;
    sbx_ctx *plain = NULL, *pooled = NULL;
    sbx_create_opts *co = NULL;
    sbx_exec_opts *x = NULL;
    uint64_t *lat_plain = NULL, *lat_pool = NULL, st[SBX_POOL_STAT_COUNT];
    long np = 0, nq = 0;
    uint64_t *lat_ready = NULL; /* pooled runs that found a sandbox ready */
    long nr = 0;
    int c, status = 1;

    while ((c = getopt(argc, argv, "p:T:n:s:j:")) != -1) {
        switch (c) {
        case 'p': provider = optarg; break;
        case 'T': tmpl = optarg; break;
        case 'n': runs = atol(optarg); break;
        case 's': size = atol(optarg); break;
        case 'j': parallel = atol(optarg); break;
        default: usage();
        }
    }
    if (optind < argc)
        cmd = (const char *const *)argv + optind;
    if (runs < BLOCK || size < 1 || parallel < 1)
        usage();

    snprintf(o_size, sizeof o_size, "pool.bench.size=%ld", size);
    snprintf(o_par, sizeof o_par, "pool.bench.parallel=%ld", parallel);
    ov[n_ov++] = o_size;
    ov[n_ov++] = o_par;
    if (provider) {
        snprintf(o_prov, sizeof o_prov, "pool.bench.provider=%s", provider);
        ov[n_ov++] = o_prov;
    }
    if (tmpl) {
        snprintf(o_tmpl, sizeof o_tmpl, "pool.bench.template=%s", tmpl);
        ov[n_ov++] = o_tmpl;
    }
    ov[n_ov] = NULL;

    lat_plain = calloc((size_t)runs, sizeof *lat_plain);
    lat_pool = calloc((size_t)runs, sizeof *lat_pool);
    lat_ready = calloc((size_t)runs, sizeof *lat_ready);
    co = sbx_create_opts_new();
    x = sbx_exec_opts_new();
    if (!lat_plain || !lat_pool || !lat_ready || !co || !x) {
        fputs("bench-pool: out of memory\n", stderr);
        goto out;
    }
    if ((provider && sbx_create_opts_set_provider(co, provider) != SBX_OK) ||
        (tmpl && sbx_create_opts_set_template(co, tmpl) != SBX_OK) ||
        sbx_exec_opts_set_argv(x, cmd) != SBX_OK) {
        fputs("bench-pool: bad options\n", stderr);
        goto out;
    }
    if (!(plain = new_ctx(NULL)) || !(pooled = new_ctx(ov)))
        goto out;
    if (sbx_pool_wait(pooled, "bench", WAIT_NS) != SBX_OK) {
        fprintf(stderr, "bench-pool: %s\n", sbx_error_message(sbx_ctx_last_error(pooled)));
        goto out;
    }
    /* A few of each first, so caches and the shared root are warm. */
    for (int i = 0; i < 3; i++)
        if (!one_run(plain, co, x) || !one_run(pooled, co, x))
            goto out;
    if (sbx_pool_wait(pooled, "bench", WAIT_NS) != SBX_OK ||
        sbx_pool_stats(pooled, "bench", st, SBX_POOL_STAT_COUNT) != SBX_OK)
        goto out;
    uint64_t hits0 = st[SBX_POOL_STAT_HITS], miss0 = st[SBX_POOL_STAT_MISSES];

    while (np < runs || nq < runs) {
        for (int i = 0; i < BLOCK && np < runs; i++)
            if (!(lat_plain[np++] = one_run(plain, co, x)))
                goto out;
        for (int i = 0; i < BLOCK && nq < runs; i++) {
            /* Whether a sandbox is ready now (this is the only caller):
             * the run then pays for no creation, only for its exec. */
            uint64_t rs[SBX_POOL_STAT_COUNT];
            bool ready = sbx_pool_stats(pooled, "bench", rs, SBX_POOL_STAT_COUNT) == SBX_OK &&
                         rs[SBX_POOL_STAT_READY] > 0;
            if (!(lat_pool[nq++] = one_run(pooled, co, x)))
                goto out;
            if (ready)
                lat_ready[nr++] = lat_pool[nq - 1];
        }
    }
    if (sbx_pool_stats(pooled, "bench", st, SBX_POOL_STAT_COUNT) != SBX_OK)
        goto out;

    printf("== sbx_run of %s%s on %s: a warm pool of %ld against none (same run)\n",
           cmd[0], cmd[1] ? " ..." : "", provider ? provider : "the default provider", size);
    report("no pool", lat_plain, np);
    report("pooled", lat_pool, nq);
    if (nr)
        report("ready", lat_ready, nr); /* the pooled runs that found one ready */
    double ratio = (double)lat_pool[nq / 2] / (double)lat_plain[np / 2];
    printf("  pooled/no-pool median ratio %.3f\n", ratio);
    printf("  pool: %llu hits, %llu misses; median wait of a hit %.3f ms; pool create "
           "mean %.2f ms\n",
           (unsigned long long)(st[SBX_POOL_STAT_HITS] - hits0),
           (unsigned long long)(st[SBX_POOL_STAT_MISSES] - miss0),
           (double)st[SBX_POOL_STAT_WAIT_MEDIAN_NS] / 1e6,
           (double)st[SBX_POOL_STAT_CREATE_MEAN_NS] / 1e6);
    save("pool.plain_ms", (double)lat_plain[np / 2] / 1e6);
    save("pool.pooled_ms", (double)lat_pool[nq / 2] / 1e6);
    save("pool.ratio", ratio);
    status = 0;
out:
    sbx_ctx_free(pooled);
    sbx_ctx_free(plain);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(co);
    free(lat_plain);
    free(lat_pool);
    free(lat_ready);
    return status;
}
