/* core/eval/eval-run.c - the runner: worker threads over sbx_run, retries of
 * sandbox errors (then the next provider), the journal, the callback */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "strv.h"
#include "clock.h"
#include "inside/seal.h"

#define STDERR_TAIL 2000
#define OUTPUT_HEAD 2000

struct run {
    sbx_ctx *ctx;
    const sbx_eval_dataset *ds;
    const sbx_eval_samples *s;
    const sbx_eval_opts *o;
    size_t *pending;              /* sample indexes still to run */
    size_t n_pending;
    atomic_size_t next;
    atomic_bool stop;
    pthread_mutex_t lock;         /* records, counters, journal, callback, fatal */
    sbx_eval_record **records;
    size_t done, passed, ran;
    sbx_journal *journal;         /* or NULL */
    int fatal;                    /* the first error that stops the run */
    struct sbx_error fatal_err;
    const char *py_lang;          /* the template py_argv is for, or NULL */
    char **py_argv;               /* its run words with -S (python_argv) */
    const char *py_source;        /* its source file: where the runner goes */
    json_t *prov;                 /* what every record carries as "run" */
    char *prov_text;              /* the same as compact JSON */
};

/* The command a Python runner is started with: the template @lang's run
 * words with -S after the interpreter, so that Python does not import
 * site (site-packages, .pth files, sitecustomize: a third of its start-up
 * CPU) before the program; the runner imports site on the first import
 * that needs it.  NULL (use the template as it is) when the template
 * does not run a python* interpreter on its source file, or compiles. */
static char **python_argv(const sbx_ctx *ctx, const char *lang, const char **source)
{
    const sbx_template *t = sbx_ctx_find_template(ctx, lang);
    const char *const *run = sbx_template_run(t);
    const char *src = sbx_template_source(t);
    const char *base;
    char **v = NULL;
    size_t n;

    if (!t || sbx_template_compiled(t) || !run || !run[0] || !src ||
        !core_strv_has((char *const *)run, src))
        return NULL;
    base = strrchr(run[0], '/');
    base = base ? base + 1 : run[0];
    if (strncmp(base, "python", 6) != 0)
        return NULL;
    n = core_strv_len((char *const *)run);
    if (!(v = calloc(n + 2, sizeof *v)))
        return NULL;    /* the template as it is: slower, not wrong */
    v[0] = (char *)run[0];
    v[1] = (char *)"-S";
    memcpy(v + 2, run + 1, (n - 1) * sizeof *v);
    *source = src;
    return v;           /* borrows the strings: free only the array */
}

/* Record the first fatal error (the calling thread's) and stop the run. */
static void set_fatal(struct run *run, int rc)
{
    pthread_mutex_lock(&run->lock);
    if (run->fatal == SBX_OK) {
        run->fatal = rc;
        run->fatal_err = *core_error_tls();
        run->fatal_err.code = rc;
    }
    pthread_mutex_unlock(&run->lock);
    atomic_store(&run->stop, true);
}

/* Errors of sbx_run that no retry can cure: every sample would fail. */
static bool request_error(int rc)
{
    return rc == SBX_E_INVAL || rc == SBX_E_NOT_FOUND || rc == SBX_E_LIMIT ||
           rc == SBX_E_CONFIG || rc == SBX_E_NOMEM || rc == SBX_E_INTERNAL;
}

/* Full-jitter exponential backoff before another attempt: 25 ms << n, at
 * most 1 s. */
