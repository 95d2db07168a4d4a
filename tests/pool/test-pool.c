/* tests/pool/test-pool.c - warm pools through the public API, on the local
 * provider (real namespaces)
 *
 * Every context gets a state directory of its own (core.state_dir), so the
 * test can count the sandboxes a pool holds (directories lcl-* under
 * STATE/local) and check that sbx_ctx_free leaves none behind.  Pools are
 * configured with "pool.NAME.KEY=VALUE" overrides, as an embedder would;
 * the configuration errors are checked with pools.d/ files too.
 *
 * Nothing here is timed: waits have generous deadlines and only their
 * outcome is asserted.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "../unit/tap.h"

#define S UINT64_C(1000000000)
#define WAIT (120 * S)

static char root[256];
static int n_state;

static void bail(const char *what)
{
    printf("Bail out! %s: %s\n", what, strerror(errno));
    exit(99);
}

/* A fresh state directory for one context; its path in @buf. */
static void new_state(char *buf, size_t size)
{
    snprintf(buf, size, "%s/state%d", root, ++n_state);
    if (mkdir(buf, 0700) != 0)
        bail("mkdir");
}

static int count_one(void *ud, const char *id, const char *const *labels, size_t n,
                     uint64_t created)
{
    (void)id, (void)labels, (void)n, (void)created;
    ++*(int *)ud;
    return 0;
}

/* Sandboxes the local provider holds for @state, as its list sees them
 * (a one-shot sandbox lives on a tmpfs, not under @state). */
static int count_sandboxes(const char *state)
{
    char sd[600];
    const char *ov[] = { sd, "core.pools=false", NULL };
    sbx_ctx *ctx = NULL;
    int n = 0;

    snprintf(sd, sizeof sd, "core.state_dir=%s", state);
    if (sbx_ctx_new_with(&ctx, NULL, ov) != SBX_OK || sbx_list(ctx, "local", count_one, &n) != SBX_OK)
        n = -1;
    sbx_ctx_free(ctx);
    return n;
}

