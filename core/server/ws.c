/* core/server/ws.c - a WebSocket session on a worker
 *
 * A WebSocket route is a worker route like any other (admitted, counted,
 * cancelled on shutdown and when the client leaves): its handler checks
 * the handshake, then srv_ws_upgrade() sets a 101 reply, resumes the
 * connection so libmicrohttpd sends it, and waits for libmicrohttpd to
 * hand over the socket.  From then on the handler's thread owns the
 * session: it sends frames (srv_ws_send*, safe from several threads) and
 * one thread receives (srv_ws_recv); srv_ws_end closes the handshake and
 * gives the socket back to libmicrohttpd to close.  Framing is in
 * ws-frame.c (why by hand: see there).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <nettle/sha1.h>
#include <sodium.h>

#include "compat.h"
#include "server-int.h"
#include "ws.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
/* A peer that takes no bytes for this long is gone. */
#define WS_SEND_TIMEOUT_MS 30000
/* The largest message taken from a client. */
#define WS_MAX_MESSAGE (16u << 20)

struct srv_ws {
    srv_req *r;
    pthread_mutex_t lock;     /* the hand-over from libmicrohttpd */
    pthread_cond_t cond;
    bool upgraded;
    int sock;
    struct MHD_UpgradeResponseHandle *urh;
    pthread_mutex_t wlock;    /* one frame at a time */
    bool broken;              /* a send failed: the peer is gone */
    atomic_bool close_sent, close_got;
    srv_ws_in in;
    /* the receiving thread of srv_ws_reader_start */
    pthread_t reader;
    bool reader_started;
    atomic_bool reader_stop;
    srv_ws_message_cb on_message;
    void *ud;
};

/* A comma-separated header value holds @token (case-insensitive). */
static bool has_token(const char *v, const char *token)
{
    size_t n = strlen(token);

    while (v && *v) {
        v += strspn(v, " \t,");
        size_t len = strcspn(v, ",");
        size_t end = len;
        while (end && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (end == n && strncasecmp(v, token, n) == 0)
            return true;
        v += len;
    }
    return false;
}

static void on_upgrade(void *cls, struct MHD_Connection *conn, void *con_cls,
                       const char *extra_in, size_t extra_len, MHD_socket sock,
                       struct MHD_UpgradeResponseHandle *urh)
{
    srv_ws *ws = cls;

    (void)conn;
    (void)con_cls;
    pthread_mutex_lock(&ws->lock);
    ws->sock = sock;
    ws->urh = urh;
    /* Bytes the client sent right after its request are its first frames. */
    if (extra_len && srv_ws_in_add(&ws->in, extra_in, extra_len) != 0)
        ws->broken = true;
    ws->upgraded = true;
    pthread_cond_signal(&ws->cond);
    pthread_mutex_unlock(&ws->lock);
}

static void ws_free(srv_ws *ws)
{
    srv_ws_in_free(&ws->in);
    pthread_mutex_destroy(&ws->lock);
    pthread_cond_destroy(&ws->cond);
    pthread_mutex_destroy(&ws->wlock);
    free(ws);
}

srv_ws *srv_ws_upgrade(srv_req *r, srv_ws_refuse refuse)
{
    const char *up = srv_req_header(r, "Upgrade"), *co = srv_req_header(r, "Connection");
    const char *ver = srv_req_header(r, "Sec-WebSocket-Version");
    const char *key = srv_req_header(r, "Sec-WebSocket-Key");
    unsigned char raw[32], digest[SHA1_DIGEST_SIZE];
    char accept[sodium_base64_ENCODED_LEN(SHA1_DIGEST_SIZE, sodium_base64_VARIANT_ORIGINAL)];
    size_t raw_len = 0;
    struct sha1_ctx sha;
    struct MHD_Response *resp;
    struct timespec until;
    srv_ws *ws;

    if (!has_token(up, "websocket") || !has_token(co, "upgrade")) {
        refuse(r, 400, "this route speaks WebSocket: send a GET with Upgrade: websocket and "
               "Connection: Upgrade");
        return NULL;
    }
    if (!ver || strcmp(ver, "13") != 0) {
        refuse(r, 426, "Sec-WebSocket-Version must be 13");
        srv_reply_header(r, "Sec-WebSocket-Version", "13");
        return NULL;
    }
    if (!key || sodium_base642bin(raw, sizeof raw, key, strlen(key), NULL, &raw_len, NULL,
                                  sodium_base64_VARIANT_ORIGINAL) != 0 || raw_len != 16) {
        refuse(r, 400, "Sec-WebSocket-Key must be 16 bytes in base64");
        return NULL;
    }
    sha1_init(&sha);
    sha1_update(&sha, strlen(key), (const uint8_t *)key);
    sha1_update(&sha, sizeof WS_GUID - 1, (const uint8_t *)WS_GUID);
    sha1_digest(&sha, sizeof digest, digest);
    sodium_bin2base64(accept, sizeof accept, digest, sizeof digest,
                      sodium_base64_VARIANT_ORIGINAL);

    if (!(ws = calloc(1, sizeof *ws))) {
        refuse(r, 500, "out of memory");
        return NULL;
    }
    ws->r = r;
    ws->sock = -1;
    ws->in.max = WS_MAX_MESSAGE;
    pthread_mutex_init(&ws->lock, NULL);
    pthread_cond_init(&ws->cond, NULL);
    pthread_mutex_init(&ws->wlock, NULL);
    if (!(resp = MHD_create_response_for_upgrade(on_upgrade, ws))) {
        ws_free(ws);
        refuse(r, 500, "out of memory");
        return NULL;
    }
    MHD_add_response_header(resp, "Upgrade", "websocket");
    MHD_add_response_header(resp, "Sec-WebSocket-Accept", accept);
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->status = 101;
    /* libmicrohttpd has the socket from now on; then we do. */
    srv_monitor_del(r);
    r->upgraded = true;
    srv_http_resume(r);

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&ws->lock);
    while (!ws->upgraded && !srv_req_gone(r)) {
        struct timespec step;
        clock_gettime(CLOCK_REALTIME, &step);
        if (step.tv_sec >= until.tv_sec)
            break;
        step.tv_nsec += 100000000;
        if (step.tv_nsec >= 1000000000) {
            step.tv_sec++;
            step.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&ws->cond, &ws->lock, &step);
    }
    pthread_mutex_unlock(&ws->lock);
    if (!ws->upgraded) {
        /* The 101 never went out (the client left): libmicrohttpd closes
         * the connection; the handler is called no more, so the upgrade
         * callback cannot run any more either. */
        srv_log(r, "WebSocket: the upgrade did not happen");
        ws_free(ws);
        return NULL;
    }
    return ws;
}

