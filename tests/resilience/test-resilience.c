/* tests/resilience/test-resilience.c - retries, backoff, Retry-After,
 * circuit breakers, fallback and health, against the flaky providers
 *
 * The core's clock, sleep and randomness are replaced (core_retry_set_hooks):
 * every backoff is recorded instead of slept, and the breaker's open time
 * passes when the test moves the fake clock.  No assertion is timed.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "retry/retry.h"
#include "tap.h"

#define MS UINT64_C(1000000)
#define SEC UINT64_C(1000000000)

/* ---- the fake clock ------------------------------------------------------ */

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t fk_now = 1000 * SEC;
static uint64_t fk_sleeps[256];
static size_t fk_n;             /* sleeps recorded (all counted, 256 kept) */
static int fk_fixed_random;     /* 1: random() returns fk_value */
static uint64_t fk_value, fk_rng = 88172645463325252ull;

static uint64_t fk_now_fn(void *ud)
{
    uint64_t t;
    (void)ud;
    pthread_mutex_lock(&fk_lock);
    t = fk_now;
    pthread_mutex_unlock(&fk_lock);
    return t;
}

static void fk_sleep_fn(void *ud, uint64_t ns)
{
    (void)ud;
    pthread_mutex_lock(&fk_lock);
    if (fk_n < sizeof fk_sleeps / sizeof fk_sleeps[0])
        fk_sleeps[fk_n] = ns;
    fk_n++;
    fk_now += ns;
    pthread_mutex_unlock(&fk_lock);
}

static uint64_t fk_random_fn(void *ud)
{
    uint64_t v;
    (void)ud;
    pthread_mutex_lock(&fk_lock);
    if (fk_fixed_random) {
        v = fk_value;
    } else {
        fk_rng ^= fk_rng << 13;
        fk_rng ^= fk_rng >> 7;
        fk_rng ^= fk_rng << 17;
        v = fk_rng;
    }
    pthread_mutex_unlock(&fk_lock);
    return v;
}

static void fk_reset(void)
{
    pthread_mutex_lock(&fk_lock);
    fk_n = 0;
    fk_fixed_random = 0;
    pthread_mutex_unlock(&fk_lock);
}

static void fk_advance(uint64_t ns)
{
    pthread_mutex_lock(&fk_lock);
    fk_now += ns;
    pthread_mutex_unlock(&fk_lock);
}

/* ---- configuration directories -------------------------------------------- */

static char tmproot[256];
static char libs[1024];

