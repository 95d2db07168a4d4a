/* core/server/sse.c - server-sent events: output as it is produced
 *
 * A worker writes events into the stream's buffer; libmicrohttpd's
 * thread pulls them through the content reader.  With nothing to send
 * the reader suspends the connection (the only way libmicrohttpd lets a
 * reader wait) and the next write resumes it.  Neither side calls into
 * libmicrohttpd while holding the stream's lock; a write that lands
 * while the reader is suspending is handed over through the SUSPENDING ->
 * WAKE state so the resume always follows the suspend.
 *
 * A client slower than its program fills the buffer; the writer then
 * waits (the program blocks on its pipe) up to the connection timeout,
 * after which the client counts as gone and the run is stopped.
 *
 * A pulled stream (srv_stream_pull: a job's events) has no writer to
 * wait for: when its buffer is sent, the reader asks its fill function
 * for more, and suspends when there is nothing new until a poke.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "server.h"
#include "server-int.h"

#define SSE_BUFFER_MAX (1u << 20)

enum { RD_RUNNING, RD_SUSPENDING, RD_WAKE, RD_SUSPENDED };

struct srv_stream {
    pthread_mutex_t lock;
    pthread_cond_t room;
    atomic_int refs;
    struct MHD_Connection *conn;
    char *buf;
    size_t len, off, cap;
    int rd;                  /* RD_* */
    bool done, closed;
    uint64_t last_ns;        /* last write, for heartbeats */
    uint64_t stall_ns;
    unsigned long long seq;
    unsigned char held[3][4]; /* a UTF-8 sequence cut at a chunk's end, per stream */
    size_t n_held[3];
    /* a stream its reader feeds (srv_stream_pull) */
    srv_stream_fill fill;
    void *fill_ud;
    void (*fill_free)(void *);
    bool poked;              /* fill has something new */
};

srv_stream *srv_stream_ref(srv_stream *st)
{
    atomic_fetch_add(&st->refs, 1);
    return st;
}

void srv_stream_unref(srv_stream *st)
{
    if (!st || atomic_fetch_sub(&st->refs, 1) != 1)
        return;
    if (st->fill_free)
        st->fill_free(st->fill_ud);
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->room);
    free(st->buf);
    free(st);
}

/* ---- the reader (libmicrohttpd's thread) ------------------------------------ */

static ssize_t reader(void *cls, uint64_t pos, char *out, size_t max)
{
    srv_stream *st = cls;
    size_t n;
    bool wake;

    (void)pos;
    pthread_mutex_lock(&st->lock);
again:
    if (st->len > st->off) {
        n = st->len - st->off < max ? st->len - st->off : max;
        memcpy(out, st->buf + st->off, n);
        st->off += n;
        if (st->off == st->len)
            st->off = st->len = 0;
        pthread_cond_broadcast(&st->room);
        pthread_mutex_unlock(&st->lock);
        return (ssize_t)n;
    }
    if (st->done || st->closed) {
        pthread_mutex_unlock(&st->lock);
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if (st->fill && st->poked) {
        int rc;
        st->poked = false;
        pthread_mutex_unlock(&st->lock);
        rc = st->fill(st->fill_ud, st);
        pthread_mutex_lock(&st->lock);
        if (rc == SRV_FILL_MORE)
            st->poked = true;
        else if (rc != SRV_FILL_WAIT)
            st->done = true;
        goto again;
    }
    st->rd = RD_SUSPENDING;
    pthread_mutex_unlock(&st->lock);
    MHD_suspend_connection(st->conn);
    pthread_mutex_lock(&st->lock);
    wake = st->rd == RD_WAKE;
    st->rd = wake ? RD_RUNNING : RD_SUSPENDED;
    pthread_mutex_unlock(&st->lock);
    if (wake)
        MHD_resume_connection(st->conn);
    return 0;
}

static void reader_free(void *cls)
{
    srv_stream *st = cls;

    pthread_mutex_lock(&st->lock);
    st->closed = true;
    pthread_cond_broadcast(&st->room);
    pthread_mutex_unlock(&st->lock);
    srv_stream_unref(st);
}

struct MHD_Response *srv_stream_response(srv_stream *st)
{
    struct MHD_Response *resp;

    atomic_fetch_add(&st->refs, 1);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, reader, st,
                                             reader_free);
    if (!resp) {
        srv_stream_unref(st);
        return NULL;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    return resp;
}

/* ---- the writer (a worker, or the monitor's heartbeats) ----------------------- */

/* Wake a reader that waits for data; call without the lock held. */
static void wake(srv_stream *st, int was)
{
    if (was == RD_SUSPENDED)
        MHD_resume_connection(st->conn);
}

/* Under the lock: what to do after adding data. */
static int after_write(srv_stream *st)
{
    int was = st->rd;

    if (was == RD_SUSPENDED)
        st->rd = RD_RUNNING;
    else if (was == RD_SUSPENDING)
        st->rd = RD_WAKE;
    return was;
}

static int stream_write(srv_stream *st, const char *a, size_t alen, const char *b, size_t blen,
                        const char *c, size_t clen, bool block)
{
    size_t need = alen + blen + clen;
    int was;

    pthread_mutex_lock(&st->lock);
    if (block && st->len - st->off > SSE_BUFFER_MAX) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(st->stall_ns / 1000000000u);
        while (!st->closed && st->len - st->off > SSE_BUFFER_MAX)
            if (pthread_cond_timedwait(&st->room, &st->lock, &until) == ETIMEDOUT)
                break;
        if (st->len - st->off > SSE_BUFFER_MAX)
            st->closed = true;   /* the client stopped reading */
    }
    if (st->closed || st->done) {
        pthread_mutex_unlock(&st->lock);
        return -1;
    }
    if (st->len + need > st->cap) {
        size_t cap = st->cap ? st->cap : 4096;
        while (cap < st->len + need)
            cap *= 2;
        char *nb = realloc(st->buf, cap);
        if (!nb) {
            pthread_mutex_unlock(&st->lock);
            return -1;
        }
        st->buf = nb;
        st->cap = cap;
    }
    memcpy(st->buf + st->len, a, alen);
    memcpy(st->buf + st->len + alen, b, blen);
    memcpy(st->buf + st->len + alen + blen, c, clen);
    st->len += need;
    st->last_ns = srv_now_ns();
    was = after_write(st);
    pthread_mutex_unlock(&st->lock);
    wake(st, was);
    return 0;
}

