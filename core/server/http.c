/* core/server/http.c - libmicrohttpd: listen, read requests, route,
 * hand work to the worker pool, send replies
 *
 * libmicrohttpd's own threads read headers and bodies and write replies;
 * a handler that may block runs in the worker pool while its connection
 * is suspended (libmicrohttpd does not watch a suspended connection, so
 * monitor.c does: a client that goes away cancels its request), or, when
 * blocking the thread that read it holds nobody else up, on that thread
 * (see can_run_here).  A request lives in an srv_req with two
 * references: the connection's (dropped when libmicrohttpd completes it)
 * and a worker's.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server.h"
#include "server-int.h"

enum { ST_BODY, ST_QUEUED, ST_REPLY, ST_SENT };

static void *conn_ctx(struct MHD_Connection *conn);

/* ---- the request object ---------------------------------------------------- */

static void req_free(srv_req *r)
{
    for (size_t i = 0; i < r->n_params; i++)
        free(r->params[i]);
    for (size_t i = 0; i < r->n_query; i++)
        free(r->query[i]);
    free(r->query);
    free(r->path);
    free(r->accept);
    free(r->idem_key);
    free(r->err_message);
    free(r->body);
    json_decref(r->json);
    if (r->resp)
        MHD_destroy_response(r->resp);
    if (r->stream)
        srv_stream_unref(r->stream);
    sbx_cancel_free(r->cancel);
    free(r);
}

void srv_req_unref(srv_req *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1)
        req_free(r);
}

const char *srv_req_param(const srv_req *r, const char *name)
{
    size_t n = strlen(name);

    for (size_t i = 0; i < r->n_params; i++) {
        const char *pn = r->param_names[i];
        if (strncmp(pn, name, n) == 0 && (pn[n] == '}' || pn[n] == '*'))
            return r->params[i];
    }
    return NULL;
}

const char *srv_req_query(const srv_req *r, const char *key)
{
    for (size_t i = 0; i < r->n_query; i++)
        if (strcmp(r->query[i], key) == 0)
            return r->query[i] + strlen(r->query[i]) + 1;
    return NULL;
}

size_t srv_req_query_count(const srv_req *r) { return r->n_query; }

void srv_req_query_at(const srv_req *r, size_t i, const char **key, const char **value)
{
    *key = r->query[i];
    *value = r->query[i] + strlen(r->query[i]) + 1;
}

const char *srv_req_header(const srv_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

bool srv_req_wants_sse(const srv_req *r)
{
    return r->accept && strstr(r->accept, "text/event-stream");
}

bool srv_req_wants_html(const srv_req *r)
{
    return r->accept && strstr(r->accept, "text/html");
}

bool srv_req_wants_markdown(const srv_req *r)
{
    return r->accept && strstr(r->accept, "text/markdown");
}

bool srv_req_gone(const srv_req *r)
{
    return atomic_load(&r->gone);
}

json_t *srv_req_json(srv_req *r)
{
    json_error_t e;

    if (r->json)
        return r->json;
    if (r->body_len == 0)
        return r->json = json_object();
    r->json = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &e);
    if (!r->json) {
        srv_error(r, 400, "bad_request", NULL, "the body is not valid JSON: %s (line %d, "
                  "column %d, byte %d)", e.text, e.line, e.column, e.position);
        return NULL;
    }
    if (!json_is_object(r->json)) {
        json_decref(r->json);
        r->json = NULL;
        srv_error(r, 400, "bad_request", NULL, "the body must be a JSON object");
        return NULL;
    }
    return r->json;
}

/* ---- request ids ------------------------------------------------------------ */

static bool rid_ok(const char *v)
{
    size_t n = strlen(v);

    if (n == 0 || n >= SRV_RID_MAX)
        return false;
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.' || *p == ':'))
            return false;
    return true;
}

static void make_rid(srv *s, srv_req *r, const char *given)
{
    if (given && rid_ok(given)) {
        snprintf(r->rid, sizeof r->rid, "%s", given);
        return;
    }
    uint64_t n = atomic_fetch_add(&s->next_id, 1);
    snprintf(r->rid, sizeof r->rid, "%08x%08llx", (unsigned)(s->started_ns & 0xffffffffu),
             (unsigned long long)n);
}

/* ---- reading the request ------------------------------------------------------ */

unsigned srv_method_bit(const char *m, size_t len)
{
    static const struct {
        const char *name;
        unsigned bit;
    } map[] = {
        { "GET", SRV_GET }, { "POST", SRV_POST }, { "PUT", SRV_PUT },
        { "DELETE", SRV_DELETE }, { "HEAD", SRV_HEAD },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].name) == len && memcmp(m, map[i].name, len) == 0)
            return map[i].bit;
    return 0;
}