static void bail(const char *what)
{
    printf("Bail out! %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) == EOF || fclose(f) != 0)
        bail(path);
}

/* A context on flaky (default) and flaky2 (NULL settings: disabled).
 * @main is added to polysandbox.ini after the [core] lines; @more (or
 * NULL) are pairs of a file name under the directory (or its providers.d
 * or templates.d) and its text, ended by a NULL name. */
static sbx_ctx *make_ctx_more(const char *tag, const char *main, const char *flaky,
                              const char *flaky2, const char *const *more)
{
    char dir[512], path[1024], text[4096];
    sbx_ctx *ctx = NULL;
    int rc;

    snprintf(dir, sizeof dir, "%s/%s", tmproot, tag);
    if (mkdir(dir, 0700) != 0)
        bail(dir);
    snprintf(path, sizeof path, "%s/providers.d", dir);
    if (mkdir(path, 0700) != 0)
        bail(path);
    snprintf(path, sizeof path, "%s/polysandbox.ini", dir);
    snprintf(text, sizeof text, "[core]\nprovider_path = %s\nstate_dir = %s/state\n"
             "default_provider = flaky\n%s", libs, dir, main ? main : "");
    write_file(path, text);
    snprintf(path, sizeof path, "%s/providers.d/local.ini", dir);
    write_file(path, "[provider]\nenabled = false\n");
    snprintf(path, sizeof path, "%s/providers.d/flaky.ini", dir);
    snprintf(text, sizeof text, "[provider]\nenabled = true\n%s",
             flaky ? flaky : "");
    write_file(path, text);
    snprintf(path, sizeof path, "%s/providers.d/flaky2.ini", dir);
    snprintf(text, sizeof text, "[provider]\nenabled = %s\n%s",
             flaky2 ? "true" : "false", flaky2 ? flaky2 : "");
    write_file(path, text);
    snprintf(path, sizeof path, "%s/templates.d", dir);
    if (more && mkdir(path, 0700) != 0)
        bail(path);
    for (size_t i = 0; more && more[i]; i += 2) {
        snprintf(path, sizeof path, "%s/%s", dir, more[i]);
        write_file(path, more[i + 1]);
    }
    rc = sbx_ctx_new(&ctx, dir);
    if (rc != SBX_OK) {
        diag("%s: sbx_ctx_new: %s", tag,
             ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "no context");
        sbx_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

static sbx_ctx *make_ctx(const char *tag, const char *main, const char *flaky,
                         const char *flaky2)
{
    return make_ctx_more(tag, main, flaky, flaky2, NULL);
}

/* The flaky module's counters (shared by every context of the process). */
static long stat_of(sbx_ctx *ctx, const char *prov, const char *name)
{
    const sbx_provider *p = sbx_ctx_find_provider(ctx, prov);
    void *h = p && sbx_provider_path(p)
                  ? dlopen(sbx_provider_path(p), RTLD_LAZY | RTLD_NOLOAD) : NULL;
    long (*fn)(const char *) = NULL;
    long v = -1;

    if (h) {
        *(void **)&fn = dlsym(h, "flaky_stat");
        if (fn)
            v = fn(name);
        dlclose(h);
    }
    return v;
}

static void reset_stats(sbx_ctx *ctx)
{
    static const char *const names[] = {"flaky", "flaky2", "flaky11"};

    for (int i = 0; i < 3; i++) {
        const sbx_provider *p = sbx_ctx_find_provider(ctx, names[i]);
        void *h = p && sbx_provider_path(p)
                      ? dlopen(sbx_provider_path(p), RTLD_LAZY | RTLD_NOLOAD) : NULL;
        void (*fn)(void) = NULL;
        if (h) {
            *(void **)&fn = dlsym(h, "flaky_reset");
            if (fn)
                fn();
            dlclose(h);
        }
    }
    fk_reset();
}

static const char *errmsg(sbx_ctx *ctx)
{
    return sbx_error_message(sbx_ctx_last_error(ctx));
}

static int create_on(sbx_ctx *ctx, const char *provider, sbx_sandbox **sb)
{
    sbx_create_opts *o = sbx_create_opts_new();
    int rc;

    if (!o)
        bail("sbx_create_opts_new");
    if (provider)
        sbx_create_opts_set_provider(o, provider);
    rc = sbx_sandbox_create(ctx, o, sb);
    sbx_create_opts_free(o);
    return rc;
}

static sbx_exec_opts *sample_opts(int n)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    char num[32];
    const char *argv[] = {"sample", num, NULL};

    snprintf(num, sizeof num, "%d", n);
    if (!x || sbx_exec_opts_set_argv(x, argv) != SBX_OK)
        bail("exec opts");
    return x;
}

/* ---- backoff arithmetic ----------------------------------------------------- */

static void test_backoff(void)
{
    const char *ov[] = {"retry.base=100ms", "retry.cap=1s", "retry.max_retry_after=5s",
                        NULL};
    sbx_ctx *ctx = NULL;
    uint64_t ceil[] = {100 * MS, 200 * MS, 400 * MS, 800 * MS, 1 * SEC, 1 * SEC};
    int grows = 1, bounded = 1, varied = 0;
    char dir[512], path[1024];

    snprintf(dir, sizeof dir, "%s/backoff", tmproot);
    snprintf(path, sizeof path, "%s/polysandbox.ini", dir);
    if (mkdir(dir, 0700) != 0)
        bail(dir);
    write_file(path, "[core]\n");
    if (sbx_ctx_new_with(&ctx, dir, ov) != SBX_OK) {
        ok(0, "context with [retry] overrides: %s", errmsg(ctx));
        sbx_ctx_free(ctx);
        return;
    }
    /* The largest draw gives the ceiling: base * 2^n, capped. */
    pthread_mutex_lock(&fk_lock);
    fk_fixed_random = 1;
    pthread_mutex_unlock(&fk_lock);
    for (unsigned n = 0; n < 6; n++) {
        pthread_mutex_lock(&fk_lock);
        fk_value = ceil[n];     /* v % (ceil + 1) == ceil */
        pthread_mutex_unlock(&fk_lock);
        grows = grows && core_retry_delay(ctx, NULL, n, 0) == ceil[n];
    }
    ok(grows, "backoff ceilings: 100ms, 200ms, 400ms, 800ms, then the 1s cap");
    pthread_mutex_lock(&fk_lock);
    fk_value = 0;
    pthread_mutex_unlock(&fk_lock);
    ok(core_retry_delay(ctx, NULL, 3, 0) == 0, "full jitter reaches 0");
    ok(core_retry_delay(ctx, NULL, 0, 2 * SEC) == 2 * SEC,
       "Retry-After 2s is honoured over a smaller jitter");
    ok(core_retry_delay(ctx, NULL, 0, 60 * SEC) == 5 * SEC,
       "Retry-After 60s is capped by max_retry_after 5s");
    pthread_mutex_lock(&fk_lock);
    fk_value = 3 * SEC;    /* 3s % (1s + 1) is above a 0.5s Retry-After */
    pthread_mutex_unlock(&fk_lock);
    ok(core_retry_delay(ctx, NULL, 5, 500 * MS) == (3 * SEC) % (SEC + 1),
       "the jitter wins when it is longer than Retry-After");

    /* With real randomness: always within [0, ceiling], and spread out. */
    pthread_mutex_lock(&fk_lock);
    fk_fixed_random = 0;
    pthread_mutex_unlock(&fk_lock);
    uint64_t first = core_retry_delay(ctx, NULL, 2, 0);
    for (int i = 0; i < 1000; i++) {
        uint64_t d = core_retry_delay(ctx, NULL, 2, 0);
        bounded = bounded && d <= 400 * MS;
        varied = varied || d != first;
    }
    ok(bounded, "1000 jittered delays of retry 3 all within [0, 400ms]");
    ok(varied, "the delays are jittered (not all equal)");
    sbx_ctx_free(ctx);

    ok(core_retryable(SBX_E_SERVER) && core_retryable(SBX_E_NETWORK) &&
       core_retryable(SBX_E_RATE_LIMITED) && core_retryable(SBX_E_BUSY) &&
       core_retryable(SBX_E_TIMEOUT),
       "5xx, network, 429, busy and backend timeouts are retryable");
    ok(!core_retryable(SBX_E_AUTH) && !core_retryable(SBX_E_INVAL) &&
       !core_retryable(SBX_E_CONFIG) && !core_retryable(SBX_E_NOT_FOUND) &&
       !core_retryable(SBX_E_LIMIT) && !core_retryable(SBX_E_BACKEND),
       "auth, inval, config, not found, limit and generic backend errors are not");
}

static void test_config_errors(void)
{
    const char *bad1[] = {"retry.attempts=0", NULL};
    const char *bad2[] = {"retry.bogus=1", NULL};
    const char *bad3[] = {"breaker.open_time=soon", NULL};
    const char *const *cases[] = {bad1, bad2, bad3};
    const char *want[] = {"bad value '0' for attempts in [retry]",
                          "unknown key 'bogus' in [retry]",
                          "bad value 'soon' for open_time in [breaker]"};
    char dir[512], path[1024];

    snprintf(dir, sizeof dir, "%s/badconf", tmproot);
    snprintf(path, sizeof path, "%s/polysandbox.ini", dir);
    if (mkdir(dir, 0700) != 0)
        bail(dir);
    write_file(path, "[core]\n");
    for (int i = 0; i < 3; i++) {
        sbx_ctx *ctx = NULL;
        int rc = sbx_ctx_new_with(&ctx, dir, cases[i]);
        const char *m = ctx ? errmsg(ctx) : "";
        ok(rc == SBX_E_CONFIG && strstr(m, want[i]) && strstr(m, "command line"),
           "%s is refused naming it: %s", cases[i][0], m);
        sbx_ctx_free(ctx);
    }
}

/* ---- create retries ------------------------------------------------------- */

static void test_create_retries(void)
{
    sbx_ctx *ctx;
    sbx_sandbox *sb = NULL;
    int rc;

    ctx = make_ctx("create2", "[retry]\nbase = 100ms\n", "[settings]\ncreate_fail_first = 2\n",
                   NULL);
    if (!ctx) {
        ok(0, "context");
        return;
    }
    reset_stats(ctx);
    rc = create_on(ctx, NULL, &sb);
    ok(rc == SBX_OK && stat_of(ctx, "flaky", "creates") == 3,
       "two 5xx creates are retried: 3 calls, then a sandbox (rc %d, %ld calls)", rc,
       stat_of(ctx, "flaky", "creates"));
    ok(fk_n == 2 && fk_sleeps[0] <= 100 * MS && fk_sleeps[1] <= 200 * MS,
       "2 backoffs, within [0, 100ms] and [0, 200ms]");
    sbx_sandbox_destroy(sb);
    ok(stat_of(ctx, "flaky", "live") == 0, "the sandbox is gone");
    sbx_ctx_free(ctx);

    ctx = make_ctx("auth", NULL, "[settings]\ncreate_fail_first = 1\ncreate_error = auth\n",
                   NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    ok(rc == SBX_E_AUTH && stat_of(ctx, "flaky", "creates") == 1 && fk_n == 0,
       "an auth failure is not retried (1 call, no sleep)");
    sbx_ctx_free(ctx);

    ctx = make_ctx("inval", NULL,
                   "[settings]\ncreate_fail_first = 1\ncreate_error = inval\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    ok(rc == SBX_E_INVAL && stat_of(ctx, "flaky", "creates") == 1 && fk_n == 0,
       "an invalid request is not retried (1 call, no sleep)");
    sbx_ctx_free(ctx);

    ctx = make_ctx("spent", "[retry]\nattempts = 4\n",
                   "[settings]\ncreate_fail_first = 100\ncreate_error = network\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    ok(rc == SBX_E_NETWORK && stat_of(ctx, "flaky", "creates") == 4 && fk_n == 3 &&
       strstr(errmsg(ctx), "(4 attempts)"),
       "attempts = 4: 4 calls, 3 sleeps, then the error says so: %s", errmsg(ctx));
    sbx_ctx_free(ctx);

    /* A per-provider override beats polysandbox.ini. */
    ctx = make_ctx("override", "[retry]\nattempts = 4\n",
                   "[retry]\nattempts = 2\n[settings]\ncreate_fail_first = 100\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    ok(rc == SBX_E_SERVER && stat_of(ctx, "flaky", "creates") == 2,
       "providers.d/flaky.ini [retry] attempts = 2 overrides the main file's 4");
    sbx_ctx_free(ctx);

    ctx = make_ctx("retryafter", "[retry]\nbase = 100ms\n",
                   "[settings]\ncreate_fail_first = 1\ncreate_error = rate_limited\n"
                   "retry_after_ms = 1500\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    ok(rc == SBX_OK && fk_n == 1 && fk_sleeps[0] == 1500 * MS &&
       stat_of(ctx, "flaky", "retry_after_calls") == 1,
       "429 with Retry-After 1.5s: one wait of exactly 1.5s (%llu ns), then success",
       (unsigned long long)fk_sleeps[0]);
    if (rc == SBX_OK)
        sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);

    ctx = make_ctx("deadline", "[retry]\ndeadline = 1s\n",
                   "[settings]\ncreate_fail_first = 1\nretry_after_ms = 1500\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    ok(rc == SBX_E_SERVER && fk_n == 0 && stat_of(ctx, "flaky", "creates") == 1,
       "a wait past the 1s deadline is not taken: %s", errmsg(ctx));
    sbx_ctx_free(ctx);
}

/* ---- breaker and fallback ---------------------------------------------------- */

static void test_breaker(void)
{
    sbx_ctx *ctx = make_ctx("breaker",
                            "fallback = flaky2\n[retry]\nattempts = 1\n"
                            "[breaker]\nfailures = 3\nopen_time = 10s\n",
                            "[settings]\ncreate_fail_first = 4\n", "");
    const sbx_provider *fp;
    sbx_sandbox *sb = NULL;
    int fell = 1, rc;

    if (!ctx) {
        ok(0, "context");
        return;
    }
    reset_stats(ctx);
    fp = sbx_ctx_find_provider(ctx, "flaky");
    ok(sbx_provider_breaker(fp) == SBX_BREAKER_CLOSED, "the breaker starts closed");
    for (int i = 0; i < 3; i++) {
        rc = create_on(ctx, NULL, &sb);
        fell = fell && rc == SBX_OK && !strcmp(sbx_sandbox_provider(sb), "flaky2");
        if (rc == SBX_OK)
            sbx_sandbox_destroy(sb);
    }
    ok(fell, "3 creates fail on flaky and fall back to flaky2");
    ok(sbx_provider_breaker(fp) == SBX_BREAKER_OPEN && sbx_provider_breaker_failures(fp) == 3,
       "after 3 failures in a row the breaker is open");
    rc = create_on(ctx, NULL, &sb);
    ok(rc == SBX_OK && !strcmp(sbx_sandbox_provider(sb), "flaky2") &&
       stat_of(ctx, "flaky", "creates") == 3,
       "an open breaker skips flaky: straight to flaky2, no call to flaky");
    if (rc == SBX_OK)
        sbx_sandbox_destroy(sb);
    rc = create_on(ctx, "flaky", &sb);
    ok(rc == SBX_E_PROVIDER_UNAVAILABLE && strstr(errmsg(ctx), "circuit breaker is open"),
       "asking for flaky itself fails fast: %s", errmsg(ctx));

    fk_advance(10 * SEC);
    ok(sbx_provider_breaker(fp) == SBX_BREAKER_HALF_OPEN, "10s later it is half-open");
    rc = create_on(ctx, NULL, &sb);
    ok(rc == SBX_OK && stat_of(ctx, "flaky", "creates") == 4 &&
       sbx_provider_breaker(fp) == SBX_BREAKER_OPEN,
       "the trial create fails (4th call): open again, the request fell back");
    if (rc == SBX_OK)
        sbx_sandbox_destroy(sb);
    fk_advance(10 * SEC);
    rc = create_on(ctx, NULL, &sb);
    ok(rc == SBX_OK && !strcmp(sbx_sandbox_provider(sb), "flaky") &&
       sbx_provider_breaker(fp) == SBX_BREAKER_CLOSED && sbx_provider_breaker_failures(fp) == 0,
       "the next trial succeeds on flaky: closed, count reset");
    if (rc == SBX_OK)
        sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);

    /* No fallback left: a one-shot run reports a sandbox error, not a verdict. */
    ctx = make_ctx("breaker-alone", "[retry]\nattempts = 1\n[breaker]\nfailures = 1\n",
                   "[settings]\ncreate_fail_first = 1\n", NULL);
    if (ctx) {
        sbx_exec_opts *x = sample_opts(1);
        sbx_result *r = NULL;
        reset_stats(ctx);
        create_on(ctx, NULL, &sb);
        rc = sbx_run(ctx, NULL, x, &r);
        ok(rc == SBX_OK && r && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
           strstr(sbx_result_error(r), "circuit breaker is open") &&
           stat_of(ctx, "flaky", "creates") == 1,
           "breaker open and nothing to fall back to: a sandbox-error result saying so");
        sbx_result_free(r);
        sbx_exec_opts_free(x);
        sbx_ctx_free(ctx);
    }
}

/* The breaker's own bookkeeping, from several threads at once. */
struct brk_arg {
    sbx_ctx *ctx;
    struct sbx_provider *p;
    int n;
};

static void *brk_fail(void *arg)
{
    struct brk_arg *a = arg;

    for (int i = 0; i < a->n; i++) {
        bool trial;
        if (core_breaker_acquire(a->ctx, a->p, &trial) == SBX_OK)
            core_breaker_record(a->ctx, a->p, trial, SBX_E_SERVER, true);
    }
    return NULL;
}

static void test_breaker_threads(void)
{
    sbx_ctx *ctx = make_ctx("brk-threads", "[breaker]\nfailures = 1000\ntrials = 1\n",
                            "", NULL);
    struct sbx_provider *p;
    struct brk_arg a[3];
    pthread_t t[3];
    bool t1 = false, t2 = false;
    int rc1, rc2;

    if (!ctx) {
        ok(0, "context");
        return;
    }
    p = (struct sbx_provider *)sbx_ctx_find_provider(ctx, "flaky");
    for (int i = 0; i < 3; i++) {
        a[i] = (struct brk_arg){ctx, p, 333};
        if (pthread_create(&t[i], NULL, brk_fail, &a[i]) != 0)
            bail("pthread_create");
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    ok(sbx_provider_breaker(p) == SBX_BREAKER_CLOSED && sbx_provider_breaker_failures(p) == 999,
       "999 failures recorded from 3 threads: counted exactly, still closed");
    core_breaker_record(ctx, p, false, SBX_E_INVAL, false);
    core_breaker_record(ctx, p, false, SBX_E_NOT_FOUND, true);
    ok(sbx_provider_breaker_failures(p) == 999, "request errors move it neither way");
    core_breaker_record(ctx, p, false, SBX_E_SERVER, true);
    ok(sbx_provider_breaker(p) == SBX_BREAKER_OPEN, "the 1000th opens it");
    fk_advance(30 * SEC);
    rc1 = core_breaker_acquire(ctx, p, &t1);
    rc2 = core_breaker_acquire(ctx, p, &t2);
    ok(rc1 == SBX_OK && t1 && rc2 == SBX_E_PROVIDER_UNAVAILABLE && !t2 &&
       strstr(errmsg(ctx), "trial create is under way"),
       "half-open after the default 30s: one trial at a time, the next call skips it");
    core_breaker_record(ctx, p, true, SBX_E_LIMIT, false);
    rc2 = core_breaker_acquire(ctx, p, &t2);
    ok(rc2 == SBX_OK && t2 && sbx_provider_breaker(p) == SBX_BREAKER_HALF_OPEN,
       "a trial that failed on its request frees the slot, still half-open");
    core_breaker_record(ctx, p, true, SBX_OK, true);
    ok(sbx_provider_breaker(p) == SBX_BREAKER_CLOSED, "its success closes the breaker");
    sbx_ctx_free(ctx);
}

/* ---- exec, run and destroy ------------------------------------------------------ */

static int count_cb(void *ud, int stream, const void *buf, size_t len)
{
    (void)stream;
    (void)buf;
    *(size_t *)ud += len;
    return 0;
}

/* ---- an exec's retry hints and zygote: ABI 1.12, and 1.11 still ------------ */

/* On @prov, a sandbox of a template with a zygote runs one exec that
 * fails twice before starting, with Retry-After 700ms each time: the core
 * runs it three times on that sandbox, waiting 700ms before each retry,
 * and each time hands the zygote on (in the spec, or to exec_zygote). */
static void exec_hints_on(const char *prov, const char *zygote_stat)
{
    static const char faults[] = "[settings]\nexec_not_started_first = 2\n"
                                 "retry_after_ms = 700\n";
    char so[1024], path[1100], flaky11[1400], tag[64];
    const char *more[] = {"templates.d/zyg.ini",
                          "[template]\nextensions = .zy\nsource = main.zy\n"
                          "run = zy main.zy\nzygote = zy warm\n",
                          "providers.d/flaky11.ini", flaky11, NULL};
    const char *top = getenv("top_builddir");
    sbx_create_opts *o = sbx_create_opts_new();
    sbx_exec_opts *x = sample_opts(4);
    sbx_sandbox *sb = NULL;
    sbx_result *r = NULL;
    sbx_ctx *ctx;
    int rc;

    snprintf(path, sizeof path, "%s/tests/resilience/abi11/.libs/flaky11.so", top ? top : ".");
    if (!o || !realpath(path, so))
        bail(path);
    snprintf(flaky11, sizeof flaky11, "[provider]\nenabled = true\nmodule = %s\n%s", so,
             faults);
    snprintf(tag, sizeof tag, "hints-%s", prov);
    ctx = make_ctx_more(tag, "[retry]\nbase = 100ms\n", faults, NULL, more);
    reset_stats(ctx);
    sbx_create_opts_set_provider(o, prov);
    sbx_create_opts_set_template(o, "zyg");
    rc = ctx ? sbx_sandbox_create(ctx, o, &sb) : -1;
    if (rc == SBX_OK) {
        rc = sbx_sandbox_exec(sb, x, &r);
        ok(rc == SBX_OK && sbx_result_status(r) == SBX_RUN_OK &&
               stat_of(ctx, prov, "execs") == 3 && fk_n == 2 && fk_sleeps[0] == 700 * MS &&
               fk_sleeps[1] == 700 * MS,
           "%s: an exec not started is run again on its sandbox after each Retry-After "
           "(%ld execs, %zu waits)",
           prov, stat_of(ctx, prov, "execs"), fk_n);
        ok(stat_of(ctx, prov, zygote_stat) == 3,
           "%s: each exec is given the template's zygote (%s = %ld)", prov, zygote_stat,
           stat_of(ctx, prov, zygote_stat));
        sbx_result_free(r);
        sbx_sandbox_destroy(sb);
    } else {
        ok(0, "%s: create: %s", prov, ctx ? errmsg(ctx) : "no context");
        ok(0, "%s: no exec", prov);
    }
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
    sbx_ctx_free(ctx);
}

static void test_exec_hints(void)
{
    /* ABI 1.12: the hints in the outcome, the zygote in the spec. */
    exec_hints_on("flaky", "zygote_hints");
    /* A 1.11 provider: host->not_started, host->retry_after, exec_zygote. */
    exec_hints_on("flaky11", "exec_zygotes");
}

static void test_exec_run_destroy(void)
{
    sbx_ctx *ctx;
    sbx_sandbox *sb = NULL;
    sbx_result *r = NULL;
    sbx_exec_opts *x = sample_opts(4);
    size_t len = 0;
    int rc;

    ctx = make_ctx("notstarted", NULL, "[settings]\nexec_not_started_first = 2\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    if (rc == SBX_OK) {
        rc = sbx_sandbox_exec(sb, x, &r);
        ok(rc == SBX_OK && sbx_result_status(r) == SBX_RUN_OK &&
           stat_of(ctx, "flaky", "execs") == 3 && fk_n == 2,
           "an exec that never started is retried on the same sandbox (3 calls)");
        sbx_result_free(r);
        sbx_sandbox_destroy(sb);
    } else {
        ok(0, "create for not_started");
    }
    sbx_ctx_free(ctx);

    ctx = make_ctx("dropped", NULL, "[settings]\nexec_drop_first = 1\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    if (rc == SBX_OK) {
        r = NULL;
        rc = sbx_sandbox_exec(sb, x, &r);
        ok(rc == SBX_OK && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
           sbx_result_error_code(r) == SBX_E_NETWORK && stat_of(ctx, "flaky", "execs") == 1,
           "an exec whose stream dropped after it started is not re-run in its sandbox");
        sbx_result_free(r);
        sbx_sandbox_destroy(sb);
    } else {
        ok(0, "create for dropped");
    }
    sbx_ctx_free(ctx);

    ctx = make_ctx("runagain", NULL, "[settings]\nexec_drop_first = 2\n", NULL);
    reset_stats(ctx);
    r = NULL;
    rc = ctx ? sbx_run(ctx, NULL, x, &r) : -1;
    len = 0;
    if (r)
        sbx_result_stdout(r, &len);
    ok(rc == SBX_OK && sbx_result_status(r) == SBX_RUN_OK && len == strlen("4 squared is 16\n") &&
       stat_of(ctx, "flaky", "execs") == 3 && stat_of(ctx, "flaky", "creates") == 3 &&
       stat_of(ctx, "flaky", "live") == 0,
       "a one-shot run whose stream dropped runs again on fresh sandboxes (3 runs, none left)");
    sbx_result_free(r);
    sbx_ctx_free(ctx);

    ctx = make_ctx("runhost", NULL, "[settings]\nexec_drop_first = 2\n", NULL);
    reset_stats(ctx);
    r = NULL;
    if (ctx) {
        sbx_create_opts *o = sbx_create_opts_new();
        sbx_create_opts_set_network(o, SBX_NET_HOST);
        rc = sbx_run(ctx, o, x, &r);
        ok(rc == SBX_OK && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
           stat_of(ctx, "flaky", "execs") == 1,
           "with the host network the run is not repeated (it may have acted outside)");
        sbx_result_free(r);
        sbx_create_opts_free(o);
    }
    sbx_ctx_free(ctx);

    ctx = make_ctx("runcb", NULL, "[settings]\nexec_drop_first = 2\n", NULL);
    reset_stats(ctx);
    r = NULL;
    len = 0;
    if (ctx) {
        sbx_exec_opts_set_output_cb(x, count_cb, &len);
        rc = sbx_run(ctx, NULL, x, &r);
        ok(rc == SBX_OK && sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
           stat_of(ctx, "flaky", "execs") == 1 && len > 0,
           "output already streamed to the caller: the run is not repeated");
        sbx_exec_opts_set_output_cb(x, NULL, NULL);
        sbx_result_free(r);
    }
    sbx_ctx_free(ctx);

    ctx = make_ctx("destroy", NULL, "[settings]\ndestroy_fail_first = 2\n", NULL);
    reset_stats(ctx);
    rc = ctx ? create_on(ctx, NULL, &sb) : -1;
    if (rc == SBX_OK) {
        rc = sbx_sandbox_destroy(sb);
        ok(rc == SBX_OK && stat_of(ctx, "flaky", "destroys") == 3 &&
           stat_of(ctx, "flaky", "attaches") == 2 && stat_of(ctx, "flaky", "live") == 0,
           "a failed destroy is retried through attach by id until the sandbox is gone");
    } else {
        ok(0, "create for destroy");
    }
    sbx_ctx_free(ctx);
    sbx_exec_opts_free(x);
}

/* The stats function of the loaded flaky module: it stays mapped after
 * the context that loaded it is freed. */
static long (*stat_fn(sbx_ctx *ctx))(const char *)
{
    const sbx_provider *p = sbx_ctx_find_provider(ctx, "flaky");
    void *h = p && sbx_provider_path(p)
                  ? dlopen(sbx_provider_path(p), RTLD_LAZY | RTLD_NOLOAD) : NULL;
    long (*fn)(const char *) = NULL;

    if (h) {
        *(void **)&fn = dlsym(h, "flaky_stat");
        dlclose(h);
    }
    return fn;
}

/* A destroy whose every retry fails (the e2b leak of issue 15: each retry
 * is attach + destroy, both must get through) does not forget the
 * sandbox: the next successful destroy on the provider takes it along,
 * and the context destroys what is left when it is freed. */
static void test_destroy_outlasted(void)
{
    sbx_ctx *ctx = make_ctx("orphan", NULL, "[settings]\ndestroy_fail_first = 8\n", NULL);
    sbx_sandbox *a = NULL, *b = NULL;
    long (*st)(const char *);
    int rc;

    if (ctx)
        reset_stats(ctx);
    if (!ctx || create_on(ctx, NULL, &a) != SBX_OK) {
        ok(0, "context and a sandbox for orphan");
        sbx_ctx_free(ctx);
        return;
    }
    st = stat_fn(ctx);
    rc = sbx_sandbox_destroy(a);
    ok(rc == SBX_E_NETWORK && st && st("destroys") == 8 && st("live") == 1,
       "a destroy failing through all 8 attempts fails, the sandbox still there");
    sbx_ctx_free(ctx);
    ok(st && st("destroys") == 9 && st("live") == 0,
       "... and freeing the context destroys it (one more try, with retries)");

    ctx = make_ctx("orphan2", NULL, "[settings]\ndestroy_fail_first = 8\n", NULL);
    if (ctx)
        reset_stats(ctx);
    if (!ctx || create_on(ctx, NULL, &a) != SBX_OK || create_on(ctx, NULL, &b) != SBX_OK) {
        ok(0, "context and two sandboxes for orphan2");
        sbx_ctx_free(ctx);
        return;
    }
    st = stat_fn(ctx);
    rc = sbx_sandbox_destroy(a);
    ok(rc != SBX_OK && st && st("live") == 2, "the first destroy outlasts its retries");
    rc = sbx_sandbox_destroy(b);
    ok(rc == SBX_OK && st && st("live") == 0 && st("destroys") == 10,
       "the next one that succeeds on the provider takes the first along");
    sbx_ctx_free(ctx);
    ok(st && st("destroys") == 10, "nothing is left for the context to destroy");
}

static int list_cb(void *ud, const char *id, const char *const *labels, size_t n,
                   uint64_t created)
{
    (void)id;
    (void)labels;
    (void)n;
    (void)created;
    (*(int *)ud)++;
    return 0;
}

static void test_list(void)
{
    sbx_ctx *ctx = make_ctx("list", NULL, "[settings]\nlist_fail_first = 2\n", NULL);
    sbx_sandbox *sb = NULL;
    int seen = 0, rc;

    if (!ctx || create_on(ctx, NULL, &sb) != SBX_OK) {
        ok(0, "context and a sandbox for list");
        sbx_ctx_free(ctx);
        return;
    }
    reset_stats(ctx);
    rc = sbx_list(ctx, NULL, list_cb, &seen);
    ok(rc == SBX_OK && seen == 1 && stat_of(ctx, "flaky", "lists") == 3 && fk_n == 2,
       "two failed lists are retried: 3 calls, the one sandbox seen once");
    sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);
}

static void test_health(void)
{
    sbx_ctx *ctx = make_ctx("health", NULL, "", "[settings]\nhealth = fail\n");
    uint64_t lat = 1;

    if (!ctx) {
        ok(0, "context");
        return;
    }
    reset_stats(ctx);
    ok(sbx_provider_health(ctx, "flaky", &lat) == SBX_OK, "flaky is healthy");
    ok(sbx_provider_health(ctx, "flaky2", &lat) == SBX_E_NETWORK &&
       strstr(errmsg(ctx), "backend unreachable"),
       "flaky2 is not, and says why: %s", errmsg(ctx));
    ok(stat_of(ctx, "flaky2", "health") == 1 && fk_n == 0,
       "a health probe is one call, never retried");
    ok(sbx_provider_health(ctx, "nosuch", &lat) == SBX_E_NOT_FOUND,
       "an unknown provider is SBX_E_NOT_FOUND");
    sbx_ctx_free(ctx);
}

/* ---- 200 one-shot runs under faults ----------------------------------------------- */

#define SAMPLES 200
#define THREADS 4

struct outcome {
    sbx_run_status status;
    int exit_code;
    char out[64];
    int done;
};

struct worker {
    sbx_ctx *ctx;
    int first;
    struct outcome *res;
};

static void *worker(void *arg)
{
    struct worker *w = arg;

    for (int i = w->first; i < SAMPLES; i += THREADS) {
        sbx_exec_opts *x = sample_opts(i);
        sbx_result *r = NULL;
        if (sbx_run(w->ctx, NULL, x, &r) == SBX_OK && r) {
            size_t len = 0;
            const void *o = sbx_result_stdout(r, &len);
            w->res[i].status = sbx_result_status(r);
            w->res[i].exit_code = sbx_result_exit_code(r);
            snprintf(w->res[i].out, sizeof w->res[i].out, "%.*s", (int)len, (const char *)o);
            w->res[i].done = 1;
        }
        sbx_result_free(r);
        sbx_exec_opts_free(x);
    }
    return NULL;
}

static void run_all(sbx_ctx *ctx, struct outcome *res)
{
    pthread_t t[THREADS];
    struct worker w[THREADS];

    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){ctx, i, res};
        if (pthread_create(&t[i], NULL, worker, &w[i]) != 0)
            bail("pthread_create");
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}

