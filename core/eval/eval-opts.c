/* core/eval/eval-opts.c - options of an evaluation run */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "strv.h"

sbx_eval_opts *sbx_eval_opts_new(void)
{
    sbx_eval_opts *o = calloc(1, sizeof *o);

    if (!o)
        return NULL;
    o->timeout_ns = UINT64_C(3000000000);  /* the reference harness's 3 s */
    o->retries = 2;
    o->min_ns = UINT64_C(1000000000);
    o->factor = 3.0;
    o->compile_ns = UINT64_C(30000000000);
    /* evalplus/config.py's DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR */
    o->ep_min_ns = CORE_EVAL_EP_MIN_NS;
    o->ep_factor = CORE_EVAL_EP_FACTOR;
    return o;
}

void sbx_eval_opts_free(sbx_eval_opts *o)
{
    if (!o)
        return;
    core_strv_free(o->providers);
    free(o->journal);
    free(o);
}

int sbx_eval_opts_set_providers(sbx_eval_opts *o, const char *const *names)
{
    char **v = NULL;

    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_providers: NULL argument");
    if (names && names[0] && !(v = core_strv_dup(names)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    core_strv_free(o->providers);
    o->providers = v;
    return SBX_OK;
}

int sbx_eval_opts_set_jobs(sbx_eval_opts *o, unsigned jobs)
{
    core_error_clear();
    if (!o || jobs > 4096)
        return core_error_set(SBX_E_INVAL, NULL, "jobs: %u is not between 0 and 4096", jobs);
    o->jobs = jobs;
    return SBX_OK;
}

int sbx_eval_opts_set_timeout(sbx_eval_opts *o, uint64_t ns)
{
    core_error_clear();
    if (!o || ns == 0)
        return core_error_set(SBX_E_INVAL, NULL, "timeout: 0 is not a time limit");
    o->timeout_ns = ns;
    o->timeout_set = true;
    return SBX_OK;
}

int sbx_eval_opts_set_limit(sbx_eval_opts *o, sbx_limit which, uint64_t value)
{
    core_error_clear();
    if (!o || (unsigned)which >= SBX_LIMIT_COUNT || value == 0)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_limit: bad limit");
    o->limits[which] = value;
    return SBX_OK;
}

int sbx_eval_opts_set_retries(sbx_eval_opts *o, unsigned retries)
{
    core_error_clear();
    if (!o || retries > 100)
        return core_error_set(SBX_E_INVAL, NULL, "retries: %u is above 100", retries);
    o->retries = retries;
    return SBX_OK;
}

int sbx_eval_opts_set_isolated_check(sbx_eval_opts *o, bool on)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_isolated_check: NULL");
    o->isolated = on;
    return SBX_OK;
}

int sbx_eval_opts_set_journal(sbx_eval_opts *o, const char *path, bool resume)
{
    char *p = NULL;

    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_journal: NULL argument");
    if (path && !(p = strdup(path)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    free(o->journal);
    o->journal = p;
    o->resume = resume;
    return SBX_OK;
}

int sbx_eval_opts_set_callback(sbx_eval_opts *o, sbx_eval_record_cb cb, void *ud)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_callback: NULL argument");
    o->cb = cb;
    o->cb_ud = ud;
    return SBX_OK;
}

int sbx_eval_opts_set_cancel(sbx_eval_opts *o, sbx_cancel *c)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_cancel: NULL options");
    o->cancel = c;
    return SBX_OK;
}

int sbx_eval_opts_set_gate(sbx_eval_opts *o, sbx_eval_gate_cb cb, void *ud)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_gate: NULL options");
    o->gate = cb;
    o->gate_ud = ud;
    return SBX_OK;
}

int sbx_eval_opts_set_allow_partial(sbx_eval_opts *o, bool on)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_allow_partial: NULL");
    o->allow_partial = on;
    return SBX_OK;
}

/* A time factor is finite and at most 1000 (a negative one keeps the
 * value set before); else false, the error set naming @what. */
static bool factor_ok(const char *what, double factor)
{
    if (isfinite(factor) && factor <= 1000)
        return true;
    core_error_set(SBX_E_INVAL, NULL, "%s: %g is not from 0 to 1000", what, factor);
    return false;
}

int sbx_eval_opts_set_exec_per_test(sbx_eval_opts *o, bool on)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_exec_per_test: NULL options");
    o->exec_per_test = on;
    return SBX_OK;
}

int sbx_eval_opts_set_judge(sbx_eval_opts *o, bool all_tests, uint64_t min_ns, double factor,
                            uint64_t compile_ns)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_judge: NULL options");
    if (!factor_ok("time factor", factor))
        return SBX_E_INVAL;
    o->all_tests = all_tests;
    if (min_ns)
        o->min_ns = min_ns;
    if (factor >= 0)
        o->factor = factor;
    if (compile_ns)
        o->compile_ns = compile_ns;
    return SBX_OK;
}

int sbx_eval_opts_set_evalplus_time(sbx_eval_opts *o, uint64_t min_ns, double factor)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_opts_set_evalplus_time: NULL options");
    if (!factor_ok("EvalPlus time factor", factor))
        return SBX_E_INVAL;
    if (min_ns)
        o->ep_min_ns = min_ns;
    if (factor >= 0)
        o->ep_factor = factor;
    return SBX_OK;
}