static const char *method_name(unsigned bit)
{
    switch (bit) {
    case SRV_GET: return "GET";
    case SRV_POST: return "POST";
    case SRV_PUT: return "PUT";
    case SRV_DELETE: return "DELETE";
    case SRV_HEAD: return "HEAD";
    default: return "-";
    }
}

static void allow_header(srv_req *r, unsigned allowed)
{
    char buf[64] = "";
    static const char *const names[] = { "GET, HEAD", "POST", "PUT", "DELETE" };

    for (int i = 0; i < 4; i++) {
        if (!(allowed & (1u << i)))
            continue;
        if (buf[0])
            strcat(buf, ", ");
        strcat(buf, names[i]);
    }
    srv_reply_header(r, "Allow", buf);
}

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    srv_req *r = cls;
    size_t kl = strlen(key), vl = value ? strlen(value) : 0;
    char **q, *kv;

    (void)kind;
    if (r->n_query >= 64)
        return MHD_NO;
    if (!(q = realloc(r->query, (r->n_query + 1) * sizeof *q)))
        return MHD_NO;
    r->query = q;
    if (!(kv = malloc(kl + vl + 2)))
        return MHD_NO;
    memcpy(kv, key, kl + 1);
    memcpy(kv + kl + 1, value ? value : "", vl + 1);
    r->query[r->n_query++] = kv;
    return MHD_YES;
}

static char *header_dup(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    return v ? strdup(v) : NULL;
}

/* The first call, headers in hand: route, auth, caps.  Errors found here
 * are answered before the body is read. */
static srv_req *req_new(srv *s, struct MHD_Connection *conn, const char *url, const char *method)
{
    srv_req *r = calloc(1, sizeof *r);
    const union MHD_ConnectionInfo *ci;
    const char *cl;
    unsigned allowed;

    if (!r)
        return NULL;
    r->s = s;
    r->conn = conn;
    r->t0 = srv_now_ns();
    r->token = -1;
    r->fd = -1;
    atomic_init(&r->refs, 1);
    make_rid(s, r, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-ID"));
    r->method = srv_method_bit(method, strlen(method));
    if (!(r->path = strdup(url))) {
        free(r);
        return NULL;
    }
    if ((ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD)))
        r->fd = ci->connect_fd;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, r);
    r->accept = header_dup(conn, "Accept");
    r->idem_key = header_dup(conn, "Idempotency-Key");

    if (!r->method) {
        srv_error(r, 405, "method_not_allowed", NULL, "method %.16s is not served", method);
        return r;
    }
    r->route = srv_router_match(s->router, r->method, r->path, &allowed, r->params,
                                r->param_names, &r->n_params);
    if (!r->route) {
        if (allowed) {
            srv_error(r, 405, "method_not_allowed", NULL, "%s does not take %s", r->path,
                      method);
            allow_header(r, allowed);
        } else {
            srv_error(r, 404, "not_found", NULL, "no route %s", r->path);
        }
        return r;
    }
    if (!(r->route->flags & SRV_R_OPEN) && srv_auth_check(s, r) != 0)
        return r;
    cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (errno || *end || n > s->conf.max_body) {
            srv_error(r, 413, "payload_too_large", NULL, "the body (%s bytes) is larger "
                      "than the server's max_body (%zu bytes)", cl, s->conf.max_body);
            return r;
        }
    }
    return r;
}

static int body_append(srv_req *r, const char *data, size_t len)
{
    srv *s = r->s;

    if (len > s->conf.max_body - r->body_len) {
        srv_error(r, 413, "payload_too_large", NULL, "the body is larger than the "
                  "server's max_body (%zu bytes)", s->conf.max_body);
        return -1;
    }
    if (r->body_len + len + 1 > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 1024;
        while (cap < r->body_len + len + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b) {
            srv_error(r, 500, "nomem", NULL, "out of memory reading the body");
            return -1;
        }
        r->body = b;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    return 0;
}

/* Whether @r's handler may run on this libmicrohttpd thread, blocking
 * it: the thread has no connection but this one (its other clients
 * would wait), another of the threads stays free to accept and serve
 * the rest, and the handler will not stream nor upgrade to a WebSocket
 * (both need this thread while the handler runs).  On true the caller
 * holds one of s->io_running and gives it back. */
static bool can_run_here(srv *s, srv_req *r)
{
    const union MHD_ConnectionInfo *ci;
    const union MHD_DaemonInfo *di;

    if (s->conf.io_threads < 2 || srv_req_wants_sse(r) || srv_req_header(r, "Upgrade"))
        return false;
    /* The daemon of the connection is that of its thread (the pool's
     * worker daemon), read here on that very thread. */
    ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_DAEMON);
    di = ci ? MHD_get_daemon_info(ci->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS) : NULL;
    if (!di || di->num_connections != 1)
        return false;
    if (atomic_fetch_add(&s->io_running, 1) + 1 >= s->conf.io_threads) {
        atomic_fetch_sub(&s->io_running, 1);
        return false;
    }
    return true;
}

