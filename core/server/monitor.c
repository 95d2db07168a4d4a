/* core/server/monitor.c - notice clients that go away while a worker
 * runs their request, and keep silent event streams alive
 *
 * libmicrohttpd does not watch a suspended connection, so one thread
 * watches the sockets of the requests in the workers' hands for the
 * peer's close (EPOLLRDHUP, EPOLLHUP): such a request is abandoned (its
 * run cancelled, its sandbox destroyed by the run's own end).  The same
 * thread writes an SSE comment into streams that were silent for the
 * heartbeat interval, so proxies and clients do not time them out.
 *
 * A request is in the list from dispatch until its worker or
 * libmicrohttpd is done with it; both remove it (under the lock) before
 * dropping their reference, so a listed request is alive.  Epoll events
 * carry a serial number, never a pointer: an event for a request
 * removed meanwhile finds nothing.
 *
 * Slow clients: libmicrohttpd's connection timeout only measures
 * silence, so a client sending its headers a byte at a time (slowloris)
 * would keep its connection forever.  Every connection is listed here
 * too; one whose request has not got its headers in within [server]
 * request_timeout of its start or of its previous reply is shut down
 * (shutdown(2): libmicrohttpd then closes it as a lost connection).
 * libmicrohttpd tells us a connection closed before it closes the
 * socket, and both go through the lock, so a socket shut down here is
 * always still that connection's.  A body that trickles gets a 408 from
 * http.c; one that stops, the connection timeout.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server.h"
#include "server-int.h"

struct srv_conn {
    int fd;
    bool in_request;         /* headers in: no deadline here */
    uint64_t deadline;       /* for the next request's headers */
    struct srv_conn *prev, *next;
};

struct srv_monitor {
    pthread_mutex_t lock;
    struct srv_conn *conns;
    uint64_t request_timeout_ns;
    pthread_t thread;
    bool started;
    int ep, wake;
    srv_req *head;
    uint64_t serial;
    atomic_bool stop;
    uint64_t heartbeat_ns;
};

void srv_monitor_add(srv_req *r)
{
    struct srv_monitor *m = r->s->monitor;
    struct epoll_event ev;

    if (!m || r->fd < 0)
        return;
    pthread_mutex_lock(&m->lock);
    if (!r->monitored) {
        r->mon_serial = ++m->serial;
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLRDHUP;
        ev.data.u64 = r->mon_serial;
        if (epoll_ctl(m->ep, EPOLL_CTL_ADD, r->fd, &ev) == 0 || errno == EEXIST) {
            r->monitored = true;
            r->mon_prev = NULL;
            r->mon_next = m->head;
            if (m->head)
                m->head->mon_prev = r;
            m->head = r;
        }
    }
    pthread_mutex_unlock(&m->lock);
}

/* Under the lock. */
static void unlink_req(struct srv_monitor *m, srv_req *r, bool ctl)
{
    if (!r->monitored)
        return;
    if (ctl)
        epoll_ctl(m->ep, EPOLL_CTL_DEL, r->fd, NULL);
    if (r->mon_prev)
        r->mon_prev->mon_next = r->mon_next;
    else
        m->head = r->mon_next;
    if (r->mon_next)
        r->mon_next->mon_prev = r->mon_prev;
    r->mon_prev = r->mon_next = NULL;
    r->monitored = false;
}

void srv_monitor_del(srv_req *r)
{
    struct srv_monitor *m = r->s->monitor;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    unlink_req(m, r, true);
    pthread_mutex_unlock(&m->lock);
}

void srv_conn_started(srv *s, int fd, void **ctx)
{
    struct srv_monitor *m = s->monitor;
    struct srv_conn *c;

    *ctx = NULL;
    if (!m || fd < 0 || !(c = calloc(1, sizeof *c)))
        return;
    c->fd = fd;
    c->deadline = srv_now_ns() + m->request_timeout_ns;
    pthread_mutex_lock(&m->lock);
    c->next = m->conns;
    if (m->conns)
        m->conns->prev = c;
    m->conns = c;
    pthread_mutex_unlock(&m->lock);
    *ctx = c;
}