/* A context with @state and the overrides (NULL-terminated). */
static sbx_ctx *ctx_with(const char *state, const char *const *pool_overrides)
{
    const char *ov[32];
    char sd[600];
    size_t n = 0;
    sbx_ctx *ctx = NULL;

    snprintf(sd, sizeof sd, "core.state_dir=%s", state);
    ov[n++] = sd;
    for (size_t i = 0; pool_overrides && pool_overrides[i] && n < 31; i++)
        ov[n++] = pool_overrides[i];
    ov[n] = NULL;
    if (sbx_ctx_new_with(&ctx, NULL, ov) != SBX_OK) {
        diag("sbx_ctx_new_with: %s", sbx_error_message(sbx_ctx_last_error(ctx)));
        sbx_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

static uint64_t stat_of(sbx_ctx *ctx, const char *pool, sbx_pool_stat which)
{
    uint64_t v[SBX_POOL_STAT_COUNT];

    if (sbx_pool_stats(ctx, pool, v, SBX_POOL_STAT_COUNT) != SBX_OK)
        return UINT64_MAX;
    return v[which];
}

/* Wait (with a deadline) until stat @which of @pool is at least @want. */
static bool wait_stat(sbx_ctx *ctx, const char *pool, sbx_pool_stat which, uint64_t want)
{
    struct timespec ts = {0, 20 * 1000 * 1000};

    for (int i = 0; i < 6000; i++) {
        uint64_t v = stat_of(ctx, pool, which);
        if (v != UINT64_MAX && v >= want)
            return true;
        nanosleep(&ts, NULL);
    }
    return false;
}

/* sbx_run of a shell line with @copts; the result's status, exit code,
 * sandbox id and stdout. */
typedef struct outcome {
    int rc;
    sbx_run_status status;
    int exit_code;
    char id[SBX_ID_MAX];
    char out[256];
    char pool[64];          /* sbx_result_pool, "" for none */
} outcome;

static outcome run_sh(sbx_ctx *ctx, const sbx_create_opts *co, const char *line)
{
    outcome o;
    sbx_exec_opts *x = sbx_exec_opts_new();
    sbx_result *r = NULL;
    size_t len = 0;
    const void *p;

    memset(&o, 0, sizeof o);
    o.status = SBX_RUN_SANDBOX_ERROR;
    if (!x || sbx_exec_opts_set_shell(x, line) != SBX_OK)
        bail("exec opts");
    o.rc = sbx_run(ctx, co, x, &r);
    if (o.rc == SBX_OK) {
        o.status = sbx_result_status(r);
        o.exit_code = sbx_result_exit_code(r);
        snprintf(o.id, sizeof o.id, "%s", sbx_result_sandbox_id(r));
        snprintf(o.pool, sizeof o.pool, "%s", sbx_result_pool(r) ? sbx_result_pool(r) : "");
        p = sbx_result_stdout(r, &len);
        if (len >= sizeof o.out)
            len = sizeof o.out - 1;
        memcpy(o.out, p, len);
        o.out[len] = '\0';
        if (o.status == SBX_RUN_SANDBOX_ERROR)
            diag("sandbox error: %s", sbx_result_error(r));
    } else {
        diag("sbx_run: %s", sbx_error_message(sbx_ctx_last_error(ctx)));
    }
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    return o;
}

/* Counts listed sandboxes labelled polysandbox.pool=w with an expiry. */
static int on_list(void *ud, const char *id, const char *const *labels, size_t n,
                   uint64_t created)
{
    bool pool = false, expires = false;

    (void)id;
    (void)created;
    for (size_t i = 0; i < n; i++) {
        pool = pool || !strcmp(labels[i], "polysandbox.pool=w");
        expires = expires || !strncmp(labels[i], "polysandbox.expires=", 20);
    }
    *(int *)ud += pool && expires;
    return 0;
}

/* ---- warm, hit, fresh, refill, shutdown --------------------------------------- */

static void test_warm_hit_fresh(void)
{
    char state[300];
    const char *ov[] = {"pool.w.size=3", NULL};
    sbx_ctx *ctx;
    outcome a, b;

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, ov)) != NULL, "a context with pool.w.size=3"))
        return;
    ok(sbx_ctx_pool_count(ctx) == 1 && !strcmp(sbx_ctx_pool_name(ctx, 0), "w"),
       "the context has the pool 'w'");
    ok(sbx_pool_provider(ctx, "w") && !strcmp(sbx_pool_provider(ctx, "w"), "local") &&
       sbx_pool_template(ctx, "w") == NULL, "its key: provider local, no template");
    ok(sbx_pool_wait(ctx, "w", WAIT) == SBX_OK, "the pool warms up");
    ok(stat_of(ctx, "w", SBX_POOL_STAT_READY) == 3 && stat_of(ctx, "w", SBX_POOL_STAT_SIZE) == 3,
       "stats: 3 ready of size 3");
    ok(count_sandboxes(state) == 3, "3 sandboxes exist in the state directory");
    int labelled = 0;
    ok(sbx_list(ctx, "local", on_list, &labelled) == SBX_OK && labelled == 3,
       "each carries polysandbox.pool and an expiry, for gc after a crash");
    ok(stat_of(ctx, "w", SBX_POOL_STAT_ACTIVE) == 1, "stats: active");

    a = run_sh(ctx, NULL, "echo one > /work/mark; echo ran");
    ok(a.rc == SBX_OK && a.status == SBX_RUN_OK && !strcmp(a.out, "ran\n"),
       "run 1 through the pool is ok");
    ok(stat_of(ctx, "w", SBX_POOL_STAT_HITS) == 1 && stat_of(ctx, "w", SBX_POOL_STAT_MISSES) == 0,
       "run 1 was a hit");
    b = run_sh(ctx, NULL, "test -e /work/mark && echo seen || echo fresh");
    ok(b.rc == SBX_OK && !strcmp(b.out, "fresh\n"), "run 2 does not see run 1's file");
    ok(strcmp(a.id, b.id) != 0 && a.id[0], "run 2 had another sandbox than run 1");
    ok(stat_of(ctx, "w", SBX_POOL_STAT_HITS) == 2, "run 2 was a hit");
    ok(sbx_pool_wait(ctx, "w", WAIT) == SBX_OK &&
       stat_of(ctx, "w", SBX_POOL_STAT_READY) == 3, "the pool refills to 3 after the takes");
    ok(wait_stat(ctx, "w", SBX_POOL_STAT_DESTROYED, 2),
       "the used sandboxes are destroyed (in the background)");
    ok(stat_of(ctx, "w", SBX_POOL_STAT_CREATED) == 5, "5 created in all");

    /* A request with another key: not the pool's business. */
    sbx_create_opts *co = sbx_create_opts_new();
    sbx_create_opts_set_limit(co, SBX_LIMIT_MEMORY, UINT64_C(256) << 20);
    a = run_sh(ctx, co, "echo other");
    ok(a.rc == SBX_OK && a.status == SBX_RUN_OK, "a run with another memory limit is ok");
    ok(stat_of(ctx, "w", SBX_POOL_STAT_HITS) == 2 && stat_of(ctx, "w", SBX_POOL_STAT_MISSES) == 0 &&
       stat_of(ctx, "w", SBX_POOL_STAT_READY) == 3,
       "another key takes nothing from the pool (hits 2, misses 0, 3 ready)");
    sbx_create_opts_free(co);
    co = sbx_create_opts_new();
    sbx_create_opts_add_label(co, "job", "x");
    a = run_sh(ctx, co, "true");
    ok(a.rc == SBX_OK && stat_of(ctx, "w", SBX_POOL_STAT_HITS) == 2,
       "a run with its own labels is not served by the pool");
    sbx_create_opts_free(co);
    co = sbx_create_opts_new();
    sbx_create_opts_set_provider(co, "local");
    a = run_sh(ctx, co, "true");
    ok(a.rc == SBX_OK && stat_of(ctx, "w", SBX_POOL_STAT_HITS) == 3,
       "naming the pool's provider explicitly is the same key: a hit");
    sbx_create_opts_free(co);

    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "sbx_ctx_free destroyed every sandbox of the pool");
}

