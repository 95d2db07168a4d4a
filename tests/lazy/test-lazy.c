/* tests/lazy/test-lazy.c - providers are loaded when first needed
 *
 * The `marker` module (tests/provider/marker.c) appends "open" to
 * $SBX_TEST_LOAD_LOG when the dynamic linker maps it and "init" each time
 * a context initialises it, so each check can see whether, and how often,
 * a provider was loaded.  A module once initialised stays mapped for the
 * life of the process, so "open" is seen only by the first case; later
 * cases count "init".  `good` and `init_error` come from tests/loader.
 * Every case writes a private configuration directory and uses only the
 * public API.  TAP output.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "../unit/confdir.h"

static char loader_libs[1024];  /* .../tests/loader/.libs: good, init_error */
static char lazy_libs[1024];    /* .../tests/lazy/.libs: marker */
static char logpath[512];       /* $SBX_TEST_LOAD_LOG */

/* providers.d/NAME.ini: enabled, @extra lines in [provider], [settings]
 * @settings (may be NULL).  `marker` gets its module path. */
static void conf(const char *dir, const char *name, const char *extra, const char *settings)
{
    char rel[256], text[8192], module[2048] = "";

    if (!strcmp(name, "marker"))
        snprintf(module, sizeof module, "module = %s/marker.so\n", lazy_libs);
    snprintf(rel, sizeof rel, "providers.d/%s.ini", name);
    snprintf(text, sizeof text, "[provider]\nenabled = true\n%s%s\n%s%s", module,
             extra ? extra : "", settings ? "[settings]\n" : "", settings ? settings : "");
    write_file(dir, rel, text);
}

/* How many lines of the load log are @what ("open", "init"). */
static int logged(const char *what)
{
    char line[64];
    int n = 0;
    FILE *f = fopen(logpath, "r");

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, what, strlen(what)) && line[strlen(what)] == '\n')
            n++;
    fclose(f);
    return n;
}

static void reset_log(void)
{
    if (unlink(logpath) != 0 && errno != ENOENT)
        bail(logpath);
}

/* sbx_run of /bin/true on @provider (NULL: the default and the fallback
 * chain); *who gets the provider that ran it.  Returns the status. */
static int run_on(sbx_ctx *ctx, const char *provider, char *who, size_t wholen)
{
    static const char *const argv[] = {"/bin/true", NULL};
    sbx_create_opts *c = sbx_create_opts_new();
    sbx_exec_opts *x = sbx_exec_opts_new();
    sbx_result *r = NULL;
    int rc = (c && x) ? SBX_OK : SBX_E_NOMEM;

    if (who && wholen)
        who[0] = '\0';
    if (rc == SBX_OK && provider)
        rc = sbx_create_opts_set_provider(c, provider);
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_argv(x, argv);
    if (rc == SBX_OK)
        rc = sbx_run(ctx, c, x, &r);
    if (rc == SBX_OK && r && who)
        snprintf(who, wholen, "%s", sbx_result_provider(r) ? sbx_result_provider(r) : "");
    if (rc == SBX_OK && (!r || sbx_result_status(r) != SBX_RUN_OK))
        rc = SBX_E_INTERNAL;
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(c);
    return rc;
}

/* Context creation opens nothing; a run on one provider opens no other;
 * asking for the other's state loads it, once. */
static void test_run_loads_only_its_provider(void)
{
    char dir[1024], who[64];
    const sbx_provider *m;
    sbx_ctx *ctx;
    int rc;

    new_confdir("only", "[core]\n", dir, sizeof dir);
    conf(dir, "good", "priority = 100", NULL);
    conf(dir, "marker", "priority = 10", NULL);
    reset_log();
    ctx = open_ctx(dir);
    ok(ctx != NULL, "context with good and marker enabled");
    if (!ctx)
        return;
    ok(logged("open") == 0 && logged("init") == 0,
       "sbx_ctx_new opens no provider module");
    ok(sbx_ctx_provider_count(ctx) >= 2 && logged("open") == 0,
       "counting the providers opens no module (neither is optional)");
    rc = run_on(ctx, "good", who, sizeof who);
    ok(rc == SBX_OK && !strcmp(who, "good"), "a run on good succeeds (%s)", sbx_strerror(rc));
    ok(logged("open") == 0, "a run on good does not open marker.so");
    rc = run_on(ctx, NULL, who, sizeof who);
    ok(rc == SBX_OK && !strcmp(who, "good") && logged("open") == 0,
       "a run on the default provider (good, the highest priority) does not open marker.so");
    ok(!strcmp(sbx_ctx_default_provider(ctx), "good") && logged("open") == 0,
       "choosing the default provider stops at the first that loads");
    m = sbx_ctx_find_provider(ctx, "marker");
    ok(m && logged("open") == 0, "finding a provider that is not optional does not load it");
    ok(m && sbx_provider_get_state(m) == SBX_PROVIDER_READY && logged("open") == 1 &&
           logged("init") == 1,
       "asking for marker's state loads and initialises it");
    ok(m && sbx_provider_version(m) && !strcmp(sbx_provider_version(m), "1.0") &&
           sbx_provider_get_state(m) == SBX_PROVIDER_READY && logged("init") == 1,
       "asking again does not initialise it again");
    rc = run_on(ctx, "marker", who, sizeof who);
    ok(rc == SBX_OK && !strcmp(who, "marker") && logged("init") == 1,
       "a run on marker uses the provider already loaded");
    sbx_ctx_free(ctx);
}

