/* core/server/jobs.c - the jobs: registry, scheduler, the gate, expiry,
 * start and stop
 *
 * At most [server] jobs_running jobs run at once, each on a runner thread
 * of its own (the others wait, queued, in the order they came).  Their
 * items (runs, samples) all pass one gate: at most job_workers of them
 * run at once, among all jobs together; a job with fewer items running
 * goes first, so a small job is not stuck behind a big one; and an item
 * starts only while no interactive request waits for a worker and the
 * workers are not all busy (one job item may always run, so jobs are
 * never starved either).  A 10,000-item batch therefore never holds a
 * POST /v1/run back: the requests have their worker pool, the jobs take
 * what the requests leave, up to their cap.
 *
 * A ticker thread sends heartbeats to the event streams and forgets the
 * jobs that ended more than job_ttl ago (and, when jobs_max jobs are
 * kept, the oldest ended ones make room for a new one).
 */
#include "config.h"

#include <dirent.h>
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

struct srv_jobs {
    pthread_mutex_t lock;        /* the list, the queue, the counts */
    srv_job *head;               /* every job, newest first */
    size_t n, reserved;          /* jobs kept; places kept for jobs being made */
    srv_job *q_head, *q_tail;    /* queued, oldest first (a reference each) */
    unsigned running, runners;
    pthread_cond_t idle;         /* runners reached 0 */
    atomic_bool stopping;
    char *dir;                   /* STATE_DIR/jobs */
    char *off;                   /* why there are no jobs (the default directory
                                    is unusable), or NULL */
    /* the gate */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    unsigned in_flight, workers;
    srv_job **gated;             /* the running jobs */
    size_t n_gated, cap_gated;
    /* the ticker */
    pthread_t ticker;
    bool ticker_on, tick_stop;
    pthread_cond_t tick_cv;
};

static uint64_t mono_ns(void)
{
    return srv_now_ns();
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

static srv_job *job_alloc(srv *s, const job_kind *kind, const char *id, char *dir, size_t total)
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
    if ((v = realloc(j->subs, (j->n_subs + 1) * sizeof *v))) {
        j->subs = v;
        j->subs[j->n_subs++] = st;
        st = NULL;
    }
    pthread_mutex_unlock(&j->mu);
    srv_stream_unref(st);   /* no room: the stream still works, unpoked */
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

/* Set the end (under nothing); false when it had ended already. */
static bool finish(srv_job *j, int state, const char *code, const char *msg, json_t *summary)
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
        finish(j, JOB_CANCELLED, NULL, NULL, summary);
    else if (code)
        finish(j, JOB_FAILED, code, msg, summary);
    else if (all)
        finish(j, JOB_SUCCEEDED, NULL, NULL, summary);
    else
        json_decref(summary);   /* the server stops: it runs on at the next start */
}

/* ---- the gate ---------------------------------------------------------------------- */

/* Under gate_mu: whether an item of @j may start now. */
static bool gate_open(struct srv_jobs *J, srv *s, srv_job *j)
{
    srv_pool_stats st;

    if (J->in_flight >= J->workers)
        return false;
    for (size_t i = 0; i < J->n_gated; i++)
        if (J->gated[i] != j && J->gated[i]->waiting && J->gated[i]->in_flight < j->in_flight)
            return false;
    if (J->in_flight == 0)
        return true;
    srv_pool_get_stats(s, &st);
    return st.queued == 0 && st.busy + J->in_flight < st.workers;
}

int job_gate_enter(srv_job *j)
{
    struct srv_jobs *J = j->s->jobs;
    int rc = 0;

    pthread_mutex_lock(&J->gate_mu);
    j->waiting++;
    for (;;) {
        struct timespec until;
        if (job_stopping(j)) {
            rc = -1;
            break;
        }
        if (gate_open(J, j->s, j))
            break;
        /* the pool does not say when a request ends: look again soon */
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 20 * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&J->gate_cv, &J->gate_mu, &until);
    }
    j->waiting--;
    if (rc == 0) {
        j->in_flight++;
        J->in_flight++;
    }
    pthread_mutex_unlock(&J->gate_mu);
    return rc;
}

