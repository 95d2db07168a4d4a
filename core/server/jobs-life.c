/* core/server/jobs-life.c - the jobs' life in the server: the jobs kept
 * are loaded at start (the ones that did not end run on), a ticker
 * thread sends heartbeats to the event streams and forgets the jobs that
 * ended more than job_ttl ago, and at stop the items running are let
 * finish for the grace time, then cancelled (they run at the next start)
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
    uint64_t now = srv_now_ns();
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
            job_unlink(J, j);    /* one a tick: the removal is I/O */
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
        job_forget(expired, "job_ttl passed");
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
        struct timespec until = job_deadline(period);
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

int job_index_results(srv_job *j)
{
    char *path = job_path(j->dir, "results.jsonl");
    sbx_journal *jr = NULL;
    int rc = -1;

    pthread_mutex_lock(&j->mu);
    if (path && sbx_journal_open(path, true, index_cb, j, &jr) == SBX_OK &&
        (j->results_fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
        rc = 0;
    pthread_mutex_unlock(&j->mu);
    sbx_journal_close(jr);
    free(path);
    return rc;
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

/* A job.json's "owner": SRV_OWNER_LEN hex digits, or "" (made without a
 * token); a job from before owners were kept has none and is kept as made
 * without a token.  -1 when it is anything else, so that no malformed
 * file makes a job another token's. */
static int load_owner(srv_job *j, json_t *o)
{
    const char *v = json_string_value(o);
    size_t len = v ? strlen(v) : 0;

    if (!o)
        return 0;
    if (!v || (len && len != SRV_OWNER_LEN) || strspn(v, "0123456789abcdef") != len)
        return -1;
    memcpy(j->owner, v, len + 1);
    return 0;
}

static srv_job *load_job(srv *s, const char *dir, const char *name)
{
    char why[512], *jdir = job_path(dir, name);
    json_t *doc = NULL, *st = NULL, *spec, *idem;
    const job_kind *kind;
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
    if (load_owner(j, json_object_get(doc, "owner")) != 0) {
        srv_log(NULL, "cannot load the job in %s: its owner is not a token's; left as it is",
                j->dir);
        goto fail;
    }
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
    if (job_index_results(j) != 0) {
        srv_log(NULL, "cannot load the job in %s: %s; left as it is", j->dir,
                sbx_error_message(sbx_ctx_last_error(NULL)));
        goto fail;
    }
    json_decref(st);
    json_decref(doc);
    return j;
fail:
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
            job_enqueue(J, v[i]);
            resumed++;
        }
    }
    pthread_mutex_unlock(&J->lock);
    free(v);
    srv_log(NULL, "%zu jobs kept in %s, %zu to run on", n, J->dir, resumed);
    return 0;
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
    if (job_make_dirs(J->dir) != 0 || access(J->dir, R_OK | W_OK | X_OK) != 0) {
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
    atomic_store(&J->loaded, true);
    if ((e = pthread_create(&J->ticker, NULL, ticker, s)) != 0) {
        srv_log(NULL, "cannot start the jobs' ticker: %s", strerror(e));
        return -1;
    }
    J->ticker_on = true;
    pthread_mutex_lock(&J->lock);
    job_kick(J, s);
    pthread_mutex_unlock(&J->lock);
    return 0;
}

void srv_jobs_quiesce(srv *s)
{
    struct srv_jobs *J = s->jobs;

    if (!J)
        return;
    atomic_store(&J->stopping, true);
    job_gate_wake(J);
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
        uint64_t now = srv_now_ns();
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
        until = job_deadline(deadline_ns - now < UINT64_C(100000000) ? deadline_ns - now
                                                                  : UINT64_C(100000000));
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
        job_close(j);
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
