/* tests/bench/bench-runs.c - sustained one-shot runs through the library
 *
 * Usage: bench-runs [-t THREADS] [-n RUNS | -d SECONDS] [-w WARMUP]
 *                   [-m MIB [-p PAGES]] [--leak | --inject-leak] [-- ARGV...]
 *
 * Calls sbx_run() (create + exec + destroy) RUNS times in all, shared by
 * THREADS threads on one context, or as many times as they do in SECONDS
 * (what a peer measured for a time is compared with), and prints runs
 * per second and the latency of one run.  No process is started per run but the sandbox's
 * own, so this is the provider's throughput, not the CLI's start-up.
 *
 * -m MIB: first maps and touches MIB of anonymous memory (python3 with
 * the binding loaded holds about 16 MiB), and before each run writes to
 * PAGES of its pages (an interpreter writes to its heap between calls):
 * a caller as large as python3, to tell what a run costs because of the
 * caller's size.
 *
 * --leak: after WARMUP runs, snapshots the process and the host (fds,
 * mounts, cgroups, sandbox directories, processes, RSS), runs RUNS more,
 * snapshots again, prints both and exits 1 if anything leaked.  RSS
 * growth over 1 MiB in all is flagged as a leak.  --inject-leak: as
 * --leak, but leaks one of each on purpose, to show the check sees it.
 *
 * A benchmark: it asserts nothing about speed.  Needs the environment
 * tests/bench/run.sh sets (POLYSANDBOX_CONFIG_DIR, _PROVIDER_PATH,
 * _STATE_DIR).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "bench-probe.h"

#define MAX_THREADS 64
#define RSS_SAMPLES 64
#define RSS_LEAK_KIB 1024
#define MAX_RATE 20000          /* runs per second -d makes room for */

struct bench {
    sbx_ctx *ctx;
    sbx_exec_opts *x;
    long total;             /* runs to do, all threads together */
    uint64_t deadline_ns;   /* -d: no run starts after it (0: none) */
    atomic_long next;       /* next run number to take */
    atomic_long failed;
    atomic_int reported;    /* first failure printed */
    uint64_t *lat_ns;       /* one per run, by run number */
    uint64_t *phase_ns[4];  /* create, start, exec as the result reports, and
                               the time outside its total (what sbx_run adds
                               around create + exec + destroy) */
    long lat_cap;
    const char *save_as;    /* key part for BENCH_SAVE: "lib" or "lib.leak" */
    long rss_every;         /* sample RSS each this many runs (0: never) */
    long rss_kib[RSS_SAMPLES];
    char *ballast;          /* -m: the caller's bulk */
    size_t ballast_len;
    long dirty_pages;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long rss_now(void)
{
    FILE *f = fopen("/proc/self/statm", "re");
    long pages = -1, res = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = -1;
        fclose(f);
    }
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* -m: @mib of anonymous memory, touched (resident, as an interpreter's
 * heap is). */
static int ballast_map(struct bench *b, long mib)
{
    size_t len = (size_t)mib << 20;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    memset(m, 1, len);
    b->ballast = m;
    b->ballast_len = len;
    return 0;
}

/* Writes to @pages pages of the ballast, spread over all of it. */
static void ballast_dirty(struct bench *b, long pages)
{
    size_t total = b->ballast_len / 4096;
    for (long k = 0; k < pages && total; k++)
        b->ballast[(size_t)k * total / (size_t)pages * 4096]++;
}

static void fail_once(struct bench *b, long i, const char *what)
{
    atomic_fetch_add(&b->failed, 1);
    if (atomic_exchange(&b->reported, 1) == 0)
        fprintf(stderr, "bench-runs: run %ld: %s\n", i, what);
}

static void *worker(void *arg)
{
    struct bench *b = arg;
    for (;;) {
        if (b->deadline_ns && now_ns() >= b->deadline_ns)
            break;
        long i = atomic_fetch_add(&b->next, 1);
        if (i >= b->total)
            break;
        sbx_result *r = NULL;
        if (b->dirty_pages)
            ballast_dirty(b, b->dirty_pages);
        uint64_t t0 = now_ns();
        int rc = sbx_run(b->ctx, NULL, b->x, &r);
        b->lat_ns[i] = now_ns() - t0;
        if (rc != SBX_OK) {
            fail_once(b, i, sbx_error_message(sbx_ctx_last_error(b->ctx)));
        } else if (sbx_result_status(r) != SBX_RUN_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "status %s: %s", sbx_run_status_name(sbx_result_status(r)),
                     sbx_result_error(r) ? sbx_result_error(r) : "(no message)");
            fail_once(b, i, msg);
        }
        if (r) {
            b->phase_ns[0][i] = sbx_result_timing(r, SBX_TIMING_CREATE);
            b->phase_ns[1][i] = sbx_result_timing(r, SBX_TIMING_START);
            b->phase_ns[2][i] = sbx_result_timing(r, SBX_TIMING_EXEC);
            uint64_t total = sbx_result_timing(r, SBX_TIMING_TOTAL);
            b->phase_ns[3][i] = b->lat_ns[i] > total ? b->lat_ns[i] - total : 0;
        }
        sbx_result_free(r);
        if (b->rss_every && (i + 1) % b->rss_every == 0 && (i + 1) / b->rss_every <= RSS_SAMPLES)
            b->rss_kib[(i + 1) / b->rss_every - 1] = rss_now();
    }
    return NULL;
}