void job_gate_leave(srv_job *j)
{
    struct srv_jobs *J = j->s->jobs;

    pthread_mutex_lock(&J->gate_mu);
    j->in_flight--;
    J->in_flight--;
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
}

void job_gate_stats(srv *s, unsigned *running, unsigned *workers)
{
    struct srv_jobs *J = s->jobs;

    pthread_mutex_lock(&J->gate_mu);
    *running = J->in_flight;
    *workers = J->workers;
    pthread_mutex_unlock(&J->gate_mu);
}

static void gate_wake(struct srv_jobs *J)
{
    pthread_mutex_lock(&J->gate_mu);
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
}

static int gate_join(struct srv_jobs *J, srv_job *j)
{
    int rc = 0;

    pthread_mutex_lock(&J->gate_mu);
    if (J->n_gated == J->cap_gated) {
        size_t cap = J->cap_gated ? J->cap_gated * 2 : 8;
        srv_job **v = realloc(J->gated, cap * sizeof *v);
        if (!v)
            rc = -1;
        else {
            J->gated = v;
            J->cap_gated = cap;
        }
    }
    if (rc == 0)
        J->gated[J->n_gated++] = j;
    pthread_mutex_unlock(&J->gate_mu);
    return rc;
}

static void gate_part(struct srv_jobs *J, srv_job *j)
{
    pthread_mutex_lock(&J->gate_mu);
    for (size_t i = 0; i < J->n_gated; i++)
        if (J->gated[i] == j) {
            J->gated[i] = J->gated[--J->n_gated];
            break;
        }
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
}

/* ---- the scheduler --------------------------------------------------------------------- */

static void kick(struct srv_jobs *J, srv *s);

static void *runner(void *arg)
{
    srv_job *j = arg;
    struct srv_jobs *J = j->s->jobs;

    if (gate_join(J, j) != 0) {
        job_ended(j, "nomem", "out of memory starting the job", NULL);
    } else {
        j->kind->run(j);
        gate_part(J, j);
    }
    pthread_mutex_lock(&J->lock);
    J->running--;
    J->runners--;
    kick(J, j->s);
    if (!J->runners)
        pthread_cond_broadcast(&J->idle);
    pthread_mutex_unlock(&J->lock);
    job_unref(j);
    return NULL;
}

/* Under J->lock: start queued jobs while there is room. */
static void kick(struct srv_jobs *J, srv *s)
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
            finish(j, JOB_FAILED, "internal", "cannot start the job's thread", NULL);
            job_unref(j);
            continue;
        }
        J->running++;
        J->runners++;
    }
}

/* Under J->lock: queue @j (taking a reference). */
static void enqueue(struct srv_jobs *J, srv_job *j)
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
        finish(j, JOB_CANCELLED, NULL, NULL, NULL);   /* kick skips it */
    pthread_mutex_unlock(&J->lock);
    if (state == JOB_RUNNING) {
        sbx_cancel_fire(j->cancel);
        gate_wake(J);
    }
    return state == JOB_QUEUED || state == JOB_RUNNING;
}

/* ---- the registry ---------------------------------------------------------------------- */

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


srv_job *job_find(srv *s, const char *id)
{
    struct srv_jobs *J = s->jobs;
    srv_job *found = NULL;

    if (!J)
        return NULL;
    pthread_mutex_lock(&J->lock);
    for (srv_job *j = J->head; j && !found; j = j->next)
        if (!strcmp(j->id, id))
            found = job_ref(j);
    pthread_mutex_unlock(&J->lock);
    return found;
}

