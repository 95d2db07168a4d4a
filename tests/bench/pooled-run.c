/* tests/bench/pooled-run.c - code run through a warm pool, to its first
 * output
 *
 * Usage: pooled-run [-p PROVIDER] [-T TEMPLATE] [-s SIZE] [-n RUNS]
 *                   [-w SECONDS] [-W WARM] [-k] LANG CODE
 *
 * One context with the pool "pooled" of SIZE sandboxes of PROVIDER and
 * TEMPLATE (default: LANG), with warm = WARM when given (code each new
 * sandbox runs before it is ready); waits (at most SECONDS, 600 by default) until
 * it is full, then RUNS times (1 by default): waits for it to be full
 * again (the background refill) and runs CODE with sbx_run on the
 * pool's key.  Prints a line per run:
 *
 *   run I pool=NAME first_ms=F total_ms=T create_ms=C start_ms=S exec_ms=E
 *       status=S stdout=TEXT
 *
 * pool= is sbx_result_pool() ("-" for a miss), first_ms the time from
 * sbx_run's call to the first output byte (what a caller of a pooled run
 * waits for), total_ms its return, the result's timings (create: the
 * wait for the pool's sandbox), TEXT the output with newlines as \n.
 * Then, once the pool is full again and every lent sandbox destroyed:
 *
 *   pool ready=R created=C hits=H misses=M destroyed=D children=N pids=P,...
 *
 * children: this process's child processes, and their pids ("-" for
 * none): a VM provider's VMMs are its children, so one that a destroyed
 * VM left behind shows, and the caller can see the rest go once this
 * process is done.  With -k the process then kills itself (SIGKILL),
 * as a crash would, rather than free the context: its pool's sandboxes
 * must not outlive it all the same.  RUNS may be 0 (fill the pool,
 * print its line).  The context is freed
 * last (the pool's sandboxes destroyed).  Exits 1 when a run failed or
 * the pool did not fill, 2 on a usage error.  Used by
 * tests/microvm/pool.sh and tests/bench/microvm.sh; needs the tests'
 * environment (POLYSANDBOX_CONFIG_DIR, _PROVIDER_PATH, _STATE_DIR).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#define POOL "pooled"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct first {
    uint64_t at;            /* monotonic ns of the first output byte, 0 before */
};

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    struct first *f = ud;

    (void)stream;
    (void)buf;
    if (!f->at && len)
        f->at = now_ns();
    return 0;
}

/* This process's children (the VMMs of a VM provider) into @pids, as
 * "PID,PID" ("-" for none); returns how many. */
static int children(char *pids, size_t n)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    size_t used = 0;
    int k = 0;

    snprintf(pids, n, "-");
    while (d && (de = readdir(d))) {
        char path[300], line[1024];
        if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, line, sizeof line - 1);
        close(fd);
        if (got <= 0)
            continue;
        line[got] = '\0';
        /* pid (comm) state ppid: comm may hold anything but ends at the last ')' */
        const char *rp = strrchr(line, ')');
        char st;
        long ppid;
        if (!rp || sscanf(rp + 1, " %c %ld", &st, &ppid) != 2 || ppid != (long)getpid())
            continue;
        if (used < n)
            used += (size_t)snprintf(pids + used, n - used, "%s%s", k ? "," : "", de->d_name);
        k++;
    }
    if (d)
        closedir(d);
    return k;
}

static void print_text(const void *p, size_t len)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n')
            fputs("\\n", stdout);
        else
            putchar(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
    }
}

static int stats(sbx_ctx *ctx, uint64_t *st)
{
    return sbx_pool_stats(ctx, POOL, st, SBX_POOL_STAT_COUNT);
}