/* Write all of @iov, waiting (bounded) while the socket is full. */
static int write_all(srv_ws *ws, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(ws->sock, iov, n);
        if (w < 0) {
            struct pollfd pf = { ws->sock, POLLOUT, 0 };
            if (errno == EINTR)
                continue;
            if ((errno != EAGAIN && errno != EWOULDBLOCK) ||
                poll(&pf, 1, WS_SEND_TIMEOUT_MS) <= 0 || (pf.revents & (POLLERR | POLLHUP)))
                return -1;
            continue;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

int srv_ws_send(srv_ws *ws, int opcode, const void *data, size_t len)
{
    unsigned char hdr[10];
    struct iovec iov[2];
    int rc;

    iov[0] = (struct iovec){ hdr, srv_ws_header(hdr, opcode, len) };
    iov[1] = (struct iovec){ (void *)data, len };
    pthread_mutex_lock(&ws->wlock);
    if (ws->broken || atomic_load(&ws->close_sent)) {
        pthread_mutex_unlock(&ws->wlock);
        return -1;
    }
    if (opcode == SRV_WS_CLOSE)
        atomic_store(&ws->close_sent, true);
    rc = write_all(ws, iov, len ? 2 : 1);
    if (rc != 0)
        ws->broken = true;
    pthread_mutex_unlock(&ws->wlock);
    return rc;
}

int srv_ws_send_json(srv_ws *ws, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    int rc = text ? srv_ws_send(ws, SRV_WS_TEXT, text, strlen(text)) : -1;

    free(text);
    json_decref(j);
    return rc;
}

int srv_ws_send_close(srv_ws *ws, uint16_t code, const char *reason)
{
    unsigned char payload[125];
    size_t n = reason ? strlen(reason) : 0;

    if (n > sizeof payload - 2)
        n = sizeof payload - 2;
    payload[0] = (unsigned char)(code >> 8);
    payload[1] = (unsigned char)code;
    if (n)
        memcpy(payload + 2, reason, n);
    return srv_ws_send(ws, SRV_WS_CLOSE, payload, n + 2);
}

bool srv_ws_closed(const srv_ws *ws)
{
    return atomic_load(&ws->close_got);
}

int srv_ws_recv(srv_ws *ws, int timeout_ms, int *opcode, const unsigned char **data,
                size_t *len)
{
    struct timespec t0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        uint16_t code = 0;
        const char *why = NULL;
        int rc = srv_ws_next(&ws->in, opcode, data, len, &code, &why);

        if (rc < 0) {
            srv_log(ws->r, "WebSocket: %s: closing with %u", why, code);
            srv_ws_send_close(ws, code, why);
            return SRV_WS_ERROR;
        }
        if (rc > 0) {
            if (*opcode == SRV_WS_PING) {
                srv_ws_send(ws, SRV_WS_PONG, *data, *len);
                continue;
            }
            if (*opcode == SRV_WS_PONG)
                continue;
            if (*opcode == SRV_WS_CLOSE) {
                atomic_store(&ws->close_got, true);
                /* Echo the code (RFC 6455 5.5.1), unless we closed first. */
                if (!atomic_load(&ws->close_sent))
                    srv_ws_send(ws, SRV_WS_CLOSE, *data, *len >= 2 ? 2 : 0);
                return SRV_WS_CLOSED;
            }
            return SRV_WS_MESSAGE;
        }
        {
            struct timespec now;
            struct pollfd pf = { ws->sock, POLLIN, 0 };
            unsigned char buf[16384];
            long left;
            ssize_t n;

            clock_gettime(CLOCK_MONOTONIC, &now);
            left = timeout_ms < 0 ? -1 : timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 +
                                                      (now.tv_nsec - t0.tv_nsec) / 1000000);
            if (timeout_ms >= 0 && left <= 0)
                return SRV_WS_TIMEOUT;
            rc = poll(&pf, 1, (int)left);
            if (rc < 0 && errno == EINTR)
                continue;
            if (rc == 0)
                return SRV_WS_TIMEOUT;
            n = rc > 0 ? read(ws->sock, buf, sizeof buf) : -1;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                continue;
            if (n <= 0) {
                atomic_store(&ws->close_got, true);   /* gone without a close frame */
                return SRV_WS_CLOSED;
            }
            if (srv_ws_in_add(&ws->in, buf, (size_t)n) != 0) {
                srv_ws_send_close(ws, SRV_WS_TOO_BIG, "too much data at once");
                return SRV_WS_ERROR;
            }
        }
    }
}