size_t job_list(srv *s, int state, const char *kind, size_t skip, srv_job **out, size_t max,
                size_t *total)
{
    struct srv_jobs *J = s->jobs;
    size_t n = 0, seen = 0;

    pthread_mutex_lock(&J->lock);
    for (srv_job *j = J->head; j; j = j->next) {
        int st;
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

/* Under J->lock: take @j out of the list.  Its files are removed and the
 * list's reference dropped by the caller, outside the lock. */
static void unlink_job(struct srv_jobs *J, srv_job *j)
{
    for (srv_job **pp = &J->head; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            J->n--;
            break;
        }
    pthread_mutex_lock(&j->mu);
    j->closed = true;
    job_poke(j);
    pthread_mutex_unlock(&j->mu);
}

static void forget(srv_job *j, const char *why)
{
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
    bool full;

    if (atomic_load(&J->stopping)) {
        srv_error(r, 503, "shutting_down", NULL, "the server is shutting down");
        return -1;
    }
    if (J->off) {
        srv_error(r, 503, "jobs_unavailable", NULL, "this server runs no jobs: %s", J->off);
        return -1;
    }
    if (r->idem_key && asprintf(&key, "%d:%s", r->token, r->idem_key) < 0) {
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
            unlink_job(J, drop);
        full = J->n + J->reserved >= s->conf.jobs_max;
        if (!full) {
            J->reserved++;
            r->user = J;   /* the place kept, until job_submit or job_admit_end */
        }
    }
    pthread_mutex_unlock(&J->lock);
    free(key);
    if (drop)
        forget(drop, "jobs_max jobs are kept");
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
    if (!(j = job_alloc(s, kind, id, dir, total))) {
        job_remove_dir(dir);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto out;
    }
    j->created = job_now();
    if (r->idem_key) {
        char hex[2 * SRV_IDEM_FP_SIZE + 1];
        if (asprintf(&j->idem, "%d:%s", r->token, r->idem_key) < 0)
            j->idem = NULL;
        srv_idem_fingerprint(r, j->idem_fp);
        sodium_bin2hex(hex, sizeof hex, j->idem_fp, sizeof j->idem_fp);
        idem = json_pack("{s:s?, s:s}", "key", j->idem, "fingerprint", hex);
    }
    doc = json_pack("{s:s, s:s, s:f, s:I, s:O, s:o}", "id", id, "kind", kind->name,
                    "created", j->created, "total", (json_int_t)total, "spec", spec,
                    "idempotency", idem);
    if (!doc || (r->idem_key && !j->idem) || kind->load(j, spec) != 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto fail;
    }
    if (job_write_file(dir, "results.jsonl", "", 0) != 0 ||
        !(path = job_path(dir, "results.jsonl")) ||
        (j->results_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
        job_write_json(dir, "job.json", doc) != 0) {
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
    enqueue(J, j);
    kick(J, s);
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

/* ---- the ticker: heartbeats, expiry ---------------------------------------------------------- */

/* Heartbeats for the idle event streams of @j; closed ones are dropped. */
static void tend_streams(srv *s, srv_job *j, uint64_t now)
{
    srv_stream *gone[32];
    size_t n_gone = 0;

    pthread_mutex_lock(&j->mu);
    for (size_t i = 0; i < j->n_subs;) {
        srv_stream *st = j->subs[i];
        if (srv_stream_closed(st) && n_gone < sizeof gone / sizeof gone[0]) {
            gone[n_gone++] = st;
            j->subs[i] = j->subs[--j->n_subs];
            continue;
        }
        if (srv_sse_idle_ns(st, now) >= s->conf.heartbeat_ns)
            srv_sse_heartbeat(st);
        i++;
    }
    pthread_mutex_unlock(&j->mu);
    for (size_t i = 0; i < n_gone; i++)
        srv_stream_unref(gone[i]);
}

static void tick(srv *s)
{
    struct srv_jobs *J = s->jobs;
    srv_job *expired = NULL, **pp;
    double limit = job_now() - (double)s->conf.job_ttl_ns / 1e9;
    uint64_t now = mono_ns();
    srv_job **all = NULL;
    size_t n = 0;

    pthread_mutex_lock(&J->lock);
    for (pp = &J->head; *pp;) {
        srv_job *j = *pp;
        bool old;
        pthread_mutex_lock(&j->mu);
        old = j->state != JOB_QUEUED && j->state != JOB_RUNNING && j->finished < limit;
        pthread_mutex_unlock(&j->mu);
        if (old && !expired) {
            unlink_job(J, j);    /* one a tick: the removal is I/O */
            expired = j;
            continue;
        }
        pp = &j->next;
    }
    if (J->n && (all = calloc(J->n, sizeof *all)))
        for (srv_job *j = J->head; j && n < J->n; j = j->next)
            all[n++] = job_ref(j);
    pthread_mutex_unlock(&J->lock);
    for (size_t i = 0; i < n; i++) {
        tend_streams(s, all[i], now);
        job_unref(all[i]);
    }
    free(all);
    if (expired)
        forget(expired, "job_ttl passed");
}

static void *ticker(void *arg)
{
    srv *s = arg;
    struct srv_jobs *J = s->jobs;
    uint64_t period = s->conf.heartbeat_ns / 2;

    if (period > UINT64_C(1000000000))
        period = UINT64_C(1000000000);
    if (period < UINT64_C(50000000))
        period = UINT64_C(50000000);
    pthread_mutex_lock(&J->lock);
    while (!J->tick_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(period / 1000000000u);
        until.tv_nsec += (long)(period % 1000000000u);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&J->tick_cv, &J->lock, &until);
        if (J->tick_stop)
            break;
        pthread_mutex_unlock(&J->lock);
        tick(s);
        pthread_mutex_lock(&J->lock);
    }
    pthread_mutex_unlock(&J->lock);
    return NULL;
}

/* ---- loading the jobs kept ------------------------------------------------------------------ */

static const job_kind *kind_named(const char *name)
{
    if (name && !strcmp(name, job_kind_batch.name))
        return &job_kind_batch;
    if (name && !strcmp(name, job_kind_eval.name))
        return &job_kind_eval;
    return NULL;
}

static int index_cb(void *ud, const char *line, size_t len, size_t lineno, uint64_t off)
{
    srv_job *j = ud;

    if (job_index_line(j, line, len, off) != 0)
        srv_log(NULL, "job %s: results.jsonl:%zu is not one of its records; left out", j->id,
                lineno);
    return SBX_OK;
}

/* The ended job's state.json into @j.  -1 when it is not readable. */
static int load_state(srv_job *j, json_t *st)
{
    json_t *err = json_object_get(st, "error");
    int state = job_state_from_name(json_string_value(json_object_get(st, "state")));

    if (state != JOB_SUCCEEDED && state != JOB_FAILED && state != JOB_CANCELLED)
        return -1;
    j->state = state;
    j->started = json_number_value(json_object_get(st, "started"));
    j->finished = json_number_value(json_object_get(st, "finished"));
    j->rate = json_number_value(json_object_get(st, "rate"));
    if (json_is_object(err)) {
        j->err_code = strdup(json_string_value(json_object_get(err, "code")) ?: "internal");
        j->err_msg = strdup(json_string_value(json_object_get(err, "message")) ?: "");
    }
    if (json_is_object(json_object_get(st, "summary")))
        j->summary = json_incref(json_object_get(st, "summary"));
    return 0;
}

static srv_job *load_job(srv *s, const char *dir, const char *name)
{
    char why[512], *path = NULL, *jdir = job_path(dir, name);
    json_t *doc = NULL, *st = NULL, *spec, *idem;
    const job_kind *kind;
    sbx_journal *jr = NULL;
    srv_job *j = NULL;
    json_int_t total;

    if (!jdir)
        return NULL;
    if (!(doc = job_read_json(jdir, "job.json", why, sizeof why))) {
        if (errno == ENOENT) {
            /* made by a server that died before it answered 202 */
            srv_log(NULL, "%s: no job.json (the job was never accepted): removed", jdir);
            job_remove_dir(jdir);
        } else {
            srv_log(NULL, "cannot load the job in %s: %s; left as it is", jdir, why);
        }
        free(jdir);
        return NULL;
    }
    kind = kind_named(json_string_value(json_object_get(doc, "kind")));
    total = json_integer_value(json_object_get(doc, "total"));
    spec = json_object_get(doc, "spec");
    if (!kind || !json_is_integer(json_object_get(doc, "total")) || total < 0 ||
        total > 100000000 || !json_is_object(spec) ||
        strcmp(json_string_value(json_object_get(doc, "id")) ?: "", name)) {
        srv_log(NULL, "cannot load the job in %s: job.json is not a job's; left as it is",
                jdir);
        free(jdir);
        json_decref(doc);
        return NULL;
    }
    if (!(j = job_alloc(s, kind, name, jdir, (size_t)total)))
        goto fail;
    j->created = json_number_value(json_object_get(doc, "created"));
    idem = json_object_get(doc, "idempotency");
    if (json_is_object(idem) && json_is_string(json_object_get(idem, "key"))) {
        const char *hex = json_string_value(json_object_get(idem, "fingerprint"));
        size_t got = 0;
        j->idem = strdup(json_string_value(json_object_get(idem, "key")));
        if (!hex || sodium_hex2bin(j->idem_fp, sizeof j->idem_fp, hex, strlen(hex), NULL,
                                   &got, NULL) != 0 || got != sizeof j->idem_fp) {
            free(j->idem);
            j->idem = NULL;
        }
    }
    if (kind->load(j, spec) != 0) {
        srv_log(NULL, "cannot load the job in %s: its spec is not a %s's; left as it is",
                j->dir, kind->name);
        goto fail;
    }
    st = job_read_json(j->dir, "state.json", why, sizeof why);
    if (st && load_state(j, st) != 0) {
        srv_log(NULL, "job %s: state.json says no end; it runs again", name);
        json_decref(j->summary);
        j->summary = NULL;
    }
    /* Index the results (cutting off a line torn by a kill). */
    pthread_mutex_lock(&j->mu);
    path = job_path(j->dir, "results.jsonl");
    if (!path || sbx_journal_open(path, true, index_cb, j, &jr) != SBX_OK ||
        (j->results_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        pthread_mutex_unlock(&j->mu);
        srv_log(NULL, "cannot load the job in %s: %s; left as it is", j->dir,
                sbx_error_message(sbx_ctx_last_error(NULL)));
        goto fail;
    }
    pthread_mutex_unlock(&j->mu);
    sbx_journal_close(jr);
    free(path);
    json_decref(st);
    json_decref(doc);
    return j;
fail:
    free(path);
    json_decref(st);
    json_decref(doc);
    job_unref(j);
    return NULL;
}

static int by_created(const void *a, const void *b)
{
    const srv_job *x = *(srv_job *const *)a, *y = *(srv_job *const *)b;

    return x->created < y->created ? -1 : x->created > y->created;
}

static int load_all(srv *s)
{
    struct srv_jobs *J = s->jobs;
    DIR *d = opendir(J->dir);
    struct dirent *e;
    srv_job **v = NULL;
    size_t n = 0, cap = 0, resumed = 0;

    if (!d) {
        srv_log(NULL, "cannot read the jobs in %s: %s", J->dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d))) {
        srv_job *j;
        if (e->d_name[0] != 'j' || strlen(e->d_name) != JOB_ID_LEN)
            continue;
        if (!(j = load_job(s, J->dir, e->d_name)))
            continue;
        if (n == cap) {
            srv_job **nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *nv);
            if (!nv) {
                job_unref(j);
                break;
            }
            v = nv;
        }
        v[n++] = j;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, by_created);
    pthread_mutex_lock(&J->lock);
    for (size_t i = 0; i < n; i++) {
        v[i]->next = J->head;
        J->head = v[i];       /* the list's reference */
        J->n++;
        if (v[i]->state == JOB_QUEUED) {
            enqueue(J, v[i]);
            resumed++;
        }
    }
    pthread_mutex_unlock(&J->lock);
    free(v);
    srv_log(NULL, "%zu jobs kept in %s, %zu to run on", n, J->dir, resumed);
    return 0;
}

/* mkdir -p, 0700 for what it makes. */
static int make_dirs(const char *path)
{
    char *p = strdup(path);

    if (!p)
        return -1;
    for (char *c = p + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *c = '/';
    }
    free(p);
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* ---- start and stop ---------------------------------------------------------------------------- */

int srv_jobs_start(srv *s)
{
    struct srv_jobs *J = calloc(1, sizeof *J);
    char *base;
    int e;

    if (!J)
        return -1;
    s->jobs = J;
    pthread_mutex_init(&J->lock, NULL);
    pthread_cond_init(&J->idle, NULL);
    pthread_mutex_init(&J->gate_mu, NULL);
    pthread_cond_init(&J->gate_cv, NULL);
    pthread_cond_init(&J->tick_cv, NULL);
    atomic_init(&J->stopping, false);
    J->workers = s->conf.job_workers ? s->conf.job_workers
                                     : (s->conf.workers > 1 ? s->conf.workers / 2 : 1);
    if (!(base = job_state_dir(s)) || !(J->dir = job_path(base, "jobs"))) {
        free(base);
        srv_log(NULL, "out of memory");
        return -1;
    }
    free(base);
    if (make_dirs(J->dir) != 0 || access(J->dir, R_OK | W_OK | X_OK) != 0) {
        e = errno;
        srv_log(NULL, "cannot use the jobs directory %s: %s (set [server] state_dir)",
                J->dir, strerror(e));
        /* Interactive requests need no state: only a directory the
         * configuration names must work. */
        if (s->conf.state_dir || asprintf(&J->off, "cannot use %s (%s): set [server] "
                                          "state_dir", J->dir, strerror(e)) < 0)
            return -1;
        return 0;
    }
    if (load_all(s) != 0)
        return -1;
    if ((e = pthread_create(&J->ticker, NULL, ticker, s)) != 0) {
        srv_log(NULL, "cannot start the jobs' ticker: %s", strerror(e));
        return -1;
    }
    J->ticker_on = true;
    pthread_mutex_lock(&J->lock);
    kick(J, s);
    pthread_mutex_unlock(&J->lock);
    return 0;
}

void srv_jobs_quiesce(srv *s)
{
    struct srv_jobs *J = s->jobs;

    if (!J)
        return;
    atomic_store(&J->stopping, true);
    gate_wake(J);
}

void srv_jobs_stop(srv *s, uint64_t deadline_ns)
{
    struct srv_jobs *J = s->jobs;
    bool told = false;

    if (!J)
        return;
    srv_jobs_quiesce(s);
    /* Items running: let them finish within the grace time, then cancel
     * them (they have no record yet, so they run again at the next start). */
    pthread_mutex_lock(&J->lock);
    while (J->runners) {
        struct timespec until;
        uint64_t now = mono_ns();
        if (now >= deadline_ns) {
            if (!told) {
                srv_log(NULL, "cancelling the items of %u running jobs (they run again at "
                        "the next start)", J->running);
                for (srv_job *j = J->head; j; j = j->next)
                    sbx_cancel_fire(j->cancel);
                told = true;
            }
            deadline_ns = now + UINT64_C(5000000000);
        }
        clock_gettime(CLOCK_REALTIME, &until);
        uint64_t wait = deadline_ns - now < UINT64_C(100000000) ? deadline_ns - now
                                                               : UINT64_C(100000000);
        until.tv_nsec += (long)wait;
        while (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&J->idle, &J->lock, &until);
    }
    J->tick_stop = true;
    pthread_cond_broadcast(&J->tick_cv);
    pthread_mutex_unlock(&J->lock);
    if (J->ticker_on)
        pthread_join(J->ticker, NULL);
    /* The event streams end; they keep their job until they are freed. */
    while (J->head) {
        srv_job *j = J->head;
        J->head = j->next;
        pthread_mutex_lock(&j->mu);
        j->closed = true;
        job_poke(j);
        pthread_mutex_unlock(&j->mu);
        job_unref(j);
    }
    while (J->q_head) {
        srv_job *j = J->q_head;
        J->q_head = j->queue_next;
        job_unref(j);
    }
    pthread_mutex_destroy(&J->lock);
    pthread_cond_destroy(&J->idle);
    pthread_mutex_destroy(&J->gate_mu);
    pthread_cond_destroy(&J->gate_cv);
    pthread_cond_destroy(&J->tick_cv);
    free(J->gated);
    free(J->dir);
    free(J->off);
    free(J);
    s->jobs = NULL;
}