/* ---- idle expiry, refill on demand, a miss ------------------------------------- */

static void test_idle(void)
{
    char state[300];
    const char *replace[] = {"pool.i.size=2", "pool.i.idle_timeout=300ms", NULL};
    const char *dormant[] = {"pool.d.size=1", "pool.d.idle_timeout=300ms",
                             "pool.d.replace_idle=false", "pool.d.parallel=1", NULL};
    sbx_ctx *ctx;
    outcome a;

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, replace)) != NULL, "a pool with idle_timeout = 300ms"))
        return;
    ok(wait_stat(ctx, "i", SBX_POOL_STAT_EXPIRED, 4),
       "idle sandboxes expire, again and again (replaced each time)");
    ok(sbx_pool_wait(ctx, "i", WAIT) == SBX_OK, "and the pool is full again");
    ok(stat_of(ctx, "i", SBX_POOL_STAT_CREATED) >= 6, "replacements were created");
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "nothing left after sbx_ctx_free");

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, dormant)) != NULL, "a pool with replace_idle = false"))
        return;
    ok(wait_stat(ctx, "d", SBX_POOL_STAT_EXPIRED, 1), "its sandbox expires");
    ok(stat_of(ctx, "d", SBX_POOL_STAT_READY) == 0 &&
       stat_of(ctx, "d", SBX_POOL_STAT_CREATING) == 0 &&
       stat_of(ctx, "d", SBX_POOL_STAT_CREATED) == 1,
       "and is not replaced while nobody runs");
    a = run_sh(ctx, NULL, "echo miss");
    ok(a.rc == SBX_OK && a.status == SBX_RUN_OK && !strcmp(a.out, "miss\n"),
       "a run with the pool empty still runs");
    ok(stat_of(ctx, "d", SBX_POOL_STAT_MISSES) == 1 && stat_of(ctx, "d", SBX_POOL_STAT_HITS) == 0,
       "it is counted as a miss");
    /* Not sbx_pool_wait: on a loaded machine the refill may idle past its
     * 300 ms and expire (the pool dormant again) before the wait looks. */
    ok(wait_stat(ctx, "d", SBX_POOL_STAT_CREATED, 2) &&
       stat_of(ctx, "d", SBX_POOL_STAT_CREATED) == 2,
       "the run woke the pool: it refilled");
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "nothing left after sbx_ctx_free");
}

/* ---- reuse with a reset ---------------------------------------------------------- */

