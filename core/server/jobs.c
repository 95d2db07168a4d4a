/* core/server/jobs.c - the jobs: a job, its records, its end; the
 * registry and the scheduler
 *
 * At most [server] jobs_running jobs run at once, each on a runner thread
 * of its own (the others wait, queued, in the order they came); their
 * items pass the gate (jobs-gate.c).  When jobs_max jobs are kept, the
 * oldest ended one makes room for a new one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "jobs.h"

static uint64_t mono_ns(void)
{
    return srv_now_ns();
}

struct timespec job_deadline(uint64_t ns)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec += (long)(ns % 1000000000u);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

unsigned job_concurrency(const srv *s)
{
    return s->jobs->workers;
}

/* ---- a job --------------------------------------------------------------------- */

srv_job *job_ref(srv_job *j)
{
    atomic_fetch_add(&j->refs, 1);
    return j;
}

void job_unref(srv_job *j)
{
    if (!j || atomic_fetch_sub(&j->refs, 1) != 1)
        return;
    if (j->kind && j->kind->free)
        j->kind->free(j);
    for (size_t i = 0; i < j->n_subs; i++)
        srv_stream_unref(j->subs[i]);
    free(j->subs);
    sbx_journal_close(j->journal);
    if (j->results_fd >= 0)
        close(j->results_fd);
    sbx_cancel_free(j->cancel);
    json_decref(j->summary);
    pthread_mutex_destroy(&j->mu);
    free(j->items);
    free(j->events);
    free(j->err_code);
    free(j->err_msg);
    free(j->idem);
    free(j->dir);
    free(j);
}

srv_job *job_alloc(srv *s, const job_kind *kind, const char *id, char *dir, size_t total)
{
    srv_job *j = calloc(1, sizeof *j);

    if (!j) {
        free(dir);
        return NULL;
    }
    j->s = s;
    j->kind = kind;
    j->dir = dir;
    j->results_fd = -1;
    snprintf(j->id, sizeof j->id, "%s", id);
    atomic_init(&j->refs, 1);
    pthread_mutex_init(&j->mu, NULL);
    j->total = total;
    if (!(j->items = calloc(total ? total : 1, sizeof *j->items)) ||
        !(j->cancel = sbx_cancel_new())) {
        job_unref(j);
        return NULL;
    }
    return j;
}

void job_poke(srv_job *j)
{
    for (size_t i = 0; i < j->n_subs; i++)
        srv_stream_poke(j->subs[i]);
}

void job_subscribe(srv_job *j, srv_stream *st)
{
    srv_stream **v;

    pthread_mutex_lock(&j->mu);
    /* a job closed has no one to tend its streams: its readers end them */
    if (!j->closed && (v = realloc(j->subs, (j->n_subs + 1) * sizeof *v))) {
        j->subs = v;
        j->subs[j->n_subs++] = st;
        st = NULL;
    }
    pthread_mutex_unlock(&j->mu);
    srv_stream_unref(st);   /* not kept: the stream still works, unpoked */
}

const job_kind *const job_kinds[JOB_KINDS] = { &job_kind_batch, &job_kind_eval };

static size_t kind_index(const job_kind *k)
{
    size_t i = 0;

    while (i + 1 < JOB_KINDS && job_kinds[i] != k)
        i++;
    return i;
}

/* An item ended (for /metrics): once the kept jobs are loaded, so that a
 * restart does not count again what ended before it. */
static void count_item(srv_job *j, int code)
{
    struct srv_jobs *J = j->s->jobs;
    size_t k = kind_index(j->kind);

    if (!J || !atomic_load(&J->loaded))
        return;
    atomic_fetch_add(&J->items_done[k], 1);
    if (!j->kind->passed(code))
        atomic_fetch_add(&J->items_failed[k], 1);
}

