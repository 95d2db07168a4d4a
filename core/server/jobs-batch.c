/* core/server/jobs-batch.c - POST /v1/batch: many runs as one job
 *
 *   {"items": [RUN, ...], "providers": ["local", "docker"]}
 *
 * Each item is a body of POST /v1/run.  With "providers" each item runs
 * once on each of them, side by side (item i on provider p is run
 * i * P + p), and the job reports each provider's counts and times and
 * which items got the same answer everywhere.  A run's record in
 * results.jsonl is
 *
 *   {"index": N, "item": I, "provider": P, "result": RESULT}
 *   {"index": N, "item": I, "provider": P, "error": {"code", "message", "provider"}}
 *
 * RESULT being exactly what POST /v1/run answers, its stdout and stderr
 * cut to [server] job_output_max bytes each (with stdout_truncated or
 * stderr_truncated set).  A run is recorded once it has ended and is
 * never run again, also across a restart; a run the server's stop cut
 * short has no record and runs at the next start.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "jobs.h"

#define ERROR_CODE SBX_RUN_STATUS_COUNT   /* an item whose run was refused */
_Static_assert(ERROR_CODE < JOB_CODES, "room for the batch's codes");

struct batch {
    char **providers;          /* NULL-terminated, or NULL */
    size_t n_providers;
    size_t n_items;
};

/* ---- the kind ---------------------------------------------------------------- */

static void batch_free(srv_job *j)
{
    struct batch *b = j->k;

    if (!b)
        return;
    for (size_t i = 0; i < b->n_providers; i++)
        free(b->providers[i]);
    free(b->providers);
    free(b);
    j->k = NULL;
}

static int batch_load(srv_job *j, json_t *spec)
{
    json_t *items = json_object_get(spec, "items"), *pv = json_object_get(spec, "providers");
    struct batch *b = calloc(1, sizeof *b);
    size_t i;
    json_t *v;

    if (!b)
        return -1;
    j->k = b;
    if (!json_is_array(items))
        return -1;
    b->n_items = json_array_size(items);
    if (json_is_array(pv) && json_array_size(pv)) {
        b->n_providers = json_array_size(pv);
        if (!(b->providers = calloc(b->n_providers + 1, sizeof *b->providers)))
            return -1;
        json_array_foreach(pv, i, v)
            if (!json_is_string(v) || !(b->providers[i] = strdup(json_string_value(v))))
                return -1;
    }
    return b->n_items * (b->n_providers ? b->n_providers : 1) == j->total ? 0 : -1;
}

static const char *code_name(int code)
{
    return code == ERROR_CODE ? "error" : sbx_run_status_name((sbx_run_status)code);
}

static bool code_passed(int code)
{
    return code == SBX_RUN_OK;
}

/* FNV-1a of what the run did: its status, exit code and stdout. */
static uint32_t fingerprint(json_t *res)
{
    const char *parts[3];
    char ec[24];
    uint32_t h = 2166136261u;

    snprintf(ec, sizeof ec, "%lld", (long long)json_integer_value(json_object_get(res,
                                                                                  "exit_code")));
    parts[0] = json_string_value(json_object_get(res, "status"));
    parts[1] = ec;
    parts[2] = json_string_value(json_object_get(res, "stdout"));
    for (int i = 0; i < 3; i++) {
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 16777619u;
        h = (h ^ 0xff) * 16777619u;
    }
    return h;
}

static int batch_index(srv_job *j, json_t *line, struct job_line *out)
{
    json_t *idx = json_object_get(line, "index"), *res = json_object_get(line, "result");
    json_int_t i = json_integer_value(idx);

    if (!json_is_integer(idx) || i < 0 || (size_t)i >= j->total)
        return -1;
    if (j->items[i].done)
        return 1;
    out->item = (size_t)i;
    if (json_is_object(res)) {
        const char *st = json_string_value(json_object_get(res, "status"));
        out->code = -1;
        for (int c = 0; st && c < SBX_RUN_STATUS_COUNT; c++)
            if (!strcmp(st, sbx_run_status_name((sbx_run_status)c)))
                out->code = c;
        out->time_ns = (uint64_t)json_integer_value(
            json_object_get(json_object_get(res, "timings_ns"), "total"));
        out->fp = fingerprint(res);
        return out->code < 0 ? -1 : 0;
    }
    if (!json_is_object(json_object_get(line, "error")))
        return -1;
    out->code = ERROR_CODE;
    return 0;
}

