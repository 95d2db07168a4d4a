/* tests/eval/test-eval-cancel.c - what an application embedding the
 * evaluation engine relies on (since 0.2), through the public API only:
 * the gate holds the runs to the application's budget; a cancel stops a
 * run, running samples included, leaving no record of them so that a
 * resume runs them again; sbx_journal keeps whole lines, cuts a torn one
 * and gives offsets that lead back to each line.
 *
 * Runs real sandboxes of the local provider (the "sh" template).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/eval.h>
#include <polysandbox/journal.h>

#include "tap.h"

static char dir[] = "/tmp/ps-eval-cancel.XXXXXX";
static char path_ds[256], path_s[256], path_slow[256], path_j[256], path_r[256];

/* ---- the gate: a budget of one run at a time ------------------------------- */

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned budget, in, max_in, enters, leaves;
};

static int gate_cb(void *ud, bool enter)
{
    struct gate *g = ud;

    pthread_mutex_lock(&g->mu);
    if (enter) {
        while (g->in >= g->budget)
            pthread_cond_wait(&g->cv, &g->mu);
        g->in++;
        g->enters++;
        if (g->in > g->max_in)
            g->max_in = g->in;
    } else {
        g->in--;
        g->leaves++;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
    return 0;
}

static void test_gate(sbx_ctx *ctx, sbx_eval_dataset *ds, sbx_eval_samples *s)
{
    struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0, 0, 0, 0 };
    sbx_eval_opts *o = sbx_eval_opts_new();
    sbx_eval_summary *sum = NULL;
    int rc;

    sbx_eval_opts_set_jobs(o, 4);
    sbx_eval_opts_set_gate(o, gate_cb, &g);
    rc = sbx_eval_run(ctx, ds, s, o, &sum);
    ok(rc == SBX_OK && sum && sbx_eval_summary_done(sum) == sbx_eval_samples_count(s),
       "with a gate of one, every sample runs (rc %d)", rc);
    ok(g.max_in == 1, "... never more than one at a time with 4 workers (%u)", g.max_in);
    ok(g.enters >= sbx_eval_samples_count(s) && g.leaves == g.enters,
       "... an enter before each sample, a leave for each enter (%u, %u)", g.enters,
       g.leaves);
    sbx_eval_summary_free(sum);
    sbx_eval_opts_free(o);
}

/* A gate that refuses: the run ends at once with nothing done. */
static int refuse_cb(void *ud, bool enter)
{
    (void)ud;
    return enter ? 1 : 0;
}

static void test_gate_refuses(sbx_ctx *ctx, sbx_eval_dataset *ds, sbx_eval_samples *s)
{
    sbx_eval_opts *o = sbx_eval_opts_new();
    sbx_eval_summary *sum = NULL;
    int rc;

    sbx_eval_opts_set_gate(o, refuse_cb, NULL);
    rc = sbx_eval_run(ctx, ds, s, o, &sum);
    ok(rc == SBX_OK && sum && sbx_eval_summary_done(sum) == 0,
       "a gate that refuses: SBX_OK, nothing run");
    sbx_eval_summary_free(sum);
    sbx_eval_opts_free(o);
}

/* ---- cancel ------------------------------------------------------------------ */

struct firing {
    sbx_cancel *c;
    size_t after;       /* fire once this many records came */
};

static int fire_cb(void *ud, const sbx_eval_record *rec, size_t done, size_t total,
                   size_t passed)
{
    struct firing *f = ud;

    (void)rec;
    (void)total;
    (void)passed;
    if (done >= f->after)
        sbx_cancel_fire(f->c);
    return 0;
}

static size_t count_lines(const char *path, size_t *cancelled)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    size_t n = 0;

    *cancelled = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        n++;
        if (strstr(line, "sandbox_error") || strstr(line, "cancel"))
            (*cancelled)++;
    }
    fclose(f);
    return n;
}

