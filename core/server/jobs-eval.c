/* core/server/jobs-eval.c - POST /v1/eval: score samples against a
 * dataset as one job, with the engine of `polysandbox eval`
 *
 *   {"dataset": "humaneval.jsonl.gz" | [RECORD, ...] | {"name", "base64"},
 *    "samples": "samples.jsonl" | [{"task_id", "completion"}, ...] | {...},
 *    "canonical": true,          (instead of samples)
 *    "format": "auto", "k": [1, 10, 100], "providers": ["local"],
 *    "timeout": "3s", "memory": "512M", "retries": 2, "allow_partial": true,
 *    "all_tests": false, "min_time": "1s", "time_factor": 3,
 *    "compile_timeout": "30s",      (the last four: judged problems)
 *    "evalplus_min_time": "1s", "evalplus_time_factor": 4,   (EvalPlus)
 *    "results": [RECORD, ...] | "JSONL"}   (an earlier run's, to continue)
 *
 * A dataset or samples given as a string is a file the server reads
 * under [server] eval_dir (never elsewhere); given inline, the records
 * themselves; given as {"name", "base64"}, a client's file, its bytes
 * kept as they are (gzip included), so that the report's digests and
 * names are those of the client's file (what the Python Client sends).
 * Either way the job keeps its own copy and checks it with the engine
 * before answering 202, so bad input is a 4xx naming the field (and the
 * line).  The summary of an ended job is the whole object of
 * `polysandbox eval --json`: with jobs and meta (the inputs named as
 * the request named them, never the job's copies), as are the engine's
 * messages.  The job runs sbx_eval_run with the job's results.jsonl as
 * the engine's journal and resume on: a server killed
 * mid-job runs at its next start only the samples that have no record,
 * exactly as `polysandbox eval --resume`.  The "results" of a request
 * are the records of an earlier run of the same evaluation (a client's
 * results file): they become the job's results.jsonl, checked with
 * sbx_eval_journal_check (another dataset, other samples or options that
 * change verdicts are a 400 naming the difference), so the job runs only
 * the samples without a verdict.  The records are the engine's
 * own lines; pass@k is the engine's summary once the job ended (and the
 * same estimator over the records so far while it runs).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/eval.h>

#include "jobs.h"

struct evaljob {
    sbx_eval_format fmt;
    bool canonical;
    unsigned ks[JOB_MAX_KS];
    size_t n_ks;
    char **providers;          /* NULL-terminated, or NULL */
    uint64_t timeout_ns, memory;
    int retries;               /* -1: the engine's default */
    bool allow_partial;        /* score the tasks the samples have (the default) */
    bool all_tests;            /* sbx_eval_opts_set_judge's, 0 and -1: its defaults */
    uint64_t min_ns, compile_ns;
    double factor;
    uint64_t ep_min_ns;        /* sbx_eval_opts_set_evalplus_time's, 0 and -1: its defaults */
    double ep_factor;
    char *source;              /* where the dataset came from, for the summary */
    char *samples_source;      /* and the samples (NULL: canonical) */
    json_t *tasks;             /* task id -> its number */
    size_t n_tasks;
};

/* The format called @name into *@f; false when none is (NULL included). */
static bool format_named(const char *name, sbx_eval_format *f)
{
    for (int i = 0; name && i <= SBX_EVAL_FORMAT_LAST; i++)
        if (!strcmp(name, sbx_eval_format_name((sbx_eval_format)i))) {
            *f = (sbx_eval_format)i;
            return true;
        }
    return false;
}

/* The format called @name (auto when it is none). */
static sbx_eval_format format_of(const char *name)
{
    sbx_eval_format f = SBX_EVAL_FORMAT_AUTO;

    (void)format_named(name, &f);
    return f;
}

/* ---- the kind ------------------------------------------------------------------ */

static void evaljob_clear(struct evaljob *e)
{
    for (size_t i = 0; e->providers && e->providers[i]; i++)
        free(e->providers[i]);
    free(e->providers);
    free(e->source);
    free(e->samples_source);
    json_decref(e->tasks);
}

static void eval_free(srv_job *j)
{
    struct evaljob *e = j->k;

    if (!e)
        return;
    evaljob_clear(e);
    free(e);
    j->k = NULL;
}

/* The job's settings from its @spec into @e (zeroed; evaljob_clear it
 * whatever this returns). */
