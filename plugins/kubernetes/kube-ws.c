/* plugins/kubernetes/kube-ws.c - one pods/exec WebSocket (libwebsockets)
 *
 * The request offers v5.channel.k8s.io then v4.channel.k8s.io
 * (Sec-WebSocket-Protocol) unless one is forced; the server's choice is
 * read from its answer.  Every binary message is a channel byte and a
 * payload: stdin (0) goes out in messages of at most 32 KiB, then, in v5,
 * the CLOSE message 255 0 that ends the command's stdin; stdout (1),
 * stderr (2) and the status (3) come in and go to the caller's callback,
 * piece by piece as libwebsockets delivers them.  A refused upgrade gives
 * its HTTP status (and Retry-After) to the caller.
 *
 * A streamed stdin (the caller's stdin_fd) follows the request's own
 * bytes: one chunk is read when the socket can take a message and poll()
 * says the descriptor is readable (it may be a blocking one), so nothing
 * more is read while the last chunk has not gone out (a slow reader in the
 * pod fills its pipe, the server stops reading, the socket stops being
 * writable); its end of file sends CLOSE.  Only v5 has CLOSE: with
 * stdin_fd the session refuses any other protocol the server chooses
 * before sending a byte.  When nothing is readable the descriptor is
 * looked at again every STDIN_POLL_US: libwebsockets can adopt a foreign
 * descriptor into its loop, but it then makes it non-blocking (the open
 * file description the caller shares) and closes it, which a descriptor
 * lent to us must not suffer.
 *
 * Each exec has a libwebsockets context of its own, serviced by the
 * calling thread until the socket closes, the caller stops it or the
 * deadline passes (a sorted-usec timer wakes the loop) or the caller's
 * cancel descriptor becomes readable (looked at every CANCEL_POLL_US: the
 * loop has no way to wait on a foreign descriptor); contexts share the
 * provider's OpenSSL SSL_CTX (the kubeconfig's CA and client certificate).
 * libwebsockets sets SIGPIPE to SIG_IGN when a context is made; the
 * disposition the process had is put back at once, and SIGPIPE is blocked
 * in the servicing thread (and a pending one consumed), so that a peer
 * that hangs up mid-write cannot kill the embedding program.  Its log is
 * silenced: errors come back through the host.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "kube-int.h"

#define STDIN_CHUNK (32u * 1024)
#define CANCEL_POLL_US (50 * LWS_US_PER_MS)
#define STDIN_POLL_US (10 * LWS_US_PER_MS)
#define STDIN_DEFER_US LWS_US_PER_MS

struct sess {
    struct kube_prov *p;
    const struct kube_ws_req *rq;
    struct kube_ws_res *res;
    const char *auth;            /* "Bearer ..." (the header's value), or NULL */
    struct lws_context *ctx;
    struct lws *wsi;
    lws_sorted_usec_list_t sul;
    lws_sorted_usec_list_t cancel_sul;
    lws_sorted_usec_list_t in_sul;   /* a look again at an idle stdin_fd */
    size_t in_off;
    bool in_open;                /* stdin_fd not at its end yet */
    bool deferred;               /* the last write waited for the server's news */
    bool close_sent;
    bool done;
    bool we_closed;
    int channel;                 /* of the message being received, -1 between */
    char errtext[160];
    unsigned char *out;          /* LWS_PRE + one message */
};

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* libwebsockets 4.1 makes a context's global TLS init take new SSL
 * ex_data indices into process-wide variables, and its certificate check
 * finds the connection by the index of the moment: a context made while
 * another thread's handshake runs fails that handshake ("connect SSL err
 * 1").  Handshakes hold this for reading, a TLS context is made holding
 * it for writing. */
static pthread_rwlock_t tls_index_lock = PTHREAD_RWLOCK_INITIALIZER;

static void quiet_log(void)
{
    lws_set_log_level(0, NULL);
}

