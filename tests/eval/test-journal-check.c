/* tests/eval/test-journal-check.c - sbx_eval_journal_check: results of
 * this run pass (those of older versions too), results of another
 * dataset, other samples or other verdict-changing options are refused
 * naming the difference and the line, and the file is never changed
 *
 * Nothing runs: the records are written here, their "run" member the
 * engine's own provenance (core_eval_provenance).  Also a record's
 * attempt_log, read back and written alike.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval/eval-int.h"
#include "tap.h"

static char dir[] = "/tmp/ps-journal-check.XXXXXX";
static char path_ds[256], path_ds2[256], path_s[256], path_s2[256], path_r[256];

/* A record line of @sample (task t/@sample), @verdict, with @run (NULL:
 * none, as before 0.3). */
static char *record(size_t sample, const char *verdict, const json_t *run)
{
    json_t *o = json_pack("{s:s, s:I, s:s, s:b, s:s, s:I, s:s, s:i}", "task_id", "t/0",
                          "sample", (json_int_t)sample, "verdict", verdict, "passed",
                          !strcmp(verdict, "passed"), "status", "ok", "time_ns",
                          (json_int_t)1000, "provider", "local", "attempts", 1);
    char *s;

    json_object_set_new(o, "task_id", json_sprintf("t/%zu", sample % 2));
    if (run)
        json_object_set(o, "run", (json_t *)run);
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* Write @n lines and @tail (a torn line, or "") to the results file. */
static void results(const char *const *lines, size_t n, const char *tail)
{
    FILE *f = fopen(path_r, "w");

    for (size_t i = 0; f && i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    if (f) {
        fputs(tail, f);
        fclose(f);
    }
}

static const char *msg(sbx_ctx *ctx)
{
    return sbx_error_message(sbx_ctx_last_error(ctx));
}

static bool refused(sbx_ctx *ctx, int rc, const char *want)
{
    if (rc == SBX_E_INVAL && strstr(msg(ctx), want))
        return true;
    diag("rc %d: %s", rc, msg(ctx));
    return false;
}

int main(void)
{
    sbx_ctx *ctx = NULL;
    sbx_eval_dataset *ds = NULL, *ds2 = NULL;
    sbx_eval_samples *s = NULL, *s2 = NULL;
    sbx_eval_opts *o = sbx_eval_opts_new(), *o2 = sbx_eval_opts_new();
    json_t *run = NULL;
    char *l[4] = { NULL };
    size_t n = 99;
    struct stat st;
    int rc;

    if (!mkdtemp(dir) || !o || !o2) {
        perror("set up");
        return 99;
    }
    snprintf(path_ds, sizeof path_ds, "%s/ds.jsonl", dir);
    snprintf(path_ds2, sizeof path_ds2, "%s/ds2.jsonl", dir);
    snprintf(path_s, sizeof path_s, "%s/s.jsonl", dir);
    snprintf(path_s2, sizeof path_s2, "%s/s2.jsonl", dir);
    snprintf(path_r, sizeof path_r, "%s/r.jsonl", dir);
    tap_write_file(path_ds, "{\"task_id\": \"t/0\", \"language\": \"sh\"}\n"
                        "{\"task_id\": \"t/1\", \"language\": \"sh\"}\n");
    tap_write_file(path_ds2, "{\"task_id\": \"t/0\", \"language\": \"sh\"}\n"
                         "{\"task_id\": \"t/1\", \"language\": \"sh\", \"test\": \"true\"}\n");
    tap_write_file(path_s, "{\"task_id\": \"t/0\", \"completion\": \"exit 0\"}\n"
                       "{\"task_id\": \"t/1\", \"completion\": \"exit 1\", \"model\": \"a\"}\n"
                       "{\"task_id\": \"t/0\", \"completion\": \"exit 0\"}\n");
    /* the same samples but one completion; extra fields do not count */
    tap_write_file(path_s2, "{\"task_id\": \"t/0\", \"completion\": \"exit 0\"}\n"
                        "{\"task_id\": \"t/1\", \"completion\": \"exit 2\", \"model\": \"a\"}\n"
                        "{\"task_id\": \"t/0\", \"completion\": \"exit 0\"}\n");
    if ((rc = sbx_ctx_new(&ctx, NULL)) != SBX_OK ||
        sbx_eval_dataset_load(ctx, path_ds, SBX_EVAL_FORMAT_AUTO, &ds) != SBX_OK ||
        sbx_eval_dataset_load(ctx, path_ds2, SBX_EVAL_FORMAT_AUTO, &ds2) != SBX_OK ||
        sbx_eval_samples_load(ctx, ds, path_s, &s) != SBX_OK ||
        sbx_eval_samples_load(ctx, ds, path_s2, &s2) != SBX_OK ||
        !(run = core_eval_provenance(ds, s, o))) {
        ok(0, "set up: %s", ctx ? msg(ctx) : "no context");
        return tap_done();
    }

    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, &n);
    ok(rc == SBX_OK && n == 0, "a missing results file is none (rc %d, %zu records)", rc, n);

    l[0] = record(0, "passed", run);
    l[1] = record(1, "sandbox_error", run);
    l[2] = record(1, "failed", NULL);
    results((const char *const *)l, 2, "{\"task_id\":\"t/0\",\"sam");
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, &n);
    ok(rc == SBX_OK && n == 1, "this run's records pass; a sandbox error is no verdict, "
       "a torn last line is left out (rc %d, %zu records)", rc, n);
    ok(stat(path_r, &st) == 0 && st.st_size > 0 && (size_t)st.st_size > strlen(l[0]) +
       strlen(l[1]) + 2, "the check left the torn line in the file (it never writes)");

    results((const char *const *)l, 3, "");
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, &n);
    ok(rc == SBX_OK && n == 2, "a record without \"run\" (before 0.3) is taken (%zu)", n);

    /* options that change no verdict may differ */
    sbx_eval_opts_set_jobs(o2, 7);
    sbx_eval_opts_set_retries(o2, 9);
    sbx_eval_opts_set_providers(o2, (const char *const[]){ "docker", NULL });
    sbx_eval_opts_set_judge(o2, true, 2000000000, 5, 0);   /* not a judged dataset */
    rc = sbx_eval_journal_check(ctx, ds, s, o2, path_r, NULL);
    ok(rc == SBX_OK, "providers, jobs, retries and judged options of another format may "
       "differ (%s)", rc ? msg(ctx) : "ok");

    sbx_eval_opts_set_timeout(o2, 5000000000);
    rc = sbx_eval_journal_check(ctx, ds, s, o2, path_r, NULL);
    ok(refused(ctx, rc, "r.jsonl:1: these results were graded with another timeout "
                        "(\"timeout_ns\": 3000000000 in the results, 5000000000 now)"),
       "another timeout: refused, naming it, both values and the line");
    sbx_eval_opts_set_timeout(o2, 3000000000);
    sbx_eval_opts_set_limit(o2, SBX_LIMIT_MEMORY, 1 << 28);
    rc = sbx_eval_journal_check(ctx, ds, s, o2, path_r, NULL);
    ok(refused(ctx, rc, "other limits (\"limits\": {} in the results, {\"memory\":268435456} "
                        "now)"), "another memory limit: refused, naming the limits");
    sbx_eval_opts_set_isolated_check(o, true);
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, NULL);
    ok(refused(ctx, rc, "another isolated check setting"), "another isolated check: refused");
    sbx_eval_opts_set_isolated_check(o, false);

    rc = sbx_eval_journal_check(ctx, ds, s2, o, path_r, NULL);
    ok(refused(ctx, rc, "r.jsonl:1: these results were graded with other samples (\"samples\": "
                        "sha256 "), "other completions: refused as other samples");
    rc = sbx_eval_journal_check(ctx, ds2, s, o, path_r, NULL);
    ok(refused(ctx, rc, "with another dataset (\"dataset\": sha256 "),
       "a dataset with another test: refused as another dataset");

    /* records that are not records, or of other samples */
    l[3] = record(5, "passed", run);
    results((const char *const *)l + 3, 1, "");
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, NULL);
    ok(refused(ctx, rc, "r.jsonl:1: sample 5 is past the 3 samples given"),
       "a sample past the samples: refused");
    tap_write_file(path_r, "{\"task_id\":\"t/0\",\"sample\":0,\"verdict\":\"passed\",\"run\":[]}\n");
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, NULL);
    ok(refused(ctx, rc, "r.jsonl:1: not a result record (\"run\" is not an object)"),
       "a \"run\" that is no object: refused");
    tap_write_file(path_r, "\n{\"task_id\": 3}\n");
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, NULL);
    ok(refused(ctx, rc, "r.jsonl:2: not a result record"), "a line that is no record: refused "
       "with its line");
    tap_write_file(path_r, "{\"task_id\":\n");
    rc = sbx_eval_journal_check(ctx, ds, s, o, path_r, NULL);
    ok(refused(ctx, rc, "r.jsonl:1"), "bad JSON on a whole line: refused with its line");
    rc = sbx_eval_journal_check(ctx, ds, s, o, NULL, NULL);
    ok(rc == SBX_E_INVAL, "no path: SBX_E_INVAL");

    /* a record's attempt_log read back: an entry this version cannot
     * read is left out, the rest kept in order and written alike */
    {
        json_t *jo = json_loads("{\"task_id\":\"t\",\"sample\":0,\"verdict\":\"passed\","
                               "\"attempts\":2,\"provider\":\"b\",\"attempt_log\":["
                               "{\"provider\":\"a\",\"verdict\":\"sandbox_error\","
                               "\"reason\":\"down\",\"time_ns\":5},"
                               "{\"provider\":\"x\",\"verdict\":\"nosuch\",\"time_ns\":1},"
                               "{\"provider\":\"b\",\"verdict\":\"passed\",\"reason\":null,"
                               "\"time_ns\":7}]}", 0, NULL);
        sbx_eval_record *r = NULL;
        const char *why, *prov = NULL;
        sbx_eval_verdict v = SBX_VERDICT_PASSED;
        uint64_t ns = 0;
        rc = jo ? core_eval_record_from_json(jo, &r, &why) : SBX_E_NOMEM;
        ok(rc == SBX_OK && r->n_tries == 2 && sbx_eval_record_attempt(r, 0, &prov, &v, &ns) &&
           !strcmp(prov, "a") && v == SBX_VERDICT_SANDBOX_ERROR && ns == 5 &&
           !strcmp(r->tries[0].reason, "down") && sbx_eval_record_attempt(r, 1, &prov, &v, &ns) &&
           !strcmp(prov, "b") && v == SBX_VERDICT_PASSED && ns == 7 && !r->tries[1].reason &&
           !sbx_eval_record_attempt(r, 2, NULL, NULL, NULL),
           "attempt_log read back: each attempt's provider, verdict, reason and time; an "
           "unknown verdict left out");
        char *line = r ? sbx_eval_record_to_json(r) : NULL;
        ok(line && strstr(line, "\"attempt_log\":[{\"provider\":\"a\",\"verdict\":"
                                "\"sandbox_error\",\"reason\":\"down\",\"time_ns\":5},"
                                "{\"provider\":\"b\",\"verdict\":\"passed\",\"reason\":null,"
                                "\"time_ns\":7}]"),
           "... and written back alike: %s", line ? line : "(null)");
        free(line);
        core_eval_record_free(r);
        json_decref(jo);
    }

    for (size_t i = 0; i < 4; i++)
        free(l[i]);
    json_decref(run);
    sbx_eval_opts_free(o);
    sbx_eval_opts_free(o2);
    sbx_eval_samples_free(s);
    sbx_eval_samples_free(s2);
    sbx_eval_dataset_free(ds);
    sbx_eval_dataset_free(ds2);
    sbx_ctx_free(ctx);
    {
        const char *names[] = { path_ds, path_ds2, path_s, path_s2, path_r };
        for (size_t i = 0; i < 5; i++)
            unlink(names[i]);
        rmdir(dir);
    }
    return tap_done();
}