static int evaljob_from(struct evaljob *e, json_t *spec)
{
    json_t *ks = json_object_get(spec, "k"), *pv = json_object_get(spec, "providers"), *v;
    const char *fmt = json_string_value(json_object_get(spec, "format"));
    size_t i;

    e->retries = -1;
    e->factor = -1;
    e->ep_factor = -1;
    if (!(e->tasks = json_object()))
        return -1;
    e->fmt = format_of(fmt);
    e->canonical = json_is_true(json_object_get(spec, "canonical"));
    json_array_foreach(ks, i, v)
        if (e->n_ks < JOB_MAX_KS && json_integer_value(v) > 0)
            e->ks[e->n_ks++] = (unsigned)json_integer_value(v);
    if (json_is_array(pv) && json_array_size(pv)) {
        if (!(e->providers = calloc(json_array_size(pv) + 1, sizeof *e->providers)))
            return -1;
        json_array_foreach(pv, i, v)
            if (!(e->providers[i] = strdup(json_string_value(v) ?: "")))
                return -1;
    }
    if (json_is_integer(v = json_object_get(spec, "timeout_ns")))
        e->timeout_ns = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(spec, "memory")))
        e->memory = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(spec, "retries")))
        e->retries = (int)json_integer_value(v);
    e->all_tests = json_is_true(json_object_get(spec, "all_tests"));
    /* absent in the spec of a job kept by a server before 0.3: allowed */
    e->allow_partial = !json_is_false(json_object_get(spec, "allow_partial"));
    if (json_is_integer(v = json_object_get(spec, "min_time_ns")))
        e->min_ns = (uint64_t)json_integer_value(v);
    if (json_is_number(v = json_object_get(spec, "time_factor")))
        e->factor = json_number_value(v);
    if (json_is_integer(v = json_object_get(spec, "compile_timeout_ns")))
        e->compile_ns = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(spec, "evalplus_min_time_ns")))
        e->ep_min_ns = (uint64_t)json_integer_value(v);
    if (json_is_number(v = json_object_get(spec, "evalplus_time_factor")))
        e->ep_factor = json_number_value(v);
    e->source = strdup(json_string_value(json_object_get(spec, "source")) ?: "");
    if (!e->canonical &&
        !(e->samples_source = strdup(json_string_value(json_object_get(spec, "samples_source"))
                                     ?: "(inline)")))
        return -1;
    return e->n_ks && e->source ? 0 : -1;
}

static int eval_load(srv_job *j, json_t *spec)
{
    struct evaljob *e = calloc(1, sizeof *e);

    if (!e)
        return -1;
    j->k = e;
    return evaljob_from(e, spec);
}

/* The engine's options of the job @e that decide its verdicts and its
 * retries, as the job runs with them. */
static int grading_opts(const struct evaljob *e, sbx_eval_opts *o)
{
    int rc = sbx_eval_opts_set_providers(o, (const char *const *)e->providers);

    if (rc == SBX_OK && e->timeout_ns)
        rc = sbx_eval_opts_set_timeout(o, e->timeout_ns);
    if (rc == SBX_OK && e->memory)
        rc = sbx_eval_opts_set_limit(o, SBX_LIMIT_MEMORY, e->memory);
    if (rc == SBX_OK && e->retries >= 0)
        rc = sbx_eval_opts_set_retries(o, (unsigned)e->retries);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_judge(o, e->all_tests, e->min_ns, e->factor, e->compile_ns);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_evalplus_time(o, e->ep_min_ns, e->ep_factor);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_allow_partial(o, e->allow_partial);
    return rc;
}

static const char *code_name(int code)
{
    const char *n = sbx_eval_verdict_name((sbx_eval_verdict)code);
    return n ? n : "unknown";
}

static bool code_passed(int code)
{
    return code == SBX_VERDICT_PASSED;
}

static int eval_index(srv_job *j, json_t *line, struct job_line *out)
{
    struct evaljob *e = j->k;
    json_t *smp = json_object_get(line, "sample"), *num;
    const char *verdict = json_string_value(json_object_get(line, "verdict"));
    const char *task = json_string_value(json_object_get(line, "task_id"));
    json_int_t i = json_integer_value(smp);

    if (!json_is_integer(smp) || i < 0 || (size_t)i >= j->total || !verdict || !task)
        return -1;
    /* as the engine's resume: a sandbox error or no_template is superseded, a second
     * record of a graded sample ignored */
    if (j->items[i].done && sbx_eval_verdict_graded((sbx_eval_verdict)j->items[i].code))
        return 1;
    out->item = (size_t)i;
    out->code = -1;
    for (int v = 0; v < SBX_VERDICT_COUNT; v++)
        if (!strcmp(verdict, sbx_eval_verdict_name((sbx_eval_verdict)v)))
            out->code = v;
    if (out->code < 0)
        return -1;
    if (!(num = json_object_get(e->tasks, task))) {
        if (json_object_set_new(e->tasks, task, json_integer((json_int_t)e->n_tasks)) != 0)
            return -1;
        out->task = (uint32_t)e->n_tasks++;
    } else {
        out->task = (uint32_t)json_integer_value(num);
    }
    out->time_ns = (uint64_t)json_integer_value(json_object_get(line, "time_ns"));
    return 0;
}

