/* core/server/workers.c - the fixed worker pool and admission
 *
 * Handlers that may block run on `workers` threads, whatever the number
 * of connections.  At most `queue` requests wait for one; past that a
 * request is refused at once with 429 and Retry-After (never buffered
 * without bound).  A token may be held to `token_concurrency` requests
 * in flight.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "server-int.h"

struct srv_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, idle;
    pthread_t *threads;
    unsigned n_threads;
    srv_req **ring;
    unsigned cap, head, count;   /* waiting requests */
    unsigned reserved;           /* admitted, about to be queued */
    unsigned busy;
    unsigned *per_token;
    size_t n_tokens;
    srv_req **running;           /* [n_threads]: what each worker runs */
    bool stop;
    uint64_t admitted, rejected_queue, rejected_quota, completed;
};

static void retry_after(srv_req *r)
{
    char v[16];

    snprintf(v, sizeof v, "%u", r->s->conf.retry_after_s);
    srv_reply_header(r, "Retry-After", v);
}

int srv_pool_admit(srv *s, srv_req *r)
{
    struct srv_pool *p = s->pool;
    unsigned quota = s->conf.token_concurrency;

    pthread_mutex_lock(&p->lock);
    if (p->count + p->reserved >= p->cap) {
        p->rejected_queue++;
        pthread_mutex_unlock(&p->lock);
        srv_error(r, 429, "queue_full", NULL, "the server is at capacity (%u requests "
                  "waiting for %u workers); try again later", p->cap, p->n_threads);
        retry_after(r);
        return 429;
    }
    if (quota && r->token >= 0 && (size_t)r->token < p->n_tokens &&
        p->per_token[r->token] >= quota) {
        p->rejected_quota++;
        pthread_mutex_unlock(&p->lock);
        srv_error(r, 429, "quota", NULL, "this token has %u requests in flight, its "
                  "token_concurrency quota", quota);
        retry_after(r);
        return 429;
    }
    p->reserved++;
    p->admitted++;
    if (r->token >= 0 && (size_t)r->token < p->n_tokens)
        p->per_token[r->token]++;
    r->admitted = true;
    pthread_mutex_unlock(&p->lock);
    return 0;
}

/* The end of an admitted request's stay (a worker ran it, or it was
 * refused after admission). */
void srv_pool_release(srv *s, srv_req *r)
{
    struct srv_pool *p = s->pool;

    if (!r->admitted)
        return;
    pthread_mutex_lock(&p->lock);
    if (r->token >= 0 && (size_t)r->token < p->n_tokens && p->per_token[r->token])
        p->per_token[r->token]--;
    r->admitted = false;
    pthread_mutex_unlock(&p->lock);
}

void srv_pool_unadmit(srv *s, srv_req *r)
{
    struct srv_pool *p = s->pool;

    pthread_mutex_lock(&p->lock);
    p->reserved--;
    p->admitted--;
    if (!p->busy && !p->count && !p->reserved)
        pthread_cond_broadcast(&p->idle);
    pthread_mutex_unlock(&p->lock);
    srv_pool_release(s, r);
}

