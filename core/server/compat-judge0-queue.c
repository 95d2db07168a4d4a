/* core/server/compat-judge0-queue.c - the Judge0 submissions run in the
 * background (POST /submissions without wait=true, Judge0's default)
 *
 * The work is bounded as the jobs' is, by the same settings: at most
 * [server] queue submissions wait (past that Judge0's 503 "queue is
 * full"), and they run on at most job_workers threads, made when first
 * needed, each run passing the jobs' gate (jobs-gate.c) as an item of
 * one job: so the background shares the runs with the interactive
 * requests and the jobs, and never holds a POST /v1/run back.  Nothing
 * of it is durable: a server that stops drops what waits and cancels,
 * after the grace time, what runs.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "compat-judge0.h"
#include "jobs.h"

struct srv_j0q {
    srv *s;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    srv_j0_req **ring;          /* waiting, oldest at head */
    unsigned cap, head, count;
    pthread_t *threads;
    sbx_cancel **cancels;       /* [max]: each thread's run's */
    unsigned n_threads, started, max, idle_threads, running;
    srv_job *gate;              /* what the gate knows the submissions as */
    struct srv_j0cb *cb;        /* the callbacks' sender (NULL: without libcurl) */
    bool gated, stop;
};

int srv_j0_queue_start(srv *s)
{
    struct srv_j0q *Q = calloc(1, sizeof *Q);

    if (!Q)
        return -1;
    s->judge0 = Q;
    Q->s = s;
    pthread_mutex_init(&Q->mu, NULL);
    pthread_cond_init(&Q->work, NULL);
    pthread_cond_init(&Q->idle, NULL);
    Q->cap = s->conf.queue ? s->conf.queue : 1;
    Q->max = s->jobs ? job_concurrency(s) : 1;
    if (!(Q->ring = calloc(Q->cap, sizeof *Q->ring)) ||
        !(Q->threads = calloc(Q->max, sizeof *Q->threads)) ||
        !(Q->cancels = calloc(Q->max, sizeof *Q->cancels)) ||
        !(Q->gate = job_alloc(s, NULL, "judge0", NULL, 0)) || srv_j0_cb_start(s, &Q->cb) != 0) {
        srv_log(NULL, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < Q->max; i++)
        if (!(Q->cancels[i] = sbx_cancel_new())) {
            srv_log(NULL, "out of memory");
            return -1;
        }
    if (s->jobs) {
        if (job_gate_join(s->jobs, Q->gate) != 0) {
            srv_log(NULL, "out of memory");
            return -1;
        }
        Q->gated = true;
    }
    return 0;
}

/* Run one submission: "Processing" once through the gate, then its end
 * (Judge0's "Internal Error" when it could not run). */
static void run_one(struct srv_j0q *Q, srv_j0_req *q, sbx_cancel *cancel)
{
    if (Q->gated && job_gate_enter(Q->gate) != 0)
        return;   /* the server stops */
    srv_j0_set_status(q->sub->token, 2);
    int rc = srv_j0_req_run(q, cancel);
    if (Q->gated)
        job_gate_leave(Q->gate);
    if (rc != 0 && q->status == 499)
        return;   /* cancelled: the server stops */
    if (rc != 0) {
        const char *msg = json_string_value(json_object_get(q->err, "error"));
        /* Judge0 shows a run it could not make as status 13. */
        json_object_set_new(q->sub->attrs, "status", srv_j0_status_json(13));
        json_object_set_new(q->sub->attrs, "status_id", json_integer(13));
        srv_bytes_free(&q->sub->text[J0_MESSAGE]);
        q->sub->has[J0_MESSAGE] =
            srv_bytes_add(&q->sub->text[J0_MESSAGE], msg ? msg : "internal error",
                          strlen(msg ? msg : "internal error")) == 0;
    }
    /* The callback once GET shows it finished (Judge0 saves, then calls). */
    char *body = srv_j0_callback_body(q), token[SRV_J0_TOKEN_LEN + 1];
    memcpy(token, q->sub->token, sizeof token);
    srv_j0_replace(q->sub);
    q->sub = NULL;
    srv_j0_callback(Q->s, q, token, body);
}

char *srv_j0_callback_body(const srv_j0_req *q)
{
    bool utf8;
    json_t *o;
    char *body;

    if (!q->callback_url)
        return NULL;
    if (!(o = srv_j0_show(q->sub, true, NULL, &utf8)) ||
        !(body = json_dumps(o, JSON_COMPACT))) {
        srv_log(NULL, "Judge0 submission %s: no callback (out of memory)", q->sub->token);
        json_decref(o);
        return NULL;
    }
    json_decref(o);
    return body;
}

void srv_j0_callback(srv *s, const srv_j0_req *q, const char *token, char *body)
{
    struct srv_j0q *Q = s->judge0;

    if (!body)
        return;
    if (!Q || !Q->cb) {
        srv_log(NULL, "Judge0 submission %s: its callback was dropped (the server stops)",
                token);
        free(body);
        return;
    }
    /* (srv_j0_cb_push logs what it drops or refuses but the ENOMEM) */
    if (srv_j0_cb_push(Q->cb, token, q->callback_url, body) == -3)
        srv_log(NULL, "Judge0 submission %s: its callback was dropped (out of memory)", token);
}

static void *runner(void *arg)
{
    struct srv_j0q *Q = arg;
    sbx_cancel *cancel;

    pthread_mutex_lock(&Q->mu);
    cancel = Q->cancels[Q->started++];
    for (;;) {
        srv_j0_req *q;
        if (Q->stop)
            break;
        if (!Q->count) {
            Q->idle_threads++;
            pthread_cond_wait(&Q->work, &Q->mu);
            Q->idle_threads--;
            continue;
        }
        q = Q->ring[Q->head];
        Q->ring[Q->head] = NULL;
        Q->head = (Q->head + 1) % Q->cap;
        Q->count--;
        Q->running++;
        pthread_mutex_unlock(&Q->mu);
        run_one(Q, q, cancel);
        srv_j0_req_free(q);
        pthread_mutex_lock(&Q->mu);
        Q->running--;
        if (!Q->running)
            pthread_cond_broadcast(&Q->idle);
    }
    pthread_mutex_unlock(&Q->mu);
    return NULL;
}

int srv_j0_queue_push(srv *s, srv_j0_req **qs, size_t n)
{
    struct srv_j0q *Q = s->judge0;
    srv_j0_sub **shown;
    int rc = 0;

    if (!Q)
        return -2;   /* not started (a harness), or stopped */
    shown = calloc(n ? n : 1, sizeof *shown);

    /* What GET shows until it runs: a copy, "In Queue". */
    for (size_t i = 0; shown && i < n; i++) {
        if (!(shown[i] = srv_j0_sub_copy(qs[i]->sub)))
            rc = -3;
        else {
            json_object_set_new(shown[i]->attrs, "status", srv_j0_status_json(1));
            json_object_set_new(shown[i]->attrs, "status_id", json_integer(1));
        }
    }
    if (!shown)
        rc = -3;
    pthread_mutex_lock(&Q->mu);
    if (rc == 0 && (Q->stop || atomic_load(&s->stopping)))
        rc = -2;
    else if (rc == 0 && n > Q->cap - Q->count)
        rc = -1;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            srv_j0_keep(shown[i]);   /* before it can run (and replace it) */
            shown[i] = NULL;
            Q->ring[(Q->head + Q->count++) % Q->cap] = qs[i];
        }
        /* A thread more while they are not enough (the gate bounds what
         * runs at once anyway). */
        for (unsigned want = Q->idle_threads; want < Q->count && Q->n_threads < Q->max;
             want++) {
            if (pthread_create(&Q->threads[Q->n_threads], NULL, runner, Q) != 0) {
                if (!Q->n_threads)
                    srv_log(NULL, "cannot start a thread for Judge0's submissions: they "
                            "wait for one");
                break;
            }
            Q->n_threads++;
        }
        pthread_cond_broadcast(&Q->work);
    }
    pthread_mutex_unlock(&Q->mu);
    for (size_t i = 0; shown && i < n; i++)
        srv_j0_sub_free(shown[i]);
    free(shown);
    return rc;
}