/* The body is in: run the handler here, or queue it for a worker. */
static void dispatch(srv_req *r)
{
    srv *s = r->s;

    if (!(r->route->flags & SRV_R_WORKER)) {
        r->route->handler(r);
        if (!r->resp)
            srv_error(r, 500, "internal", NULL, "the handler of %s gave no reply",
                      r->route->pattern);
        return;
    }
    if (atomic_load(&s->stopping)) {
        srv_error(r, 503, "shutting_down", NULL, "the server is shutting down");
        return;
    }
    if (!(r->cancel = sbx_cancel_new())) {
        srv_error(r, 500, "io", NULL, "cannot make a cancellation handle");
        return;
    }
    if (srv_pool_admit(s, r) != 0)
        return;   /* replied 429 */
    if (srv_idem_begin(s, r) != 0) {
        srv_pool_unadmit(s, r);
        return;   /* replied: a stored reply, 409 or 422 */
    }
    if (can_run_here(s, r)) {
        bool ran;
        r->here = true;
        ran = srv_pool_run_here(s, r);
        atomic_fetch_sub(&s->io_running, 1);
        if (ran)
            return;   /* answered: the caller sends it */
        r->here = false;
    }
    r->state = ST_QUEUED;
    atomic_fetch_add(&r->refs, 1);
    MHD_suspend_connection(r->conn);
    srv_monitor_add(r);
    srv_pool_submit(s, r);
}

void srv_req_cancel(srv_req *r)
{
    sbx_cancel_fire(r->cancel);
}

void srv_req_abandon(srv_req *r)
{
    srv_stream *st = r->stream;

    atomic_store(&r->gone, true);
    srv_req_cancel(r);
    if (st)
        srv_stream_close(st);
}

void srv_http_resume(srv_req *r)
{
    if (r->state == ST_QUEUED)
        r->state = ST_REPLY;
    MHD_resume_connection(r->conn);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **con_cls)
{
    srv *s = cls;
    srv_req *r = *con_cls;

    (void)version;
    if (!r) {
        if (!(r = req_new(s, conn, url, method)))
            return MHD_NO;
        *con_cls = r;
        atomic_fetch_add(&s->open_requests, 1);
        srv_conn_request(s, conn_ctx(conn), true);
        if (r->resp)
            r->state = ST_REPLY;   /* answer before reading the body */
        else
            return MHD_YES;
    }
    if (r->state == ST_BODY) {
        if (*upload_size) {
            /* libmicrohttpd takes a reply only before the body or after
             * it: an error found meanwhile (413) waits for the end, what
             * arrives after it is dropped.  A body trickling in past
             * request_timeout is not waited for: the connection closes. */
            if (srv_now_ns() - r->t0 > s->conf.request_timeout_ns) {
                r->status = 408;
                r->err_code = "request_timeout";
                srv_log(r, "the body took longer than request_timeout to arrive: closing "
                        "the connection");
                return MHD_NO;
            }
            if (!r->resp)
                body_append(r, upload_data, *upload_size);
            *upload_size = 0;
            return MHD_YES;
        }
        if (!r->resp)
            dispatch(r);
        if (r->state == ST_QUEUED)
            return MHD_YES;
        r->state = ST_REPLY;
    }
    if (r->state == ST_QUEUED) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->state == ST_REPLY) {
        r->state = ST_SENT;
        srv_reply_header(r, "X-Request-ID", r->rid);
        return MHD_queue_response(conn, r->status, r->resp);
    }
    *upload_size = 0;   /* ST_SENT: whatever still arrives is dropped */
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    srv *s = cls;
    srv_req *r = *con_cls;

    if (!r)
        return;
    *con_cls = NULL;
    /* An upgraded connection carries no next request: no deadline. */
    srv_conn_request(s, conn_ctx(conn), r->upgraded);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        srv_req_abandon(r);
    srv_monitor_del(r);
    srv_metrics_request(s, r, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
    srv_log(r, "%s %s %u %.1fms%s", method_name(r->method), r->path, r->status,
            (double)(srv_now_ns() - r->t0) / 1e6,
            toe != MHD_REQUEST_TERMINATED_COMPLETED_OK ? " (connection lost)"
            : atomic_load(&r->gone) ? " (the client left)" : "");
    srv_req_unref(r);
    atomic_fetch_sub(&s->open_requests, 1);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    srv *s = cls;
    const union MHD_ConnectionInfo *ci;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        srv_conn_started(s, ci ? ci->connect_fd : -1, socket_context);
    } else {
        srv_conn_closed(s, socket_context);
    }
}

