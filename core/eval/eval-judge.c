/* core/eval/eval-judge.c - one attempt at a judged sample: a sandbox, the
 * compile step once, then each test's stdin in and its stdout compared
 * here, outside the sandbox, with the expected output */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "clock.h"

#define OUTPUT_EXCERPT 2000
#define STDERR_EXCERPT 2000

/* The time limit of each test of @t, and how it came about in @why. */
static uint64_t test_limit(const sbx_eval_opts *o, const core_eval_task *t, char *why,
                           size_t size)
{
    double rel;

    if (!t->ref_ns || o->factor <= 0) {
        snprintf(why, size, "%.3g s", (double)o->timeout_ns / 1e9);
        return o->timeout_ns;
    }
    rel = o->factor * (double)t->ref_ns;
    snprintf(why, size, "%.3g s = max(minimum %.3g s, %g x reference %.3g s)",
             (rel > (double)o->min_ns ? rel : (double)o->min_ns) / 1e9,
             (double)o->min_ns / 1e9, o->factor, (double)t->ref_ns / 1e9);
    return rel > (double)o->min_ns ? (uint64_t)rel : o->min_ns;
}

/* The exec of test @i: the code (compiled by the first) or, once the
 * template compiled it, its run words as the template runs them. */
static int test_opts(const sbx_eval_opts *o, const sbx_template *tc, const char *lang,
                     const char *program, const core_eval_case *c, bool first, uint64_t limit,
                     sbx_exec_opts **out)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    int rc = x ? SBX_OK : SBX_E_NOMEM;

    const char *k, *v;

    if (rc == SBX_OK && (first || !sbx_template_compiled(tc))) {
        rc = sbx_exec_opts_set_code(x, lang, program, (size_t)-1);
    } else if (rc == SBX_OK) {
        rc = sbx_exec_opts_set_argv(x, sbx_template_run(tc));
        for (size_t i = 0; rc == SBX_OK && sbx_template_env(tc, i, &k, &v); i++)
            rc = sbx_exec_opts_add_env(x, k, v);
    }
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_stdin(x, c->in, c->in_len);
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_timeout(x, limit);
    if (rc == SBX_OK && first && sbx_template_compiled(tc))
        rc = sbx_exec_opts_set_compile_timeout(x, o->compile_ns);
    if (rc == SBX_OK && o->cancel)
        rc = sbx_exec_opts_set_cancel(x, o->cancel);
    if (rc != SBX_OK) {
        sbx_exec_opts_free(x);
        return rc == SBX_E_NOMEM ? core_error_set(SBX_E_NOMEM, NULL, "out of memory") : rc;
    }
    *out = x;
    return SBX_OK;
}

/* Run one test: *r (transfer full) when SBX_OK. */
static int run_test(sbx_sandbox *sb, const sbx_eval_opts *o, const sbx_template *tc,
                    const char *lang, const char *program, const core_eval_case *c, bool first,
                    uint64_t limit, sbx_result **r)
{
    sbx_exec_opts *x = NULL;
    int rc = test_opts(o, tc, lang, program, c, first, limit, &x);

    if (rc != SBX_OK)
        return rc;
    rc = sbx_sandbox_exec(sb, x, r);
    sbx_exec_opts_free(x);
    return rc;
}

/* Fill @rec from the first failing test's result @r. */
static int fail(sbx_eval_record *rec, const sbx_result *r, size_t i, size_t n,
                const char *limit_why)
{
    sbx_run_status st = sbx_result_status(r);
    const char *why = NULL;
    char reason[512];
    size_t len;
    const char *out = sbx_result_stdout(r, &len);

    if (st == SBX_RUN_OK && sbx_result_stdout_truncated(r)) {
        rec->verdict = SBX_VERDICT_OUTPUT_LIMIT;
        why = "its output passed the cap";
    } else if (st == SBX_RUN_OK) {
        rec->verdict = SBX_VERDICT_FAILED;
        why = "wrong answer";
    } else {
        rec->verdict = core_eval_verdict(r, NULL, &why);
    }
    if (st == SBX_RUN_COMPILE_ERROR)
        snprintf(reason, sizeof reason, "%s", why);
    else if (st == SBX_RUN_TIMEOUT)
        snprintf(reason, sizeof reason, "test %zu of %zu: %s (%s)", i + 1, n, why, limit_why);
    else
        snprintf(reason, sizeof reason, "test %zu of %zu: %s", i + 1, n, why);
    rec->status = sbx_run_status_name(st);
    rec->exit_code = (st == SBX_RUN_OK || st == SBX_RUN_NONZERO_EXIT) ? sbx_result_exit_code(r)
                                                                       : -1;
    rec->signal = sbx_result_signal(r);
    free(rec->reason);
    free(rec->output);
    free(rec->stderr_tail);
    rec->reason = strdup(reason);
    rec->output = core_eval_excerpt(out, len, OUTPUT_EXCERPT, false);
    out = sbx_result_stderr(r, &len);
    rec->stderr_tail = core_eval_excerpt(out, len, STDERR_EXCERPT, true);
    return rec->reason ? SBX_OK : core_error_set(SBX_E_NOMEM, NULL, "out of memory");
}