void srv_j0_queue_stats(srv *s, unsigned *queued, unsigned *running)
{
    struct srv_j0q *Q = s->judge0;

    *queued = *running = 0;
    if (!Q)
        return;
    pthread_mutex_lock(&Q->mu);
    *queued = Q->count;
    *running = Q->running;
    pthread_mutex_unlock(&Q->mu);
}

void srv_j0_callback_counts(srv *s, srv_j0_cb_counts *out)
{
    struct srv_j0q *Q = s->judge0;

    srv_j0_cb_counts_get(Q ? Q->cb : NULL, out);
}

void srv_j0_queue_stop(srv *s, uint64_t deadline_ns)
{
    struct srv_j0q *Q = s->judge0;
    bool told = false;

    if (!Q)
        return;
    pthread_mutex_lock(&Q->mu);
    Q->stop = true;
    pthread_cond_broadcast(&Q->work);
    if (Q->gate)
        sbx_cancel_fire(Q->gate->cancel);   /* what waits at the gate starts no more */
    if (Q->gated)
        job_gate_wake(s->jobs);
    while (Q->running) {
        uint64_t now = srv_now_ns();
        if (now >= deadline_ns && !told) {
            srv_log(NULL, "cancelling %u Judge0 submissions still running", Q->running);
            for (unsigned i = 0; i < Q->max; i++)
                sbx_cancel_fire(Q->cancels[i]);
            told = true;
        }
        struct timespec until = job_deadline(UINT64_C(100000000));
        pthread_cond_timedwait(&Q->idle, &Q->mu, &until);
    }
    pthread_mutex_unlock(&Q->mu);
    for (unsigned i = 0; i < Q->n_threads; i++)
        pthread_join(Q->threads[i], NULL);
    for (unsigned i = 0; i < Q->count; i++)
        srv_j0_req_free(Q->ring[(Q->head + i) % Q->cap]);
    /* What finished may still have its callback to send. */
    srv_j0_cb_stop(Q->cb, deadline_ns);
    if (Q->gated)
        job_gate_part(s->jobs, Q->gate);
    job_unref(Q->gate);
    for (unsigned i = 0; Q->cancels && i < Q->max; i++)
        sbx_cancel_free(Q->cancels[i]);
    free(Q->cancels);
    free(Q->threads);
    free(Q->ring);
    pthread_mutex_destroy(&Q->mu);
    pthread_cond_destroy(&Q->work);
    pthread_cond_destroy(&Q->idle);
    free(Q);
    s->judge0 = NULL;
}
