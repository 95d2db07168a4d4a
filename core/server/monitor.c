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
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server.h"
#include "server-int.h"

struct srv_monitor {
    pthread_mutex_t lock;
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

static void *watch(void *arg)
{
    srv *s = arg;
    struct srv_monitor *m = s->monitor;
    struct epoll_event evs[64];
    int tmo = (int)(m->heartbeat_ns / 2000000u);

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
    pthread_mutex_destroy(&m->lock);
    free(m);
    s->monitor = NULL;
}