static void test_eval_under_faults(void)
{
    static struct outcome clean[SAMPLES], faulty[SAMPLES];
    sbx_ctx *ctx;
    int all = 1, same = 1, passes_clean = 0, passes_faulty = 0;
    long injected;

    ctx = make_ctx("eval-clean", NULL, "", NULL);
    if (!ctx) {
        ok(0, "context");
        return;
    }
    reset_stats(ctx);
    run_all(ctx, clean);
    sbx_ctx_free(ctx);

    ctx = make_ctx("eval-faults", "[retry]\nattempts = 10\n",
                   "[settings]\ncreate_fail_rate = 30\nexec_drop_rate = 30\nseed = 7\n", NULL);
    if (!ctx) {
        ok(0, "context");
        return;
    }
    reset_stats(ctx);
    run_all(ctx, faulty);
    injected = stat_of(ctx, "flaky", "create_failures") + stat_of(ctx, "flaky", "exec_failures");
    for (int i = 0; i < SAMPLES; i++) {
        all = all && clean[i].done && faulty[i].done &&
              faulty[i].status != SBX_RUN_SANDBOX_ERROR;
        same = same && clean[i].status == faulty[i].status &&
               clean[i].exit_code == faulty[i].exit_code && !strcmp(clean[i].out, faulty[i].out);
        passes_clean += clean[i].status == SBX_RUN_OK;
        passes_faulty += faulty[i].status == SBX_RUN_OK;
    }
    diag("faults injected: %ld (creates %ld, execs %ld); backoffs slept: %zu", injected,
         stat_of(ctx, "flaky", "creates"), stat_of(ctx, "flaky", "execs"), fk_n);
    ok(injected >= 60, "faults were injected (%ld)", injected);
    ok(all, "all %d runs under 30%% create and 30%% stream faults have a result, "
       "none a sandbox error", SAMPLES);
    ok(same, "every run has the same status, exit code and output as without faults");
    ok(passes_clean == passes_faulty && passes_clean == SAMPLES - (SAMPLES + 2) / 3,
       "pass@1 is the same: %d/%d and %d/%d", passes_faulty, SAMPLES, passes_clean, SAMPLES);
    ok(stat_of(ctx, "flaky", "live") == 0, "no sandbox left behind");
    ok(sbx_provider_breaker(sbx_ctx_find_provider(ctx, "flaky")) == SBX_BREAKER_CLOSED,
       "the breaker stayed closed: retries absorbed the transient faults");
    sbx_ctx_free(ctx);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    const char *top = getenv("top_builddir");
    core_retry_hooks hooks = {fk_now_fn, fk_sleep_fn, fk_random_fn, NULL};

    snprintf(libs, sizeof libs, "%s/tests/resilience/.libs", top ? top : ".");
    snprintf(tmproot, sizeof tmproot, "%s/ps-resil.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmproot))
        bail("mkdtemp");
    core_retry_set_hooks(&hooks);

    test_backoff();
    test_config_errors();
    test_create_retries();
    test_breaker();
    test_breaker_threads();
    test_exec_run_destroy();
    test_exec_hints();
    test_destroy_outlasted();
    test_list();
    test_health();
    test_eval_under_faults();

    core_retry_set_hooks(NULL);
    nftw(tmproot, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