void srv_stream_close(srv_stream *st)
{
    pthread_mutex_lock(&st->lock);
    st->closed = true;
    pthread_cond_broadcast(&st->room);
    pthread_mutex_unlock(&st->lock);
}

int srv_sse_begin(srv_req *r)
{
    srv_stream *st;

    if (r->here) {
        /* nothing would send the events before the handler returns */
        srv_error(r, 500, "internal", NULL, "a stream was begun by a handler running on "
                  "the connection's thread (it did not ask for text/event-stream)");
        return -1;
    }
    if (!(st = calloc(1, sizeof *st))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->room, NULL);
    atomic_init(&st->refs, 1);
    st->conn = r->conn;
    st->stall_ns = (uint64_t)r->s->conf.connection_timeout_s * 1000000000u;
    st->last_ns = srv_now_ns();
    struct MHD_Response *resp = srv_stream_response(st);
    if (!resp) {
        srv_stream_unref(st);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->status = 200;
    r->stream = st;
    /* The headers go out now; the reader waits for the first event. */
    srv_http_resume(r);
    return 0;
}

srv_stream *srv_stream_pull(srv_req *r, srv_stream_fill fill, void *ud,
                            void (*ud_free)(void *))
{
    srv_stream *st = calloc(1, sizeof *st);
    struct MHD_Response *resp;

    if (!st) {
        ud_free(ud);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->room, NULL);
    atomic_init(&st->refs, 1);
    st->conn = r->conn;
    st->last_ns = srv_now_ns();
    st->fill = fill;
    st->fill_ud = ud;
    st->fill_free = ud_free;
    st->poked = true;
    if (!(resp = srv_stream_response(st))) {
        srv_stream_unref(st);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return NULL;
    }
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->status = 200;
    return st;
}

int srv_stream_put(srv_stream *st, const char *id, const char *name, const char *json_text)
{
    char head[160];
    int n = id ? snprintf(head, sizeof head, "id: %s\nevent: %s\ndata: ", id, name)
               : snprintf(head, sizeof head, "event: %s\ndata: ", name);

    if (n < 0 || (size_t)n >= sizeof head)
        return -1;
    return stream_write(st, head, (size_t)n, json_text, strlen(json_text), "\n\n", 2, false);
}

void srv_stream_poke(srv_stream *st)
{
    int was;

    pthread_mutex_lock(&st->lock);
    st->poked = true;
    was = after_write(st);
    pthread_mutex_unlock(&st->lock);
    wake(st, was);
}

bool srv_stream_closed(srv_stream *st)
{
    bool closed;

    pthread_mutex_lock(&st->lock);
    closed = st->closed || st->done;
    pthread_mutex_unlock(&st->lock);
    return closed;
}

size_t srv_stream_buffered(srv_stream *st)
{
    size_t n;

    pthread_mutex_lock(&st->lock);
    n = st->len - st->off;
    pthread_mutex_unlock(&st->lock);
    return n;
}

int srv_sse_event_text(srv_req *r, const char *name, const char *json_text)
{
    char head[96];
    srv_stream *st = r->stream;
    int n;

    if (!st)
        return -1;
    pthread_mutex_lock(&st->lock);
    unsigned long long id = ++st->seq;
    pthread_mutex_unlock(&st->lock);
    n = snprintf(head, sizeof head, "id: %llu\nevent: %s\ndata: ", id, name);
    return stream_write(st, head, (size_t)n, json_text, strlen(json_text), "\n\n", 2, true);
}

int srv_sse_event(srv_req *r, const char *name, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    int rc;

    json_decref(j);
    if (!text)
        return -1;
    rc = srv_sse_event_text(r, name, text);
    free(text);
    return rc;
}

void srv_sse_heartbeat(srv_stream *st)
{
    stream_write(st, ": ping\n\n", 8, "", 0, "", 0, false);
}

uint64_t srv_sse_idle_ns(srv_stream *st, uint64_t now)
{
    uint64_t last;

    pthread_mutex_lock(&st->lock);
    last = st->last_ns;
    pthread_mutex_unlock(&st->lock);
    return now > last ? now - last : 0;
}

/* ---- output chunks --------------------------------------------------------------- */

/* Length of the valid UTF-8 prefix of @s; *cut is true when what follows
 * it is the start of a sequence the end of @s cut short. */
static size_t utf8_prefix(const unsigned char *s, size_t n, bool *cut)
{
    size_t i = 0;

    *cut = false;
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        unsigned lo = 0x80, hi = 0xbf;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            len = 2;
        else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            if (c == 0xe0)
                lo = 0xa0;
            else if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;
        } else
            return i;
        for (size_t k = 1; k < len; k++) {
            if (i + k == n) {
                *cut = true;
                return i;
            }
            unsigned char d = s[i + k];
            if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf))
                return i;
        }
        i += len;
    }
    return n;
}