/* pass@k over the records so far: the mean over the tasks with at least
 * k graded samples of the engine's estimator (sbx_eval_pass_at_k). */
static json_t *live_pass_at_k(srv_job *j)
{
    struct evaljob *e = j->k;
    size_t *n = calloc(e->n_tasks + 1, sizeof *n), *c = calloc(e->n_tasks + 1, sizeof *c);
    json_t *o = json_object();

    if (!n || !c || !o) {
        free(n);
        free(c);
        return o;
    }
    for (size_t i = 0; i < j->total; i++) {
        const struct job_item *it = &j->items[i];
        if (!it->done || !sbx_eval_verdict_graded((sbx_eval_verdict)it->code) ||
            it->task >= e->n_tasks)
            continue;
        n[it->task]++;
        if (it->code == SBX_VERDICT_PASSED)
            c[it->task]++;
    }
    for (size_t k = 0; k < e->n_ks; k++) {
        double sum = 0;
        size_t used = 0;
        char key[16];
        for (size_t t = 0; t < e->n_tasks; t++)
            if (n[t] >= e->ks[k]) {
                sum += sbx_eval_pass_at_k(n[t], c[t], e->ks[k]);
                used++;
            }
        snprintf(key, sizeof key, "%u", e->ks[k]);
        json_object_set_new(o, key, used ? json_real(sum / (double)used) : json_null());
    }
    free(n);
    free(c);
    return o;
}

static void eval_view(srv_job *j, json_t *o, bool full)
{
    json_t *pk = j->summary ? json_object_get(j->summary, "pass_at_k") : NULL;

    /* the engine's figures once it has them; the same estimator before */
    json_object_set_new(o, "pass_at_k", pk ? json_incref(pk) : live_pass_at_k(j));
    if (full)
        json_object_set_new(o, "summary", j->summary ? json_incref(j->summary) : json_null());
}

/* ---- running --------------------------------------------------------------------- */

static int on_record(void *ud, const sbx_eval_record *rec, size_t done, size_t total,
                     size_t passed)
{
    srv_job *j = ud;
    char *line = sbx_eval_record_to_json(rec);

    (void)done;
    (void)total;
    (void)passed;
    if (!line)
        return 0;
    /* The engine appended exactly this line at the end of the file just
     * before calling (both under its lock). */
    pthread_mutex_lock(&j->mu);
    if (job_index_line(j, line, strlen(line), j->results_end) != 0)
        srv_log(NULL, "job %s: a record of sample %zu could not be indexed", j->id,
                sbx_eval_record_sample(rec));
    pthread_mutex_unlock(&j->mu);
    free(line);
    return 0;
}

static int on_gate(void *ud, bool enter)
{
    if (enter)
        return job_gate_enter(ud);
    job_gate_leave(ud);
    return 0;
}

/* The dataset and samples of the job's directory. */
static int load_inputs(srv *s, const char *dir, sbx_eval_format fmt, bool canonical,
                       sbx_eval_dataset **ds, sbx_eval_samples **smp)
{
    char *pd = job_path(dir, "dataset"), *ps = job_path(dir, "samples");
    int rc = SBX_E_NOMEM;

    *ds = NULL;
    *smp = NULL;
    if (pd && ps && (rc = sbx_eval_dataset_load(s->ctx, pd, fmt, ds)) == SBX_OK) {
        rc = canonical ? sbx_eval_samples_canonical(s->ctx, *ds, smp)
                       : sbx_eval_samples_load(s->ctx, *ds, ps, smp);
        if (rc != SBX_OK) {
            sbx_eval_dataset_free(*ds);
            *ds = NULL;
        }
    }
    free(pd);
    free(ps);
    return rc;
}

/* The engine's message @msg with the job's copies of its inputs called
 * what the request called them (the server's paths are no business of
 * the client's); NULL on ENOMEM. */
static char *named(srv_job *j, const char *msg)
{
    struct evaljob *e = j->k;
    char *pd = job_path(j->dir, "dataset"), *ps = job_path(j->dir, "samples"), *out = NULL;
    const char *from[2] = { pd, ps }, *to[2] = { e->source, e->samples_source ?: "samples" };
    size_t len = 0;
    FILE *f = pd && ps ? open_memstream(&out, &len) : NULL;

    while (f && *msg) {
        size_t i = 0, n = 0;
        for (; i < 2 && strncmp(msg, from[i], n = strlen(from[i])) != 0; i++)
            ;
        if (i < 2) {
            fputs(to[i], f);
            msg += n;
        } else {
            fputc(*msg++, f);
        }
    }
    if (f && fclose(f) != 0) {
        free(out);
        out = NULL;
    }
    free(pd);
    free(ps);
    return out;
}

