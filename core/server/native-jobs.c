/* core/server/native-jobs.c - the job routes: POST /v1/batch, POST
 * /v1/eval (202 and a Location), POST /v1/compare (finished eval jobs
 * side by side), GET /v1/jobs, GET|DELETE /v1/jobs/{id},
 * GET /v1/jobs/{id}/events (server-sent events, resumable)
 *
 * The events of a job are its records in the order they were kept, each
 * an "item" event (the item and its record) followed by a "progress"
 * event, both with the record's number as their id; then, once the job
 * has ended, "error" (a failed job's error) and "done" (the job).  The
 * numbers are the lines of results.jsonl, so they hold across a restart
 * of the server: a client that reconnects with Last-Event-ID: N (or
 * ?after=N) gets what came after N.  The stream is fed by its reader
 * (srv_stream_pull): no worker waits on it, and a slow client holds no
 * more than one batch of events in memory.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "jobs.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define FILL_EVENTS 64        /* events a fill puts at most */

/* A query argument as a whole number in [0, max], @def when absent.  -1
 * having replied 400. */
static int query_count(srv_req *r, const char *name, size_t def, size_t max, size_t *out)
{
    const char *v = srv_req_query(r, name);
    char *end;
    unsigned long long n;

    *out = def;
    if (!v)
        return 0;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || n > max) {
        srv_error(r, 400, "invalid", NULL, "query parameter '%s' must be a whole number from 0 "
                  "to %zu", name, max);
        return -1;
    }
    *out = (size_t)n;
    return 0;
}

/* Only the query parameters @known (NULL-terminated).  -1 having replied. */
static int query_only(srv_req *r, const char *const *known)
{
    for (size_t i = 0; i < srv_req_query_count(r); i++) {
        const char *k, *v;
        bool ok = false;
        srv_req_query_at(r, i, &k, &v);
        for (const char *const *p = known; *p; p++)
            ok = ok || !strcmp(*p, k);
        if (!ok) {
            srv_error(r, 400, "invalid", NULL, "unknown query parameter '%s'", k);
            return -1;
        }
    }
    return 0;
}

/* The job of the path (a reference), or NULL having replied 404. */
static srv_job *path_job(srv_req *r)
{
    const char *id = srv_req_param(r, "id");
    srv_job *j = id ? job_find(r->s, id, srv_auth_owner(r->s, r->token)) : NULL;

    if (!j)
        srv_error(r, 404, "not_found", NULL, "no job '%s' (finished jobs are kept for "
                  "[server] job_ttl)", id ? id : "");
    return j;
}

/* ---- creating ---------------------------------------------------------------- */

static void post_batch(srv_req *r)
{
    if (job_admit(r) != 0)
        return;
    jobs_batch_create(r);
    job_admit_end(r);
}

static void post_eval(srv_req *r)
{
    if (job_admit(r) != 0)
        return;
    jobs_eval_create(r);
    job_admit_end(r);
}

/* ---- reading ----------------------------------------------------------------------- */

static void get_jobs(srv_req *r)
{
    static const char *const known[] = { "state", "kind", "offset", "limit", NULL };
    const char *state = srv_req_query(r, "state"), *kind = srv_req_query(r, "kind");
    size_t offset, limit, total = 0, n;
    unsigned running, workers;
    srv_job **v;
    json_t *list;
    int st = -1;

    if (query_only(r, known) != 0 || query_count(r, "offset", 0, SIZE_MAX / 2, &offset) != 0 ||
        query_count(r, "limit", PAGE_DEFAULT, PAGE_MAX, &limit) != 0)
        return;
    if (state && (st = job_state_from_name(state)) < 0) {
        srv_error(r, 400, "invalid", NULL, "query parameter 'state': '%s' is not queued, "
                  "running, succeeded, failed or cancelled", state);
        return;
    }
    if (kind && strcmp(kind, "batch") && strcmp(kind, "eval")) {
        srv_error(r, 400, "invalid", NULL, "query parameter 'kind': '%s' is not batch or "
                  "eval", kind);
        return;
    }
    if (!(v = calloc(limit ? limit : 1, sizeof *v)) || !(list = json_array())) {
        free(v);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    n = job_list(r->s, srv_auth_owner(r->s, r->token), st, kind, offset, v, limit, &total);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(list, job_view(v[i], 0, 0, false));
        job_unref(v[i]);
    }
    free(v);
    job_gate_stats(r->s, &running, &workers);
    srv_reply_json(r, 200, json_pack("{s:o, s:I, s:o, s:I, s:I}", "jobs", list, "total",
                                     (json_int_t)total, "next", offset + n < total
                                     ? json_integer((json_int_t)(offset + n)) : json_null(),
                                     "items_running", (json_int_t)running, "job_workers",
                                     (json_int_t)workers));
}

static void get_job(srv_req *r)
{
    static const char *const known[] = { "offset", "limit", NULL };
    size_t offset, limit;
    srv_job *j;

    if (query_only(r, known) != 0 || query_count(r, "offset", 0, SIZE_MAX / 2, &offset) != 0 ||
        query_count(r, "limit", PAGE_DEFAULT, PAGE_MAX, &limit) != 0 || !(j = path_job(r)))
        return;
    srv_reply_json(r, 200, job_view(j, offset, limit, true));
    job_unref(j);
}