/* Each provider's counts and times, and which items agree everywhere. */
static void batch_view(srv_job *j, json_t *o, bool full)
{
    struct batch *b = j->k;
    json_t *provs, *differ;
    size_t compared = 0, agree = 0;

    (void)full;
    if (!b || !b->n_providers)
        return;
    provs = json_array();
    differ = json_array();
    for (size_t p = 0; p < b->n_providers; p++) {
        size_t counts[JOB_CODES] = {0}, done = 0;
        uint64_t sum = 0, max = 0;
        json_t *c = json_object();
        for (size_t i = 0; i < b->n_items; i++) {
            const struct job_item *it = &j->items[i * b->n_providers + p];
            if (!it->done)
                continue;
            done++;
            counts[it->code]++;
            sum += it->time_ns;
            if (it->time_ns > max)
                max = it->time_ns;
        }
        for (int k = 0; k < JOB_CODES; k++)
            if (counts[k])
                json_object_set_new(c, code_name(k), json_integer((json_int_t)counts[k]));
        json_array_append_new(provs, json_pack("{s:s, s:I, s:o, s:I, s:I}", "provider",
                                               b->providers[p], "done", (json_int_t)done,
                                               "counts", c, "mean_ns",
                                               (json_int_t)(done ? sum / done : 0), "max_ns",
                                               (json_int_t)max));
    }
    for (size_t i = 0; i < b->n_items; i++) {
        const struct job_item *it = &j->items[i * b->n_providers];
        bool all = true, same = true;
        for (size_t p = 0; p < b->n_providers; p++) {
            all = all && it[p].done;
            same = same && it[p].code == it[0].code && it[p].fp == it[0].fp;
        }
        if (!all)
            continue;
        compared++;
        if (same)
            agree++;
        else if (json_array_size(differ) < 100)
            json_array_append_new(differ, json_integer((json_int_t)i));
    }
    json_object_set_new(o, "providers", provs);
    json_object_set_new(o, "agreement", json_pack("{s:I, s:I, s:o}", "compared",
                                                  (json_int_t)compared, "agree",
                                                  (json_int_t)agree, "differ", differ));
}

/* ---- running ------------------------------------------------------------------- */

struct batch_run {
    srv_job *j;
    json_t *items;
    size_t *pending;
    size_t n_pending;
    atomic_size_t next;
    atomic_bool failed;
    pthread_mutex_t lock;      /* err */
    char err[512];
};

/* Cut the output @name of @res to @cap bytes (a whole UTF-8 sequence, a
 * whole base64 quantum), saying so. */