void job_stats(srv *s, struct job_stats *st)
{
    struct srv_jobs *J = s->jobs;

    memset(st, 0, sizeof *st);
    if (!J)
        return;
    for (size_t k = 0; k < JOB_KINDS; k++) {
        st->items_done[k] = atomic_load(&J->items_done[k]);
        st->items_failed[k] = atomic_load(&J->items_failed[k]);
    }
    pthread_mutex_lock(&J->lock);
    for (srv_job *j = J->head; j; j = j->next) {
        size_t k = kind_index(j->kind);
        pthread_mutex_lock(&j->mu);
        if (j->state >= 0 && j->state <= JOB_CANCELLED)
            st->jobs[k][j->state]++;
        if (j->state == JOB_QUEUED || j->state == JOB_RUNNING)
            st->items_pending[k] += j->total - j->done;
        pthread_mutex_unlock(&j->mu);
    }
    pthread_mutex_unlock(&J->lock);
}

int job_index_line(srv_job *j, const char *line, size_t len, uint64_t off)
{
    struct job_line l = {0};
    struct job_item *it;
    json_t *o;
    int rc;

    if (off + len + 1 > j->results_end)
        j->results_end = off + len + 1;
    if (len == 0)
        return 0;
    if (!(o = json_loadb(line, len, JSON_ALLOW_NUL, NULL)))
        return -1;
    rc = json_is_object(o) ? j->kind->index(j, o, &l) : -1;
    json_decref(o);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    if (l.item >= j->total || l.code < 0 || l.code >= JOB_CODES || len > UINT32_MAX)
        return -1;
    if (j->n_events == j->cap_events) {
        size_t cap = j->cap_events ? j->cap_events * 2 : 64;
        struct job_event *v = realloc(j->events, cap * sizeof *v);
        if (!v)
            return -1;
        j->events = v;
        j->cap_events = cap;
    }
    it = &j->items[l.item];
    if (it->done) {
        j->counts[it->code]--;
        if (j->kind->passed(it->code))
            j->passed--;
    } else {
        j->done++;
        count_item(j, l.code);
    }
    it->done = true;
    it->off = off;
    it->len = (uint32_t)len;
    it->code = (int16_t)l.code;
    it->task = l.task;
    it->time_ns = l.time_ns;
    it->fp = l.fp;
    j->counts[l.code]++;
    if (j->kind->passed(l.code))
        j->passed++;
    j->events[j->n_events++] = (struct job_event){ off, (uint32_t)len, (uint32_t)l.item,
                                                  (uint32_t)j->done, (uint32_t)j->passed };
    job_poke(j);
    return 0;
}

/* ---- the end of a job ----------------------------------------------------------- */

static json_t *state_json(srv_job *j)
{
    return json_pack("{s:s, s:f, s:f, s:f, s:o, s:O?}",
                     "state", job_state_name(j->state), "started", j->started,
                     "finished", j->finished, "rate", j->rate,
                     "error", j->err_code ? json_pack("{s:s, s:s}", "code", j->err_code,
                                                      "message", j->err_msg ? j->err_msg : "")
                                          : json_null(),
                     "summary", j->summary);
}

bool job_finish(srv_job *j, int state, const char *code, const char *msg, json_t *summary)
{
    json_t *st;
    uint64_t now = mono_ns();

    pthread_mutex_lock(&j->mu);
    if (j->state != JOB_QUEUED && j->state != JOB_RUNNING) {
        pthread_mutex_unlock(&j->mu);
        json_decref(summary);
        return false;
    }
    if (j->state == JOB_RUNNING && now > j->run_t0)
        j->rate = (double)(j->done - j->run_done0) / ((double)(now - j->run_t0) / 1e9);
    j->state = state;
    j->finished = job_now();
    if (code) {
        j->err_code = strdup(code);
        j->err_msg = strdup(msg ? msg : "");
    }
    json_decref(j->summary);
    j->summary = summary;
    st = state_json(j);
    job_poke(j);
    pthread_mutex_unlock(&j->mu);
    if (!st || job_write_json(j->dir, "state.json", st) != 0)
        srv_log(NULL, "job %s: cannot keep its end in %s/state.json: %s (it runs again at "
                "the next start)", j->id, j->dir, strerror(errno));
    json_decref(st);
    srv_log(NULL, "job %s %s: %zu of %zu items%s%s", j->id, job_state_name(state), j->done,
            j->total, msg ? ": " : "", msg ? msg : "");
    return true;
}

