/* tests/eval/test-eval-stats.c - pass@k, percentiles and verdict rules
 *
 * pass@k against values derived by hand from 1 - C(n-c,k)/C(n,k) (the
 * shell test passk.sh also checks it against Python's math.comb); the
 * comparison of judged problems' output in each mode; the output MultiPL-E's
 * evaluator reads to fail a run that exited 0 (its eval_pl.py, eval_php.py,
 * eval_go.py).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "eval/eval-int.h"
#include "run/result-int.h"
#include "tap.h"

static int near(double a, double b)
{
    return fabs(a - b) < 1e-12;
}

/* Whether sbx_eval_report_label gives column @i of @names the label @want. */
static bool labelled(const char *const *names, size_t i, const char *want)
{
    char *l = sbx_eval_report_label(names, i);
    bool same = l && !strcmp(l, want);

    free(l);
    return same;
}

/* A run that exited 0 having written @out and @err: failed under @code's scan? */
static bool scan_fails(const char *code, const char *out, const char *err)
{
    sbx_result *r = core_result_new("local", "x");
    bool fails;

    if (!r || core_buf_append(&r->out, out, strlen(out)) != SBX_OK ||
        core_buf_append(&r->err, err, strlen(err)) != SBX_OK)
        abort();
    r->status = SBX_RUN_OK;
    fails = core_eval_multiple_scan(core_eval_multiple_scan_of(code), r) != NULL;
    sbx_result_free(r);
    return fails;
}

static sbx_result *result(sbx_run_status st, const char *out, bool truncated)
{
    sbx_result *r = core_result_new("local", "x");

    if (!r)
        abort();
    r->status = st;
    r->exit_code = st == SBX_RUN_OK ? 0 : 1;
    if (out && core_buf_append(&r->out, out, strlen(out)) != SBX_OK)
        abort();
    r->out_truncated = truncated;
    return r;
}