static void test_reuse(void)
{
    char state[300];
    const char *good[] = {"pool.r.size=1", "pool.r.parallel=1", "pool.r.reuse=true",
                          "pool.r.reset=find /work -mindepth 1 -delete", NULL};
    const char *bad[] = {"pool.f.size=1", "pool.f.parallel=1", "pool.f.reuse=yes",
                         "pool.f.reset=exit 3", NULL};
    sbx_ctx *ctx;
    outcome a, b;

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, good)) != NULL, "a pool with reuse = true and a reset"))
        return;
    ok(sbx_pool_wait(ctx, "r", WAIT) == SBX_OK, "it warms up");
    a = run_sh(ctx, NULL, "echo one > /work/mark; echo ran");
    ok(a.rc == SBX_OK && !strcmp(a.out, "ran\n"), "run 1 is ok");
    ok(wait_stat(ctx, "r", SBX_POOL_STAT_REUSED, 1), "its sandbox is reset and ready again");
    b = run_sh(ctx, NULL, "test -e /work/mark && echo seen || echo fresh");
    ok(!strcmp(a.id, b.id), "run 2 had the same sandbox (reused)");
    ok(!strcmp(b.out, "fresh\n"), "and the reset removed run 1's file");
    ok(stat_of(ctx, "r", SBX_POOL_STAT_CREATED) == 1 && stat_of(ctx, "r", SBX_POOL_STAT_HITS) == 2,
       "one sandbox created for two hits");
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "nothing left after sbx_ctx_free");

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, bad)) != NULL, "a pool whose reset fails"))
        return;
    ok(sbx_pool_wait(ctx, "f", WAIT) == SBX_OK, "it warms up");
    a = run_sh(ctx, NULL, "echo ran");
    ok(a.rc == SBX_OK && !strcmp(a.out, "ran\n"), "run 1 is ok");
    ok(wait_stat(ctx, "f", SBX_POOL_STAT_RESET_FAILURES, 1), "the reset fails");
    ok(wait_stat(ctx, "f", SBX_POOL_STAT_DESTROYED, 1), "so the sandbox is destroyed");
    ok(sbx_pool_wait(ctx, "f", WAIT) == SBX_OK && stat_of(ctx, "f", SBX_POOL_STAT_CREATED) == 2 &&
       stat_of(ctx, "f", SBX_POOL_STAT_REUSED) == 0, "and replaced by a new one");
    b = run_sh(ctx, NULL, "true");
    ok(b.rc == SBX_OK && strcmp(a.id, b.id) != 0, "run 2 has another sandbox");
    char msg[512];
    ok(sbx_pool_last_error(ctx, "f", msg, sizeof msg) == SBX_OK && strstr(msg, "exit 3"),
       "the pool's last error tells the reset failed (%s)", msg);
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "nothing left after sbx_ctx_free");
}

/* ---- warm code ------------------------------------------------------------------------ */

static void test_warm(void)
{
    char state[300];
    const char *good[] = {"pool.w.size=1", "pool.w.parallel=1", "pool.w.template=python",
                          "pool.w.warm=open('/work/warmed', 'w').write('1')", NULL};
    const char *bad[] = {"pool.f.size=1", "pool.f.parallel=1", "pool.f.template=python",
                         "pool.f.warm=raise SystemExit(3)", NULL};
    sbx_create_opts *co = sbx_create_opts_new();
    sbx_ctx *ctx;
    outcome a, b;

    if (!co || sbx_create_opts_set_template(co, "python") != SBX_OK)
        bail("create opts");
    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, good)) != NULL, "a pool with warm code"))
        goto out;
    ok(sbx_pool_wait(ctx, "w", WAIT) == SBX_OK, "it fills");
    a = run_sh(ctx, co, "test -e /work/warmed && echo warmed || echo cold");
    ok(a.rc == SBX_OK && !strcmp(a.out, "warmed\n"), "the run's sandbox ran the warm code first");
    ok(!strcmp(a.pool, "w"), "the result names the pool it came from (sbx_result_pool: %s)",
       a.pool);
    b = run_sh(ctx, NULL, "echo x");
    ok(b.rc == SBX_OK && !b.pool[0], "a run off the pool's key names none");
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "nothing left after sbx_ctx_free");

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, bad)) != NULL, "a pool whose warm code fails"))
        goto out;
    ok(wait_stat(ctx, "f", SBX_POOL_STAT_FAILURES, 1), "a failed warm is a failed create");
    char msg[512];
    ok(sbx_pool_last_error(ctx, "f", msg, sizeof msg) == SBX_OK && strstr(msg, "warm") &&
       strstr(msg, "exit 3"), "the pool's last error says the warm code failed (%s)", msg);
    ok(stat_of(ctx, "f", SBX_POOL_STAT_READY) == 0, "no sandbox is made ready");
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "its sandboxes were destroyed");
out:
    sbx_create_opts_free(co);
}