/* End the job as failed with the engine's last error, named (see named). */
static void failed(srv_job *j, const char *code)
{
    char *msg = named(j, sbx_error_message(sbx_ctx_last_error(j->s->ctx)) ?: "");

    job_ended(j, code, msg ? msg : "out of memory", NULL);
    free(msg);
}

/* The meta of `polysandbox eval --json` (sbx_eval_meta_to_json) of the
 * job's copies under the names the request gave them. */
static json_t *job_meta(srv_job *j, const sbx_eval_opts *o)
{
    struct evaljob *e = j->k;
    const char *dflt = sbx_ctx_default_provider(j->s->ctx);
    const char *one[2] = { dflt, NULL };
    char *pd = job_path(j->dir, "dataset"), *ps = job_path(j->dir, "samples"), *text = NULL;
    json_t *m = NULL;

    if (pd && ps)
        text = sbx_eval_meta_to_json(pd, e->canonical ? NULL : ps, o,
                                     e->providers ? (const char *const *)e->providers
                                                  : dflt ? one : NULL);
    if (text && (m = json_loads(text, 0, NULL))) {
        json_object_set_new(json_object_get(m, "dataset"), "path", json_string(e->source));
        if (!e->canonical)
            json_object_set_new(json_object_get(m, "samples"), "path",
                                json_string(e->samples_source));
    }
    free(text);
    free(pd);
    free(ps);
    return m;
}

/* The engine's summary @summary made the object of `polysandbox eval
 * --json`: the dataset's name, no results file of the client's, the
 * workers, the meta.  0, or -1 on ENOMEM. */
static int complete_summary(srv_job *j, const sbx_eval_opts *o, json_t *summary)
{
    struct evaljob *e = j->k;
    json_t *meta = job_meta(j, o);

    if (!meta)
        return -1;
    return json_object_set_new(summary, "dataset", json_string(e->source)) |
           json_object_set_new(summary, "results", json_null()) |
           json_object_set_new(summary, "jobs", json_integer(job_concurrency(j->s))) |
           json_object_set_new(summary, "meta", meta);
}

static void eval_run(srv_job *j)
{
    struct evaljob *e = j->k;
    srv *s = j->s;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *smp = NULL;
    sbx_eval_opts *o = sbx_eval_opts_new();
    sbx_eval_summary *sum = NULL;
    char *path = job_path(j->dir, "results.jsonl"), *text = NULL;
    json_t *summary = NULL;
    int rc;

    if (!o || !path) {
        job_ended(j, "nomem", "out of memory", NULL);
        goto out;
    }
    if ((rc = load_inputs(s, j->dir, e->fmt, e->canonical, &ds, &smp)) != SBX_OK) {
        failed(j, "invalid");
        goto out;
    }
    rc = grading_opts(e, o);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_jobs(o, job_concurrency(s));
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_journal(o, path, true);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_callback(o, on_record, j);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_cancel(o, j->cancel);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_gate(o, on_gate, j);
    if (rc == SBX_OK)
        rc = sbx_eval_run(s->ctx, ds, smp, o, &sum);
    if (rc != SBX_OK) {
        const char *code;
        srv_status_of(rc, 422, &code);
        failed(j, code);
        goto out;
    }
    if ((text = sbx_eval_summary_to_json(sum, e->ks, e->n_ks)) &&
        (summary = json_loads(text, 0, NULL)) && complete_summary(j, o, summary) != 0) {
        json_decref(summary);
        summary = NULL;
    }
    job_ended(j, NULL, NULL, summary);
out:
    free(text);
    free(path);
    sbx_eval_summary_free(sum);
    sbx_eval_opts_free(o);
    sbx_eval_samples_free(smp);
    sbx_eval_dataset_free(ds);
}

const job_kind job_kind_eval = {
    .name = "eval",
    .load = eval_load,
    .index = eval_index,
    .code_name = code_name,
    .passed = code_passed,
    .run = eval_run,
    .view = eval_view,
    .free = eval_free,
};

bool job_eval_facts(srv_job *j, struct job_eval_facts *out)
{
    const struct evaljob *e = j->k;

    if (j->kind != &job_kind_eval || !e)
        return false;
    out->ks = e->ks;
    out->n_ks = e->n_ks;
    out->provider = e->providers ? e->providers[0] : NULL;
    out->source = e->source;
    out->samples_source = e->samples_source;
    out->canonical = e->canonical;
    return true;
}

int job_eval_inputs(srv_job *j, sbx_eval_dataset **ds, sbx_eval_samples **smp)
{
    const struct evaljob *e = j->k;

    return load_inputs(j->s, j->dir, e->fmt, e->canonical, ds, smp);
}

