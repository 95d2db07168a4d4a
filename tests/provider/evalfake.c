/* tests/provider/evalfake.c - the evaluation tests' flavour, built three
 * times with a different TP_EVAL_MODE:
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
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "testprov.h"

#define MODE_FAIL 1
#define MODE_FLAKY 2
#define MODE_NOP 3
#ifndef TP_EVAL_MODE
#define TP_EVAL_MODE MODE_NOP
#endif

struct fake {
    unsigned long exit_code;     /* what every exec claims */
    unsigned long fail_delay_ms; /* before a refused create */
};

int tp_setup(struct tp *t)
{
    struct fake *f = calloc(1, sizeof *f);

    if (!f)
        return t->host->set_error(t->h, SBX_E_NOMEM, "out of memory");
    t->own = f;
    if (tp_setting_num(t, "exit_code", 0, 255, &f->exit_code) != SBX_OK)
        return SBX_E_CONFIG;
    return tp_setting_num(t, "fail_delay_ms", 0, 60000, &f->fail_delay_ms);
}

void tp_teardown(struct tp *t)
{
    free(t->own);
}

static int fake_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                       char id[SBX_ID_MAX])
{
    struct tp *t = prov;
    const struct fake *f = t->own;
    unsigned long n = atomic_fetch_add(&t->creates, 1) + 1;

    (void)spec;
    if (TP_EVAL_MODE == MODE_FAIL || (TP_EVAL_MODE == MODE_FLAKY && n % 2 == 1)) {
        struct timespec ts = {(time_t)(f->fail_delay_ms / 1000),
                              (long)(f->fail_delay_ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) != 0)
            ;
        return t->host->set_error(t->h, SBX_E_BACKEND, "%s: create number %lu refused",
                                  TP_NAME, n);
    }
    snprintf(id, SBX_ID_MAX, "%s-%lu", TP_NAME, n);
    *sb = t;
    return SBX_OK;
}

static int fake_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                     const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    const struct tp *t = prov;
    const struct fake *f = t->own;

    (void)sb;
    (void)spec;
    (void)sink;
    tp_exited(out, (int)f->exit_code);
    return SBX_OK;
}

static const sbx_provider_ops_v1 fake_ops = {
    .init = tp_init, .fini = tp_fini, .create = fake_create, .exec = fake_exec,
    .destroy = tp_destroy,
};

static const char *const fake_keys[] = {"exit_code", "fail_delay_ms", NULL};

SBX_PROVIDER_DEFINE(TP_NAME, "0.1.0", "evaluation test provider (isolates nothing)", "MIT",
                    SBX_CAP_CONCURRENT | SBX_CAP_NETWORK_POLICY /* runs nothing */, fake_keys,
                    NULL, &fake_ops);