/* The loop has no event for stdin_fd: see whether it is readable now. */
static void on_stdin_check(lws_sorted_usec_list_t *sul)
{
    struct sess *s = lws_container_of(sul, struct sess, in_sul);
    if (s->wsi && !s->done)
        lws_callback_on_writable(s->wsi);
}

/* Whether what the server sent waits on the socket: then the loop reads
 * it before more stdin is written (a look again in STDIN_DEFER_US).  A
 * server that saw the command end sends its last output and status and
 * closes with our stdin unread; the reset that follows fails the next
 * write, and after a failed write libwebsockets drops what was still to
 * be read: the command's fate would be lost.  Also for the request's own
 * bytes (a command may end before it read them). */
static bool server_first(struct sess *s)
{
    struct pollfd pf = {.fd = lws_get_socket_fd(s->wsi), .events = POLLIN};
    /* Once per write: output that never pauses cannot starve stdin. */
    if (s->deferred || pf.fd < 0 || poll(&pf, 1, 0) <= 0) {
        s->deferred = false;
        return false;
    }
    s->deferred = true;
    lws_sul_schedule(s->ctx, 0, &s->in_sul, on_stdin_check, STDIN_DEFER_US);
    return true;
}

/* The socket can take a message: one chunk of stdin_fd when it is
 * readable, else a look again later.  0 sent or waiting, -1 the socket
 * failed, 1 stdin_fd ended (end of file, or an error reading it). */
static int send_streamed(struct sess *s)
{
    unsigned char *buf = s->out + LWS_PRE;
    struct pollfd pf = {.fd = s->rq->stdin_fd, .events = POLLIN};
    ssize_t n = -1;
    int pr;
    while ((pr = poll(&pf, 1, 0)) < 0 && errno == EINTR)
        ;
    if (pr > 0)
        while ((n = read(s->rq->stdin_fd, buf + 1, STDIN_CHUNK)) < 0 && errno == EINTR)
            ;
    if (pr == 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) {
        lws_sul_schedule(s->ctx, 0, &s->in_sul, on_stdin_check, STDIN_POLL_US);
        return 0;
    }
    if (n <= 0) {
        if (n < 0)
            s->p->host->log(s->p->h, SBX_LOG_WARNING, "exec: reading the streamed stdin "
                            "failed (%s): the command's stdin is ended", strerror(errno));
        s->in_open = false;
        return 1;
    }
    buf[0] = 0;
    if (lws_write(s->wsi, buf, (size_t)n + 1, LWS_WRITE_BINARY) < (int)n + 1)
        return -1;
    lws_callback_on_writable(s->wsi);
    return 0;
}