/* DELETE: stop the job.  Its finished items keep their records.  The
 * answer waits (a little) for the items running to stop: 200 with the
 * job cancelled, or 202 while it is still stopping. */
static void delete_job(srv_req *r)
{
    srv_job *j = path_job(r);
    uint64_t until = srv_now_ns() + UINT64_C(10000000000);
    int state;

    if (!j)
        return;
    if (job_cancel(j)) {
        for (;;) {
            struct timespec ts = { 0, 20 * 1000000L };
            pthread_mutex_lock(&j->mu);
            state = j->state;
            pthread_mutex_unlock(&j->mu);
            if (state != JOB_RUNNING || srv_now_ns() > until || srv_req_gone(r))
                break;
            nanosleep(&ts, NULL);
        }
        srv_log(r, "job %s cancelled", j->id);
    }
    pthread_mutex_lock(&j->mu);
    state = j->state;
    pthread_mutex_unlock(&j->mu);
    srv_reply_json(r, state == JOB_RUNNING ? 202 : 200, job_view(j, 0, 0, true));
    job_unref(j);
}

/* ---- events -------------------------------------------------------------------------- */

struct sub {
    srv_job *j;
    size_t next;               /* events sent */
};

static void sub_free(void *ud)
{
    struct sub *sb = ud;

    job_unref(sb->j);
    free(sb);
}

static int put_json(srv_stream *st, size_t id, const char *name, json_t *data)
{
    char ids[24], *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
    int rc;

    json_decref(data);
    if (!text)
        return -1;
    snprintf(ids, sizeof ids, "%zu", id);
    rc = srv_stream_put(st, ids, name, text);
    free(text);
    return rc;
}

static int fill(void *ud, srv_stream *st)
{
    struct sub *sb = ud;
    srv_job *j = sb->j;
    struct job_event ev[FILL_EVENTS];
    size_t n = 0, total = j->total;
    int state;
    bool closed;

    pthread_mutex_lock(&j->mu);
    while (n < FILL_EVENTS && sb->next + n < j->n_events) {
        ev[n] = j->events[sb->next + n];
        n++;
    }
    state = j->state;
    closed = j->closed;
    pthread_mutex_unlock(&j->mu);
    for (size_t i = 0; i < n; i++) {
        char *line = job_read_line(j, ev[i].off, ev[i].len);
        size_t id = sb->next + i + 1;
        if (!line || put_json(st, id, "item", job_item_json(ev[i].item, line)) != 0 ||
            put_json(st, id, "progress", json_pack("{s:I, s:I, s:I}", "done",
                                                   (json_int_t)ev[i].done, "total",
                                                   (json_int_t)total, "passed",
                                                   (json_int_t)ev[i].passed)) != 0) {
            free(line);
            return SRV_FILL_END;
        }
        free(line);
    }
    sb->next += n;
    if (n)
        return SRV_FILL_MORE;
    if (state == JOB_SUCCEEDED || state == JOB_FAILED || state == JOB_CANCELLED) {
        json_t *view = job_view(j, 0, 0, true);
        if (state == JOB_FAILED && view)
            put_json(st, sb->next + 1, "error",
                     json_pack("{s:O}", "error", json_object_get(view, "error")));
        put_json(st, sb->next + 1, "done", view);
        return SRV_FILL_END;
    }
    return closed ? SRV_FILL_END : SRV_FILL_WAIT;
}

static void job_events(srv_req *r)
{
    static const char *const known[] = { "after", NULL };
    const char *last = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Last-Event-ID");
    size_t after = 0;
    struct sub *sb;
    srv_stream *st;
    srv_job *j;

    if (query_only(r, known) != 0 || query_count(r, "after", 0, SIZE_MAX / 2, &after) != 0)
        return;
    if (last && *last) {
        char *end;
        unsigned long long n;
        errno = 0;
        n = strtoull(last, &end, 10);
        if (*end || errno || last[0] == '-') {
            srv_error(r, 400, "invalid", NULL, "the Last-Event-ID '%.32s' is not an event of a "
                      "job (a whole number)", last);
            return;
        }
        after = (size_t)n;
    }
    if (!(j = path_job(r)))
        return;
    if (!(sb = calloc(1, sizeof *sb))) {
        job_unref(j);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    sb->j = j;
    pthread_mutex_lock(&j->mu);
    sb->next = after < j->n_events ? after : j->n_events;
    pthread_mutex_unlock(&j->mu);
    if (!(st = srv_stream_pull(r, fill, sb, sub_free)))
        return;
    job_subscribe(j, st);
}

static const srv_route routes[] = {
    { SRV_POST, "/v1/batch", post_batch, SRV_R_WORKER },
    { SRV_POST, "/v1/eval", post_eval, SRV_R_WORKER },
    { SRV_POST, "/v1/compare", jobs_compare, SRV_R_WORKER },
    { SRV_GET, "/v1/jobs", get_jobs, SRV_R_WORKER },
    { SRV_GET, "/v1/jobs/{id}", get_job, SRV_R_WORKER },
    { SRV_DELETE, "/v1/jobs/{id}", delete_job, SRV_R_WORKER },
    { SRV_GET, "/v1/jobs/{id}/events", job_events, 0 },
};

int srv_routes_jobs(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