bool job_stopping(srv_job *j)
{
    return sbx_cancel_fired(j->cancel) || atomic_load(&j->s->jobs->stopping);
}

void job_ended(srv_job *j, const char *code, const char *msg, json_t *summary)
{
    bool asked, all;

    pthread_mutex_lock(&j->mu);
    asked = j->cancel_asked;
    all = j->done == j->total;
    pthread_mutex_unlock(&j->mu);
    if (asked)
        job_finish(j, JOB_CANCELLED, NULL, NULL, summary);
    else if (code)
        job_finish(j, JOB_FAILED, code, msg, summary);
    else if (all)
        job_finish(j, JOB_SUCCEEDED, NULL, NULL, summary);
    else
        json_decref(summary);   /* the server stops: it runs on at the next start */
}

/* ---- the scheduler --------------------------------------------------------------------- */

static void *runner(void *arg)
{
    srv_job *j = arg;
    struct srv_jobs *J = j->s->jobs;

    if (job_gate_join(J, j) != 0) {
        job_ended(j, "nomem", "out of memory starting the job", NULL);
    } else {
        j->kind->run(j);
        job_gate_part(J, j);
    }
    pthread_mutex_lock(&J->lock);
    J->running--;
    J->runners--;
    job_kick(J, j->s);
    if (!J->runners)
        pthread_cond_broadcast(&J->idle);
    pthread_mutex_unlock(&J->lock);
    job_unref(j);
    return NULL;
}

void job_kick(struct srv_jobs *J, srv *s)
{
    while (!atomic_load(&J->stopping) && J->running < s->conf.jobs_running && J->q_head) {
        srv_job *j = J->q_head;
        pthread_attr_t attr;
        pthread_t t;
        bool go;
        int e;

        J->q_head = j->queue_next;
        if (!J->q_head)
            J->q_tail = NULL;
        j->queue_next = NULL;
        j->queued_now = false;
        pthread_mutex_lock(&j->mu);
        go = j->state == JOB_QUEUED;
        if (go) {
            j->state = JOB_RUNNING;
            if (!j->started)
                j->started = job_now();
            j->run_t0 = mono_ns();
            j->run_done0 = j->done;
        }
        pthread_mutex_unlock(&j->mu);
        if (!go) {
            job_unref(j);   /* cancelled while queued */
            continue;
        }
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        e = pthread_create(&t, &attr, runner, j);
        pthread_attr_destroy(&attr);
        if (e) {
            srv_log(NULL, "job %s: cannot start its thread: %s", j->id, strerror(e));
            job_finish(j, JOB_FAILED, "internal", "cannot start the job's thread", NULL);
            job_unref(j);
            continue;
        }
        J->running++;
        J->runners++;
    }
}

void job_enqueue(struct srv_jobs *J, srv_job *j)
{
    j->queue_next = NULL;
    j->queued_now = true;
    if (J->q_tail)
        J->q_tail->queue_next = job_ref(j);
    else
        J->q_head = job_ref(j);
    J->q_tail = j;
}

bool job_cancel(srv_job *j)
{
    struct srv_jobs *J = j->s->jobs;
    int state;

    pthread_mutex_lock(&J->lock);
    pthread_mutex_lock(&j->mu);
    state = j->state;
    if (state == JOB_QUEUED || state == JOB_RUNNING)
        j->cancel_asked = true;
    pthread_mutex_unlock(&j->mu);
    if (state == JOB_QUEUED)
        job_finish(j, JOB_CANCELLED, NULL, NULL, NULL);   /* kick skips it */
    pthread_mutex_unlock(&J->lock);
    if (state == JOB_RUNNING) {
        sbx_cancel_fire(j->cancel);
        job_gate_wake(J);
    }
    return state == JOB_QUEUED || state == JOB_RUNNING;
}

