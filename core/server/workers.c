/* core/server/workers.c - the fixed worker pool and admission
 *
 * Handlers that may block run in `workers` slots, whatever the number
 * of connections: on the pool's threads, or on the network thread that
 * read the request when http.c finds that nothing else waits for that
 * thread (srv_pool_run_here), which spares the request two thread
 * wake-ups.  Either way at most `workers` handlers run at once.  At most
 * `queue` requests wait for a slot; past that a request is refused at
 * once with 429 and Retry-After (never buffered without bound).  A token
 * may be held to `token_concurrency` requests in flight.
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
    unsigned busy;               /* slots taken (handlers running) */
    unsigned *per_token;
    size_t n_tokens;
    srv_req **running;           /* [n_threads]: the handler of each slot */
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
    bool wake;

    pthread_mutex_lock(&p->lock);
    p->reserved--;
    p->ring[(p->head + p->count) % p->cap] = r;
    p->count++;
    wake = p->busy < p->n_threads;
    pthread_mutex_unlock(&p->lock);
    /* Signalled unlocked: the worker woken does not wait for our lock. */
    if (wake)
        pthread_cond_signal(&p->work);
    return 0;
}

/* Under the lock: @r takes a free slot (there is one: busy < n_threads). */
static void slot_take(struct srv_pool *p, srv_req *r)
{
    for (unsigned i = 0; i < p->n_threads; i++)
        if (!p->running[i]) {
            p->running[i] = r;
            break;
        }
    p->busy++;
}

/* Under the lock: @r's handler is done, its slot free again. */
static void slot_give(struct srv_pool *p, srv_req *r)
{
    for (unsigned i = 0; i < p->n_threads; i++)
        if (p->running[i] == r) {
            p->running[i] = NULL;
            break;
        }
    p->busy--;
    p->completed++;
    if (!p->busy && !p->count && !p->reserved)
        pthread_cond_broadcast(&p->idle);
}

/* Run one request's handler; then it no longer counts as admitted nor
 * watched, and its Idempotency-Key keeps the reply. */
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
}

bool srv_pool_run_here(srv *s, srv_req *r)
{
    struct srv_pool *p = s->pool;
    bool here;

    pthread_mutex_lock(&p->lock);
    /* Never ahead of a request already waiting. */
    here = !p->stop && !p->count && p->busy < p->n_threads;
    if (here) {
        p->reserved--;
        slot_take(p, r);
    }
    pthread_mutex_unlock(&p->lock);
    if (!here)
        return false;
    srv_monitor_add(r);   /* a client that goes away cancels it, as queued */
    serve(s, r);
    pthread_mutex_lock(&p->lock);
    slot_give(p, r);
    /* a request queued meanwhile waited for this slot */
    here = p->count > 0;
    pthread_mutex_unlock(&p->lock);
    if (here)
        pthread_cond_signal(&p->work);
    return true;
}

static void *worker(void *arg)
{
    srv *s = arg;
    struct srv_pool *p = s->pool;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        srv_req *r;
        if (!p->count && p->stop)
            break;
        /* The slots may all be taken by handlers running on network
         * threads: then this thread waits too. */
        if (!p->count || p->busy >= p->n_threads) {
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        r = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->count--;
        slot_take(p, r);
        pthread_mutex_unlock(&p->lock);

        serve(s, r);
        /* Hand the reply back to the connection's thread. */
        if (r->stream)
            srv_sse_end(r);
        else if (!r->upgraded)   /* a WebSocket resumed it to upgrade it (ws.c) */
            srv_http_resume(r);

        pthread_mutex_lock(&p->lock);
        slot_give(p, r);
        pthread_mutex_unlock(&p->lock);
        srv_req_unref(r);
        pthread_mutex_lock(&p->lock);
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
