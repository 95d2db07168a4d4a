/* plugins/common/http.c - the HTTP client the network providers share
 *
 * See http.h.  Each request is a fresh easy handle run in a multi handle
 * borrowed from the client's idle stack; the multi keeps the connection
 * cache, so keep-alive survives, and is given back after.  A multi whose
 * transfer failed is dropped, as its connection is in an unknown state.
 *
 * Easy handles are never reused (curl_easy_reset would allow it): libcurl
 * 7.88 (Debian 12) frees memory it reads again when a reused easy handle
 * gets an answer with a folded header line ("HTTP/1.1 200 OK\r\n x: y"),
 * curl issue #11101, which a hostile service could send at will.  Found by
 * tests/fuzz (e2b); tests/fuzz/found.c checks it under the sanitizers.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <polysandbox/common.h>

#include "http.h"

#define PH_IDLE_MAX 8
#define PH_BODY_DEFAULT_MAX (16u * 1024 * 1024)
#define PH_CONNECT_DEFAULT_MS 10000L

struct ph_client {
    char *base;        /* URL prefix, no trailing slash */
    char *unix_path;   /* unix socket, or NULL */
    char *ca_file, *cert_file, *key_file;
    char *ca_pem, *cert_pem, *key_pem;  /* key_pem wiped on free */
    long connect_timeout_ms;
    long timeout_ms;
    int http2;
    struct curl_slist *headers;  /* wiped on free */
    pthread_mutex_t lock;
    CURLM *idle[PH_IDLE_MAX];    /* multis, each with its connections */
    size_t nidle;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void set_err(char err[PH_ERR_MAX], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_err(char err[PH_ERR_MAX], const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(err, PH_ERR_MAX, fmt, ap);
    va_end(ap);
}

static int dup_opt(const char *s, char **out)
{
    *out = NULL;
    if (!s || !*s)
        return SBX_OK;
    *out = strdup(s);
    return *out ? SBX_OK : SBX_E_NOMEM;
}

/* "unix:///path" -> socket path + http://localhost; "tcp://h:p" -> http(s)://h:p. */
static int parse_base(ph_client *c, const char *url, int tls, char err[PH_ERR_MAX])
{
    size_t len;

    if (!url || !*url) {
        set_err(err, "no base URL");
        return SBX_E_INVAL;
    }
    if (strncmp(url, "unix://", 7) == 0) {
        if (url[7] != '/') {
            set_err(err, "%s: a unix socket URL needs an absolute path (unix:///run/x.sock)", url);
            return SBX_E_INVAL;
        }
        if (!(c->unix_path = strdup(url + 7)) || !(c->base = strdup("http://localhost")))
            return SBX_E_NOMEM;
        return SBX_OK;
    }
    if (strncmp(url, "tcp://", 6) == 0) {
        if (asprintf(&c->base, "%s://%s", tls ? "https" : "http", url + 6) < 0) {
            c->base = NULL;
            return SBX_E_NOMEM;
        }
    } else if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
        if (!(c->base = strdup(url)))
            return SBX_E_NOMEM;
    } else {
        set_err(err, "%s: unsupported URL scheme (use http://, https://, tcp:// or unix://)", url);
        return SBX_E_INVAL;
    }
    len = strlen(c->base);
    while (len > 0 && c->base[len - 1] == '/')
        c->base[--len] = '\0';
    return SBX_OK;
}