static int send_stdin(struct sess *s)
{
    const struct kube_ws_req *rq = s->rq;
    unsigned char *buf = s->out + LWS_PRE;
    if (server_first(s))
        return 0;
    if (s->in_off < rq->stdin_len) {
        size_t n = rq->stdin_len - s->in_off;
        if (n > STDIN_CHUNK)
            n = STDIN_CHUNK;
        buf[0] = 0;
        memcpy(buf + 1, rq->stdin_data + s->in_off, n);
        if (lws_write(s->wsi, buf, n + 1, LWS_WRITE_BINARY) < (int)(n + 1))
            return -1;
        s->in_off += n;
        lws_callback_on_writable(s->wsi);
        return 0;
    }
    if (s->in_open) {
        int rc = send_streamed(s);
        if (rc <= 0)
            return rc;
    }
    if ((rq->close_stdin || rq->stdin_fd >= 0) && s->res->version == 5 && !s->close_sent) {
        buf[0] = 255;
        buf[1] = 0;
        if (lws_write(s->wsi, buf, 2, LWS_WRITE_BINARY) < 2)
            return -1;
        s->close_sent = true;
    }
    return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    struct sess *s = lws_get_opaque_user_data(wsi);
    (void)user;
    if (!s)
        return 0;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
        unsigned char **pp = in, *end = *pp + len;
        if (s->auth && lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
                                                    (const unsigned char *)s->auth,
                                                    (int)strlen(s->auth), pp, end))
            return -1;
        break;
    }
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH: {
        char proto[64] = "";
        lws_hdr_copy(wsi, proto, sizeof proto, WSI_TOKEN_PROTOCOL);
        s->res->version = !strcmp(proto, "v5.channel.k8s.io") ? 5
                          : !strcmp(proto, "v4.channel.k8s.io") ? 4 : 1;
        if (s->rq->stdin_fd >= 0 && s->res->version != 5) {
            s->res->no_stdin_close = true;
            return -1;     /* nothing sent: the bootstrap reads no program */
        }
        break;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        s->res->opened = true;
        if (s->rq->stdin_len || s->rq->close_stdin || s->in_open)
            lws_callback_on_writable(wsi);
        break;
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (s->we_closed)
            return -1;
        return send_stdin(s);
    case LWS_CALLBACK_CLIENT_RECEIVE: {
        const unsigned char *b = in;
        if (lws_is_first_fragment(wsi)) {
            if (len == 0) {
                s->channel = -1;
                break;
            }
            s->channel = b[0];
            b++;
            len--;
        }
        if (s->channel >= 0 && s->rq->on_data(s->rq->ud, s->channel, b, len)) {
            s->res->stopped = true;
            s->we_closed = true;
            lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
            return -1;
        }
        if (lws_is_final_fragment(wsi))
            s->channel = -1;
        break;
    }
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: {
        const unsigned char *b = in;
        s->res->closed = true;
        s->res->close_code = len >= 2 ? (b[0] << 8 | b[1]) : 1005;
        break;
    }
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        s->res->http_status = (long)lws_http_client_http_response(wsi);
        {
            char ra[32] = "";
            if (lws_hdr_copy(wsi, ra, sizeof ra, WSI_TOKEN_HTTP_RETRY_AFTER) > 0) {
                char *end;
                long v = strtol(ra, &end, 10);
                if (end != ra && v >= 0)
                    s->res->retry_after_ms = (v > 86400 ? 86400 : v) * 1000;
            }
        }
        snprintf(s->errtext, sizeof s->errtext, "%s", in ? (const char *)in : "connection failed");
        s->done = true;
        s->wsi = NULL;
        break;
    case LWS_CALLBACK_CLIENT_CLOSED:
        if (!s->res->closed && !s->we_closed && s->res->opened)
            s->res->dropped = true;
        s->done = true;
        s->wsi = NULL;
        break;
    case LWS_CALLBACK_WSI_DESTROY:
        if (s->wsi == wsi) {
            if (s->res->opened && !s->res->closed && !s->we_closed)
                s->res->dropped = true;
            s->done = true;
            s->wsi = NULL;
        }
        break;
    default:
        break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    {"v5.channel.k8s.io", callback, 0, 65536, 0, NULL, 0},
    {"v4.channel.k8s.io", callback, 0, 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void on_deadline(lws_sorted_usec_list_t *sul)
{
    struct sess *s = lws_container_of(sul, struct sess, sul);
    s->res->timed_out = true;
    s->we_closed = true;
    if (s->wsi)
        lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    s->done = true;
}

bool kube_ws_cancelled(int cancel_fd)
{
    struct pollfd pf = {.fd = cancel_fd, .events = POLLIN};
    return cancel_fd >= 0 && poll(&pf, 1, 0) > 0;
}

/* Ends the session as the deadline does, for the caller's cancel. */
static void on_cancel_check(lws_sorted_usec_list_t *sul)
{
    struct sess *s = lws_container_of(sul, struct sess, cancel_sul);
    if (!kube_ws_cancelled(s->rq->cancel_fd)) {
        lws_sul_schedule(s->ctx, 0, &s->cancel_sul, on_cancel_check, CANCEL_POLL_US);
        return;
    }
    s->res->cancelled = true;
    s->we_closed = true;
    if (s->wsi)
        lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
    s->done = true;
}

int kube_ws_run(struct kube_prov *p, const struct kube_ws_req *rq, struct kube_ws_res *res)
{
    memset(res, 0, sizeof *res);
    res->retry_after_ms = -1;
    pthread_once(&log_once, quiet_log);
    char *line = NULL;
    size_t llen = 0;
    int rc = kube_auth_header(p, &line, &llen);
    if (rc)
        return rc;
    char *path = NULL;
    if (asprintf(&path, "%s%s", p->conn.path_prefix, rq->path) < 0) {
        kube_auth_drop(line, llen);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    bool shaking = false;   /* holding tls_index_lock for reading */
    struct sess s = {.p = p, .rq = rq, .res = res, .channel = -1, .in_open = rq->stdin_fd >= 0,
                     .auth = line ? line + strlen("Authorization: ") : NULL};
    s.out = malloc(LWS_PRE + STDIN_CHUNK + 1);
    if (!s.out) {
        free(path);
        kube_auth_drop(line, llen);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    /* SIGPIPE stays as the embedding program had it; this thread blocks it. */
    sigset_t pipe_set, old_mask;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    struct sigaction old_pipe;
    sigaction(SIGPIPE, NULL, &old_pipe);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.gid = -1;
    info.uid = -1;
    info.timeout_secs = (unsigned)((p->connect_ms + 999) / 1000);
    /* The request line carries the command (and the wrapper): room for it. */
    info.max_http_header_data = KUBE_MAX_REQUEST_LINE;
    info.pt_serv_buf_size = 2 * KUBE_MAX_REQUEST_LINE;   /* where the handshake is written */
    if (p->conn.tls) {
        info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.provided_client_ssl_ctx = p->ssl_ctx;
    }
    if (p->conn.tls)
        pthread_rwlock_wrlock(&tls_index_lock);
    s.ctx = lws_create_context(&info);
    if (p->conn.tls)
        pthread_rwlock_unlock(&tls_index_lock);
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (!s.ctx) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "exec: cannot make a WebSocket context");
        goto out;
    }
    kube_rate_wait(p);
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = s.ctx;
    ci.address = p->conn.host;
    ci.port = p->conn.port;
    ci.path = path;
    ci.host = p->conn.host;
    ci.origin = p->conn.host;
    ci.ssl_connection = p->conn.tls ? LCCSCF_USE_SSL : 0;
    ci.protocol = rq->version == 4 ? "v4.channel.k8s.io"
                  : rq->version == 5 ? "v5.channel.k8s.io"
                                     : "v5.channel.k8s.io,v4.channel.k8s.io";
    ci.local_protocol_name = rq->version == 4 ? "v4.channel.k8s.io" : "v5.channel.k8s.io";
    if (p->conn.tls) {
        pthread_rwlock_rdlock(&tls_index_lock);
        shaking = true;
    }
    ci.opaque_user_data = &s;
    ci.pwsi = &s.wsi;
    /* SSL_get_error() answers SSL_ERROR_SSL whenever this thread's error
     * queue holds anything: an error some other code in the process left
     * there would fail every handshake this thread makes. */
    ERR_clear_error();
    if (!lws_client_connect_via_info(&ci) && !s.done) {
        rc = p->host->set_error(p->h, SBX_E_NETWORK, "exec: cannot connect to %s",
                                p->conn.server);
        goto out;
    }
    if (rq->deadline_ns) {
        uint64_t now = kube_now_ns();
        lws_usec_t us = rq->deadline_ns > now ? (lws_usec_t)((rq->deadline_ns - now) / 1000) : 1;
        lws_sul_schedule(s.ctx, 0, &s.sul, on_deadline, us);
    }
    if (rq->cancel_fd >= 0)
        lws_sul_schedule(s.ctx, 0, &s.cancel_sul, on_cancel_check, CANCEL_POLL_US);
    while (!s.done) {
        if (lws_service(s.ctx, 0) < 0)
            break;
        if (shaking && res->opened) {
            pthread_rwlock_unlock(&tls_index_lock);
            shaking = false;
        }
    }
    if (!res->opened) {
        if (res->no_stdin_close)
            rc = SBX_E_NOTSUP;    /* the caller explains */
        else if (res->timed_out)
            rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "exec: no WebSocket from %s in time",
                                    p->conn.server);
        else if (res->http_status >= 300)
            rc = SBX_E_BACKEND;   /* the caller explains the refusal */
        else
            rc = p->host->set_error(p->h, SBX_E_NETWORK, "exec: WebSocket to %s failed: %s",
                                    p->conn.server, s.errtext[0] ? s.errtext : "closed");
    }
out:
    if (shaking)
        pthread_rwlock_unlock(&tls_index_lock);
    if (s.ctx) {
        lws_sul_cancel(&s.sul);
        lws_sul_cancel(&s.cancel_sul);
        lws_sul_cancel(&s.in_sul);
        lws_context_destroy(s.ctx);
    }
    /* A SIGPIPE raised meanwhile is ours: consume it before unblocking. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
        ;
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    free(s.out);
    free(path);
    kube_auth_drop(line, llen);
    return rc;
}

/* ---- TLS ---- */

static int load_pem_certs(SSL_CTX *ctx, const char *pem, bool store)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    int n = 0;
    if (!bio)
        return -1;
    X509 *x;
    while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
        int ok;
        if (store)
            ok = X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x);
        else if (n == 0)
            ok = SSL_CTX_use_certificate(ctx, x);
        else
            ok = SSL_CTX_add_extra_chain_cert(ctx, x) && (x = NULL, 1);
        X509_free(x);
        if (!ok) {
            BIO_free(bio);
            return -1;
        }
        n++;
    }
    ERR_clear_error();
    BIO_free(bio);
    return n > 0 ? 0 : -1;
}