static int emit(srv_req *r, int stream, const unsigned char *data, size_t len, bool base64)
{
    json_t *s;

    s = base64 ? srv_b64_json(data, len) : json_stringn((const char *)data, len);
    if (!s)
        return -1;
    return srv_sse_event(r, stream == SBX_STREAM_STDERR ? "stderr" : "stdout",
                         json_pack("{s:o, s:s}", "data", s, "encoding",
                                   base64 ? "base64" : "utf-8"));
}

int srv_sse_output(srv_req *r, int stream, const void *buf, size_t len)
{
    srv_stream *st = r->stream;
    unsigned char *all;
    size_t n, valid;
    bool cut;
    int rc;

    if (!st || stream < 1 || stream > 2)
        return -1;
    n = st->n_held[stream] + len;
    if (!(all = malloc(n ? n : 1)))
        return -1;
    memcpy(all, st->held[stream], st->n_held[stream]);
    memcpy(all + st->n_held[stream], buf, len);
    st->n_held[stream] = 0;
    valid = utf8_prefix(all, n, &cut);
    if (valid == n) {
        rc = emit(r, stream, all, n, false);
    } else if (cut && n - valid < 4) {
        memcpy(st->held[stream], all + valid, n - valid);
        st->n_held[stream] = n - valid;
        rc = valid ? emit(r, stream, all, valid, false) : 0;
    } else {
        rc = emit(r, stream, all, n, true);
    }
    free(all);
    return rc;
}

void srv_sse_end(srv_req *r)
{
    srv_stream *st = r->stream;
    int was;

    if (!st)
        return;
    for (int s = 1; s <= 2; s++)
        if (st->n_held[s]) {
            size_t n = st->n_held[s];
            st->n_held[s] = 0;
            emit(r, s, st->held[s], n, true);
        }
    pthread_mutex_lock(&st->lock);
    st->done = true;
    was = after_write(st);
    pthread_mutex_unlock(&st->lock);
    wake(st, was);
}