int ph_client_new(const ph_client_conf *conf, ph_client **out, char err[PH_ERR_MAX])
{
    ph_client *c;
    int rc;

    *out = NULL;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        set_err(err, "libcurl initialisation failed: %s", curl_easy_strerror(global_rc));
        return SBX_E_INTERNAL;
    }
    if (!(c = calloc(1, sizeof(*c))))
        return SBX_E_NOMEM;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return SBX_E_NOMEM;
    }
    rc = parse_base(c, conf->base_url,
                    (conf->cert_file && *conf->cert_file) || (conf->cert_pem && *conf->cert_pem),
                    err);
    if (rc == SBX_OK)
        rc = dup_opt(conf->ca_file, &c->ca_file);
    if (rc == SBX_OK)
        rc = dup_opt(conf->ca_pem, &c->ca_pem);
    if (rc == SBX_OK)
        rc = dup_opt(conf->cert_pem, &c->cert_pem);
    if (rc == SBX_OK)
        rc = dup_opt(conf->key_pem, &c->key_pem);
    if (rc == SBX_OK)
        rc = dup_opt(conf->cert_file, &c->cert_file);
    if (rc == SBX_OK)
        rc = dup_opt(conf->key_file, &c->key_file);
    if (rc != SBX_OK) {
        if (rc == SBX_E_NOMEM)
            set_err(err, "out of memory");
        ph_client_free(c);
        return rc;
    }
    c->connect_timeout_ms = conf->connect_timeout_ms > 0 ? conf->connect_timeout_ms
                                                         : PH_CONNECT_DEFAULT_MS;
    c->timeout_ms = conf->timeout_ms > 0 ? conf->timeout_ms : 0;
    c->http2 = conf->http2 != 0;
    if (c->http2 && c->unix_path) {
        set_err(err, "%s: HTTP/2 over a unix socket is not supported", conf->base_url);
        ph_client_free(c);
        return SBX_E_INVAL;
    }
    *out = c;
    return SBX_OK;
}

static void wipe_headers(struct curl_slist *l)
{
    for (struct curl_slist *n = l; n; n = n->next)
        explicit_bzero(n->data, strlen(n->data));
    curl_slist_free_all(l);
}

void ph_client_free(ph_client *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nidle; i++)
        curl_multi_cleanup(c->idle[i]);
    wipe_headers(c->headers);
    pthread_mutex_destroy(&c->lock);
    free(c->base);
    free(c->unix_path);
    free(c->ca_file);
    free(c->cert_file);
    free(c->key_file);
    free(c->ca_pem);
    free(c->cert_pem);
    if (c->key_pem) {
        explicit_bzero(c->key_pem, strlen(c->key_pem));
        free(c->key_pem);
    }
    free(c);
}

/* A PEM held in memory as a libcurl blob (copied by libcurl). */
static int set_blob(CURL *h, CURLoption opt, const char *pem)
{
    struct curl_blob b = { (void *)pem, strlen(pem), CURL_BLOB_COPY };

    return curl_easy_setopt(h, opt, &b) == CURLE_OK;
}

int ph_client_set_header(ph_client *c, const char *name, const char *value)
{
    struct curl_slist *n;
    size_t len = strlen(name) + 2 + strlen(value) + 1;
    char *line = malloc(len);

    if (!line)
        return SBX_E_NOMEM;
    snprintf(line, len, "%s: %s", name, value);
    n = curl_slist_append(c->headers, line);
    explicit_bzero(line, len);
    free(line);
    if (!n)
        return SBX_E_NOMEM;
    c->headers = n;
    return SBX_OK;
}

static CURLM *take_multi(ph_client *c)
{
    CURLM *m = NULL;

    pthread_mutex_lock(&c->lock);
    if (c->nidle > 0)
        m = c->idle[--c->nidle];
    pthread_mutex_unlock(&c->lock);
    return m ? m : curl_multi_init();
}