static void test_cancel_resume(sbx_ctx *ctx, sbx_eval_dataset *ds, sbx_eval_samples *s)
{
    struct firing f = { sbx_cancel_new(), 3 };
    sbx_eval_opts *o = sbx_eval_opts_new();
    sbx_eval_summary *sum = NULL;
    size_t total = sbx_eval_samples_count(s), done = 0, lines, bad;
    int rc;

    sbx_eval_opts_set_jobs(o, 2);
    sbx_eval_opts_set_journal(o, path_r, false);
    sbx_eval_opts_set_callback(o, fire_cb, &f);
    sbx_eval_opts_set_cancel(o, f.c);
    rc = sbx_eval_run(ctx, ds, s, o, &sum);
    if (sum)
        done = sbx_eval_summary_done(sum);
    ok(rc == SBX_OK && sum && done >= 3 && done < total,
       "cancelled after 3 records: SBX_OK, a partial summary (%zu of %zu)", done, total);
    lines = count_lines(path_r, &bad);
    ok(lines == done && bad == 0,
       "... the journal holds exactly the finished samples, none cancelled (%zu lines, %zu "
       "bad)", lines, bad);
    sbx_eval_summary_free(sum);
    sum = NULL;

    sbx_eval_opts_set_cancel(o, NULL);
    sbx_eval_opts_set_callback(o, NULL, NULL);
    sbx_eval_opts_set_journal(o, path_r, true);
    rc = sbx_eval_run(ctx, ds, s, o, &sum);
    ok(rc == SBX_OK && sum && sbx_eval_summary_done(sum) == total &&
       sbx_eval_summary_resumed(sum) == done,
       "a resume runs the rest: %zu done, %zu resumed", sum ? sbx_eval_summary_done(sum) : 0,
       sum ? sbx_eval_summary_resumed(sum) : 0);
    lines = count_lines(path_r, &bad);
    ok(lines == total && bad == 0, "... one line per sample in the end (%zu)", lines);
    sbx_eval_summary_free(sum);
    sbx_eval_opts_free(o);
    sbx_cancel_free(f.c);
}

struct later {
    sbx_cancel *c;
    unsigned ms;
};