void srv_ws_end(srv_ws *ws, uint16_t code, const char *reason)
{
    int opcode = 0;
    const unsigned char *data;
    size_t len;

    srv_ws_reader_stop(ws);
    if (!atomic_load(&ws->close_sent))
        srv_ws_send_close(ws, code, reason);
    /* Let the client answer the close (briefly), then the socket goes. */
    for (int i = 0; i < 20 && !atomic_load(&ws->close_got) && !ws->broken; i++) {
        int rc = srv_ws_recv(ws, 100, &opcode, &data, &len);
        if (rc == SRV_WS_CLOSED || rc == SRV_WS_ERROR)
            break;
    }
    MHD_upgrade_action(ws->urh, MHD_UPGRADE_ACTION_CLOSE);
    ws_free(ws);
}

/* The receiving thread: messages to the handler until it says stop, the
 * session ends, or the peer closes or breaks the protocol (which cancels
 * what the request runs: the client is gone). */
static void *reader(void *arg)
{
    srv_ws *ws = arg;

    while (!atomic_load(&ws->reader_stop)) {
        int opcode;
        const unsigned char *data;
        size_t len;
        int rc = srv_ws_recv(ws, 200, &opcode, &data, &len);
        json_t *j;

        if (rc == SRV_WS_TIMEOUT)
            continue;
        if (rc != SRV_WS_MESSAGE) {
            sbx_cancel_fire(ws->r->cancel);
            break;
        }
        j = opcode == SRV_WS_TEXT ? json_loadb((const char *)data, len, 0, NULL) : NULL;
        if (ws->on_message(ws->ud, j) != 0) {
            json_decref(j);
            break;
        }
        json_decref(j);
    }
    return NULL;
}

int srv_ws_reader_start(srv_ws *ws, srv_ws_message_cb cb, void *ud)
{
    ws->on_message = cb;
    ws->ud = ud;
    atomic_store(&ws->reader_stop, false);
    ws->reader_started = pthread_create(&ws->reader, NULL, reader, ws) == 0;
    return ws->reader_started ? 0 : -1;
}

void srv_ws_reader_stop(srv_ws *ws)
{
    if (!ws->reader_started)
        return;
    atomic_store(&ws->reader_stop, true);
    pthread_join(ws->reader, NULL);
    ws->reader_started = false;
}

/* ---- stdin of an exec, fed from the session ---------------------------------------- */

int srv_ws_stdin_open(srv_ws_stdin *in)
{
    int p[2];

    in->rfd = in->wfd = -1;
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    /* A megabyte in flight; past it the writer waits for the program. */
    (void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    if (fcntl(p[1], F_SETFL, O_NONBLOCK) != 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    in->rfd = p[0];
    in->wfd = p[1];
    return 0;
}

int srv_ws_stdin_write(srv_ws_stdin *in, const void *data, size_t len)
{
    const char *p = data;

    if (in->wfd < 0) {
        errno = EPIPE;
        return -1;
    }
    while (len) {
        ssize_t n = write(in->wfd, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pf = { in->wfd, POLLOUT, 0 };
            if (poll(&pf, 1, 5000) <= 0) {
                errno = EAGAIN;
                return -1;
            }
            if (pf.revents & (POLLERR | POLLHUP)) {
                errno = EPIPE;
                return -1;
            }
            continue;
        }
        return -1;
    }
    return 0;
}

void srv_ws_stdin_close(srv_ws_stdin *in)
{
    if (in->wfd >= 0)
        close(in->wfd);
    in->wfd = -1;
}

void srv_ws_stdin_free(srv_ws_stdin *in)
{
    srv_ws_stdin_close(in);
    if (in->rfd >= 0)
        close(in->rfd);
    in->rfd = -1;
}