static void give_multi(ph_client *c, CURLM *m)
{
    pthread_mutex_lock(&c->lock);
    if (c->nidle < PH_IDLE_MAX) {
        c->idle[c->nidle++] = m;
        m = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (m)
        curl_multi_cleanup(m);
}

/* curl_easy_perform, in @m (whose connections @h may reuse). */
static CURLcode perform(CURLM *m, CURL *h)
{
    CURLcode cc = CURLE_FAILED_INIT;
    CURLMcode mc = curl_multi_add_handle(m, h);
    CURLMsg *msg;
    int running = 1, left;

    if (mc != CURLM_OK)
        return mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT;
    while (mc == CURLM_OK && running) {
        mc = curl_multi_perform(m, &running);
        /* The wait ends early on activity and on curl's own timeouts
         * (the request's, among them). */
        if (mc == CURLM_OK && running)
            mc = curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
            cc = msg->data.result;
    if (mc == CURLM_OUT_OF_MEMORY)
        cc = CURLE_OUT_OF_MEMORY;
    curl_multi_remove_handle(m, h);
    return cc;
}

/* Options every handle of the client gets. */
static int setup_common(ph_client *c, CURL *h, const char *path, char err[PH_ERR_MAX])
{
    char *url;
    int ok;

    if (asprintf(&url, "%s%s%s", c->base, path[0] == '/' ? "" : "/", path) < 0) {
        set_err(err, "out of memory");
        return SBX_E_NOMEM;
    }
    ok = curl_easy_setopt(h, CURLOPT_URL, url) == CURLE_OK;
    free(url);
    ok = ok && curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;
    ok = ok && curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms) == CURLE_OK;
    /* Plain HTTP/1.1: the services' streaming endpoints are written for it;
     * HTTP/2 only when asked (gRPC), where nothing else will do. */
    long version = !c->http2 ? (long)CURL_HTTP_VERSION_1_1
                 : strncmp(c->base, "https://", 8) == 0 ? (long)CURL_HTTP_VERSION_2TLS
                                                        : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
    ok = ok && curl_easy_setopt(h, CURLOPT_HTTP_VERSION, version) == CURLE_OK;
    /* libcurl before 8.0.0 fails a request that reuses a connection made
     * with HTTP/2 prior knowledge ("Error in the HTTP2 framing layer",
     * curl issue 10634): there, each such request connects anew. */
    if (ok && version == (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE &&
        curl_version_info(CURLVERSION_NOW)->version_num < 0x080000)
        ok = curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L) == CURLE_OK &&
             curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L) == CURLE_OK;
    if (ok && c->unix_path)
        ok = curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->unix_path) == CURLE_OK;
    if (ok && c->ca_file)
        ok = curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file) == CURLE_OK;
    if (ok && c->cert_file)
        ok = curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file) == CURLE_OK;
    if (ok && c->key_file)
        ok = curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file) == CURLE_OK;
    if (ok && c->ca_pem)
        ok = set_blob(h, CURLOPT_CAINFO_BLOB, c->ca_pem);
    if (ok && c->cert_pem)
        ok = set_blob(h, CURLOPT_SSLCERT_BLOB, c->cert_pem) &&
             curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM") == CURLE_OK;
    if (ok && c->key_pem)
        ok = set_blob(h, CURLOPT_SSLKEY_BLOB, c->key_pem) &&
             curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM") == CURLE_OK;
    if (!ok) {
        set_err(err, "%s: cannot set up the request", path);
        return SBX_E_NOMEM;
    }
    return SBX_OK;
}

int ph_client_setup_handle(ph_client *c, CURL *h, const char *path, char err[PH_ERR_MAX])
{
    return setup_common(c, h, path, err);
}

/* State of one transfer, seen by the callbacks. */
typedef struct xfer {
    CURL *h;
    const ph_request *rq;
    ph_response *resp;
    size_t cap;
    size_t alloc;
    int abort_rc;     /* why a callback stopped the transfer */
} xfer;

