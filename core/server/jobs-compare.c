/* core/server/jobs-compare.c - POST /v1/compare: finished eval jobs of
 * the same samples side by side
 *
 *   {"jobs": ["jA", "jB", ...], "k": [1, 10]}
 *
 * The answer is the report `polysandbox compare --json` prints
 * (sbx_eval_report_to_json), rebuilt from each job's results.jsonl as
 * `compare --from` rebuilds it: a column per job, named after its
 * provider (NAME#2 when one repeats), pass@k for "k" (default: the first
 * job's), and the samples whose verdicts differ.  The server's own files
 * are not named: the inputs are named as the jobs were given them, a
 * column's "results" is its job's location, and each column gains "job"
 * (its id, state, times and rate: a rebuilt summary has no wall time).
 * With "Accept: text/html" the answer is the same report as the HTML page
 * of `polysandbox compare` (sbx_eval_report_to_html), every string from
 * the jobs' inputs and records escaped, the inputs named as the jobs were
 * given them; with "Accept: text/markdown", its Markdown page
 * (sbx_eval_report_to_markdown), likewise.
 * A job still queued or running is 409; a job of another kind, without
 * records, or of other inputs than the first (dataset, samples,
 * canonical) is 422.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs.h"

#define COMPARE_MAX 16

struct column {
    srv_job *j;
    struct job_eval_facts f;
    sbx_eval_summary *sum;
    int state;
    double started, finished, rate;
};

/* The k values of the body into @ks (none given: the first job's).  The
 * number of them, or 0 having replied 400. */
static size_t body_ks(srv_req *r, json_t *body, const struct column *first, unsigned *ks)
{
    json_t *v = json_object_get(body, "k");
    size_t n = 0;

    if (!v || json_is_null(v)) {
        for (; n < first->f.n_ks && n < JOB_MAX_KS; n++)
            ks[n] = first->f.ks[n];
        return n;
    }
    return job_parse_ks(r, v, ks, &n) == 0 ? n : 0;
}

/* The job named by jobs[@i] into @c (a reference), checked: an eval job
 * that ended.  -1 having replied. */
static int take_job(srv_req *r, json_t *ids, size_t i, struct column *c)
{
    const char *id = json_string_value(json_array_get(ids, i));

    if (!id) {
        srv_error(r, 400, "invalid", NULL, "field 'jobs[%zu]' must be a job id", i);
        return -1;
    }
    for (size_t k = 0; k < i; k++)
        if (!strcmp(id, json_string_value(json_array_get(ids, k)))) {
            srv_error(r, 400, "invalid", NULL, "field 'jobs[%zu]': '%s' is repeated", i, id);
            return -1;
        }
    if (!(c->j = job_find(r->s, id, srv_auth_owner(r->s, r->token)))) {
        srv_error(r, 404, "not_found", NULL, "field 'jobs[%zu]': no job '%s' (finished jobs "
                  "are kept for [server] job_ttl)", i, id);
        return -1;
    }
    if (!job_eval_facts(c->j, &c->f)) {
        srv_error(r, 422, "invalid", NULL, "field 'jobs[%zu]': job '%s' is a %s job: only "
                  "eval jobs have verdicts to compare", i, id, c->j->kind->name);
        return -1;
    }
    pthread_mutex_lock(&c->j->mu);
    c->state = c->j->state;
    c->started = c->j->started;
    c->finished = c->j->finished;
    c->rate = c->j->rate;
    pthread_mutex_unlock(&c->j->mu);
    if (c->state == JOB_QUEUED || c->state == JOB_RUNNING) {
        srv_error(r, 409, "not_ended", NULL, "field 'jobs[%zu]': job '%s' is %s: compare jobs "
                  "that ended", i, id, job_state_name(c->state));
        return -1;
    }
    return 0;
}

/* An input of a job ("dataset" or "samples", its copy of that name): its
 * size and SHA-256. */
struct digest {
    int64_t size;
    char sha256[65];
};

/* Job @j's digest of its input @name into @d: the one its summary's meta
 * recorded, else (a job that ended without a summary: failed, cancelled)
 * its copy's, read now.  false when there is neither. */