/* The highest priority fails to load: the default falls to the next, as
 * when loading was eager, and the lower one stays unloaded. */
static void test_default_falls_through(void)
{
    char dir[1024], who[64];
    const sbx_provider *b;
    sbx_ctx *ctx;
    int rc;

    new_confdir("through", "[core]\n", dir, sizeof dir);
    conf(dir, "init_error", "priority = 100", NULL);
    conf(dir, "good", "priority = 50", NULL);
    conf(dir, "marker", "priority = 10", NULL);
    reset_log();
    ctx = open_ctx(dir);
    if (!ctx) {
        ok(0, "context with a broken highest-priority provider");
        return;
    }
    rc = run_on(ctx, NULL, who, sizeof who);
    ok(rc == SBX_OK && !strcmp(who, "good"),
       "init_error fails to load: the default run goes to good (%s, on '%s')",
       sbx_strerror(rc), who);
    ok(logged("init") == 0, "marker, below good, was not loaded");
    b = sbx_ctx_find_provider(ctx, "init_error");
    ok(b && sbx_provider_get_state(b) == SBX_PROVIDER_UNAVAILABLE &&
           sbx_provider_reason_code(b) == SBX_E_LOAD_INIT && sbx_provider_reason(b) &&
           strstr(sbx_provider_reason(b), "init failed: backend daemon unreachable"),
       "init_error keeps the reason it failed with");
    sbx_ctx_free(ctx);
}

/* [core] fallback: the default fails, so the fallback is loaded and used;
 * the failure's reason is the same every time it is reported. */
static void test_fallback_chain(void)
{
    char dir[1024], who[64], first[1024] = "", again[1024] = "";
    const sbx_provider *m;
    const char *reason1, *reason2;
    sbx_ctx *ctx;
    int rc;

    new_confdir("fallback", "[core]\ndefault_provider = marker\nfallback = good\n",
                dir, sizeof dir);
    conf(dir, "marker", "priority = 100", "fail = yes\n");
    conf(dir, "good", "priority = 10", NULL);
    reset_log();
    ctx = open_ctx(dir);
    if (!ctx) {
        ok(0, "context with a failing default and a fallback");
        return;
    }
    ok(logged("init") == 0, "a failing default is not loaded at context creation either");
    rc = run_on(ctx, NULL, who, sizeof who);
    ok(rc == SBX_OK && !strcmp(who, "good") && logged("init") == 1,
       "the default marker was tried, failed init, and the run fell back to good "
       "(%s, on '%s', %d init)", sbx_strerror(rc), who, logged("init"));
    rc = run_on(ctx, "marker", NULL, 0);
    snprintf(first, sizeof first, "%s", sbx_error_message(sbx_ctx_last_error(ctx)));
    ok(rc == SBX_E_PROVIDER_UNAVAILABLE && strstr(first, "provider 'marker' is unavailable") &&
           strstr(first, "marker.so: init failed: told to fail by its settings"),
       "a run on marker says why it is unavailable: %s", first);
    rc = run_on(ctx, "marker", NULL, 0);
    snprintf(again, sizeof again, "%s", sbx_error_message(sbx_ctx_last_error(ctx)));
    ok(rc == SBX_E_PROVIDER_UNAVAILABLE && !strcmp(first, again) && logged("init") == 1,
       "asking again reports the same failure without loading again");
    m = sbx_ctx_find_provider(ctx, "marker");
    reason1 = m ? sbx_provider_reason(m) : NULL;
    reason2 = m ? sbx_provider_reason(m) : NULL;
    ok(reason1 && reason1 == reason2 && strstr(first, reason1) &&
           sbx_provider_reason_code(m) == SBX_E_LOAD_INIT,
       "sbx_provider_reason gives the recorded reason, the one in the run's error");
    sbx_ctx_free(ctx);
}

/* An optional provider that fails is not listed: listing loads it, a run
 * on another provider does not. */