/* ---- many threads at once ------------------------------------------------------------ */

struct par {
    sbx_ctx *ctx;
    int good;
};

static void *runner(void *arg)
{
    struct par *p = arg;

    for (int i = 0; i < 5; i++) {
        outcome o = run_sh(p->ctx, NULL, "echo hi");
        p->good += o.rc == SBX_OK && o.status == SBX_RUN_OK && !strcmp(o.out, "hi\n");
    }
    return NULL;
}

static void test_threads(void)
{
    char state[300];
    const char *ov[] = {"pool.c.size=4", "pool.c.parallel=2", NULL};
    pthread_t t[8];
    struct par p[8];
    sbx_ctx *ctx;
    int good = 0;

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, ov)) != NULL, "a pool of 4 for 8 threads"))
        return;
    ok(sbx_pool_wait(ctx, "c", WAIT) == SBX_OK, "it warms up");
    for (int i = 0; i < 8; i++) {
        p[i] = (struct par){ctx, 0};
        if (pthread_create(&t[i], NULL, runner, &p[i]) != 0)
            bail("pthread_create");
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        good += p[i].good;
    }
    ok(good == 40, "40 runs from 8 threads are all ok (%d)", good);
    uint64_t h = stat_of(ctx, "c", SBX_POOL_STAT_HITS), m = stat_of(ctx, "c", SBX_POOL_STAT_MISSES);
    ok(h + m == 40 && h >= 4, "hits + misses = 40, with hits (%llu hits, %llu misses)",
       (unsigned long long)h, (unsigned long long)m);
    ok(sbx_pool_wait(ctx, "c", WAIT) == SBX_OK, "the pool is full again");
    ok(wait_stat(ctx, "c", SBX_POOL_STAT_DESTROYED, h),
       "every sandbox lent was destroyed");
    ok(stat_of(ctx, "c", SBX_POOL_STAT_IN_USE) == 0, "none is in use");
    ok(stat_of(ctx, "c", SBX_POOL_STAT_WAIT_MEDIAN_NS) > 0 &&
       stat_of(ctx, "c", SBX_POOL_STAT_WAIT_MEAN_NS) > 0 &&
       stat_of(ctx, "c", SBX_POOL_STAT_CREATE_MEAN_NS) > 0, "wait and create times are reported");
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "nothing left after sbx_ctx_free");
}

/* ---- pools off, and configuration errors --------------------------------------------- */

static void test_off(void)
{
    char state[300];
    const char *ov[] = {"pool.o.size=2", "core.pools=false", NULL};
    sbx_ctx *ctx;
    char msg[512];

    new_state(state, sizeof state);
    if (!ok((ctx = ctx_with(state, ov)) != NULL, "core.pools=false"))
        return;
    ok(stat_of(ctx, "o", SBX_POOL_STAT_ACTIVE) == 0 && count_sandboxes(state) == 0,
       "the pool is configured but creates nothing");
    ok(sbx_pool_wait(ctx, "o", S) == SBX_E_PROVIDER_UNAVAILABLE, "waiting for it fails");
    ok(sbx_pool_last_error(ctx, "o", msg, sizeof msg) == SBX_OK && strstr(msg, "pools = false"),
       "its last error says why (%s)", msg);
    ok(run_sh(ctx, NULL, "true").rc == SBX_OK && stat_of(ctx, "o", SBX_POOL_STAT_MISSES) == 1,
       "a matching run is a miss and runs");
    ok(sbx_pool_stats(ctx, "nope", NULL, 0) == SBX_E_NOT_FOUND, "an unknown pool is NOT_FOUND");
    sbx_ctx_free(ctx);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[600];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0)
        bail(path);
}