/* Whether @t's tests after the first go through a runner: a compiled
 * program (the template's run words run it, as they would each test) or
 * a Python script (the first test's exec left it in place) with more than
 * one test, unless the caller asked for an exec per test. */
static bool use_runner(const sbx_eval_opts *o, const sbx_template *tc,
                       const core_eval_task *t)
{
    const char *const *run = sbx_template_run(tc);

    return !o->exec_per_test && run && run[0] && t->n_cases > 1 &&
           (sbx_template_compiled(tc) || core_eval_python_run(tc));
}

/* The runner over tests 1.. of @t: *@batch (NULL when it could not run),
 * its exec's usage added to @rec.  SBX_E_CANCELLED or SBX_E_NOMEM stop. */
static int batch_tests(sbx_ctx *ctx, sbx_sandbox *sb, const sbx_eval_opts *o,
                       const sbx_template *tc, const core_eval_task *t, uint64_t limit,
                       sbx_eval_record *rec, core_jr_test **batch)
{
    /* the caps the sandbox has, as it resolves them (core/run/sandbox.c) */
    uint64_t out_cap = o->limits[SBX_LIMIT_STDOUT] ? o->limits[SBX_LIMIT_STDOUT]
                                                   : sbx_ctx_limit(ctx, SBX_LIMIT_STDOUT);
    uint64_t err_cap = o->limits[SBX_LIMIT_STDERR] ? o->limits[SBX_LIMIT_STDERR]
                                                   : sbx_ctx_limit(ctx, SBX_LIMIT_STDERR);
    sbx_result *br = NULL;
    int rc = core_eval_batch(sb, o, tc, t, 1, limit, out_cap, err_cap,
                             sbx_ctx_limit_max(ctx, SBX_LIMIT_WALL), batch, &br);

    if (rc != SBX_OK)
        return rc;
    if (br) {
        rec->unenforced |= sbx_result_unenforced_limits(br);
        core_eval_record_usage(rec, br, true);
        sbx_result_free(br);
    }
    return sbx_cancel_fired(o->cancel) ? SBX_E_CANCELLED : SBX_OK;
}