static int collect(xfer *x, const char *buf, size_t len)
{
    ph_response *r = x->resp;

    if (r->body_len + len > x->cap) {
        x->abort_rc = SBX_E_LIMIT;
        return -1;
    }
    if (r->body_len + len + 1 > x->alloc) {
        size_t n = x->alloc ? x->alloc : 4096;
        char *p;

        while (n < r->body_len + len + 1)
            n *= 2;
        if (!(p = realloc(r->body, n))) {
            x->abort_rc = SBX_E_NOMEM;
            return -1;
        }
        r->body = p;
        x->alloc = n;
    }
    memcpy(r->body + r->body_len, buf, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    return 0;
}

static size_t on_write(char *buf, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = size * n;
    long code = 0;

    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
    if (x->rq->on_data && code >= 200 && code < 300) {
        int rc = x->rq->on_data(x->rq->ud, buf, len);

        if (rc != 0) {
            x->abort_rc = rc > 0 ? rc : SBX_E_INTERNAL;
            return 0;
        }
        return len;
    }
    return collect(x, buf, len) == 0 ? len : 0;
}

/* Retry-After: delta-seconds or an HTTP date. */
static long parse_retry_after(const char *v, size_t len)
{
    char tmp[64];
    char *end;
    long secs;
    time_t when;

    while (len > 0 && (*v == ' ' || *v == '\t'))
        v++, len--;
    while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
        len--;
    if (len == 0 || len >= sizeof(tmp))
        return -1;
    memcpy(tmp, v, len);
    tmp[len] = '\0';
    errno = 0;
    secs = strtol(tmp, &end, 10);
    if (end != tmp && *end == '\0' && errno == 0 && secs >= 0)
        return secs > 86400 ? 86400L * 1000 : secs * 1000;
    when = curl_getdate(tmp, NULL);
    if (when == (time_t)-1)
        return -1;
    when -= time(NULL);
    return when > 0 ? (long)(when > 86400 ? 86400 : when) * 1000 : 0;
}

/* Keeps the header line @buf (@len bytes, CRLF included) when its name is
 * one of the request's keep_headers: as "name:value", value trimmed. */
static int keep_header(xfer *x, const char *buf, size_t len)
{
    const char *colon = memchr(buf, ':', len);
    struct curl_slist *n;
    size_t nl, vl;
    const char *v;
    char *line;

    if (!colon)
        return 0;
    nl = (size_t)(colon - buf);
    for (size_t i = 0;; i++) {
        if (!x->rq->keep_headers[i])
            return 0;
        if (strlen(x->rq->keep_headers[i]) == nl &&
            strncasecmp(buf, x->rq->keep_headers[i], nl) == 0)
            break;
    }
    v = colon + 1;
    vl = len - nl - 1;
    while (vl > 0 && (*v == ' ' || *v == '\t'))
        v++, vl--;
    while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ' ||
                      v[vl - 1] == '\t'))
        vl--;
    if (!(line = malloc(nl + 1 + vl + 1)))
        return -1;
    memcpy(line, buf, nl);
    line[nl] = ':';
    memcpy(line + nl + 1, v, vl);
    line[nl + 1 + vl] = '\0';
    n = curl_slist_append(x->resp->kept, line);
    free(line);
    if (!n)
        return -1;
    x->resp->kept = n;
    return 0;
}

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = size * n;
    static const char name[] = "retry-after:";

    /* A new status line starts a new answer (after a 100 Continue, say). */
    if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
        x->resp->retry_after_ms = -1;
        curl_slist_free_all(x->resp->kept);
        x->resp->kept = NULL;
    } else if (len > sizeof(name) - 1 && strncasecmp(buf, name, sizeof(name) - 1) == 0) {
        x->resp->retry_after_ms = parse_retry_after(buf + sizeof(name) - 1,
                                                    len - (sizeof(name) - 1));
    }
    if (x->rq->keep_headers && keep_header(x, buf, len) != 0) {
        x->abort_rc = SBX_E_NOMEM;
        return 0;
    }
    return len;
}

static int set_method(CURL *h, const ph_request *rq)
{
    const char *m = rq->method ? rq->method : "GET";
    int ok = 1;

    if (rq->body) {
        ok = curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body) == CURLE_OK &&
             curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len) == CURLE_OK;
        if (ok && strcmp(m, "POST") != 0)
            ok = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m) == CURLE_OK;
    } else if (strcmp(m, "GET") == 0) {
        ok = curl_easy_setopt(h, CURLOPT_HTTPGET, 1L) == CURLE_OK;
    } else if (strcmp(m, "HEAD") == 0) {
        ok = curl_easy_setopt(h, CURLOPT_NOBODY, 1L) == CURLE_OK;
    } else if (strcmp(m, "POST") == 0) {
        ok = curl_easy_setopt(h, CURLOPT_POST, 1L) == CURLE_OK &&
             curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L) == CURLE_OK;
    } else {
        ok = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m) == CURLE_OK;
    }
    return ok ? SBX_OK : SBX_E_NOMEM;
}

static struct curl_slist *build_headers(const ph_client *c, const ph_request *rq, int *ok)
{
    struct curl_slist *l = NULL, *n;
    char ct[256];

    *ok = 1;
    /* No "Expect: 100-continue" round trip before a body. */
    if (!(l = curl_slist_append(l, "Expect:")))
        goto fail;
    for (const struct curl_slist *h = c->headers; h; h = h->next)
        if (!(n = curl_slist_append(l, h->data)))
            goto fail;
        else
            l = n;
    for (size_t i = 0; rq->headers && rq->headers[i]; i++)
        if (!(n = curl_slist_append(l, rq->headers[i])))
            goto fail;
        else
            l = n;
    if (rq->content_type) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", rq->content_type);
        if (!(n = curl_slist_append(l, ct)))
            goto fail;
        l = n;
    }
    return l;
fail:
    wipe_headers(l);
    *ok = 0;
    return NULL;
}