int main(void)
{
    uint64_t vals[100];
    const char *marker = "0123456789abcdef0123456789abcdef", *why;
    char line[128];
    sbx_result *r;

    ok(near(sbx_eval_pass_at_k(2, 1, 1), 0.5), "pass@1 of 1 in 2 is 1/2");
    ok(near(sbx_eval_pass_at_k(3, 1, 2), 2.0 / 3.0), "pass@2 of 1 in 3 is 2/3");
    ok(near(sbx_eval_pass_at_k(10, 1, 5), 0.5), "pass@5 of 1 in 10 is 1 - 126/252 = 1/2");
    ok(near(sbx_eval_pass_at_k(5, 0, 1), 0.0), "no pass: 0");
    ok(near(sbx_eval_pass_at_k(5, 5, 5), 1.0), "all pass: 1");
    ok(near(sbx_eval_pass_at_k(4, 3, 2), 1.0), "fewer failures than k: 1");
    ok(near(sbx_eval_pass_at_k(200, 3, 100), 1.0 - 970200.0 / 7880400.0),
       "pass@100 of 3 in 200 is 1 - (100*99*98)/(200*199*198)");
    ok(near(sbx_eval_pass_at_k(10000, 1, 1), 1e-4), "pass@1 of 1 in 10000");
    ok(sbx_eval_pass_at_k(1000000, 500000, 1000) <= 1.0 &&
       sbx_eval_pass_at_k(1000000, 500000, 1000) > 0.999999, "huge n stays finite and in [0,1]");
    ok(sbx_eval_pass_at_k(5, 1, 0) < 0, "k = 0 is not computable");
    ok(sbx_eval_pass_at_k(5, 1, 6) < 0, "k > n is not computable");
    ok(sbx_eval_pass_at_k(5, 6, 1) < 0, "c > n is refused");

    for (int i = 0; i < 100; i++)
        vals[i] = (uint64_t)i + 1;
    ok(core_eval_percentile(vals, 100, 50) == 50 && core_eval_percentile(vals, 100, 95) == 95 &&
       core_eval_percentile(vals, 100, 99) == 99 && core_eval_percentile(vals, 100, 100) == 100,
       "nearest-rank p50/p95/p99/p100 of 1..100");
    vals[0] = 10, vals[1] = 20, vals[2] = 30;
    ok(core_eval_percentile(vals, 3, 50) == 20 && core_eval_percentile(vals, 3, 99) == 30 &&
       core_eval_percentile(vals, 1, 99) == 10 && core_eval_percentile(vals, 0, 50) == 0,
       "percentiles of 3, 1 and 0 values");

    snprintf(line, sizeof line, "x\n%s%s\n", CORE_EVAL_MARKER_PREFIX, marker);
    r = result(SBX_RUN_OK, line, false);
    ok(core_eval_verdict(r, marker, &why) == SBX_VERDICT_PASSED, "exit 0 + marker: passed");
    ok(core_eval_verdict(r, "ffffffffffffffffffffffffffffffff", &why) == SBX_VERDICT_FAILED &&
       why != NULL, "exit 0 + another marker: failed, with a reason");
    sbx_result_free(r);
    r = result(SBX_RUN_OK, "passed\n", false);
    ok(core_eval_verdict(r, marker, &why) == SBX_VERDICT_FAILED, "exit 0, prints passed: failed");
    ok(core_eval_verdict(r, NULL, &why) == SBX_VERDICT_PASSED, "no marker asked: exit 0 passes");
    sbx_result_free(r);
    r = result(SBX_RUN_OK, "yyyy", true);
    ok(core_eval_verdict(r, marker, &why) == SBX_VERDICT_OUTPUT_LIMIT,
       "exit 0, truncated output without the marker: output_limit");
    sbx_result_free(r);
    r = result(SBX_RUN_NONZERO_EXIT, line, false);
    ok(core_eval_verdict(r, marker, &why) == SBX_VERDICT_FAILED,
       "marker but a non-zero exit: failed");
    sbx_result_free(r);
    r = result(SBX_RUN_SANDBOX_ERROR, NULL, false);
    ok(core_eval_verdict(r, marker, &why) == SBX_VERDICT_SANDBOX_ERROR, "sandbox error");
    sbx_result_free(r);
    r = result(SBX_RUN_TIMEOUT, NULL, false);
    ok(core_eval_verdict(r, marker, &why) == SBX_VERDICT_TIMEOUT, "timeout");
    sbx_result_free(r);
    for (int v = 0; v < SBX_VERDICT_COUNT; v++)
        if (core_eval_verdict_from_name(sbx_eval_verdict_name((sbx_eval_verdict)v)) != v)
            ok(0, "verdict name %d round trip", v);
    {
        char bad[] = "a\xff b\xc0\xaf c\xe2\x82\xac d\xed\xa0\x80 e\xf0\x9f\x98\x80";
        core_eval_utf8_sanitize(bad);
        ok(!strcmp(bad, "a? b?? c\xe2\x82\xac d??? e\xf0\x9f\x98\x80"),
           "UTF-8 sanitising: stray, overlong and surrogate bytes become '?', the rest stays");
    }
    ok(sbx_eval_verdict_name(SBX_VERDICT_COUNT) == NULL, "verdict names round trip, none past the end");
    ok(!sbx_eval_verdict_graded(SBX_VERDICT_SANDBOX_ERROR) &&
       !sbx_eval_verdict_graded(SBX_VERDICT_NO_TEMPLATE) &&
       !sbx_eval_verdict_graded(SBX_VERDICT_COUNT) && sbx_eval_verdict_graded(SBX_VERDICT_PASSED) &&
       sbx_eval_verdict_graded(SBX_VERDICT_FAILED) && sbx_eval_verdict_graded(SBX_VERDICT_PIDS_LIMIT) &&
       !strcmp(sbx_eval_verdict_name(SBX_VERDICT_NO_TEMPLATE), "no_template"),
       "graded verdicts: all but sandbox_error and no_template");

#define CMP(m, tol, w, g) core_eval_compare(m, tol, w, sizeof w - 1, g, sizeof g - 1)
    ok(CMP(CORE_EVAL_CMP_LINES, 0, "1 2\n3\n", "1   2 \t\r\n3\n\n  \n") &&
       CMP(CORE_EVAL_CMP_LINES, 0, "3\n", "3") && CMP(CORE_EVAL_CMP_LINES, 0, "", "\n\n"),
       "lines: whitespace runs alike, trailing whitespace and blank lines ignored");
    ok(!CMP(CORE_EVAL_CMP_LINES, 0, "1 2\n", "1\n2\n") && !CMP(CORE_EVAL_CMP_LINES, 0, "3\n", "") &&
       !CMP(CORE_EVAL_CMP_LINES, 0, "a\n\nb\n", "a\nb\n") && !CMP(CORE_EVAL_CMP_LINES, 0, "3", "3\n4"),
       "lines: the line structure counts, a blank line inside too");
    ok(CMP(CORE_EVAL_CMP_EXACT, 0, "a  b\n", "a  b\n") && !CMP(CORE_EVAL_CMP_EXACT, 0, "a  b\n", "a b\n") &&
       !CMP(CORE_EVAL_CMP_EXACT, 0, "a\n", "a\n\0"), "exact: byte for byte, a NUL too");
    ok(CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "2.333333333\n500", "2.3333333 5e2\n") &&
       CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "1000000", "1000000.9") &&
       CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "YES 1", "YES 1.0000001"),
       "numeric: within the tolerance, absolute or relative; words equal");
    ok(!CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "2.3333", "2.34") && !CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "1 2", "1") &&
       !CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "16", "0x10") && !CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "1", "nan") &&
       !CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "1", "1e999") && !CMP(CORE_EVAL_CMP_NUMERIC, 1e-6, "YES", "yes"),
       "numeric: outside the tolerance, a missing word, hex, nan, inf, case: not equal");
    ok(core_eval_cmp_from_name("numeric") == CORE_EVAL_CMP_NUMERIC && core_eval_cmp_from_name("x") < 0,
       "comparison modes by name");
    {
        /* the bootstrap interval of pass@k (core_eval_bootstrap) */
        double same[20], coin[400], few[10], lo, hi, lo2, hi2;
        for (int i = 0; i < 20; i++)
            same[i] = 0.25;
        for (int i = 0; i < 400; i++)
            coin[i] = i % 2;
        for (int i = 0; i < 10; i++)
            few[i] = i % 2;
        ok(core_eval_bootstrap(same, 20, &lo, &hi) == SBX_OK && near(lo, 0.25) && near(hi, 0.25),
           "bootstrap: equal tasks give an interval of that one value");
        ok(core_eval_bootstrap(coin, 400, &lo, &hi) == SBX_OK && lo < 0.5 && hi > 0.5 &&
               0.5 - lo > 0.035 && 0.5 - lo < 0.065 && hi - 0.5 > 0.035 && hi - 0.5 < 0.065,
           "bootstrap: half of 400 tasks: about 0.5 +- 1.96 * sqrt(0.25 / 400) = 0.049");
        ok(core_eval_bootstrap(coin, 400, &lo2, &hi2) == SBX_OK && lo2 == lo && hi2 == hi,
           "bootstrap: the fixed seed gives the same interval again");
        ok(core_eval_bootstrap(few, 10, &lo2, &hi2) == SBX_OK && hi2 - lo2 > 2 * (hi - lo) &&
               lo2 >= 0.0 && hi2 <= 1.0,
           "bootstrap: 10 tasks give a wider interval than 400, within [0, 1]");
        ok(core_eval_bootstrap(coin, 0, &lo, &hi) == SBX_E_INVAL, "bootstrap: no task is refused");
    }

    ok(scan_fails("pl", "ok!ERROR", "") && scan_fails("pl", "ok!", "ERROR at main.pl line 3\n") &&
       !scan_fails("pl", "ok!ok!", "error: lower case\n"),
       "MultiPL-E, Perl: ERROR on stdout or stderr fails, lower case does not");
    ok(scan_fails("php", "PHP Parse error:  syntax error", "") &&
       !scan_fails("php", "", "PHP Parse error:  syntax error") && !scan_fails("php", "Parse error", ""),
       "MultiPL-E, PHP: \"PHP Parse error\" on stdout fails, on stderr it does not");
    ok(scan_fails("go_test.go", "--- FAIL: TestAdd\nFAIL\n", "") && scan_fails("go", "FAIL\n", "") &&
       !scan_fails("go_test.go", "ok  \tcommand-line-arguments\t0.004s\n", "FAIL\n"),
       "MultiPL-E, Go: FAIL on stdout fails, on stderr it does not");
    ok(!core_eval_multiple_scan_of("py") && !core_eval_multiple_scan_of("rb") &&
       !core_eval_multiple_scan_of("sh") && !core_eval_multiple_scan_of("nosuch") &&
       !scan_fails("js", "ERROR FAIL PHP Parse error", "ERROR"),
       "MultiPL-E: the other languages' output is not read");
    {
        const char *const names[] = { "local", "local", "docker", "local", "docker", NULL };
        ok(labelled(names, 0, "local") && labelled(names, 1, "local#2") &&
           labelled(names, 2, "docker") && labelled(names, 3, "local#3") &&
           labelled(names, 4, "docker#2"),
           "report labels: a provider's name, NAME#N for its Nth column");
        ok(!sbx_eval_report_label(names, 5) && errno == EINVAL &&
           !sbx_eval_report_label(NULL, 0) && errno == EINVAL,
           "report labels: no name is EINVAL");
    }
    return tap_done();
}