int core_eval_judge(sbx_ctx *ctx, const sbx_eval_opts *o, const core_eval_task *t,
                    const char *lang, const char *program, const char *provider,
                    sbx_eval_record *rec, bool *graded)
{
    const sbx_template *tc = sbx_ctx_find_template(ctx, lang);
    sbx_create_opts *c = sbx_create_opts_new();
    sbx_sandbox *sb = NULL;
    uint64_t t0 = core_now_ns(), limit;
    char limit_why[160];
    bool failed = false, batched = false;
    core_jr_test *batch = NULL;
    int rc = c ? SBX_OK : SBX_E_NOMEM;

    *graded = false;
    if (!tc) {
        sbx_create_opts_free(c);
        return core_error_set(SBX_E_NOT_FOUND, NULL, "no template '%s'", lang);
    }
    if (rc == SBX_OK)
        rc = sbx_create_opts_set_provider(c, provider);
    if (rc == SBX_OK)
        rc = sbx_create_opts_set_template(c, lang);
    for (int i = 0; rc == SBX_OK && i < SBX_LIMIT_COUNT; i++)
        if (o->limits[i])
            rc = sbx_create_opts_set_limit(c, (sbx_limit)i, o->limits[i]);
    if (rc == SBX_E_NOMEM)
        core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (rc == SBX_OK)
        rc = sbx_sandbox_create(ctx, c, &sb);
    sbx_create_opts_free(c);
    if (rc != SBX_OK)
        return rc;      /* the caller tells a sandbox error from a bad request */
    limit = test_limit(o, t, limit_why, sizeof limit_why);
    rec->tests_total = t->n_cases;
    rec->tests_passed = 0;
    free(rec->provider);
    if (!(rec->provider = strdup(sbx_sandbox_provider(sb) ? sbx_sandbox_provider(sb) : "")))
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    rec->status = sbx_run_status_name(SBX_RUN_OK);
    rec->exit_code = 0;
    rec->cpu_ns = 0;        /* the sum of this attempt's tests */
    rec->peak_memory = -1;
    for (size_t i = 0; rc == SBX_OK && i < t->n_cases; i++) {
        const core_eval_case *tcase = &t->cases[i];
        sbx_result *r = NULL;
        size_t len;
        const char *out;

        /* A compiled program's other tests: in one exec of the runner; a
         * test it reports clean with the right output passed, any other
         * runs on an exec of its own below, which decides as always. */
        if (i == 1 && use_runner(o, tc, t)) {
            batched = true;
            if ((rc = batch_tests(ctx, sb, o, tc, t, limit, rec, &batch)) != SBX_OK)
                break;
        }
        if (batch && batch[i - 1].reported && batch[i - 1].clean &&
            core_eval_compare(t->cmp, t->tolerance, tcase->out, tcase->out_len, batch[i - 1].out,
                              batch[i - 1].out_len)) {
            rec->tests_passed++;
            continue;
        }
        rc = run_test(sb, o, tc, lang, program, tcase, i == 0, limit, &r);
        /* The first run of a sandbox also pays its runtime's cold start
         * (an interpreter started afresh, under load seconds): a timeout
         * there is run once more, the program already in place. */
        if (rc == SBX_OK && i == 0 && sbx_result_status(r) == SBX_RUN_TIMEOUT &&
            !sbx_cancel_fired(o->cancel)) {
            sbx_result_free(r);
            r = NULL;
            rc = run_test(sb, o, tc, lang, program, tcase, false, limit, &r);
        }
        if (rc != SBX_OK)
            break;
        if (sbx_cancel_fired(o->cancel)) {
            sbx_result_free(r);
            rc = SBX_E_CANCELLED;
            break;
        }
        rec->unenforced |= sbx_result_unenforced_limits(r);
        core_eval_record_usage(rec, r, true);
        if (sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR) {
            rc = core_eval_note_sandbox_error(rec, sbx_result_provider(r), sbx_result_error(r));
            sbx_result_free(r);
            rec->time_ns = core_now_ns() - t0;
            if (batched)
                core_eval_batch_free(batch, t->n_cases - 1);
            sbx_sandbox_destroy(sb);
            return rc == SBX_OK ? SBX_OK : SBX_E_NOMEM;
        }
        out = sbx_result_stdout(r, &len);
        if (sbx_result_status(r) == SBX_RUN_OK && !sbx_result_stdout_truncated(r) &&
            core_eval_compare(t->cmp, t->tolerance, tcase->out, tcase->out_len, out, len)) {
            rec->tests_passed++;
            if (i == 0) {   /* a pass shows the first test's output */
                free(rec->output);
                rec->output = core_eval_excerpt(out, len, OUTPUT_EXCERPT, false);
            }
        } else if (!failed) {
            failed = true;
            rc = fail(rec, r, i, t->n_cases, limit_why);
        }
        /* no program without its compile step; else all tests if asked */
        if (failed && (!o->all_tests || sbx_result_status(r) == SBX_RUN_COMPILE_ERROR)) {
            sbx_result_free(r);
            break;
        }
        sbx_result_free(r);
    }
    if (batched)
        core_eval_batch_free(batch, t->n_cases - 1);
    sbx_sandbox_destroy(sb);
    if (rc != SBX_OK)
        return rc;
    if (!failed) {
        rec->verdict = SBX_VERDICT_PASSED;
        free(rec->reason);
        rec->reason = NULL;
    }
    rec->time_ns = core_now_ns() - t0;
    *graded = true;
    return SBX_OK;
}