/* Appends "key=value" to $BENCH_SAVE, if set, for the summary of run.sh. */
static void save(const char *key, double v)
{
    const char *path = getenv("BENCH_SAVE");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "ae");
    if (!f) {
        fprintf(stderr, "bench-runs: BENCH_SAVE %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "%s=%.3f\n", key, v);
    fclose(f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void release(struct bench *b)
{
    free(b->lat_ns);
    b->lat_ns = NULL;
    for (int k = 0; k < 4; k++) {
        free(b->phase_ns[k]);
        b->phase_ns[k] = NULL;
    }
    b->lat_cap = 0;
}

/* Room for @runs timings, touched so that it is resident already. */
static int reserve(struct bench *b, long runs)
{
    release(b);
    size_t sz = (size_t)runs * sizeof(uint64_t);
    if (!(b->lat_ns = malloc(sz)))
        return -1;
    memset(b->lat_ns, 0, sz);
    for (int k = 0; k < 4; k++) {
        if (!(b->phase_ns[k] = malloc(sz))) {
            release(b);
            return -1;
        }
        memset(b->phase_ns[k], 0, sz);
    }
    b->lat_cap = runs;
    return 0;
}

/* RUNS runs on THREADS threads, or as many as they start in @seconds
 * (when not 0); prints a line unless @label is NULL. */
static int batch(struct bench *b, long runs, long seconds, int threads, const char *label)
{
    pthread_t tid[MAX_THREADS];
    b->total = runs;
    atomic_store(&b->next, 0);
    atomic_store(&b->failed, 0);
    atomic_store(&b->reported, 0);
    if (runs > b->lat_cap && reserve(b, runs)) {
        fprintf(stderr, "bench-runs: out of memory\n");
        return 1;
    }
    uint64_t t0 = now_ns();
    b->deadline_ns = seconds ? t0 + (uint64_t)seconds * 1000000000u : 0;
    int started = 0;
    for (; started < threads; started++) {
        int e = pthread_create(&tid[started], NULL, worker, b);
        if (e) {
            fprintf(stderr, "bench-runs: pthread_create: %s\n", strerror(e));
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    double secs = (double)(now_ns() - t0) / 1e9;
    if (started < threads)
        return 1;
    if (seconds && atomic_load(&b->next) < runs)
        runs = atomic_load(&b->next);   /* every run started has ended */
    if (runs == 0) {
        fprintf(stderr, "bench-runs: no run in %ld s\n", seconds);
        return 1;
    }
    qsort(b->lat_ns, (size_t)runs, sizeof *b->lat_ns, cmp_u64);
    for (int k = 0; k < 4; k++)
        qsort(b->phase_ns[k], (size_t)runs, sizeof *b->phase_ns[k], cmp_u64);
    if (label)
        printf("%-24s %6ld runs in %7.2f s = %8.1f runs/s   "
               "(one run: median %.2f ms, p90 %.2f ms)%s\n",
               label, runs, secs, (double)runs / secs, (double)b->lat_ns[runs / 2] / 1e6,
               (double)b->lat_ns[runs * 9 / 10] / 1e6,
               atomic_load(&b->failed) ? "  FAILED RUNS" : "");
    if (label)
        printf("%-24s medians as the results report: create %.2f ms, start %.2f ms, "
               "exec %.2f ms; outside its total %.3f ms\n", "",
               (double)b->phase_ns[0][runs / 2] / 1e6, (double)b->phase_ns[1][runs / 2] / 1e6,
               (double)b->phase_ns[2][runs / 2] / 1e6, (double)b->phase_ns[3][runs / 2] / 1e6);
    if (label && !atomic_load(&b->failed)) {
        char key[64];
        snprintf(key, sizeof key, "rate.%s.t%d", b->save_as, threads);
        save(key, (double)runs / secs);
        snprintf(key, sizeof key, "median.%s.t%d", b->save_as, threads);
        save(key, (double)b->lat_ns[runs / 2] / 1e6);
        snprintf(key, sizeof key, "outside.%s.t%d", b->save_as, threads);
        save(key, (double)b->phase_ns[3][runs / 2] / 1e6);
    }
    fflush(stdout);
    if (atomic_load(&b->failed)) {
        fprintf(stderr, "bench-runs: %ld of %ld runs failed\n", atomic_load(&b->failed), runs);
        return 1;
    }
    return 0;
}

static long parse_long(const char *s, const char *what, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s ? s : "", &end, 10);
    if (!s || errno || *end || end == s || v < min || v > max) {
        fprintf(stderr, "bench-runs: %s '%s': give a number from %ld to %ld\n", what,
                s ? s : "", min, max);
        exit(2);
    }
    return v;
}

/* Prints one row of the leak table; returns 1 if it leaked. */
static int row(const char *name, long before, long after, long allowed)
{
    int bad = before < 0 || after < 0 || after - before > allowed;
    printf("  %-34s before %8ld   after %8ld   %s\n", name, before, after,
           before < 0 || after < 0 ? "UNREADABLE" : bad ? "LEAK" : "ok");
    return bad;
}

static int leak_report(struct bench *b, const struct bench_snap *s0, const struct bench_snap *s1,
                       long warm, long runs, const char *state_dir)
{
    int bad = 0;
    printf("-- after %ld runs (and %ld warm-up runs before the first snapshot):\n", runs, warm);
    bad |= row("open fds of this process", s0->fds, s1->fds, 0);
    /* Other programs may mount meanwhile: only the state directory's
     * mounts count as ours; the total is shown for information. */
    printf("  %-34s before %8ld   after %8ld   (all processes; informational)\n",
           "mountinfo lines", s0->mounts, s1->mounts);
    bad |= row("mounts naming the state dir", s0->state_mounts, s1->state_mounts, 0);
    bad |= row("cgroups of this process", s0->cgroups, s1->cgroups, 0);
    bad |= row("sandbox state dirs (lcl-*)", s0->state_dirs, s1->state_dirs, 0);
    bad |= row("leftover processes", s0->procs, s1->procs, 0);
    bad |= row("threads of this process", s0->threads, s1->threads, 0);
    long growth = s1->rss_kib - s0->rss_kib;
    int rss_bad = s0->rss_kib < 0 || s1->rss_kib < 0 || growth > RSS_LEAK_KIB;
    printf("  %-34s before %8ld   after %8ld   growth %ld KiB = %.1f KiB per 1000 runs   %s\n",
           "RSS (KiB)", s0->rss_kib, s1->rss_kib, growth,
           runs ? (double)growth * 1000.0 / (double)runs : 0.0, rss_bad ? "LEAK (> 1 MiB)" : "ok");
    bad |= rss_bad;
    printf("  %-34s anon %ld -> %ld KiB, file %ld -> %ld KiB   (informational)\n",
           "  of which", s0->rss_anon_kib, s1->rss_anon_kib, s0->rss_file_kib, s1->rss_file_kib);
    /* In-use heap tells a leak from fragmentation or pages first touched. */
    long heap = s1->heap_bytes - s0->heap_bytes;
    printf("  %-34s before %8ld   after %8ld   growth %ld B = %.1f B per run   (informational)\n",
           "heap in use (bytes, mallinfo2)", s0->heap_bytes, s1->heap_bytes, heap,
           runs ? (double)heap / (double)runs : 0.0);
    printf("  %-34s before %8ld   after %8ld   (informational: held by malloc)\n",
           "heap from the system (bytes)", s0->arena_bytes, s1->arena_bytes);
    if (b->rss_every) {
        printf("  RSS every %ld runs (KiB):", b->rss_every);
        for (long i = 0; i < RSS_SAMPLES && (i + 1) * b->rss_every <= runs; i++)
            printf(" %ld", b->rss_kib[i]);
        printf("\n");
    }
    if (s1->state_mounts > 0 || s1->cgroups > 0 || s1->state_dirs > 0 || s1->procs > 0) {
        printf("  left over now:\n");
        bench_snap_list_leftovers(stdout, "    ", state_dir);
    }
    printf("leak check: %s\n", bad ? "LEAKED" : "nothing leaked");
    save("leak.runs", (double)runs);
    save("leak.ok", bad ? 0.0 : 1.0);
    save("leak.rss_kib_per_1000", runs ? (double)growth * 1000.0 / (double)runs : 0.0);
    return bad;
}

int main(int argc, char **argv)
{
    int threads = 1;
    long runs = 1000, warm = 0, seconds = 0, mib = 0, dirty = 0;
    bool leak = false, inject = false;
    const char *def_argv[] = {"/bin/true", NULL};
    const char *const *cmd = def_argv;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc)
            threads = (int)parse_long(argv[++i], "-t", 1, MAX_THREADS);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            runs = parse_long(argv[++i], "-n", 1, 100000000);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc)
            seconds = parse_long(argv[++i], "-d", 1, 3600);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warm = parse_long(argv[++i], "-w", 0, 100000000);
        else if (!strcmp(argv[i], "-m") && i + 1 < argc)
            mib = parse_long(argv[++i], "-m", 0, 65536);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            dirty = parse_long(argv[++i], "-p", 0, 16777216);
        else if (!strcmp(argv[i], "--leak"))
            leak = true;
        else if (!strcmp(argv[i], "--inject-leak"))
            leak = inject = true;
        else if (!strcmp(argv[i], "--") && i + 1 < argc) {
            cmd = (const char *const *)&argv[i + 1];
            break;
        } else {
            fprintf(stderr, "usage: bench-runs [-t THREADS] [-n RUNS | -d SECONDS] "
                            "[-w WARMUP] [-m MIB [-p PAGES]] [--leak | --inject-leak] "
                            "[-- ARGV...]\n");
            return 2;
        }
    }
    if (seconds && leak) {
        fprintf(stderr, "bench-runs: -d measures a rate, not leaks: give -n with --leak\n");
        return 2;
    }
    if (seconds)
        runs = seconds * MAX_RATE;   /* room; the clock ends it */
    const char *sd_env = getenv("POLYSANDBOX_STATE_DIR");
    char state_dir[4096];
    if (leak && (!sd_env || !*sd_env)) {
        fprintf(stderr, "bench-runs: --leak needs POLYSANDBOX_STATE_DIR (a private one)\n");
        return 2;
    }
    snprintf(state_dir, sizeof state_dir, "%s/local", sd_env ? sd_env : "");

    struct bench b;
    memset(&b, 0, sizeof b);
    b.save_as = leak ? "lib.leak" : mib ? "lib.ballast" : "lib";
    b.dirty_pages = mib ? dirty : 0;
    int ret = 1;
    if (mib && ballast_map(&b, mib) < 0) {
        fprintf(stderr, "bench-runs: -m %ld: %s\n", mib, strerror(errno));
        goto out;
    }
    if (sbx_ctx_new(&b.ctx, NULL) != SBX_OK) {
        fprintf(stderr, "bench-runs: %s\n",
                b.ctx ? sbx_error_message(sbx_ctx_last_error(b.ctx)) : "sbx_ctx_new failed");
        goto out;
    }
    if (!(b.x = sbx_exec_opts_new()) || sbx_exec_opts_set_argv(b.x, cmd) != SBX_OK) {
        fprintf(stderr, "bench-runs: cannot set up the exec options\n");
        goto out;
    }
    char label[64];
    snprintf(label, sizeof label, "library, %d thread%s%s:", threads, threads > 1 ? "s" : "",
             mib ? ", ballast" : "");
    if (!leak) {
        if ((ret = batch(&b, warm ? warm : 20, 0, threads, NULL)) == 0)
            ret = batch(&b, runs, seconds, threads, label);
        goto out;
    }
    struct bench_snap s0, s1;
    if (warm && (ret = batch(&b, warm, 0, threads, NULL)))
        goto out;
    /* The timings of the measured batch are allocated (and resident)
     * before the first snapshot, so they do not count as growth. */
    if (reserve(&b, runs)) {
        fprintf(stderr, "bench-runs: out of memory\n");
        ret = 1;
        goto out;
    }
    b.rss_every = runs >= 10 ? runs / 10 : 0;
    /* Printed before the first snapshot: stdout's buffer is allocated now. */
    printf("== leak check: %ld runs on %d thread%s (state dir %s)\n", runs, threads,
           threads > 1 ? "s" : "", state_dir);
    fflush(stdout);
    bench_snap_take(&s0, state_dir);
    ret = batch(&b, runs, 0, threads, label);
    struct bench_inject in;
    if (inject)
        bench_inject_leak(&in, state_dir);
    bench_snap_take(&s1, state_dir);
    ret |= leak_report(&b, &s0, &s1, warm, runs, state_dir);
    if (inject)
        bench_inject_undo(&in);
out:
    if (b.ballast)
        munmap(b.ballast, b.ballast_len);
    release(&b);
    sbx_exec_opts_free(b.x);
    sbx_ctx_free(b.ctx);
    return ret;
}