static void *fire_later(void *arg)
{
    struct later *l = arg;
    struct timespec ts = { 0, (long)l->ms * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    sbx_cancel_fire(l->c);
    return NULL;
}

/* A sample that would pass after 30 s: the cancel must stop it. */
static void test_cancel_running(sbx_ctx *ctx)
{
    struct later l = { sbx_cancel_new(), 300 };
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *s = NULL;
    sbx_eval_opts *o = sbx_eval_opts_new();
    sbx_eval_summary *sum = NULL;
    pthread_t t;
    int rc;

    if (sbx_eval_dataset_load(ctx, path_ds, SBX_EVAL_FORMAT_AUTO, &ds) != SBX_OK ||
        sbx_eval_samples_load(ctx, ds, path_slow, &s) != SBX_OK) {
        ok(0, "load the slow samples: %s", sbx_error_message(sbx_ctx_last_error(ctx)));
        return;
    }
    sbx_eval_opts_set_timeout(o, UINT64_C(60000000000));
    sbx_eval_opts_set_cancel(o, l.c);
    sbx_eval_opts_set_allow_partial(o, true);   /* one slow sample, one task */
    pthread_create(&t, NULL, fire_later, &l);
    rc = sbx_eval_run(ctx, ds, s, o, &sum);
    pthread_join(t, NULL);
    ok(rc == SBX_OK && sum && sbx_eval_summary_done(sum) == 0 &&
       sbx_eval_summary_count(sum, SBX_VERDICT_SANDBOX_ERROR) == 0,
       "a cancel stops a running sample: no verdict, no sandbox error");
    sbx_eval_summary_free(sum);
    sbx_eval_opts_free(o);
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    sbx_cancel_free(l.c);
}

/* ---- sbx_journal ----------------------------------------------------------- */

struct lines {
    size_t n;
    uint64_t offsets[8];
    char text[8][32];
};

static int line_cb(void *ud, const char *line, size_t len, size_t lineno, uint64_t offset)
{
    struct lines *l = ud;

    if (l->n >= 8 || lineno != l->n + 1)
        return SBX_E_INVAL;
    l->offsets[l->n] = offset;
    snprintf(l->text[l->n], sizeof l->text[0], "%.*s", (int)len, line);
    l->n++;
    return SBX_OK;
}

static void test_journal(void)
{
    sbx_journal *j = NULL;
    struct lines l = {0};
    uint64_t off[3] = {0};
    FILE *f;
    int rc;

    rc = sbx_journal_open(path_j, false, NULL, NULL, &j);
    ok(rc == SBX_OK && j, "sbx_journal_open creates the file");
    rc = sbx_journal_append(j, "{\"a\":1}", 7, &off[0]);
    rc |= sbx_journal_append(j, "{\"b\":22}", 8, &off[1]);
    rc |= sbx_journal_append(j, "", 0, &off[2]);
    ok(rc == SBX_OK && off[0] == 0 && off[1] == 8 && off[2] == 17,
       "appends give each line's offset (%llu %llu %llu)", (unsigned long long)off[0],
       (unsigned long long)off[1], (unsigned long long)off[2]);
    ok(sbx_journal_append(j, "x\ny", 3, NULL) == SBX_E_INVAL &&
       strstr(sbx_error_message(sbx_ctx_last_error(NULL)), path_j) != NULL,
       "a line holding a newline: SBX_E_INVAL naming the file");
    ok(sbx_journal_sync(j) == SBX_OK, "sbx_journal_sync");
    sbx_journal_close(j);
    j = NULL;

    if ((f = fopen(path_j, "a"))) {
        fputs("{\"torn", f);
        fclose(f);
    }
    rc = sbx_journal_open(path_j, true, line_cb, &l, &j);
    ok(rc == SBX_OK && l.n == 3 && !strcmp(l.text[0], "{\"a\":1}") &&
       !strcmp(l.text[1], "{\"b\":22}") && l.text[2][0] == '\0' && l.offsets[1] == 8,
       "a resume hands back every whole line with its offset (%zu lines)", l.n);
    rc = sbx_journal_append(j, "{\"c\":3}", 7, &off[0]);
    ok(rc == SBX_OK && off[0] == 18, "... cuts the torn line off: the next one lands at 18 "
       "(%llu)", (unsigned long long)off[0]);
    sbx_journal_close(j);

    memset(&l, 0, sizeof l);
    l.n = 5;    /* line_cb refuses line 1 now */
    rc = sbx_journal_open(path_j, true, line_cb, &l, &j);
    ok(rc == SBX_E_INVAL && !j &&
       strstr(sbx_error_message(sbx_ctx_last_error(NULL)), ":1: ") != NULL,
       "a line the callback refuses stops the open, naming FILE:LINE (%s)",
       sbx_error_message(sbx_ctx_last_error(NULL)));
    rc = sbx_journal_open("/nonexistent/dir/j.jsonl", false, NULL, NULL, &j);
    ok(rc == SBX_E_IO && strstr(sbx_error_message(sbx_ctx_last_error(NULL)), "/nonexistent"),
       "a file that cannot be opened: SBX_E_IO naming it");
}

int main(void)
{
    sbx_ctx *ctx = NULL;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *s = NULL;
    char cmd[300];
    int rc;

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 99;
    }
    snprintf(path_ds, sizeof path_ds, "%s/ds.jsonl", dir);
    snprintf(path_s, sizeof path_s, "%s/s.jsonl", dir);
    snprintf(path_slow, sizeof path_slow, "%s/slow.jsonl", dir);
    snprintf(path_j, sizeof path_j, "%s/j.jsonl", dir);
    snprintf(path_r, sizeof path_r, "%s/r.jsonl", dir);
    tap_write_file(path_ds, "{\"task_id\":\"t/0\",\"language\":\"sh\"}\n"
                        "{\"task_id\":\"t/1\",\"language\":\"sh\"}\n");
    tap_write_file(path_s, "{\"task_id\":\"t/0\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/1\",\"completion\":\"sleep 0.1; exit 1\"}\n"
                       "{\"task_id\":\"t/0\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/1\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/0\",\"completion\":\"sleep 0.1; exit 1\"}\n"
                       "{\"task_id\":\"t/1\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/0\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/1\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/0\",\"completion\":\"sleep 0.1\"}\n"
                       "{\"task_id\":\"t/1\",\"completion\":\"sleep 0.1\"}\n");
    tap_write_file(path_slow, "{\"task_id\":\"t/0\",\"completion\":\"sleep 30\"}\n");

    test_journal();
    if ((rc = sbx_ctx_new(&ctx, NULL)) != SBX_OK ||
        (rc = sbx_eval_dataset_load(ctx, path_ds, SBX_EVAL_FORMAT_AUTO, &ds)) != SBX_OK ||
        (rc = sbx_eval_samples_load(ctx, ds, path_s, &s)) != SBX_OK) {
        ok(0, "set up: %s", sbx_error_message(sbx_ctx_last_error(ctx)));
    } else {
        test_gate(ctx, ds, s);
        test_gate_refuses(ctx, ds, s);
        test_cancel_resume(ctx, ds, s);
        test_cancel_running(ctx);
    }
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    sbx_ctx_free(ctx);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("cannot remove %s", dir);
    return tap_done();
}