static void test_optional(void)
{
    char dir[1024], who[64];
    size_t n, seen = 0, gaps = 0;
    sbx_ctx *ctx;
    int rc;

    new_confdir("optional", "[core]\n", dir, sizeof dir);
    conf(dir, "good", "priority = 100", NULL);
    conf(dir, "marker", "priority = 10\noptional = true", "fail = yes\n");
    reset_log();
    ctx = open_ctx(dir);
    if (!ctx) {
        ok(0, "context with a failing optional provider");
        return;
    }
    rc = run_on(ctx, "good", who, sizeof who);
    ok(rc == SBX_OK && logged("init") == 0,
       "a run on good does not load the optional marker (%s)", sbx_strerror(rc));
    n = sbx_ctx_provider_count(ctx);
    ok(n >= 1 && logged("init") == 1,
       "listing loads the optional provider (%d init)", logged("init"));
    for (size_t i = 0; i < n; i++) {
        const sbx_provider *p = sbx_ctx_provider(ctx, i);
        if (!p)
            gaps++;
        else if (!strcmp(sbx_provider_name(p), "marker"))
            seen++;
    }
    ok(sbx_ctx_find_provider(ctx, "marker") == NULL && seen == 0 && gaps == 0 &&
           sbx_ctx_provider(ctx, n) == NULL &&
           !strcmp(sbx_provider_name(sbx_ctx_provider(ctx, 0)), "good"),
       "the failed optional provider is neither found nor listed (%zu listed)", n);
    sbx_ctx_free(ctx);
}

/* Threads race for the first use of one provider: one init, one verdict. */
struct race {
    sbx_ctx *ctx;
    const char *provider;
    int rc;
    char msg[1024];
};

static void *race_one(void *arg)
{
    struct race *r = arg;

    r->rc = run_on(r->ctx, r->provider, NULL, 0);
    snprintf(r->msg, sizeof r->msg, "%s",
             r->rc == SBX_OK ? "" : sbx_error_message(sbx_ctx_last_error(r->ctx)));
    return NULL;
}

static void test_threads(void)
{
    enum { N = 8 };
    char dir[1024];
    struct race r[2 * N];
    pthread_t t[2 * N];
    sbx_ctx *ctx;
    int all_ok = 1, same = 1;

    new_confdir("threads", "[core]\n", dir, sizeof dir);
    conf(dir, "marker", "priority = 10", NULL);
    conf(dir, "init_error", "priority = 5", NULL);
    reset_log();
    ctx = open_ctx(dir);
    if (!ctx) {
        ok(0, "context for the thread race");
        return;
    }
    for (int i = 0; i < 2 * N; i++) {
        r[i].ctx = ctx;
        r[i].provider = i % 2 ? "init_error" : "marker";
        if (pthread_create(&t[i], NULL, race_one, &r[i]) != 0)
            bail("pthread_create");
    }
    for (int i = 0; i < 2 * N; i++)
        if (pthread_join(t[i], NULL) != 0)
            bail("pthread_join");
    for (int i = 0; i < 2 * N; i += 2) {
        all_ok = all_ok && r[i].rc == SBX_OK;
        same = same && r[i + 1].rc == SBX_E_PROVIDER_UNAVAILABLE &&
               !strcmp(r[i + 1].msg, r[1].msg) &&
               strstr(r[i + 1].msg, "backend daemon unreachable");
    }
    ok(all_ok && logged("init") == 1,
       "%d threads running on marker at once: all succeed, one init (%d)", N,
       logged("init"));
    ok(same, "%d threads asking for a broken provider all get the same reason: %s", N,
       r[1].msg);
    sbx_ctx_free(ctx);
}

int main(void)
{
    const char *top = getenv("top_builddir");

    if (!top) {
        printf("1..0 # SKIP top_builddir is not set (run through make check)\n");
        return 0;
    }
    snprintf(loader_libs, sizeof loader_libs, "%s/tests/loader/.libs", top);
    snprintf(lazy_libs, sizeof lazy_libs, "%s/tests/lazy/.libs", top);
    confdir_begin("sbx-lazy");
    snprintf(logpath, sizeof logpath, "%s/load.log", tmproot);
    /* Only the test modules; marker is named by its module = path. */
    if (setenv("POLYSANDBOX_PROVIDER_PATH", loader_libs, 1) != 0 ||
        setenv("SBX_TEST_LOAD_LOG", logpath, 1) != 0)
        bail("setenv");
    unsetenv("POLYSANDBOX_PROVIDER");

    test_run_loads_only_its_provider();
    test_default_falls_through();
    test_fallback_chain();
    test_optional();
    test_threads();

    confdir_end();
    return tap_done();
}