int kube_ws_tls_init(struct kube_prov *p)
{
    if (!p->conn.tls)
        return SBX_OK;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return p->host->set_error(p->h, SBX_E_NOMEM, "cannot make a TLS context");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    int rc = SBX_OK;
    if (p->conn.ca_pem) {
        if (load_pem_certs(ctx, p->conn.ca_pem, true))
            rc = p->host->set_error(p->h, SBX_E_CONFIG, "%s: the certificate authority data "
                                    "holds no usable certificate", p->conn.origin);
    } else if (p->conn.ca_file) {
        if (SSL_CTX_load_verify_locations(ctx, p->conn.ca_file, NULL) != 1)
            rc = p->host->set_error(p->h, SBX_E_CONFIG, "%s: cannot load the certificate "
                                    "authority %s", p->conn.origin, p->conn.ca_file);
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        rc = p->host->set_error(p->h, SBX_E_CONFIG, "cannot load the system's certificate "
                                "authorities");
    }
    if (!rc && p->conn.cert_pem) {
        BIO *kb = BIO_new_mem_buf(p->conn.key_pem, -1);
        EVP_PKEY *key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
        BIO_free(kb);
        if (load_pem_certs(ctx, p->conn.cert_pem, false) || !key ||
            SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
            rc = p->host->set_error(p->h, SBX_E_CONFIG, "%s: the client certificate and key "
                                    "cannot be used (not PEM, or not a pair)", p->conn.origin);
        EVP_PKEY_free(key);
    }
    ERR_clear_error();
    if (rc) {
        SSL_CTX_free(ctx);
        return rc;
    }
    static const unsigned char alpn[] = "\x08http/1.1";
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1);
    p->ssl_ctx = ctx;
    return SBX_OK;
}

void kube_ws_tls_free(struct kube_prov *p)
{
    SSL_CTX_free(p->ssl_ctx);
    p->ssl_ctx = NULL;
}