static int transfer_status(CURLcode cc, const xfer *x)
{
    switch (cc) {
    case CURLE_OK: return SBX_OK;
    case CURLE_OPERATION_TIMEDOUT: return SBX_E_TIMEOUT;
    case CURLE_OUT_OF_MEMORY: return SBX_E_NOMEM;
    case CURLE_WRITE_ERROR: return x->abort_rc ? x->abort_rc : SBX_E_NETWORK;
    default: return SBX_E_NETWORK;
    }
}

int ph_do(ph_client *c, const ph_request *rq, ph_response *resp, char err[PH_ERR_MAX])
{
    const char *method = rq->method ? rq->method : "GET";
    char cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs;
    long timeout = rq->timeout_ms > 0 ? rq->timeout_ms : c->timeout_ms;
    xfer x = { .rq = rq, .resp = resp };
    CURLM *m;
    CURLcode cc;
    int rc, ok;

    memset(resp, 0, sizeof(*resp));
    resp->retry_after_ms = -1;
    x.cap = rq->max_body ? rq->max_body : PH_BODY_DEFAULT_MAX;
    if (!(x.h = curl_easy_init()) || !(m = take_multi(c))) {
        curl_easy_cleanup(x.h);
        set_err(err, "%s %s: out of memory", method, rq->path);
        return SBX_E_NOMEM;
    }
    if ((rc = setup_common(c, x.h, rq->path, err)) != SBX_OK ||
        (rc = set_method(x.h, rq)) != SBX_OK) {
        curl_easy_cleanup(x.h);
        give_multi(c, m);
        if (rc == SBX_E_NOMEM)
            set_err(err, "%s %s: out of memory", method, rq->path);
        return rc;
    }
    if (!(hdrs = build_headers(c, rq, &ok))) {
        curl_easy_cleanup(x.h);
        give_multi(c, m);
        set_err(err, "%s %s: out of memory", method, rq->path);
        return SBX_E_NOMEM;
    }
    curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(x.h, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(x.h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(x.h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(x.h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(x.h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(x.h, CURLOPT_ERRORBUFFER, cerr);

    cc = perform(m, x.h);
    curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &resp->status);
    if (cc == CURLE_OK && c->http2) {
        long v = 0;

        curl_easy_getinfo(x.h, CURLINFO_HTTP_VERSION, &v);
        if (v != CURL_HTTP_VERSION_2_0) {
            curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, NULL);
            curl_easy_setopt(x.h, CURLOPT_ERRORBUFFER, NULL);
            wipe_headers(hdrs);
            curl_easy_cleanup(x.h);
            set_err(err, "%s %s: the server did not speak HTTP/2", method, rq->path);
            return SBX_E_BACKEND;
        }
    }
    /* The header list may carry credentials: wipe it now. */
    curl_easy_cleanup(x.h);
    wipe_headers(hdrs);
    rc = transfer_status(cc, &x);
    /* libcurl takes a reply cut inside its headers after a malformed
     * status line ("HTTP/200 OK") as a whole answer with status 0: that
     * is no HTTP answer, and no status a caller should map. */
    if (rc == SBX_OK && (resp->status < 100 || resp->status > 999)) {
        curl_multi_cleanup(m);
        set_err(err, "%s %s: the answer has no valid HTTP status line", method, rq->path);
        return SBX_E_NETWORK;
    }
    if (rc != SBX_OK) {
        curl_multi_cleanup(m);
        if (rc == SBX_E_LIMIT)
            set_err(err, "%s %s: the answer is larger than %zu bytes", method, rq->path, x.cap);
        else if (rc == SBX_E_TIMEOUT)
            set_err(err, "%s %s: no complete answer within %ld ms", method, rq->path, timeout);
        else if (rc == SBX_E_NETWORK)
            /* curl names a unix socket's peer "localhost port 80". */
            set_err(err, "%s %s%s%s: %s", method, rq->path,
                    c->unix_path ? " on unix socket " : "", c->unix_path ? c->unix_path : "",
                    cerr[0] ? cerr : curl_easy_strerror(cc));
        else if (rc == SBX_E_NOMEM)
            set_err(err, "%s %s: out of memory", method, rq->path);
        else if (cc != CURLE_WRITE_ERROR)
            set_err(err, "%s %s: %s", method, rq->path, curl_easy_strerror(cc));
        else
            set_err(err, "%s %s: the transfer was stopped (%d)", method, rq->path, rc);
        return rc;
    }
    give_multi(c, m);
    if (!resp->body && !(resp->body = calloc(1, 1))) {
        set_err(err, "%s %s: out of memory", method, rq->path);
        return SBX_E_NOMEM;
    }
    return SBX_OK;
}

void ph_response_clear(ph_response *r)
{
    if (!r)
        return;
    free(r->body);
    curl_slist_free_all(r->kept);
    memset(r, 0, sizeof(*r));
    r->retry_after_ms = -1;
}

const char *ph_response_header(const ph_response *r, const char *name)
{
    size_t nl = strlen(name);
    const char *found = NULL;

    for (const struct curl_slist *l = r->kept; l; l = l->next)
        if (strncasecmp(l->data, name, nl) == 0 && l->data[nl] == ':')
            found = l->data + nl + 1;
    return found;
}

char *ph_escape(const char *s)
{
    /* libcurl ignores the handle here (since 7.82). */
    char *e = curl_easy_escape(NULL, s, 0);
    char *out = e ? strdup(e) : NULL;

    curl_free(e);
    return out;
}

int ph_status_code(long s)
{
    if (s >= 200 && s < 300)
        return SBX_OK;
    switch (s) {
    case 400: case 422: return SBX_E_INVAL;
    case 401: case 403: return SBX_E_AUTH;
    case 404: return SBX_E_NOT_FOUND;
    case 408: return SBX_E_TIMEOUT;
    case 409: return SBX_E_EXISTS;
    case 413: return SBX_E_LIMIT;
    case 429: return SBX_E_RATE_LIMITED;
    default: return s >= 500 && s < 600 ? SBX_E_SERVER : SBX_E_BACKEND;
    }
}

/* The service's own words for an error answer, printable and short. */
static void answer_message(const ph_response *r, char *out, size_t outlen)
{
    json_t *j = r->body_len ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
    const char *m = NULL;
    size_t o = 0;

    if (json_is_object(j)) {
        static const char *const keys[] = { "message", "error", "detail", "msg" };

        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !m; i++) {
            json_t *v = json_object_get(j, keys[i]);

            if (json_is_string(v))
                m = json_string_value(v);
            else if (json_is_object(v) && json_is_string(json_object_get(v, "message")))
                m = json_string_value(json_object_get(v, "message"));
        }
    }
    if (!m)
        m = r->body ? r->body : "";
    for (size_t i = 0; m[i] && o + 1 < outlen && i < 200; i++)
        out[o++] = (m[i] >= 0x20 && m[i] < 0x7f) ? m[i] : ' ';
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    json_decref(j);
}

int ph_json(ph_client *c, const char *method, const char *path, json_t *body,
            long timeout_ms, long *status, long *retry_after_ms, json_t **out,
            char err[PH_ERR_MAX])
{
    static const char *const accept[] = { "Accept: application/json", NULL };
    ph_request rq = { .method = method, .path = path, .headers = accept,
                      .timeout_ms = timeout_ms };
    ph_response r;
    char *text = NULL;
    char msg[256];
    json_error_t jerr;
    int rc;

    *out = NULL;
    if (status)
        *status = 0;
    if (retry_after_ms)
        *retry_after_ms = -1;
    if (body) {
        if (!(text = json_dumps(body, JSON_COMPACT))) {
            set_err(err, "%s %s: cannot encode the request", method, path);
            return SBX_E_NOMEM;
        }
        rq.body = text;
        rq.body_len = strlen(text);
        rq.content_type = "application/json";
    }
    rc = ph_do(c, &rq, &r, err);
    free(text);
    if (status)
        *status = r.status;
    if (retry_after_ms)
        *retry_after_ms = r.retry_after_ms;
    if (rc != SBX_OK) {
        ph_response_clear(&r);
        return rc;
    }
    if ((rc = ph_status_code(r.status)) != SBX_OK) {
        answer_message(&r, msg, sizeof(msg));
        set_err(err, "%s %s: HTTP %ld%s%s", method, path, r.status, msg[0] ? ": " : "", msg);
    } else if (r.body_len > 0 && !(*out = json_loadb(r.body, r.body_len, 0, &jerr))) {
        set_err(err, "%s %s: the answer is not JSON (%s, at byte %d)", method, path,
                jerr.text, jerr.position);
        rc = SBX_E_BACKEND;
    }
    ph_response_clear(&r);
    return rc;
}
