/* tests/unit/test-ctx-config.c - the configuration as the public API shows
 * it: the [limits] defaults and caps, a provider's price, the [eval] caps,
 * a template's source, run words and [env], and the fallback trail's
 * reset (what the evaluation engine reads through the public API alone)
 *
 * Writes a configuration into a mkdtemp() directory and opens a context
 * on it with sbx_ctx_new_with; no provider is loaded (both are disabled).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/eval.h>
#include <polysandbox/sandbox.h>

#include "tap.h"

#define S UINT64_C(1000000000)
#define MI (UINT64_C(1) << 20)

static char root[] = "/tmp/sbx-ctx-config-XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (tap_write_file(path, text) != 0) {
        printf("Bail out! %s: %s\n", path, strerror(errno));
        exit(99);
    }
}

static void sub(const char *rel)
{
    char path[PATH_MAX];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (mkdir(path, 0700) != 0) {
        printf("Bail out! %s: %s\n", path, strerror(errno));
        exit(99);
    }
}

static void test_limits(const sbx_ctx *ctx)
{
    ok(sbx_ctx_limit(ctx, SBX_LIMIT_WALL) == 7 * S, "sbx_ctx_limit: [limits] wall");
    ok(sbx_ctx_limit(ctx, SBX_LIMIT_STDOUT) == 3 * MI, "sbx_ctx_limit: [limits] stdout");
    ok(sbx_ctx_limit_max(ctx, SBX_LIMIT_WALL) == 90 * S, "sbx_ctx_limit_max: max_wall");
    ok(sbx_ctx_limit(ctx, (sbx_limit)SBX_LIMIT_COUNT) == 0 &&
           sbx_ctx_limit_max(ctx, (sbx_limit)-1) == 0 && sbx_ctx_limit(NULL, SBX_LIMIT_WALL) == 0,
       "sbx_ctx_limit, _max: 0 for an unknown limit or a NULL context");
}

static void test_price(const sbx_ctx *ctx)
{
    double ps = -1, pb = -1;
    const char *cur = NULL;

    ok(sbx_ctx_provider_price(ctx, "alpha", &ps, &pb, &cur) && ps == 0.5 && pb == 0.01 && cur &&
           strcmp(cur, "EUR") == 0,
       "sbx_ctx_provider_price: price_per_second, price_per_sandbox, currency");
    ok(sbx_ctx_provider_price(ctx, "gamma", &ps, NULL, &cur) && ps == 2 && strcmp(cur, "USD") == 0,
       "sbx_ctx_provider_price: USD when the file names no currency");
    ps = -1;
    ok(!sbx_ctx_provider_price(ctx, "beta", &ps, &pb, &cur) && ps == -1,
       "sbx_ctx_provider_price: false, nothing set, for a provider without a price");
    ok(!sbx_ctx_provider_price(ctx, "nosuch", NULL, NULL, NULL) &&
           !sbx_ctx_provider_price(NULL, "alpha", NULL, NULL, NULL),
       "sbx_ctx_provider_price: false for an unknown provider or a NULL context");
}

static void test_eval_caps(const sbx_ctx *ctx)
{
    uint64_t in = 0, line = 0, rec = 0;

    sbx_ctx_eval_caps(ctx, &in, &line, &rec);
    ok(in == 256 * MI && line == 2 * MI && rec == 5000,
       "sbx_ctx_eval_caps: the built-in max_input, [eval] max_line and max_records");
    sbx_ctx_eval_caps(NULL, &in, NULL, NULL);
    ok(in == 0, "sbx_ctx_eval_caps: 0 for a NULL context");
}

static void test_template(const sbx_ctx *ctx)
{
    const sbx_template *t = sbx_ctx_find_template(ctx, "tl");
    const char *const *run = sbx_template_run(t);
    const char *k = NULL, *v = NULL;

    ok(t && sbx_template_source(t) && strcmp(sbx_template_source(t), "main.tl") == 0,
       "sbx_template_source");
    ok(run && run[0] && run[1] && run[2] && !run[3] && strcmp(run[0], "/bin/sh") == 0 &&
           strcmp(run[1], "-e") == 0 && strcmp(run[2], "main.tl") == 0,
       "sbx_template_run: the run words, NULL-terminated");
    ok(sbx_template_env_count(t) == 2, "sbx_template_env_count");
    ok(sbx_template_env(t, 1, &k, &v) && strcmp(k, "B_VAR") == 0 && strcmp(v, "two words") == 0,
       "sbx_template_env: in the order of [env]");
    k = v = NULL;
    ok(!sbx_template_env(t, 2, &k, &v) && !k && !v && !sbx_template_env(NULL, 0, &k, &v),
       "sbx_template_env: false, nothing set, past the end or for NULL");
    ok(!sbx_template_source(NULL) && !sbx_template_run(NULL) && sbx_template_env_count(NULL) == 0,
       "sbx_template_source, _run, _env_count of NULL");
}

static void test_trail(void)
{
    const char *p = "unset";
    uint64_t ns = 7;

    sbx_fallback_reset();
    ok(sbx_fallback_count() == 0 && !sbx_fallback_step(0, &p, NULL, &ns) && ns == 7 &&
           strcmp(p, "unset") == 0,
       "sbx_fallback_reset: an empty trail; a step past its end is false, nothing set");
}

int main(void)
{
    static const char *const unset[] = {"POLYSANDBOX_CONFIG_DIR",
                                        "POLYSANDBOX_PROVIDER",
                                        "POLYSANDBOX_PROVIDER_PATH",
                                        "POLYSANDBOX_TIMEOUT",
                                        "POLYSANDBOX_MEMORY",
                                        "XDG_CONFIG_HOME",
                                        NULL};
    const char *ov[] = {"eval.max_records=5000", NULL};
    char state[PATH_MAX];
    sbx_ctx *ctx = NULL;
    int rc;

    if (!mkdtemp(root)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 99;
    }
    for (size_t i = 0; unset[i]; i++)
        unsetenv(unset[i]);
    snprintf(state, sizeof state, "%s/state", root);
    setenv("POLYSANDBOX_STATE_DIR", state, 1);
    sub("providers.d");
    sub("templates.d");
    put("polysandbox.ini", "[limits]\nwall = 7s\nmax_wall = 90s\nstdout = 3M\n"
                           "[eval]\nmax_line = 2M\n");
    put("providers.d/alpha.ini", "[provider]\nenabled = no\nprice_per_second = 0.5\n"
                                 "price_per_sandbox = 0.01\ncurrency = EUR\n");
    put("providers.d/beta.ini", "[provider]\nenabled = no\n");
    put("providers.d/gamma.ini", "[provider]\nenabled = no\nprice_per_second = 2\n");
    put("templates.d/tl.ini", "[template]\nextensions = .tl\nsource = main.tl\n"
                              "run = /bin/sh -e main.tl\n[env]\nA_VAR = 1\nB_VAR = two words\n");
    tap_plan(17);
    rc = sbx_ctx_new_with(&ctx, root, ov);
    if (rc != SBX_OK) {
        printf("Bail out! sbx_ctx_new_with: %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
        return 99;
    }
    test_limits(ctx);
    test_price(ctx);
    test_eval_caps(ctx);
    test_template(ctx);
    test_trail();
    sbx_ctx_free(ctx);
    {
        char cmd[PATH_MAX + 16];
        /* the root is ours (mkdtemp): a plain rm is safe */
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            diag("could not remove %s", root);
    }
    return tap_done();
}