static void cut_output(json_t *res, const char *name, size_t cap)
{
    char key[32];
    json_t *v = json_object_get(res, name);
    const char *s = json_string_value(v), *enc;
    size_t len = json_string_length(v), keep = cap;

    if (!s)
        return;
    snprintf(key, sizeof key, "%s_encoding", name);
    enc = json_string_value(json_object_get(res, key));
    if (enc && !strcmp(enc, "base64")) {
        keep = cap / 3 * 4;
    } else {
        while (keep > 0 && keep < len && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--;
    }
    if (len <= keep)
        return;
    json_object_set_new(res, name, json_stringn(s, keep));
    snprintf(key, sizeof key, "%s_truncated", name);
    json_object_set_new(res, key, json_true());
}

/* The record of one run (new reference), or NULL when it was cancelled. */
static json_t *run_one(struct batch_run *br, size_t idx)
{
    srv_job *j = br->j;
    srv *s = j->s;
    struct batch *b = j->k;
    size_t item = b->n_providers ? idx / b->n_providers : idx;
    const char *prov = b->n_providers ? b->providers[idx % b->n_providers] : NULL;
    srv_req tmp;
    srv_opts o;
    sbx_result *res = NULL;
    json_t *rec = json_pack("{s:I, s:I, s:s?}", "index", (json_int_t)idx, "item",
                            (json_int_t)item, "provider", prov);
    int rc;

    /* The item was checked when the job was made; a configuration changed
     * since (a provider or template gone) makes it an error record. */
    memset(&tmp, 0, sizeof tmp);
    tmp.s = s;
    tmp.token = -1;
    tmp.cancel = j->cancel;
    if (srv_opts_from_json(&tmp, json_array_get(br->items, item), SRV_OPT_CREATE | SRV_OPT_EXEC,
                           NULL, &o) != 0) {
        json_object_set_new(rec, "error", srv_error_json(tmp.err_code ? tmp.err_code
                                                         : "invalid", prov, tmp.err_message
                                                         ? tmp.err_message : "invalid item"));
        goto out;
    }
    if (prov)
        sbx_create_opts_set_provider(o.create, prov);
    rc = sbx_run(s->ctx, o.create, o.exec, &res);
    if (sbx_cancel_fired(j->cancel)) {
        json_decref(rec);
        rec = NULL;   /* stopped: no record, it runs again at the next start */
    } else if (rc != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(s->ctx);
        const char *code;
        srv_status_of(rc, 422, &code);
        /* no provider for an error of the core's (a limit refused) */
        json_object_set_new(rec, "error", srv_error_json(code, sbx_error_provider(e) ?
                                                         sbx_error_provider(e) : prov,
                                                         sbx_error_message(e)));
    } else {
        char *text = sbx_result_to_json(res);
        json_t *r = text ? json_loads(text, JSON_ALLOW_NUL, NULL) : NULL;
        free(text);
        if (r) {
            cut_output(r, "stdout", s->conf.job_output_max);
            cut_output(r, "stderr", s->conf.job_output_max);
            json_object_set_new(rec, "result", r);
        } else {
            json_object_set_new(rec, "error", srv_error_json("nomem", prov, "out of memory"));
        }
    }
    srv_opts_free(&o);
out:
    sbx_result_free(res);
    if (tmp.resp)
        MHD_destroy_response(tmp.resp);
    free(tmp.err_message);
    return rec;
}

static void fail(struct batch_run *br, const char *msg)
{
    pthread_mutex_lock(&br->lock);
    if (!br->err[0])
        snprintf(br->err, sizeof br->err, "%s", msg);
    pthread_mutex_unlock(&br->lock);
    atomic_store(&br->failed, true);
}

/* Append @rec to results.jsonl and index it, under the job's lock so the
 * events come in the file's order. */
static void record(struct batch_run *br, json_t *rec)
{
    srv_job *j = br->j;
    char *line = json_dumps(rec, JSON_COMPACT);
    uint64_t off;

    if (!line) {
        fail(br, "out of memory");
        return;
    }
    pthread_mutex_lock(&j->mu);
    if (sbx_journal_append(j->journal, line, strlen(line), &off) != SBX_OK)
        fail(br, sbx_error_message(sbx_ctx_last_error(NULL)));
    else
        job_index_line(j, line, strlen(line), off);
    pthread_mutex_unlock(&j->mu);
    free(line);
}

static void *batch_worker(void *arg)
{
    struct batch_run *br = arg;

    while (!atomic_load(&br->failed) && job_gate_enter(br->j) == 0) {
        size_t k = atomic_fetch_add(&br->next, 1);
        json_t *rec = NULL;
        if (k < br->n_pending && !atomic_load(&br->failed))
            rec = run_one(br, br->pending[k]);
        job_gate_leave(br->j);
        if (rec)
            record(br, rec);
        json_decref(rec);
        if (k >= br->n_pending)
            break;
    }
    return NULL;
}

static void batch_run(srv_job *j)
{
    struct batch_run br;
    char why[512], *path = job_path(j->dir, "results.jsonl");
    json_t *doc = job_read_json(j->dir, "job.json", why, sizeof why);
    pthread_t *t = NULL;
    size_t n_threads = 0, want;

    memset(&br, 0, sizeof br);
    br.j = j;
    pthread_mutex_init(&br.lock, NULL);
    atomic_init(&br.next, 0);
    atomic_init(&br.failed, false);
    br.items = json_object_get(json_object_get(doc, "spec"), "items");
    if (!path || !json_is_array(br.items)) {
        fail(&br, doc ? "job.json holds no items" : why);
        goto out;
    }
    pthread_mutex_lock(&j->mu);
    if (sbx_journal_open(path, true, NULL, NULL, &j->journal) != SBX_OK)
        fail(&br, sbx_error_message(sbx_ctx_last_error(NULL)));
    else if (!(br.pending = malloc((j->total ? j->total : 1) * sizeof *br.pending)))
        fail(&br, "out of memory");
    for (size_t i = 0; br.pending && i < j->total; i++)
        if (!j->items[i].done)
            br.pending[br.n_pending++] = i;
    pthread_mutex_unlock(&j->mu);
    want = job_concurrency(j->s);
    if (want > br.n_pending)
        want = br.n_pending;
    if (!atomic_load(&br.failed) && want && !(t = calloc(want, sizeof *t)))
        fail(&br, "out of memory");
    for (size_t i = 0; t && i < want; i++) {
        if (pthread_create(&t[i], NULL, batch_worker, &br) != 0) {
            if (!n_threads)
                fail(&br, "cannot start a thread");
            break;
        }
        n_threads++;
    }
    for (size_t i = 0; i < n_threads; i++)
        pthread_join(t[i], NULL);
    pthread_mutex_lock(&j->mu);
    if (j->journal && sbx_journal_sync(j->journal) != SBX_OK)
        fail(&br, sbx_error_message(sbx_ctx_last_error(NULL)));
    sbx_journal_close(j->journal);
    j->journal = NULL;
    pthread_mutex_unlock(&j->mu);
out:
    job_ended(j, atomic_load(&br.failed) ? "io" : NULL, br.err, NULL);
    free(t);
    free(br.pending);
    free(path);
    json_decref(doc);
    pthread_mutex_destroy(&br.lock);
}

const job_kind job_kind_batch = {
    .name = "batch",
    .load = batch_load,
    .index = batch_index,
    .code_name = code_name,
    .passed = code_passed,
    .run = batch_run,
    .view = batch_view,
    .free = batch_free,
};

/* ---- POST /v1/batch ----------------------------------------------------------------- */

static const char *const batch_fields[] = { "items", "providers", NULL };

void jobs_batch_create(srv_req *r)
{
    json_t *body = srv_req_json(r), *items, *pv, *v, *spec;
    char id[JOB_ID_LEN + 1], prefix[48], *dir;
    size_t i, n, per, total;

    if (!body)
        return;
    if (job_check_fields(r, body, batch_fields) != 0)
        return;
    items = json_object_get(body, "items");
    pv = json_object_get(body, "providers");
    if (!json_is_array(items) || !(n = json_array_size(items))) {
        srv_error(r, 400, "invalid", NULL, "field 'items' must be a non-empty array of runs "
                  "(each a body of POST /v1/run)");
        return;
    }
    if (job_check_providers(r, pv) != 0)
        return;
    per = json_is_array(pv) ? json_array_size(pv) : 1;
    total = n * per;
    if (total > r->s->conf.job_items_max || n > r->s->conf.job_items_max) {
        srv_error(r, 422, "limit", NULL, "field 'items': %zu runs (%zu items on %zu "
                  "providers) are more than the server's job_items_max (%u)", total, n, per,
                  r->s->conf.job_items_max);
        return;
    }
    json_array_foreach(items, i, v) {
        srv_opts o;
        int rc;
        if (!json_is_object(v)) {
            srv_error(r, 400, "invalid", NULL, "field 'items[%zu]' must be an object (a body "
                      "of POST /v1/run)", i);
            return;
        }
        if (per > 1 || json_is_array(pv)) {
            const char *own = json_object_get(v, "provider") ? "provider"
                              : json_object_get(v, "fallback") ? "fallback" : NULL;
            if (own) {
                srv_error(r, 400, "invalid", NULL, "field 'items[%zu].%s': not with "
                          "'providers' (each item runs on every one of them)", i, own);
                return;
            }
        }
        snprintf(prefix, sizeof prefix, "items[%zu]: ", i);
        r->err_prefix = prefix;
        rc = srv_opts_from_json(r, v, SRV_OPT_CREATE | SRV_OPT_EXEC, NULL, &o);
        r->err_prefix = NULL;
        if (rc != 0)
            return;
        srv_opts_free(&o);
    }
    if (!(spec = json_pack("{s:O, s:O?}", "items", items, "providers",
                           json_is_array(pv) ? pv : NULL))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    if (!(dir = job_new_dir(r, id))) {
        json_decref(spec);
        return;
    }
    job_submit(r, &job_kind_batch, dir, spec, total);
}