/* ---- the registry ---------------------------------------------------------------------- */

int job_check_fields(srv_req *r, json_t *body, const char *const *known)
{
    const char *k;
    json_t *v;

    json_object_foreach(body, k, v) {
        const char *const *f;
        char list[256] = "";
        for (f = known; *f && strcmp(*f, k); f++)
            ;
        if (*f)
            continue;
        for (f = known; *f; f++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     f == known ? "" : ", ", *f);
        srv_error(r, 400, "invalid", NULL, "unknown field '%s' (known: %s)", k, list);
        return -1;
    }
    return 0;
}

int job_check_providers(srv_req *r, json_t *pv)
{
    size_t i, k;
    json_t *v;

    if (!pv || json_is_null(pv))
        return 0;
    if (!json_is_array(pv) || !json_array_size(pv)) {
        srv_error(r, 400, "invalid", NULL, "field 'providers' must be a non-empty array of "
                  "provider names");
        return -1;
    }
    json_array_foreach(pv, i, v) {
        if (!json_is_string(v)) {
            srv_error(r, 400, "invalid", NULL, "field 'providers[%zu]' must be a string", i);
            return -1;
        }
        if (!sbx_ctx_find_provider(r->s->ctx, json_string_value(v))) {
            srv_error(r, 422, "not_found", NULL, "field 'providers[%zu]': no provider '%s' "
                      "(see GET /v1/providers)", i, json_string_value(v));
            return -1;
        }
        for (k = 0; k < i; k++)
            if (json_equal(v, json_array_get(pv, k))) {
                srv_error(r, 400, "invalid", NULL, "field 'providers[%zu]': '%s' is listed "
                          "twice", i, json_string_value(v));
                return -1;
            }
    }
    return 0;
}


srv_job *job_find(srv *s, const char *id, const char *owner)
{
    struct srv_jobs *J = s->jobs;
    srv_job *found = NULL;

    if (!J)
        return NULL;
    pthread_mutex_lock(&J->lock);
    for (srv_job *j = J->head; j && !found; j = j->next)
        if (!strcmp(j->id, id) && !strcmp(j->owner, owner))
            found = job_ref(j);
    pthread_mutex_unlock(&J->lock);
    return found;
}

size_t job_list(srv *s, const char *owner, int state, const char *kind, size_t skip,
                srv_job **out, size_t max, size_t *total)
{
    struct srv_jobs *J = s->jobs;
    size_t n = 0, seen = 0;

    pthread_mutex_lock(&J->lock);
    for (srv_job *j = J->head; j; j = j->next) {
        int st;
        if (strcmp(j->owner, owner))
            continue;
        pthread_mutex_lock(&j->mu);
        st = j->state;
        pthread_mutex_unlock(&j->mu);
        if ((state >= 0 && st != state) || (kind && strcmp(kind, j->kind->name)))
            continue;
        if (seen++ >= skip && n < max)
            out[n++] = job_ref(j);
    }
    pthread_mutex_unlock(&J->lock);
    *total = seen;
    return n;
}

void job_unlink(struct srv_jobs *J, srv_job *j)
{
    for (srv_job **pp = &J->head; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            J->n--;
            break;
        }
}

void job_close(srv_job *j)
{
    srv_stream **subs;
    size_t n;

    pthread_mutex_lock(&j->mu);
    j->closed = true;
    job_poke(j);
    subs = j->subs;
    n = j->n_subs;
    j->subs = NULL;
    j->n_subs = 0;
    pthread_mutex_unlock(&j->mu);
    /* The streams keep the job (through their reader) until the clients
     * have their end; the job no longer keeps them. */
    for (size_t i = 0; i < n; i++)
        srv_stream_unref(subs[i]);
    free(subs);
}