static void backoff(unsigned attempt)
{
    static _Thread_local unsigned seed;
    uint64_t cap = UINT64_C(25000000) << (attempt < 6 ? attempt : 6);
    struct timespec ts;
    uint64_t ns;

    if (cap > UINT64_C(1000000000))
        cap = UINT64_C(1000000000);
    if (seed == 0)
        seed = (unsigned)core_now_ns() | 1u;
    ns = (uint64_t)rand_r(&seed) % (cap + 1);
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The end of stderr as valid UTF-8 text, or NULL. */
static char *stderr_tail(const sbx_result *r)
{
    size_t len;
    const char *err = sbx_result_stderr(r, &len);

    return core_eval_excerpt(err, len, STDERR_TAIL, true);
}

/* The start of stdout, without the harness's marker line, or NULL. */
static char *stdout_head(const sbx_result *r)
{
    size_t len;
    const char *out = sbx_result_stdout(r, &len);
    const char *m = out ? memmem(out, len, "\n" CORE_EVAL_MARKER_PREFIX,
                                 sizeof CORE_EVAL_MARKER_PREFIX) : NULL;

    if (m)
        len = (size_t)(m - out) + 1;
    return core_eval_excerpt(out, len, OUTPUT_HEAD, false);
}

/* The limit of a program: MultiPL-E's own when the caller set none, 15 s
 * per step as its evaluator gives, so 30 s for a shell line that
 * compiles and runs (Java; Go, whose go test has 30 s there). */
static uint64_t multiple_timeout(const struct run *run, const core_eval_task *t)
{
    if (run->ds->fmt != SBX_EVAL_FORMAT_MULTIPLE || run->o->timeout_set)
        return run->o->timeout_ns;
    return t->test_command ? 2 * CORE_EVAL_MULTIPLE_TIMEOUT_NS : CORE_EVAL_MULTIPLE_TIMEOUT_NS;
}

/* @runner (marked formats): main.py, with program.py (and check.py when
 * @check), and the run's @marker in a file of its own. */
static int build_opts(struct run *run, const core_eval_task *t, const char *program,
                      const char *runner, const char *check, const char *marker,
                      const char *provider, sbx_create_opts **copts, sbx_exec_opts **xopts)
{
    sbx_create_opts *c = sbx_create_opts_new();
    sbx_exec_opts *x = sbx_exec_opts_new();
    int rc = (c && x) ? SBX_OK : SBX_E_NOMEM;

    if (rc == SBX_OK)
        rc = sbx_create_opts_set_provider(c, provider);
    if (rc == SBX_OK)
        rc = sbx_create_opts_set_template(c, t->lang);
    for (int i = 0; rc == SBX_OK && i < SBX_LIMIT_COUNT; i++)
        if (run->o->limits[i])
            rc = sbx_create_opts_set_limit(c, (sbx_limit)i, run->o->limits[i]);
    if (rc == SBX_OK && t->test_command) {
        rc = sbx_exec_opts_set_shell(x, t->test_command);
        if (rc == SBX_OK)
            rc = sbx_exec_opts_add_file(x, t->program_file, program, strlen(program), 0644);
    } else if (rc == SBX_OK && runner && run->py_argv && !strcmp(t->lang, run->py_lang)) {
        rc = sbx_exec_opts_set_argv(x, (const char *const *)run->py_argv);
        if (rc == SBX_OK)
            rc = sbx_exec_opts_add_file(x, run->py_source, runner, strlen(runner), 0644);
        if (rc == SBX_OK)
            rc = sbx_exec_opts_add_file(x, CORE_EVAL_PROGRAM_FILE, program, strlen(program),
                                        0644);
    } else if (rc == SBX_OK && runner) {
        rc = sbx_exec_opts_set_code(x, t->lang, runner, (size_t)-1);
        if (rc == SBX_OK)
            rc = sbx_exec_opts_add_file(x, CORE_EVAL_PROGRAM_FILE, program, strlen(program),
                                        0644);
    } else if (rc == SBX_OK) {
        rc = sbx_exec_opts_set_code(x, t->lang, program, (size_t)-1);
    }
    if (rc == SBX_OK && runner && check)
        rc = sbx_exec_opts_add_file(x, CORE_EVAL_CHECK_FILE, check, strlen(check), 0644);
    /* 0644 like the rest: the program runs as the file's owner anyway, and
     * the keeper removes it before the program starts; another mode costs
     * a chmod some providers run as a command, one more step to fail. */
    if (rc == SBX_OK && runner && marker && check) {
        rc = sbx_exec_opts_add_file(x, CORE_EVAL_MARKER_FILE, marker, strlen(marker), 0644);
    } else if (rc == SBX_OK && runner && marker) {
        /* the plain runner's: the whole pass line, which a keeper prints as
         * it is (the sandbox's init, sdk/inside/seal.h, or a forked one) */
        char line[sizeof CORE_EVAL_MARKER_PREFIX + CORE_EVAL_MARKER_LEN + 2];
        int n = snprintf(line, sizeof line, "\n%s%s\n", CORE_EVAL_MARKER_PREFIX, marker);
        rc = n > 0 && (size_t)n < sizeof line && (size_t)n < SBX_SEAL_MAX
                 ? sbx_exec_opts_add_file(x, SBX_SEAL_FILE, line, (size_t)n, 0644)
                 : SBX_E_INTERNAL;
    }
    for (size_t i = 0; rc == SBX_OK && i < t->n_files; i++)
        rc = sbx_exec_opts_add_file(x, t->files[i].path, t->files[i].data, t->files[i].len,
                                    0644);
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_timeout(x, multiple_timeout(run, t));
    /* MultiPL-E's compile step (C++, Rust, TypeScript) has a limit of its own */
    if (rc == SBX_OK && run->ds->fmt == SBX_EVAL_FORMAT_MULTIPLE)
        rc = sbx_exec_opts_set_compile_timeout(x, run->o->compile_ns);
    if (rc == SBX_OK && run->o->cancel)
        rc = sbx_exec_opts_set_cancel(x, run->o->cancel);
    if (rc != SBX_OK) {
        sbx_create_opts_free(c);
        sbx_exec_opts_free(x);
        if (rc == SBX_E_NOMEM)
            core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        return rc;
    }
    *copts = c;
    *xopts = x;
    return SBX_OK;
}

/* Fill @rec from a graded result (@evalplus: with its base verdict; @scan:
 * output that fails it, or NULL). */
static int grade(sbx_eval_record *rec, const sbx_result *r, const char *marker, bool evalplus,
                 const core_eval_scan *scan)
{
    const char *reason, *found;
    char slow[512];
    sbx_run_status st = sbx_result_status(r);

    rec->verdict = core_eval_verdict(r, marker, &reason);
    if (rec->verdict == SBX_VERDICT_PASSED && (found = core_eval_multiple_scan(scan, r))) {
        rec->verdict = SBX_VERDICT_FAILED;
        reason = found;
    }
    /* an input over its EvalPlus limit: the keeper said so, and which */
    if (evalplus && rec->verdict == SBX_VERDICT_FAILED &&
        (found = core_eval_evalplus_timeout(r, marker, slow, sizeof slow))) {
        rec->verdict = SBX_VERDICT_TIMEOUT;
        reason = found;
    }
    if (evalplus && rec->verdict != SBX_VERDICT_SANDBOX_ERROR) {
        rec->has_base = true;
        rec->base_verdict = rec->verdict;
        if (rec->verdict != SBX_VERDICT_PASSED && core_eval_base_passed(r, marker)) {
            rec->base_verdict = SBX_VERDICT_PASSED;
            if (rec->verdict == SBX_VERDICT_FAILED)
                reason = "passed the base inputs, failed on an extra (plus) input";
        }
    }
    rec->status = sbx_run_status_name(st);
    rec->exit_code = (st == SBX_RUN_OK || st == SBX_RUN_NONZERO_EXIT ||
                      st == SBX_RUN_NOT_FOUND || st == SBX_RUN_NOT_EXECUTABLE)
                         ? sbx_result_exit_code(r) : -1;
    rec->signal = sbx_result_signal(r);
    rec->unenforced = sbx_result_unenforced_limits(r);
    rec->time_ns = sbx_result_timing(r, SBX_TIMING_TOTAL);
    core_eval_record_usage(rec, r, false);
    free(rec->provider);
    rec->provider = strdup(sbx_result_provider(r) ? sbx_result_provider(r) : "");
    free(rec->reason);
    rec->reason = reason ? strdup(reason) : NULL;
    if (rec->verdict != SBX_VERDICT_PASSED)
        rec->stderr_tail = stderr_tail(r);
    rec->output = stdout_head(r);
    if (!rec->provider || (reason && !rec->reason))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return SBX_OK;
}

/* Run sample @i to a record.  Returns an error only when the whole run
 * must stop (a request no provider can serve, out of memory), or
 * SBX_E_CANCELLED (no record: the sample was not run to its end). */
static int run_sample(struct run *run, size_t i, sbx_eval_record **out)
{
    const core_eval_task *t = &run->ds->tasks[run->s->v[i].task];
    const char *none[] = { NULL, NULL };
    const char *const *providers = run->o->providers
                                       ? (const char *const *)run->o->providers : none;
    bool marked = core_eval_uses_marker(run->ds);
    bool isolated = marked && core_eval_isolated(run->ds, t, run->o->isolated);
    sbx_eval_record *rec = calloc(1, sizeof *rec);
    int rc = SBX_OK;
    bool graded = false;

    if (!rec || !(rec->task_id = strdup(t->id)) ||
        !(rec->completion = strdup(run->s->v[i].completion)) ||
        !(rec->run = strdup(run->prov_text))) {
        core_eval_record_free(rec);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    rec->sample = i;
    rec->exit_code = -1;
    rec->cpu_ns = -1;
    rec->peak_memory = -1;
    if (t->no_template) {    /* no attempt: an error of this sample alone */
        if ((rc = core_eval_multiple_no_template(t, rec)) != SBX_OK) {
            core_eval_record_free(rec);
            return rc;
        }
        *out = rec;
        return SBX_OK;
    }
    /* providers[0] may be NULL: the default provider and fallback chain */
    for (size_t p = 0; !graded && rc == SBX_OK && (p == 0 || providers[p]); p++) {
        for (unsigned a = 0; !graded && rc == SBX_OK && a <= run->o->retries; a++) {
            char marker[CORE_EVAL_MARKER_LEN + 1];
            sbx_create_opts *copts;
            sbx_exec_opts *xopts;
            sbx_result *r = NULL;
            char *program, *runner = NULL, *check = NULL;
            int err;

            if (a > 0)
                backoff(a - 1);
            if (sbx_cancel_fired(run->o->cancel)) {
                rc = SBX_E_CANCELLED;
                break;
            }
            if (core_eval_judged(run->ds)) {
                rc = SBX_OK;
                program = core_eval_build_program(run->ds, t, &run->s->v[i], false);
                if (!program) {
                    rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
                    break;
                }
                rec->attempts++;
                sbx_fallback_reset();
                uint64_t ta = core_now_ns();
                err = core_eval_judge(run->ctx, run->o, t, run->s->v[i].lang ? run->s->v[i].lang
                                                                          : t->lang,
                                      program, providers[p], rec, &graded);
                uint64_t spent = core_now_ns() - ta;
                free(program);
                if (err == SBX_E_CANCELLED || sbx_cancel_fired(run->o->cancel)) {
                    rc = SBX_E_CANCELLED;
                    break;
                }
                if (err == SBX_OK || request_error(err)) {
                    rc = err == SBX_OK ? core_eval_attempt_add(rec, spent) : err;
                    continue;
                }
                /* no sandbox: as sbx_run's failure below */
                {
                    const sbx_error *e = sbx_ctx_last_error(run->ctx);
                    rc = core_eval_note_sandbox_error(rec, providers[p] ? providers[p]
                                                      : sbx_error_provider(e),
                                                      sbx_error_message(e));
                }
                if (rc == SBX_OK)
                    rc = core_eval_attempt_add(rec, spent);
                if (err == SBX_E_PROVIDER_UNAVAILABLE)
                    break;
                continue;
            }
            if ((rc = core_eval_new_marker(marker)) != SBX_OK)
                break;
            program = core_eval_build_program(run->ds, t, &run->s->v[i], isolated);
            if (program && marked)
                runner = core_eval_runner(run->ds, t, isolated, run->o);
            if (program && isolated)
                check = core_eval_build_check(run->ds, t);
            if (!program || (marked && !runner) || (isolated && !check)) {
                free(program);
                free(runner);
                rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
                break;
            }
            rc = build_opts(run, t, program, runner, check, marker, providers[p], &copts,
                            &xopts);
            free(program);
            free(runner);
            free(check);
            if (rc != SBX_OK)
                break;
            rec->attempts++;
            sbx_fallback_reset();
            uint64_t ta = core_now_ns();
            err = sbx_run(run->ctx, copts, xopts, &r);
            uint64_t spent = core_now_ns() - ta;
            sbx_create_opts_free(copts);
            sbx_exec_opts_free(xopts);
            /* A cancelled run is no verdict and no sandbox error. */
            if (sbx_cancel_fired(run->o->cancel)) {
                sbx_result_free(r);
                rc = SBX_E_CANCELLED;
                break;
            }
            if (err != SBX_OK) {
                const sbx_error *e = sbx_ctx_last_error(run->ctx);
                if (request_error(err)) {
                    rc = err;
                    break;
                }
                rc = core_eval_note_sandbox_error(rec, providers[p] ? providers[p]
                                                          : sbx_error_provider(e),
                                        sbx_error_message(e));
                if (rc == SBX_OK)
                    rc = core_eval_attempt_add(rec, spent);
                if (err == SBX_E_PROVIDER_UNAVAILABLE)
                    break;      /* no retry cures it: the next provider */
                continue;
            }
            if (sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR) {
                rc = core_eval_note_sandbox_error(rec, sbx_result_provider(r), sbx_result_error(r));
                rec->time_ns = sbx_result_timing(r, SBX_TIMING_TOTAL);
                core_eval_record_usage(rec, r, false);
            } else {
                rc = grade(rec, r, marked ? marker : NULL,
                           run->ds->fmt == SBX_EVAL_FORMAT_EVALPLUS, t->scan);
                graded = true;
            }
            if (rc == SBX_OK)
                rc = core_eval_attempt_add(rec, spent);
            sbx_result_free(r);
        }
        if (!providers[0])
            break;
    }
    if (rc != SBX_OK) {
        core_eval_record_free(rec);
        return rc;
    }
    *out = rec;
    return SBX_OK;
}

static void finish(struct run *run, sbx_eval_record *rec)
{
    int rc = SBX_OK;

    pthread_mutex_lock(&run->lock);
    run->records[rec->sample] = rec;
    run->done++;
    run->ran++;
    if (rec->verdict == SBX_VERDICT_PASSED)
        run->passed++;
    if (run->journal)
        rc = core_journal_append(run->journal, rec);
    if (rc == SBX_OK && run->o->cb &&
        run->o->cb(run->o->cb_ud, rec, run->done, run->s->n, run->passed) != 0)
        atomic_store(&run->stop, true);
    pthread_mutex_unlock(&run->lock);
    if (rc != SBX_OK)
        set_fatal(run, rc);
}

/* Whether the run is over for the workers: stopped, or cancelled. */
static bool stopping(struct run *run)
{
    return atomic_load(&run->stop) || sbx_cancel_fired(run->o->cancel);
}

static void *worker(void *arg)
{
    struct run *run = arg;
    const sbx_eval_opts *o = run->o;

    while (!stopping(run) && atomic_load(&run->next) < run->n_pending) {
        sbx_eval_record *rec = NULL;
        size_t k;
        int rc;
        /* The application's turn to say when the next sample may start. */
        if (o->gate && o->gate(o->gate_ud, true) != 0)
            break;
        k = atomic_fetch_add(&run->next, 1);
        rc = (k >= run->n_pending || stopping(run)) ? SBX_E_CANCELLED
             : run_sample(run, run->pending[k], &rec);
        if (o->gate)
            o->gate(o->gate_ud, false);
        if (rc == SBX_E_CANCELLED)
            break;
        if (rc != SBX_OK) {
            set_fatal(run, rc);
            break;
        }
        finish(run, rec);
    }
    return NULL;
}

/* A samples file that leaves tasks out is refused, as the reference
 * harness refuses it: a score over a subset is not the dataset's. */
static int check_coverage(const sbx_eval_dataset *ds, const sbx_eval_samples *s)
{
    bool *has = calloc(ds->n + 1, sizeof *has);
    char names[600];
    size_t missing = 0, off = 0, shown = 0;

    if (!has)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < s->n; i++)
        has[s->v[i].task] = true;
    names[0] = '\0';
    for (size_t i = 0; i < ds->n; i++) {
        int w;
        if (has[i])
            continue;
        missing++;
        if (off >= sizeof names - 100)
            continue;
        w = snprintf(names + off, sizeof names - off, "%s\"%.64s\"", shown ? ", " : "",
                     ds->tasks[i].id);
        if (w > 0)
            off += (size_t)w < sizeof names - off ? (size_t)w : sizeof names - off - 1;
        shown++;
    }
    free(has);
    if (!missing)
        return SBX_OK;
    return core_error_set(SBX_E_INVAL, NULL,
                          "%s: %zu of the %zu tasks of %s have no sample: %s%s (--allow-partial "
                          "to score the others)", s->path ? s->path : "samples", missing, ds->n,
                          ds->path, names, shown < missing ? ", ..." : "");
}

int sbx_eval_run(sbx_ctx *ctx, const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                 const sbx_eval_opts *o, sbx_eval_summary **out)
{
    struct run run;
    pthread_t *threads = NULL;
    size_t n_threads = 0, resumed = 0;
    uint64_t t0 = core_now_ns();
    sbx_eval_opts *defaults = NULL;
    long cpus;
    int rc = SBX_OK;

    core_error_clear();
    if (!ctx || !ds || !s || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_run: NULL argument");
    *out = NULL;
    if (!o && !(o = defaults = sbx_eval_opts_new()))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (!o->allow_partial && (rc = check_coverage(ds, s)) != SBX_OK) {
        sbx_eval_opts_free(defaults);
        return rc;
    }
    memset(&run, 0, sizeof run);
    run.ctx = ctx;
    run.ds = ds;
    run.s = s;
    run.o = o;
    atomic_init(&run.next, 0);
    atomic_init(&run.stop, false);
    if (pthread_mutex_init(&run.lock, NULL) != 0) {
        sbx_eval_opts_free(defaults);
        return core_error_set(SBX_E_INTERNAL, NULL, "cannot initialise a mutex");
    }
    if (!(run.records = calloc(s->n + 1, sizeof *run.records)) ||
        !(run.pending = calloc(s->n + 1, sizeof *run.pending)) ||
        !(run.prov = core_eval_provenance(ds, s, o)) ||
        !(run.prov_text = json_dumps(run.prov, JSON_COMPACT | JSON_SORT_KEYS))) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    if (o->journal) {
        rc = core_journal_open(&run.journal, o->journal, o->resume, ds, s, run.prov,
                               run.records, &resumed);
        if (rc != SBX_OK)
            goto out;
    }
    for (size_t i = 0; i < s->n; i++)
        if (!run.records[i])
            run.pending[run.n_pending++] = i;
    run.done = resumed;
    for (size_t i = 0; i < s->n; i++)
        if (run.records[i] && run.records[i]->verdict == SBX_VERDICT_PASSED)
            run.passed++;

    if (core_eval_uses_marker(ds) && ds->n > 0 &&
        (run.py_argv = python_argv(ctx, ds->tasks[0].lang, &run.py_source)))
        run.py_lang = ds->tasks[0].lang;
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    n_threads = o->jobs ? o->jobs : (cpus > 0 ? (size_t)cpus : 1);
    if (n_threads > run.n_pending)
        n_threads = run.n_pending;
    if (n_threads && !(threads = calloc(n_threads, sizeof *threads))) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_threads; i++) {
        int e = pthread_create(&threads[i], NULL, worker, &run);
        if (e != 0) {
            core_error_set(SBX_E_IO, NULL, "cannot start a worker thread: %s", strerror(e));
            set_fatal(&run, SBX_E_IO);
            n_threads = i;
            break;
        }
    }
    for (size_t i = 0; i < n_threads; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    /* everything appended is on disk before the summary says it is done */
    if (run.journal && (rc = sbx_journal_sync(run.journal)) != SBX_OK)
        set_fatal(&run, rc);
    if (run.fatal != SBX_OK) {
        *core_error_tls() = run.fatal_err;
        rc = run.fatal;
        goto out;
    }
    rc = core_eval_summary_build(ctx, ds, s, run.records, resumed, run.ran, core_now_ns() - t0,
                                 out);
    run.records = NULL;   /* the summary owns them, even on failure */
out:
    if (run.records)
        for (size_t i = 0; i < s->n; i++)
            core_eval_record_free(run.records[i]);
    free(run.records);
    free(run.pending);
    free(run.py_argv);
    json_decref(run.prov);
    free(run.prov_text);
    sbx_journal_close(run.journal);
    pthread_mutex_destroy(&run.lock);
    sbx_eval_opts_free(defaults);
    return rc;
}