/* Under the lock. */
static void unlink_conn(struct srv_monitor *m, struct srv_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        m->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

void srv_conn_closed(srv *s, void **ctx)
{
    struct srv_monitor *m = s->monitor;
    struct srv_conn *c = *ctx;

    if (!m || !c)
        return;
    pthread_mutex_lock(&m->lock);
    unlink_conn(m, c);
    pthread_mutex_unlock(&m->lock);
    free(c);
    *ctx = NULL;
}

void srv_conn_request(srv *s, void *ctx, bool begins)
{
    struct srv_monitor *m = s->monitor;
    struct srv_conn *c = ctx;

    if (!m || !c)
        return;
    pthread_mutex_lock(&m->lock);
    c->in_request = begins;
    if (!begins)
        c->deadline = srv_now_ns() + m->request_timeout_ns;
    pthread_mutex_unlock(&m->lock);
}

/* Under the lock: cut off connections past their deadline. */
static void reap_slow(struct srv_monitor *m, uint64_t now)
{
    for (struct srv_conn *c = m->conns; c; c = c->next) {
        if (c->in_request || c->deadline > now || c->fd < 0)
            continue;
        srv_log(NULL, "a client took longer than request_timeout to send its request's "
                "headers: closing its connection");
        shutdown(c->fd, SHUT_RDWR);
        c->fd = -1;   /* shut down once; libmicrohttpd closes it */
    }
}

static void *watch(void *arg)
{
    srv *s = arg;
    struct srv_monitor *m = s->monitor;
    struct epoll_event evs[64];
    int tmo = (int)(m->heartbeat_ns / 2000000u);

    /* Wake at least once a second for the slow clients. */
    if (tmo > 1000)
        tmo = 1000;
    if (tmo < 100)
        tmo = 100;
    while (!atomic_load(&m->stop)) {
        int n = epoll_wait(m->ep, evs, 64, tmo);
        uint64_t now = srv_now_ns();

        if (n < 0 && errno != EINTR)
            break;
        pthread_mutex_lock(&m->lock);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == 0)
                continue;   /* the wake-up eventfd */
            for (srv_req *r = m->head; r; r = r->mon_next) {
                if (r->mon_serial != evs[i].data.u64)
                    continue;
                unlink_req(m, r, true);
                srv_log(r, "the client closed its connection: cancelling");
                srv_req_abandon(r);
                break;
            }
        }
        reap_slow(m, now);
        /* Heartbeats are written outside the lock: a write may resume a
         * connection, which takes libmicrohttpd's own lock. */
        srv_stream *beat[64];
        size_t nb = 0;
        for (srv_req *r = m->head; r && nb < 64; r = r->mon_next)
            if (r->stream && srv_sse_idle_ns(r->stream, now) >= m->heartbeat_ns)
                beat[nb++] = srv_stream_ref(r->stream);
        pthread_mutex_unlock(&m->lock);
        for (size_t i = 0; i < nb; i++) {
            srv_sse_heartbeat(beat[i]);
            srv_stream_unref(beat[i]);
        }
    }
    return NULL;
}

int srv_monitor_start(srv *s)
{
    struct srv_monitor *m = calloc(1, sizeof *m);
    struct epoll_event ev;
    int e;

    if (!m)
        return -1;
    s->monitor = m;
    pthread_mutex_init(&m->lock, NULL);
    m->heartbeat_ns = s->conf.heartbeat_ns;
    m->request_timeout_ns = s->conf.request_timeout_ns;
    m->ep = epoll_create1(EPOLL_CLOEXEC);
    m->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m->ep < 0 || m->wake < 0) {
        srv_log(NULL, "cannot start the connection monitor: %s", strerror(errno));
        return -1;
    }
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = 0;
    epoll_ctl(m->ep, EPOLL_CTL_ADD, m->wake, &ev);
    if ((e = pthread_create(&m->thread, NULL, watch, s)) != 0) {
        srv_log(NULL, "cannot start the connection monitor: %s", strerror(e));
        return -1;
    }
    m->started = true;
    return 0;
}

void srv_monitor_stop(srv *s)
{
    struct srv_monitor *m = s->monitor;
    uint64_t one = 1;

    if (!m)
        return;
    atomic_store(&m->stop, true);
    if (m->started) {
        if (write(m->wake, &one, sizeof one) < 0) {
            /* the loop still ends at its next timeout */
        }
        pthread_join(m->thread, NULL);
    }
    if (m->ep >= 0)
        close(m->ep);
    if (m->wake >= 0)
        close(m->wake);
    while (m->conns) {
        struct srv_conn *c = m->conns;
        m->conns = c->next;
        free(c);
    }
    pthread_mutex_destroy(&m->lock);
    free(m);
    s->monitor = NULL;
}