/* ---- POST /v1/eval ----------------------------------------------------------------- */

static const char *const eval_fields[] = {
    "dataset", "samples", "canonical", "format", "k", "providers", "timeout", "memory",
    "retries", "allow_partial", "all_tests", "min_time", "time_factor", "compile_timeout",
    "evalplus_min_time", "evalplus_time_factor", "results", NULL
};

/* Copy the file @given (a path under eval_dir) to DIR/NAME.  0, or -1
 * having replied. */
static int copy_in(srv_req *r, const char *field, const char *given, const char *dir,
                   const char *name)
{
    const char *root = r->s->conf.eval_dir;
    char *cand = NULL, real_root[PATH_MAX], real[PATH_MAX];
    struct stat st;
    size_t len;
    int fd = -1, rc = -1, copied;

    if (!root) {
        srv_error(r, 403, "forbidden", NULL, "field '%s': this server reads no files "
                  "(set [server] eval_dir to a directory it may read datasets under), "
                  "give the records inline", field);
        return -1;
    }
    if (!*given || strlen(given) >= PATH_MAX) {
        srv_error(r, 400, "invalid", NULL, "field '%s' must be a file name under [server] "
                  "eval_dir", field);
        return -1;
    }
    if (given[0] == '/' ? !(cand = strdup(given)) : asprintf(&cand, "%s/%s", root, given) < 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    if (!realpath(root, real_root)) {
        srv_error(r, 500, "config", NULL, "[server] eval_dir %s: %s", root, strerror(errno));
        goto out;
    }
    if (!realpath(cand, real)) {
        srv_error(r, 422, "not_found", NULL, "field '%s': no file '%s' under [server] eval_dir "
                  "(%s): %s", field, given, root, strerror(errno));
        goto out;
    }
    len = strlen(real_root);
    if (strncmp(real, real_root, len) != 0 || (real[len] != '/' && real_root[len - 1] != '/')) {
        srv_error(r, 403, "forbidden", NULL, "field '%s': '%s' is not under [server] eval_dir "
                  "(%s): the server reads no other files", field, given, root);
        goto out;
    }
    /* a regular file only: a FIFO would hold the worker, a device never end */
    if ((fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0 ||
        fstat(fd, &st) != 0) {
        srv_error(r, 422, "not_found", NULL, "field '%s': cannot read '%s': %s", field, given,
                  strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        srv_error(r, 422, "not_found", NULL, "field '%s': '%s' is not a regular file", field,
                  given);
        goto out;
    }
    if ((copied = job_copy_file(fd, dir, name)) != 0) {
        if (copied == JOB_COPY_READ)
            srv_error(r, 422, "not_found", NULL, "field '%s': cannot read '%s': %s", field,
                      given, strerror(errno));
        else
            srv_error(r, 500, "io", NULL, "cannot keep %s in %s: %s", field, dir,
                      strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    free(cand);
    return rc;
}

/* Write the inline records @arr to DIR/NAME as JSONL.  0 or -1 having
 * replied. */
static int write_inline(srv_req *r, const char *field, json_t *arr, const char *dir,
                        const char *name)
{
    size_t i, len = 0, cap = 0;
    char *data = NULL;
    json_t *v;
    int rc = -1;

    if (!json_array_size(arr)) {
        srv_error(r, 400, "invalid", NULL, "field '%s' must not be empty", field);
        return -1;
    }
    json_array_foreach(arr, i, v) {
        char *line;
        size_t n;
        if (!json_is_object(v)) {
            srv_error(r, 400, "invalid", NULL, "field '%s[%zu]' must be an object (a record)",
                      field, i);
            goto out;
        }
        if (!(line = json_dumps(v, JSON_COMPACT))) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            goto out;
        }
        n = strlen(line);
        if (len + n + 1 > cap) {
            char *nd;
            while (len + n + 1 > cap)
                cap = cap ? cap * 2 : 65536;
            if (!(nd = realloc(data, cap))) {
                free(line);
                srv_error(r, 500, "nomem", NULL, "out of memory");
                goto out;
            }
            data = nd;
        }
        memcpy(data + len, line, n);
        data[len + n] = '\n';
        len += n + 1;
        free(line);
    }
    if (job_write_file(dir, name, data, len) != 0) {
        srv_error(r, 500, "io", NULL, "cannot keep %s in %s: %s", field, dir, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    free(data);
    return rc;
}

/* The client's file @obj ({"name", "base64"}) to DIR/NAME, its bytes as
 * they are; *@label its name.  0 or -1 having replied. */
static int write_bytes(srv_req *r, const char *field, json_t *obj, const char *dir,
                       const char *name, const char **label)
{
    const char *key, *text;
    unsigned char *data = NULL;
    char where[32];
    size_t len = 0;
    json_t *v;
    int rc;

    json_object_foreach(obj, key, v)
        if (strcmp(key, "name") != 0 && strcmp(key, "base64") != 0) {
            srv_error(r, 400, "invalid", NULL, "field '%s.%.64s' is unknown (a file is "
                      "{\"name\", \"base64\"})", field, key);
            return -1;
        }
    *label = json_string_value(json_object_get(obj, "name"));
    if (!*label || !**label || strlen(*label) > PATH_MAX || strpbrk(*label, "\n\r")) {
        srv_error(r, 400, "invalid", NULL, "field '%s.name' must be a file name on one line "
                  "(at most %d bytes)", field, PATH_MAX);
        return -1;
    }
    snprintf(where, sizeof where, "%s.base64", field);
    if (!(text = json_string_value(json_object_get(obj, "base64")))) {
        srv_error(r, 400, "invalid", NULL, "field '%s' must be the file's bytes in base64",
                  where);
        return -1;
    }
    if (srv_base64_decode(r, where, text, json_string_length(json_object_get(obj, "base64")),
                          &data, &len) != 0)
        return -1;
    if (!len) {
        srv_error(r, 400, "invalid", NULL, "field '%s' is an empty file", where);
        free(data);
        return -1;
    }
    rc = job_write_file(dir, name, data, len);
    free(data);
    if (rc != 0) {
        srv_error(r, 500, "io", NULL, "cannot keep %s in %s: %s", field, dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The input @field (a file name, inline records or a client's file) into
 * DIR/NAME; *@label what the report calls it. */
static int take_input(srv_req *r, json_t *body, const char *field, const char *dir,
                      const char *name, const char **label)
{
    json_t *v = json_object_get(body, field);

    *label = "(inline)";
    if (json_is_string(v)) {
        *label = json_string_value(v);
        return copy_in(r, field, json_string_value(v), dir, name);
    }
    if (json_is_array(v))
        return write_inline(r, field, v, dir, name);
    if (json_is_object(v))
        return write_bytes(r, field, v, dir, name, label);
    srv_error(r, 400, "invalid", NULL, "field '%s' must be a file name (under [server] "
              "eval_dir), an array of records or a file {\"name\", \"base64\"}", field);
    return -1;
}

/* Reply the engine's refusal of the dataset or samples, naming the field
 * (and the line) instead of the job's copy. */
static void input_error(srv_req *r, const char *dir, int rc)
{
    const char *msg = sbx_error_message(sbx_ctx_last_error(r->s->ctx));
    static const char *const names[][2] = {
        { "dataset", "dataset" }, { "samples", "samples" }, { "results.jsonl", "results" },
    };
    const char *code;
    unsigned status = srv_status_of(rc, 422, &code);

    if (rc == SBX_E_INVAL)
        status = 400;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = job_path(dir, names[i][0]);
        size_t n = p ? strlen(p) : 0;
        if (p && !strncmp(msg, p, n)) {
            const char *tail = msg + n;
            free(p);
            if (tail[0] == ':' && tail[1] >= '0' && tail[1] <= '9')
                srv_error(r, status, code, NULL, "field '%s', line %s", names[i][1], tail + 1);
            else
                srv_error(r, status, code, NULL, "field '%s'%s", names[i][1], tail);
            return;
        }
        free(p);
    }
    srv_error(r, status, code, NULL, "%s", msg);
}

/* The options of judged problems and EvalPlus's time limits into @spec,
 * as `polysandbox eval`'s --all-tests, --min-time, --time-factor,
 * --compile-timeout, --evalplus-min-time and --evalplus-time-factor.  -1
 * having replied. */
static int take_judge(srv_req *r, json_t *body, json_t *spec)
{
    static const char *const durations[][2] = {
        { "min_time", "min_time_ns" }, { "compile_timeout", "compile_timeout_ns" },
        { "evalplus_min_time", "evalplus_min_time_ns" },
    };
    static const char *const factors[] = { "time_factor", "evalplus_time_factor" };
    bool all = false;
    json_t *v;

    if (srv_json_bool(r, body, "all_tests", &all) != 0)
        return -1;
    json_object_set_new(spec, "all_tests", json_boolean(all));
    /* absent: as before 0.3, the jobs API scores the tasks it was given */
    if (srv_json_bool(r, body, "allow_partial", &all) != 0)
        return -1;
    json_object_set_new(spec, "allow_partial",
                        json_boolean(all || !json_is_boolean(json_object_get(body,
                                                                             "allow_partial"))));
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        uint64_t ns;
        if (!(v = json_object_get(body, durations[i][0])) || json_is_null(v))
            continue;
        if (srv_json_quantity(r, v, durations[i][0], SRV_DURATION, &ns) != 0)
            return -1;
        json_object_set_new(spec, durations[i][1], json_integer((json_int_t)ns));
    }
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
        double k;
        if (!(v = json_object_get(body, factors[i])) || json_is_null(v))
            continue;
        k = json_number_value(v);
        /* the engine's bounds (sbx_eval_opts_set_judge, _set_evalplus_time) */
        if (!json_is_number(v) || !(k >= 0 && k <= 1000)) {
            srv_error(r, 400, "invalid", NULL, "field '%s' must be a number from 0 to 1000 "
                      "(0: %s)", factors[i], i == 0 ? "the timeout alone" : "the floor alone");
            return -1;
        }
        json_object_set_new(spec, factors[i], json_real(k));
    }
    return 0;
}

int job_parse_ks(srv_req *r, json_t *v, unsigned *ks, size_t *n)
{
    json_t *x;
    size_t i;

    *n = 0;
    if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > JOB_MAX_KS) {
        srv_error(r, 400, "invalid", NULL, "field 'k' must be an array of 1 to %d whole "
                  "numbers", JOB_MAX_KS);
        return -1;
    }
    json_array_foreach(v, i, x) {
        json_int_t k = json_integer_value(x);
        if (!json_is_integer(x) || k < 1 || k > 1000000) {
            srv_error(r, 400, "invalid", NULL, "field 'k[%zu]' must be a whole number from 1 "
                      "to 1000000", i);
            return -1;
        }
        for (size_t y = 0; y < i; y++)
            if (ks[y] == (unsigned)k) {
                srv_error(r, 400, "invalid", NULL, "field 'k[%zu]': %lld is repeated", i,
                          (long long)k);
                return -1;
            }
        ks[(*n)++] = (unsigned)k;
    }
    return 0;
}

/* The options of the body into @spec.  -1 having replied. */
static int take_options(srv_req *r, json_t *body, json_t *spec)
{
    json_t *v, *ks = json_array();
    const char *fmt = NULL;
    sbx_eval_format f;
    size_t i;

    if (!ks || json_object_set_new(spec, "k", ks) != 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    if (srv_json_string(r, body, "format", &fmt) != 0)
        return -1;
    if (fmt && !format_named(fmt, &f)) {
        char names[256] = "";
        size_t len = 0;
        for (int n = 0; n <= SBX_EVAL_FORMAT_LAST && len < sizeof names; n++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", n ? ", " : "",
                                    sbx_eval_format_name((sbx_eval_format)n));
        srv_error(r, 400, "invalid", NULL, "field 'format': '%s' is none of %s", fmt, names);
        return -1;
    }
    json_object_set_new(spec, "format", json_string(fmt ? fmt : "auto"));
    v = json_object_get(body, "k");
    if (!v || json_is_null(v)) {
        json_array_append_new(ks, json_integer(1));
        json_array_append_new(ks, json_integer(10));
        json_array_append_new(ks, json_integer(100));
    } else {
        unsigned kv[JOB_MAX_KS];
        size_t n;
        if (job_parse_ks(r, v, kv, &n) != 0)
            return -1;
        for (i = 0; i < n; i++)
            json_array_append_new(ks, json_integer(kv[i]));
    }
    if (job_check_providers(r, json_object_get(body, "providers")) != 0)
        return -1;
    if ((v = json_object_get(body, "providers")) && json_is_array(v))
        json_object_set(spec, "providers", v);
    if ((v = json_object_get(body, "timeout")) && !json_is_null(v)) {
        uint64_t ns;
        if (srv_json_quantity(r, v, "timeout", SRV_DURATION, &ns) != 0)
            return -1;
        json_object_set_new(spec, "timeout_ns", json_integer((json_int_t)ns));
    }
    if ((v = json_object_get(body, "memory")) && !json_is_null(v)) {
        uint64_t bytes;
        if (srv_json_quantity(r, v, "memory", SRV_SIZE, &bytes) != 0)
            return -1;
        json_object_set_new(spec, "memory", json_integer((json_int_t)bytes));
    }
    if ((v = json_object_get(body, "retries")) && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100) {
            srv_error(r, 400, "invalid", NULL, "field 'retries' must be a whole number from 0 "
                      "to 100");
            return -1;
        }
        json_object_set(spec, "retries", v);
    }
    return take_judge(r, body, spec);
}

/* The records of an earlier run of the same evaluation in "results" (an
 * array of record objects, or their JSON Lines as one string) into the
 * job's results.jsonl, checked by the engine against the job's inputs
 * and @spec's options: the job then runs only the samples without a
 * verdict.  -1 having replied. */
static int take_results(srv_req *r, json_t *results, json_t *spec, const char *dir,
                        const sbx_eval_dataset *ds, const sbx_eval_samples *smp)
{
    struct evaljob e = {0};
    sbx_eval_opts *o = NULL;
    char *path = NULL;
    int rc = -1, erc;

    if (json_is_array(results)) {
        /* none: a run from the start */
        if (json_array_size(results) && write_inline(r, "results", results, dir,
                                                     "results.jsonl") != 0)
            return -1;
    } else if (json_is_string(results)) {
        /* the last line whole even without its newline: no record is lost */
        size_t len = json_string_length(results);
        char *text = malloc(len + 1);
        if (!text) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            return -1;
        }
        memcpy(text, json_string_value(results), len);
        if (len && text[len - 1] != '\n')
            text[len++] = '\n';
        erc = job_write_file(dir, "results.jsonl", text, len);
        free(text);
        if (erc != 0) {
            srv_error(r, 500, "io", NULL, "cannot keep results in %s: %s", dir,
                      strerror(errno));
            return -1;
        }
    } else {
        srv_error(r, 400, "invalid", NULL, "field 'results' must be an array of the records "
                  "of an earlier run, or their JSON Lines as a string");
        return -1;
    }
    if (!(path = job_path(dir, "results.jsonl")) || !(o = sbx_eval_opts_new()) ||
        evaljob_from(&e, spec) != 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto out;
    }
    if ((erc = grading_opts(&e, o)) != SBX_OK ||
        (erc = sbx_eval_journal_check(r->s->ctx, ds, smp, o, path, NULL)) != SBX_OK) {
        input_error(r, dir, erc);
        goto out;
    }
    rc = 0;
out:
    evaljob_clear(&e);
    sbx_eval_opts_free(o);
    free(path);
    return rc;
}

void jobs_eval_create(srv_req *r)
{
    json_t *body = srv_req_json(r), *spec = NULL;
    char id[JOB_ID_LEN + 1], *dir = NULL;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *smp = NULL;
    bool canonical = false;
    const char *source = NULL, *samples_source = NULL;
    size_t total = 0;
    int rc;

    if (!body)
        return;
    if (job_check_fields(r, body, eval_fields) != 0)
        return;
    if (!json_object_get(body, "dataset")) {
        srv_error(r, 400, "invalid", NULL, "field 'dataset' is missing: a file name under "
                  "[server] eval_dir, or the records");
        return;
    }
    if (srv_json_bool(r, body, "canonical", &canonical) != 0)
        return;
    if (canonical && json_object_get(body, "samples")) {
        srv_error(r, 400, "invalid", NULL, "fields 'samples' and 'canonical' exclude each "
                  "other");
        return;
    }
    if (!canonical && !json_object_get(body, "samples")) {
        srv_error(r, 400, "invalid", NULL, "field 'samples' is missing (or give "
                  "\"canonical\": true to score the dataset's own solutions)");
        return;
    }
    if (!(spec = json_object())) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    if (take_options(r, body, spec) != 0 || !(dir = job_new_dir(r, id)))
        goto fail;
    if (take_input(r, body, "dataset", dir, "dataset", &source) != 0 ||
        (!canonical && take_input(r, body, "samples", dir, "samples", &samples_source) != 0))
        goto fail;
    /* the engine checks them now, so that bad input is this request's 4xx */
    rc = load_inputs(r->s, dir, format_of(json_string_value(json_object_get(spec, "format"))),
                     canonical, &ds, &smp);
    if (rc != SBX_OK) {
        input_error(r, dir, rc);
        goto fail;
    }
    total = sbx_eval_samples_count(smp);
    if (!total) {
        srv_error(r, 400, "invalid", NULL, "field 'samples' holds no samples");
        goto fail;
    }
    if (total > r->s->conf.job_items_max) {
        srv_error(r, 422, "limit", NULL, "field '%s': %zu samples are more than the server's "
                  "job_items_max (%u)", canonical ? "dataset" : "samples", total,
                  r->s->conf.job_items_max);
        goto fail;
    }
    json_object_set_new(spec, "source", json_string(source));
    if (samples_source)
        json_object_set_new(spec, "samples_source", json_string(samples_source));
    json_object_set_new(spec, "canonical", json_boolean(canonical));
    if (json_object_get(body, "results") &&
        take_results(r, json_object_get(body, "results"), spec, dir, ds, smp) != 0)
        goto fail;
    sbx_eval_samples_free(smp);
    sbx_eval_dataset_free(ds);
    job_submit(r, &job_kind_eval, dir, spec, total);
    return;
fail:
    sbx_eval_samples_free(smp);
    sbx_eval_dataset_free(ds);
    if (dir) {
        job_remove_dir(dir);
        free(dir);
    }
    json_decref(spec);
}