int main(int argc, char **argv)
{
    const char *provider = NULL, *tmpl = NULL, *warm = NULL;
    long runs = 1, size = 1, wait_s = 600;
    char o_size[64], o_prov[160], o_tmpl[160], o_warm[600];
    const char *ov[5];
    size_t n_ov = 0;
    sbx_ctx *ctx = NULL;
    sbx_create_opts *co = NULL;
    sbx_exec_opts *x = NULL;
    uint64_t st[SBX_POOL_STAT_COUNT];
    int c, status = 1;
    bool kill_self = false;

    while ((c = getopt(argc, argv, "p:T:s:n:w:W:k")) != -1) {
        switch (c) {
        case 'p': provider = optarg; break;
        case 'T': tmpl = optarg; break;
        case 's': size = atol(optarg); break;
        case 'n': runs = atol(optarg); break;
        case 'w': wait_s = atol(optarg); break;
        case 'k': kill_self = true; break;
        case 'W': warm = optarg; break;
        default: goto usage;
        }
    }
    if (argc - optind != 2 || size < 1 || runs < 0 || wait_s < 1)
        goto usage;
    const char *lang = argv[optind], *code = argv[optind + 1];
    uint64_t wait_ns = (uint64_t)wait_s * 1000000000u;
    if (!tmpl)
        tmpl = lang;

    snprintf(o_size, sizeof o_size, "pool." POOL ".size=%ld", size);
    snprintf(o_tmpl, sizeof o_tmpl, "pool." POOL ".template=%s", tmpl);
    ov[n_ov++] = o_size;
    ov[n_ov++] = o_tmpl;
    if (provider) {
        snprintf(o_prov, sizeof o_prov, "pool." POOL ".provider=%s", provider);
        ov[n_ov++] = o_prov;
    }
    if (warm) {
        snprintf(o_warm, sizeof o_warm, "pool." POOL ".warm=%s", warm);
        ov[n_ov++] = o_warm;
    }
    ov[n_ov] = NULL;
    if (!(co = sbx_create_opts_new()) || !(x = sbx_exec_opts_new()) ||
        (provider && sbx_create_opts_set_provider(co, provider) != SBX_OK) ||
        sbx_create_opts_set_template(co, tmpl) != SBX_OK ||
        sbx_exec_opts_set_code(x, lang, code, (size_t)-1) != SBX_OK) {
        fputs("pooled-run: bad options or out of memory\n", stderr);
        goto out;
    }
    if (sbx_ctx_new_with(&ctx, NULL, ov) != SBX_OK || sbx_pool_wait(ctx, POOL, wait_ns)) {
        fprintf(stderr, "pooled-run: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
        goto out;
    }
    for (long i = 1; i <= runs; i++) {
        struct first f = { 0 };
        sbx_result *r = NULL;
        size_t len = 0;

        if (sbx_pool_wait(ctx, POOL, wait_ns) != SBX_OK ||
            sbx_exec_opts_set_output_cb(x, on_output, &f) != SBX_OK) {
            fprintf(stderr, "pooled-run: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
            goto out;
        }
        uint64_t t0 = now_ns();
        int rc = sbx_run(ctx, co, x, &r);
        uint64_t t1 = now_ns();
        if (rc != SBX_OK) {
            fprintf(stderr, "pooled-run: run %ld: %s\n", i,
                    sbx_error_message(sbx_ctx_last_error(ctx)));
            goto out;
        }
        const void *out = sbx_result_stdout(r, &len);
        printf("run %ld pool=%s first_ms=%.1f total_ms=%.1f create_ms=%.1f start_ms=%.1f "
               "exec_ms=%.1f status=%s stdout=", i,
               sbx_result_pool(r) ? sbx_result_pool(r) : "-",
               f.at ? (double)(f.at - t0) / 1e6 : -1.0, (double)(t1 - t0) / 1e6,
               (double)sbx_result_timing(r, SBX_TIMING_CREATE) / 1e6,
               (double)sbx_result_timing(r, SBX_TIMING_START) / 1e6,
               (double)sbx_result_timing(r, SBX_TIMING_EXEC) / 1e6,
               sbx_run_status_name(sbx_result_status(r)));
        print_text(out, len);
        putchar('\n');
        fflush(stdout);
        if (sbx_result_status(r) != SBX_RUN_OK) {
            fprintf(stderr, "pooled-run: run %ld: %s\n", i,
                    sbx_result_error(r) ? sbx_result_error(r) : "not ok");
            sbx_result_free(r);
            goto out;
        }
        sbx_result_free(r);
    }
    /* Refilled, and every lent sandbox destroyed (in the background). */
    uint64_t end = now_ns() + wait_ns;
    while (sbx_pool_wait(ctx, POOL, wait_ns) == SBX_OK && stats(ctx, st) == SBX_OK &&
           st[SBX_POOL_STAT_DESTROYED] < st[SBX_POOL_STAT_HITS] && now_ns() < end) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (sbx_pool_wait(ctx, POOL, wait_ns) != SBX_OK || stats(ctx, st) != SBX_OK) {
        fprintf(stderr, "pooled-run: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
        goto out;
    }
    char pids[1024];
    int nkids = children(pids, sizeof pids);
    printf("pool ready=%llu created=%llu hits=%llu misses=%llu destroyed=%llu children=%d "
           "pids=%s\n",
           (unsigned long long)st[SBX_POOL_STAT_READY],
           (unsigned long long)st[SBX_POOL_STAT_CREATED],
           (unsigned long long)st[SBX_POOL_STAT_HITS],
           (unsigned long long)st[SBX_POOL_STAT_MISSES],
           (unsigned long long)st[SBX_POOL_STAT_DESTROYED], nkids, pids);
    fflush(stdout);
    if (kill_self)
        raise(SIGKILL);
    status = 0;
out:
    sbx_ctx_free(ctx);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(co);
    return status;
usage:
    fputs("usage: pooled-run [-p PROVIDER] [-T TEMPLATE] [-s SIZE] [-n RUNS] [-w SECONDS] "
          "[-W WARM] [-k] LANG CODE\n", stderr);
    return 2;
}