static void *conn_ctx(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    size_t n;

    (void)cls;
    vsnprintf(buf, sizeof buf, fmt, ap);
    n = strlen(buf);
    while (n && buf[n - 1] == '\n')
        buf[--n] = '\0';
    srv_log(NULL, "libmicrohttpd: %s", buf);
}

/* ---- the listening socket ------------------------------------------------------- */

static int listen_on(srv *s, const char *spec)
{
    char host[256];
    const char *colon, *port;
    struct addrinfo hints = {0}, *ai = NULL;
    int fd = -1, on = 1, e;

    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
            goto bad;
        snprintf(host, sizeof host, "%.*s", (int)(close - spec - 1), spec + 1);
        port = close + 2;
    } else {
        colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host || colon == spec)
            goto bad;
        snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
        port = colon + 1;
    }
    if (!*port || strspn(port, "0123456789") != strlen(port) || atoi(port) > 65535)
        goto bad;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    if ((e = getaddrinfo(host, port, &hints, &ai)) != 0) {
        srv_log(NULL, "invalid listen address '%s': %s (give a numeric address)", spec,
                gai_strerror(e));
        return -2;
    }
    s->loopback = srv_addr_is_loopback(ai->ai_addr);
    if (!s->loopback && !srv_auth_count(s)) {
        /* Refused before anything is bound. */
        srv_log(NULL, "refusing to listen on %s without a token: anyone who can reach it "
                "could run code (give --token-file or [server] tokens, or listen on "
                "127.0.0.1)", spec);
        freeaddrinfo(ai);
        return -2;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        srv_log(NULL, "cannot listen on %s: %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        char ip[INET6_ADDRSTRLEN] = "?";
        int p = 0;
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
            if (ss.ss_family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *)&ss;
                inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
                p = ntohs(in->sin_port);
                snprintf(s->address, sizeof s->address, "%s:%d", ip, p);
            } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
                inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
                p = ntohs(in6->sin6_port);
                snprintf(s->address, sizeof s->address, "[%s]:%d", ip, p);
            }
        }
    }
    return fd;
bad:
    srv_log(NULL, "invalid listen address '%s': expected ADDR:PORT or [ADDR]:PORT", spec);
    return -2;
}

bool srv_addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
            return true;
        return memcmp(in6->sin6_addr.s6_addr, v4mapped, 12) == 0 &&
               in6->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}

int srv_http_listen(srv *s)
{
    int fd = listen_on(s, s->conf.listen);

    s->listen_fd = fd < 0 ? -1 : fd;
    return fd < 0 ? fd : 0;
}

int srv_http_start(srv *s)
{
    /* MHD_ALLOW_UPGRADE: the WebSocket routes (ws.c). */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_UPGRADE |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO | MHD_USE_ERROR_LOG;

    struct MHD_OptionItem more[] = {
        { MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)s->conf.io_threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };

    if (s->conf.io_threads <= 1)
        more[0].option = MHD_OPTION_END;   /* one thread: no pool */
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_CONNECTION_TIMEOUT, s->conf.connection_timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, s->conf.max_connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16 * 1024,
        MHD_OPTION_ARRAY, more,
        MHD_OPTION_END);
    if (!s->daemon) {
        srv_log(NULL, "cannot start the HTTP server on %s", s->address);
        return -1;
    }
    return 0;
}

void srv_http_quiesce(srv *s)
{
    if (s->daemon) {
        MHD_socket fd = MHD_quiesce_daemon(s->daemon);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
        s->listen_fd = -1;
    }
}

bool srv_http_flush(srv *s, uint64_t deadline)
{
    /* A handler being done is not its reply being sent: stopping the
     * daemon then would close the connection on an unanswered client. */
    const struct timespec tick = { 0, 10 * 1000 * 1000 };

    while (atomic_load(&s->open_requests) > 0) {
        if (srv_now_ns() >= deadline)
            return false;
        nanosleep(&tick, NULL);
    }
    return true;
}

void srv_http_stop(srv *s)
{
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    s->listen_fd = -1;
}