int srv_pool_submit(srv *s, srv_req *r)
{
    struct srv_pool *p = s->pool;

    pthread_mutex_lock(&p->lock);
    p->reserved--;
    p->ring[(p->head + p->count) % p->cap] = r;
    p->count++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

/* Run one request's handler and hand the reply back. */
static void serve(srv *s, srv_req *r)
{
    if (atomic_load(&r->refused))
        srv_error(r, 503, "shutting_down", NULL, "the server is shutting down");
    else if (srv_req_gone(r))
        srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
    else
        r->route->handler(r);
    if (!r->resp)
        srv_error(r, 500, "internal", NULL, "the handler of %s gave no reply",
                  r->route->pattern);
    srv_monitor_del(r);
    srv_idem_end(s, r);
    srv_pool_release(s, r);
    if (r->stream)
        srv_sse_end(r);
    else if (!r->upgraded)   /* a WebSocket resumed it to upgrade it (ws.c) */
        srv_http_resume(r);
    srv_req_unref(r);
}

static void *worker(void *arg)
{
    srv *s = arg;
    struct srv_pool *p = s->pool;
    unsigned me;

    pthread_mutex_lock(&p->lock);
    for (me = 0; me < p->n_threads && !pthread_equal(p->threads[me], pthread_self()); me++)
        ;
    for (;;) {
        srv_req *r;
        while (!p->count && !p->stop)
            pthread_cond_wait(&p->work, &p->lock);
        if (!p->count)
            break;
        r = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->count--;
        p->busy++;
        if (me < p->n_threads)
            p->running[me] = r;
        pthread_mutex_unlock(&p->lock);

        serve(s, r);

        pthread_mutex_lock(&p->lock);
        if (me < p->n_threads)
            p->running[me] = NULL;
        p->busy--;
        p->completed++;
        if (!p->busy && !p->count && !p->reserved)
            pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int srv_pool_start(srv *s)
{
    struct srv_pool *p = calloc(1, sizeof *p);

    if (!p)
        return -1;
    s->pool = p;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->idle, NULL);
    p->cap = s->conf.queue ? s->conf.queue : 1;
    p->n_tokens = srv_auth_count(s);
    if (!(p->ring = calloc(p->cap, sizeof *p->ring)) ||
        !(p->threads = calloc(s->conf.workers, sizeof *p->threads)) ||
        !(p->running = calloc(s->conf.workers, sizeof *p->running)) ||
        !(p->per_token = calloc(p->n_tokens + 1, sizeof *p->per_token))) {
        srv_log(NULL, "out of memory starting the workers");
        return -1;
    }
    pthread_mutex_lock(&p->lock);
    for (unsigned i = 0; i < s->conf.workers; i++) {
        int e = pthread_create(&p->threads[i], NULL, worker, s);
        if (e) {
            pthread_mutex_unlock(&p->lock);
            srv_log(NULL, "cannot start worker %u: %s", i, strerror(e));
            return -1;
        }
        p->n_threads++;
    }
    pthread_mutex_unlock(&p->lock);
    return 0;
}

bool srv_pool_drain(srv *s, uint64_t ns)
{
    struct srv_pool *p = s->pool;
    struct timespec until;
    bool idle;

    if (!p)
        return true;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec += (long)(ns % 1000000000u);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->lock);
    while ((p->busy || p->count || p->reserved) &&
           pthread_cond_timedwait(&p->idle, &p->lock, &until) == 0)
        ;
    idle = !p->busy && !p->count && !p->reserved;
    pthread_mutex_unlock(&p->lock);
    return idle;
}

void srv_pool_cancel_all(srv *s)
{
    struct srv_pool *p = s->pool;

    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    for (unsigned i = 0; i < p->count; i++)
        atomic_store(&p->ring[(p->head + i) % p->cap]->refused, true);
    for (unsigned i = 0; i < p->n_threads; i++)
        if (p->running[i])
            srv_req_cancel(p->running[i]);
    pthread_mutex_unlock(&p->lock);
}

void srv_pool_stop(srv *s)
{
    struct srv_pool *p = s->pool;

    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->idle);
    free(p->ring);
    free(p->threads);
    free(p->running);
    free(p->per_token);
    free(p);
    s->pool = NULL;
}

void srv_pool_get_stats(srv *s, srv_pool_stats *st)
{
    struct srv_pool *p = s->pool;

    memset(st, 0, sizeof *st);
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    st->workers = p->n_threads;
    st->busy = p->busy;
    st->queued = p->count + p->reserved;
    st->queue_cap = p->cap;
    st->admitted = p->admitted;
    st->rejected_queue = p->rejected_queue;
    st->rejected_quota = p->rejected_quota;
    st->completed = p->completed;
    pthread_mutex_unlock(&p->lock);
}