void job_forget(srv_job *j, const char *why)
{
    job_close(j);
    if (job_remove_dir(j->dir) != 0)
        srv_log(NULL, "job %s: cannot remove %s: %s", j->id, j->dir, strerror(errno));
    else
        srv_log(NULL, "job %s forgotten (%s)", j->id, why);
    job_unref(j);
}

/* Under J->lock: the oldest ended job (the list is newest first), or NULL. */
static srv_job *oldest_ended(struct srv_jobs *J)
{
    srv_job *found = NULL;

    for (srv_job *j = J->head; j; j = j->next) {
        int st;
        pthread_mutex_lock(&j->mu);
        st = j->state;
        pthread_mutex_unlock(&j->mu);
        if (st != JOB_QUEUED && st != JOB_RUNNING)
            found = j;
    }
    return found;
}

int job_admit(srv_req *r)
{
    srv *s = r->s;
    struct srv_jobs *J = s->jobs;
    char *key = NULL;
    srv_job *same = NULL, *drop = NULL;
    bool full = false;

    if (atomic_load(&J->stopping)) {
        srv_error(r, 503, "shutting_down", NULL, "the server is shutting down");
        return -1;
    }
    if (J->off) {
        srv_error(r, 503, "jobs_unavailable", NULL, "this server runs no jobs: %s", J->off);
        return -1;
    }
    if (r->idem_key && asprintf(&key, "%s:%s", srv_auth_owner(s, r->token), r->idem_key) < 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    pthread_mutex_lock(&J->lock);
    /* The Idempotency-Key of a job made before (also before a restart:
     * the server's own store of keys lives in memory only). */
    for (srv_job *j = J->head; key && j && !same; j = j->next)
        if (j->idem && !strcmp(j->idem, key) &&
            job_now() - j->created < (double)s->conf.idempotency_ttl_ns / 1e9)
            same = job_ref(j);
    if (!same) {
        if (J->n + J->reserved >= s->conf.jobs_max && (drop = oldest_ended(J)))
            job_unlink(J, drop);
        full = J->n + J->reserved >= s->conf.jobs_max;
        if (!full) {
            J->reserved++;
            r->user = J;   /* the place kept, until job_submit or job_admit_end */
        }
    }
    pthread_mutex_unlock(&J->lock);
    free(key);
    if (drop)
        job_forget(drop, "jobs_max jobs are kept");
    if (same) {
        unsigned char fp[SRV_IDEM_FP_SIZE];
        srv_idem_fingerprint(r, fp);
        if (sodium_memcmp(fp, same->idem_fp, sizeof fp) != 0) {
            srv_error(r, 422, "idempotency_mismatch", NULL, "the Idempotency-Key '%s' was "
                      "used for a different request (job %s)", r->idem_key, same->id);
        } else {
            char loc[64];
            srv_reply_json(r, 202, job_view(same, 0, 0, true));
            snprintf(loc, sizeof loc, "/v1/jobs/%s", same->id);
            srv_reply_header(r, "Location", loc);
            srv_reply_header(r, "Idempotent-Replayed", "true");
        }
        job_unref(same);
        return -1;
    }
    if (full) {
        char v[16];
        srv_error(r, 429, "too_many_jobs", NULL, "the server keeps %u jobs ([server] jobs_max) "
                  "and none of them has ended; try again later", s->conf.jobs_max);
        snprintf(v, sizeof v, "%u", s->conf.retry_after_s);
        srv_reply_header(r, "Retry-After", v);
        return -1;
    }
    return 0;
}

void job_admit_end(srv_req *r)
{
    struct srv_jobs *J = r->s->jobs;

    if (r->user != J)
        return;
    pthread_mutex_lock(&J->lock);
    J->reserved--;
    pthread_mutex_unlock(&J->lock);
    r->user = NULL;
}

char *job_new_dir(srv_req *r, char id[JOB_ID_LEN + 1])
{
    struct srv_jobs *J = r->s->jobs;

    for (int tries = 0; tries < 8; tries++) {
        unsigned char b[12];
        char *dir;
        randombytes_buf(b, sizeof b);
        id[0] = 'j';
        sodium_bin2hex(id + 1, JOB_ID_LEN, b, sizeof b);
        if (!(dir = job_path(J->dir, id)))
            break;
        if (mkdir(dir, 0700) == 0)
            return dir;
        if (errno != EEXIST) {
            srv_error(r, 500, "io", NULL, "cannot make the job's directory %s: %s", dir,
                      strerror(errno));
            free(dir);
            return NULL;
        }
        free(dir);
    }
    srv_error(r, 500, "internal", NULL, "cannot make a job directory");
    return NULL;
}

void job_submit(srv_req *r, const job_kind *kind, char *dir, json_t *spec, size_t total)
{
    srv *s = r->s;
    struct srv_jobs *J = s->jobs;
    char id[JOB_ID_LEN + 1], loc[64], *path = NULL;
    const char *base = strrchr(dir, '/');
    json_t *doc = NULL, *idem = json_null();
    srv_job *j;

    snprintf(id, sizeof id, "%s", base ? base + 1 : dir);
    /* job_alloc() frees the dir it is given when it fails: hand dir over
     * only once the job exists, so that the folder can still be removed. */
    if (!(j = job_alloc(s, kind, id, NULL, total))) {
        job_remove_dir(dir);
        free(dir);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto out;
    }
    j->dir = dir;
    j->created = job_now();
    snprintf(j->owner, sizeof j->owner, "%s", srv_auth_owner(s, r->token));
    if (r->idem_key) {
        char hex[2 * SRV_IDEM_FP_SIZE + 1];
        if (asprintf(&j->idem, "%s:%s", j->owner, r->idem_key) < 0)
            j->idem = NULL;
        srv_idem_fingerprint(r, j->idem_fp);
        sodium_bin2hex(hex, sizeof hex, j->idem_fp, sizeof j->idem_fp);
        idem = json_pack("{s:s?, s:s}", "key", j->idem, "fingerprint", hex);
    }
    doc = json_pack("{s:s, s:s, s:s, s:f, s:I, s:O, s:o}", "id", id, "kind", kind->name,
                    "owner", j->owner, "created", j->created, "total", (json_int_t)total,
                    "spec", spec, "idempotency", idem);
    if (!doc || (r->idem_key && !j->idem) || kind->load(j, spec) != 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto fail;
    }
    /* results.jsonl: the records the request resumes (written by the
     * kind's request) or none */
    if (!(path = job_path(dir, "results.jsonl")) ||
        (access(path, F_OK) != 0 && job_write_file(dir, "results.jsonl", "", 0) != 0) ||
        job_index_results(j) != 0 || job_write_json(dir, "job.json", doc) != 0) {
        srv_error(r, 500, "io", NULL, "cannot keep the job in %s: %s", dir, strerror(errno));
        goto fail;
    }
    pthread_mutex_lock(&J->lock);
    j->next = J->head;
    J->head = job_ref(j);
    J->n++;
    if (r->user == J) {
        J->reserved--;
        r->user = NULL;
    }
    job_enqueue(J, j);
    job_kick(J, s);
    pthread_mutex_unlock(&J->lock);
    srv_log(r, "job %s: %s of %zu items", id, kind->name, total);
    srv_reply_json(r, 202, job_view(j, 0, 0, true));
    snprintf(loc, sizeof loc, "/v1/jobs/%s", id);
    srv_reply_header(r, "Location", loc);
    goto out;
fail:
    job_remove_dir(j->dir);
out:
    job_unref(j);
    json_decref(doc);
    json_decref(spec);
    free(path);
}

