/* tests/eval/fake-provider.c - providers for the evaluation tests, built
 * three times with a different EVAL_FAKE_MODE:
 *
 *   evalfail   every create fails (a backend error): samples end in
 *              sandbox errors, or move on to the next provider
 *   evalflaky  every other create fails: a retry succeeds, then the exec
 *              claims exit 0 without running anything
 *   evalnop    every exec claims exit 0 without running anything, so a
 *              comparison with a real provider has verdicts that differ
 *
 * The setting exit_code (providers.d or -o provider.NAME.exit_code=N)
 * makes every exec claim that exit status instead of 0; fail_delay_ms
 * makes a refused create take that long first (an attempt that costs
 * time, as a real backend's timeout does).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <polysandbox/provider.h>

#define MODE_FAIL 1
#define MODE_FLAKY 2
#define MODE_NOP 3

struct fake {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    atomic_ulong creates;
    int exit_code;            /* what every exec claims */
    long fail_delay_ms;       /* before a refused create */
};

/* Setting @key as a whole number from @lo to @hi into *@out (unset: left
 * as it is); SBX_E_CONFIG naming it otherwise. */
static int setting_long(const sbx_host_v1 *host, sbx_host_handle *h, const char *key, long lo,
                        long hi, long *out)
{
    const char *v = host->config_get(h, key);
    char *end;
    long n;

    if (!v)
        return SBX_OK;
    n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < lo || n > hi)
        return host->set_error(h, SBX_E_CONFIG, "%s: '%s' is not %ld to %ld", key, v, lo, hi);
    *out = n;
    return SBX_OK;
}

static int fake_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct fake *f = calloc(1, sizeof *f);
    long code = 0;
    int rc;

    if (!f)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    f->host = host;
    f->h = h;
    if ((rc = setting_long(host, h, "exit_code", 0, 255, &code)) != SBX_OK ||
        (rc = setting_long(host, h, "fail_delay_ms", 0, 60000, &f->fail_delay_ms)) != SBX_OK) {
        free(f);
        return rc;
    }
    f->exit_code = (int)code;
    *prov = f;
    return SBX_OK;
}

static void fake_fini(void *prov)
{
    free(prov);
}

static int fake_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                       char id[SBX_ID_MAX])
{
    struct fake *f = prov;
    unsigned long n = atomic_fetch_add(&f->creates, 1) + 1;

    (void)spec;
    if (EVAL_FAKE_MODE == MODE_FAIL || (EVAL_FAKE_MODE == MODE_FLAKY && n % 2 == 1)) {
        struct timespec ts = { f->fail_delay_ms / 1000, (f->fail_delay_ms % 1000) * 1000000 };
        while (nanosleep(&ts, &ts) != 0)
            ;
        return f->host->set_error(f->h, SBX_E_BACKEND, "%s: create number %lu refused",
                                  EVAL_FAKE_NAME, n);
    }
    snprintf(id, SBX_ID_MAX, "%s-%lu", EVAL_FAKE_NAME, n);
    *sb = f;
    return SBX_OK;
}

static int fake_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                     const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    const struct fake *f = prov;

    (void)sb;
    (void)spec;
    (void)sink;
    out->status = f->exit_code ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
    out->exit_code = f->exit_code;
    return SBX_OK;
}

static int fake_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static const sbx_provider_ops_v1 fake_ops = {
    .init = fake_init,
    .fini = fake_fini,
    .create = fake_create,
    .exec = fake_exec,
    .destroy = fake_destroy,
};

static const char *const fake_keys[] = { "exit_code", "fail_delay_ms", NULL };

SBX_PROVIDER_DEFINE(EVAL_FAKE_NAME, "0.1.0", "evaluation test provider (isolates nothing)",
                    "MIT", SBX_CAP_CONCURRENT | SBX_CAP_NETWORK_POLICY /* runs nothing */, fake_keys, NULL, &fake_ops);