/* A configuration directory with tests/config's polysandbox.ini and
 * providers.d, plus pools.d/NAME.ini holding @text. */
static void config_error(const char *text, const char *const *ov, const char *want1,
                         const char *want2, const char *what)
{
    static int n;
    char dir[300], sub[400], state[300];
    const char *src = getenv("POLYSANDBOX_CONFIG_DIR");
    sbx_ctx *ctx = NULL;
    int rc;

    snprintf(dir, sizeof dir, "%s/conf%d", root, ++n);
    snprintf(sub, sizeof sub, "%s/pools.d", dir);
    if (mkdir(dir, 0700) || mkdir(sub, 0700))
        bail("mkdir");
    snprintf(sub, sizeof sub, "%s/providers.d", dir);
    if (mkdir(sub, 0700))
        bail("mkdir");
    write_file(dir, "providers.d/local.ini", "[provider]\nenabled = true\n");
    (void)src;
    if (text)
        write_file(dir, "pools.d/bad.ini", text);
    new_state(state, sizeof state);
    char sd[400];
    const char *all[8] = {sd};
    snprintf(sd, sizeof sd, "core.state_dir=%s", state);
    for (size_t i = 0; ov && ov[i] && i < 6; i++)
        all[i + 1] = ov[i];
    rc = sbx_ctx_new_with(&ctx, dir, all);
    const char *m = ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "";
    ok(rc == SBX_E_CONFIG && strstr(m, want1) && (!want2 || strstr(m, want2)), "%s: %s", what, m);
    sbx_ctx_free(ctx);
    ok(count_sandboxes(state) == 0, "%s: no sandbox was created", what);
}

static void test_config_errors(void)
{
    config_error("[pool]\nsize = 2\n\nparallel = lots\n", NULL, "pools.d/bad.ini:4:",
                 "parallel", "a bad count names FILE:LINE and the key");
    config_error("[pool]\nsizes = 2\n", NULL, "pools.d/bad.ini:2:", "unknown key 'sizes'",
                 "an unknown key");
    config_error("[pool]\nsize = 1\n[limits]\nmemory = 99G\n", NULL, "pools.d/bad.ini:4:",
                 "max_memory", "a limit above the maximum");
    config_error("[pool]\nreuse = true\n", NULL, "pools.d/bad.ini:2:", "reset",
                 "reuse without a reset");
    config_error("[pool]\nwarm = pass\n", NULL, "pools.d/bad.ini:2:", "template",
                 "warm code without a template");
    config_error("[pool]\nprovider = nosuch\n", NULL, "pools.d/bad.ini:2:", "nosuch",
                 "an unknown provider");
    config_error("[pool]\ntemplate = cobol\n", NULL, "pools.d/bad.ini:2:", "cobol",
                 "an unknown template");
    config_error("[pol]\nsize = 1\n", NULL, "pools.d/bad.ini:2:", "[pol]",
                 "an unknown section");
    config_error("[pool]\nttl = 5m\n", NULL, "pools.d/bad.ini:2:", "ttl",
                 "a ttl shorter than a run");
    const char *o1[] = {"pool.x.bogus=1", NULL};
    config_error(NULL, o1, "command line:", "bogus", "an unknown key on the command line");
    const char *o2[] = {"pool.x=1", NULL};
    config_error(NULL, o2, "command line:", "pool.NAME.KEY", "pool.NAME without a key");
    const char *o3[] = {"pool.x.size=-1", NULL};
    config_error(NULL, o3, "command line:", "size", "a negative size");
    const char *o4[] = {"pool.y.size=2", NULL};
    config_error("[pool]\nsize = 1\n", o4, "command line:", "same key",
                 "two pools of one key");
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(root, sizeof root, "%s/sbx-pool.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root))
        bail("mkdtemp");
    test_warm_hit_fresh();
    test_idle();
    test_reuse();
    test_warm();
    test_threads();
    test_off();
    test_config_errors();
    /* The state directories hold a shared root skeleton: leave the
     * removal to rm, the test has asserted what it needed. */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        diag("could not remove %s", root);
    return tap_done();
}