static bool input_digest(srv_job *j, const char *name, struct digest *d)
{
    const char *hex;
    json_t *in, *size;
    bool ok;
    char *path;

    pthread_mutex_lock(&j->mu);
    in = json_object_get(json_object_get(j->summary, "meta"), name);
    hex = json_string_value(json_object_get(in, "sha256"));
    size = json_object_get(in, "size");
    if ((ok = hex && strlen(hex) == 64 && json_is_integer(size))) {
        memcpy(d->sha256, hex, sizeof d->sha256);
        d->size = (int64_t)json_integer_value(size);
    }
    pthread_mutex_unlock(&j->mu);
    if (ok)
        return true;
    path = job_path(j->dir, name);
    ok = path && sbx_eval_input_digest(path, &d->size, d->sha256) == SBX_OK;
    free(path);
    return ok;
}

/* Whether job @j scored the inputs whose digests are @first's (@canonical:
 * the dataset's alone). */
static bool same_inputs(srv_job *j, const struct digest *first, bool canonical)
{
    struct digest d;

    for (int i = 0; i < (canonical ? 1 : 2); i++)
        if (!input_digest(j, i ? "samples" : "dataset", &d) || d.size != first[i].size ||
            strcmp(d.sha256, first[i].sha256))
            return false;
    return true;
}

/* The provider column @c ran on: the one its job asked, else the
 * server's default. */
static const char *column_provider(srv *s, const struct column *c)
{
    const char *p = c->f.provider ? c->f.provider : sbx_ctx_default_provider(s->ctx);

    return p ? p : "?";
}

/* Column @c's summary, from its job's records.  -1 having replied. */
static int load_column(srv_req *r, size_t i, struct column *c, const sbx_eval_dataset *ds,
                       const sbx_eval_samples *smp)
{
    char *path = job_path(c->j->dir, "results.jsonl");
    int rc;

    if (!path) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        srv_error(r, 422, "invalid", NULL, "field 'jobs[%zu]': job '%s' has no records to "
                  "compare (it %s before any)", i, c->j->id, job_state_name(c->state));
        free(path);
        return -1;
    }
    rc = sbx_eval_summary_load(r->s->ctx, ds, smp, path, &c->sum);
    free(path);
    if (rc != SBX_OK) {
        /* the message names the server's files: kept for its log */
        srv_log(r, "compare: job %s: %s", c->j->id,
                sbx_error_message(sbx_ctx_last_error(r->s->ctx)));
        srv_error(r, 500, "io", NULL, "field 'jobs[%zu]': the records of job '%s' cannot be "
                  "read (the server's log says why)", i, c->j->id);
        return -1;
    }
    return 0;
}

/* The report's JSON with the inputs named as the jobs were given them and
 * each column's job (transfer full @text).  NULL on ENOMEM. */
static json_t *name_inputs(char *text, const struct column *cols, size_t n)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL, *meta, *v;
    const struct job_eval_facts *f = &cols[0].f;
    const char *samples = f->canonical ? NULL : f->samples_source;
    bool ok = o != NULL;

    free(text);
    meta = json_object_get(o, "meta");
    ok = ok && json_object_set_new(o, "dataset", json_string(f->source)) == 0 &&
         json_object_set_new(o, "samples_file", samples ? json_string(samples)
                                                        : json_null()) == 0;
    if (ok && json_is_object(v = json_object_get(meta, "dataset")))
        ok = json_object_set_new(v, "path", json_string(f->source)) == 0;
    if (ok && samples && json_is_object(v = json_object_get(meta, "samples")))
        ok = json_object_set_new(v, "path", json_string(samples)) == 0;
    for (size_t i = 0; ok && i < n; i++) {
        const struct column *c = &cols[i];
        json_t *col = json_array_get(json_object_get(o, "columns"), i);
        char loc[64];
        snprintf(loc, sizeof loc, "/v1/jobs/%s", c->j->id);
        ok = json_is_object(col) &&
             json_object_set_new(col, "results", json_string(loc)) == 0 &&
             json_object_set_new(json_object_get(col, "summary"), "dataset",
                                 json_string(f->source)) == 0 &&
             json_object_set_new(col, "job", json_pack(
                 "{s:s, s:s, s:o, s:o, s:o, s:o}", "id", c->j->id, "state",
                 job_state_name(c->state), "started_at", job_time_json(c->started),
                 "finished_at", job_time_json(c->finished), "wall_s",
                 c->started > 0 && c->finished >= c->started
                     ? json_real(c->finished - c->started) : json_null(),
                 "rate", json_real(c->rate))) == 0;
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The report as the HTML (@html) or Markdown page, its inputs named as
 * the jobs (@f) were given them; replies. */
static void reply_page(srv_req *r, sbx_eval_report *rep, const struct job_eval_facts *f,
                       const unsigned *ks, size_t n_ks, bool html)
{
    char *page;

    if (sbx_eval_report_set_input_names(rep, f->source,
                                        f->canonical ? NULL : f->samples_source) != SBX_OK ||
        !(page = html ? sbx_eval_report_to_html(rep, ks, n_ks)
                      : sbx_eval_report_to_markdown(rep, ks, n_ks))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    srv_reply(r, 200, html ? "text/html; charset=utf-8" : "text/markdown; charset=utf-8", page,
              strlen(page));
}

void jobs_compare(srv_req *r)
{
    static const char *const fields[] = { "jobs", "k", NULL };
    json_t *body = srv_req_json(r), *ids, *out;
    struct column *cols = NULL;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *smp = NULL;
    sbx_eval_report *rep = NULL;
    unsigned ks[JOB_MAX_KS];
    size_t n = 0, n_ks;
    char *dpath = NULL, *spath = NULL;
    struct digest first[2];
    bool first_ok;
    int rc;

    if (!body || job_check_fields(r, body, fields) != 0)
        return;
    ids = json_object_get(body, "jobs");
    if (!json_is_array(ids) || json_array_size(ids) < 2 ||
        json_array_size(ids) > COMPARE_MAX) {
        srv_error(r, 400, "invalid", NULL, "field 'jobs' must be an array of 2 to %d ids of "
                  "eval jobs (of the same dataset and samples)", COMPARE_MAX);
        return;
    }
    if (!(cols = calloc(json_array_size(ids), sizeof *cols))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    for (; n < json_array_size(ids); n++)
        if (take_job(r, ids, n, &cols[n]) != 0) {
            n++;
            goto out;
        }
    if (!(n_ks = body_ks(r, body, &cols[0], ks)))
        goto out;
    /* the first job's digests once, then each other job's as recorded */
    first_ok = input_digest(cols[0].j, "dataset", &first[0]) &&
               (cols[0].f.canonical || input_digest(cols[0].j, "samples", &first[1]));
    for (size_t i = 1; i < n; i++)
        if (cols[i].f.canonical != cols[0].f.canonical || !first_ok ||
            !same_inputs(cols[i].j, first, cols[0].f.canonical)) {
            srv_error(r, 422, "invalid", NULL, "field 'jobs[%zu]': job '%s' scored other "
                      "inputs than job '%s' (its dataset, samples or canonical differ)", i,
                      cols[i].j->id, cols[0].j->id);
            goto out;
        }
    if ((rc = job_eval_inputs(cols[0].j, &ds, &smp)) != SBX_OK) {
        const char *code;
        unsigned status = srv_status_of(rc, 500, &code);
        srv_log(r, "compare: job %s: %s", cols[0].j->id,
                sbx_error_message(sbx_ctx_last_error(r->s->ctx)));
        srv_error(r, status, code, NULL, "the inputs of job '%s' cannot be loaded (the "
                  "server's log says why)", cols[0].j->id);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (load_column(r, i, &cols[i], ds, smp) != 0)
            goto out;
    if (!(dpath = job_path(cols[0].j->dir, "dataset")) ||
        !(spath = job_path(cols[0].j->dir, "samples")))
        goto nomem;
    rc = sbx_eval_report_new(smp, dpath, cols[0].f.canonical ? NULL : spath, &rep);
    /* each column named by the report after its provider (NAME#2, ...) */
    for (size_t i = 0; rc == SBX_OK && i < n; i++)
        rc = sbx_eval_report_add(rep, NULL, column_provider(r->s, &cols[i]), NULL, NULL,
                                 cols[i].sum);
    if (rc != SBX_OK)
        goto nomem;
    if (srv_req_wants_html(r) || srv_req_wants_markdown(r)) {
        reply_page(r, rep, &cols[0].f, ks, n_ks, srv_req_wants_html(r));
        goto out;
    }
    if (!(out = name_inputs(sbx_eval_report_to_json(rep, ks, n_ks), cols, n)))
        goto nomem;
    srv_reply_json(r, 200, out);
    goto out;
nomem:
    srv_error(r, 500, "nomem", NULL, "out of memory");
out:
    sbx_eval_report_free(rep);
    for (size_t i = 0; i < n; i++) {
        sbx_eval_summary_free(cols[i].sum);
        if (cols[i].j)
            job_unref(cols[i].j);
    }
    free(cols);
    free(dpath);
    free(spath);
    sbx_eval_samples_free(smp);
    sbx_eval_dataset_free(ds);
}
