/* tests/unit/test-http.c - the providers' shared HTTP client against a tiny
 * server of its own on 127.0.0.1 and on a unix socket: statuses and their
 * sbx_status, JSON round trips, error messages, Retry-After, streaming,
 * body caps, timeouts, dropped and refused connections, headers, keep-alive.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <polysandbox/common.h>
#include <polysandbox/sandbox.h>

#include "base64.h"
#include "http.h"
#include "tap.h"

static atomic_int connections;

static void say(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, s, len);

        if (n <= 0)
            return;
        s += n;
        len -= (size_t)n;
    }
}

static void answer(int fd, int status, const char *extra, const char *body)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%s\r\n",
                     status, strlen(body), extra ? extra : "");

    say(fd, head, (size_t)n);
    say(fd, body, strlen(body));
}

/* One request: returns 0 to keep the connection, -1 to close it. */
static int serve_one(int fd)
{
    char req[8192], path[256] = "", key[128] = "", *end, *h;
    size_t have = 0, clen = 0;
    ssize_t n;

    for (;;) {
        if (have == sizeof(req) - 1)
            return -1;
        if ((n = read(fd, req + have, sizeof(req) - 1 - have)) <= 0)
            return -1;
        have += (size_t)n;
        req[have] = '\0';
        if ((end = strstr(req, "\r\n\r\n")))
            break;
    }
    sscanf(req, "%*s %255s", path);
    if ((h = strcasestr(req, "\r\nContent-Length:")))
        clen = strtoul(h + 17, NULL, 10);
    if ((h = strcasestr(req, "\r\nX-Key: ")))
        sscanf(h + 9, "%127[^\r]", key);
    {
        size_t got = have - (size_t)(end + 4 - req);
        char body[4096] = "";

        if (got > clen || clen >= sizeof(body))
            return -1;
        memcpy(body, end + 4, got);
        while (got < clen && (n = read(fd, body + got, clen - got)) > 0)
            got += (size_t)n;
        body[got] = '\0';

        if (strcmp(path, "/json") == 0)
            answer(fd, 200, NULL, "{\"a\":1}");
        else if (strcmp(path, "/echo") == 0)
            answer(fd, 201, NULL, body);
        else if (strcmp(path, "/empty") == 0)
            answer(fd, 204, NULL, "");
        else if (strcmp(path, "/err500") == 0)
            answer(fd, 500, NULL, "{\"message\":\"boom\\nagain\"}");
        else if (strcmp(path, "/missing") == 0)
            answer(fd, 404, NULL, "{\"error\":{\"message\":\"no such thing\"}}");
        else if (strcmp(path, "/429") == 0)
            answer(fd, 429, "Retry-After: 2\r\n", "{\"message\":\"slow down\"}");
        else if (strcmp(path, "/notjson") == 0)
            answer(fd, 200, NULL, "hello");
        else if (strcmp(path, "/hdr") == 0)
            answer(fd, 200, "X-Next-Token:  tok-1 \r\nx-other: no\r\nX-NEXT-TOKEN: tok-2\r\n"
                   "X-Empty:\r\n", "");
        else if (strcmp(path, "/key") == 0)
            answer(fd, 200, NULL, key);
        else if (strcmp(path, "/big") == 0) {
            static char big[100001];

            memset(big, 'x', sizeof(big) - 1);
            answer(fd, 200, NULL, big);
        } else if (strcmp(path, "/stream") == 0) {
            static const char s[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n";
            say(fd, s, sizeof(s) - 1);
        } else if (strcmp(path, "/drop") == 0) {
            static const char s[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789";
            say(fd, s, sizeof(s) - 1);
            return -1;
        } else if (strcmp(path, "/slow") == 0) {
            sleep(2);
            answer(fd, 200, NULL, "late");
        } else
            answer(fd, 400, NULL, "{\"message\":\"unknown path\"}");
    }
    return 0;
}

static void *conn_main(void *arg)
{
    int fd = (int)(intptr_t)arg;

    while (serve_one(fd) == 0)
        ;
    close(fd);
    return NULL;
}

static void *accept_main(void *arg)
{
    int lfd = (int)(intptr_t)arg;

    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        pthread_t t;

        if (fd < 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        atomic_fetch_add(&connections, 1);
        if (pthread_create(&t, NULL, conn_main, (void *)(intptr_t)fd) != 0)
            close(fd);
        else
            pthread_detach(t);
    }
}

static int listen_tcp(int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

static int listen_unix(const char *path)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0)
        return -1;
    return fd;
}

static void serve(int lfd)
{
    pthread_t t;

    if (pthread_create(&t, NULL, accept_main, (void *)(intptr_t)lfd) == 0)
        pthread_detach(t);
}

typedef struct sink { char buf[64]; size_t len; int calls; } sink;

static int on_data(void *ud, const void *buf, size_t len)
{
    sink *s = ud;

    s->calls++;
    if (s->len + len >= sizeof(s->buf))
        return SBX_E_LIMIT;
    memcpy(s->buf + s->len, buf, len);
    s->len += len;
    return 0;
}

static int stop_at_once(void *ud, const void *buf, size_t len)
{
    (void)ud, (void)buf, (void)len;
    return SBX_E_IO;
}

int main(void)
{
    char err[PH_ERR_MAX], url[128], sock[] = "/tmp/sbx-http-XXXXXX";
    ph_client *c = NULL, *u = NULL, *bad = NULL;
    ph_response r;
    json_t *j = NULL;
    long status, ra;
    int port, rc, lfd;

    lfd = listen_tcp(&port);
    if (lfd < 0 || !mkdtemp(sock)) {
        printf("Bail out! cannot listen on 127.0.0.1: %s\n", strerror(errno));
        return 1;
    }
    serve(lfd);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
    ok(ph_client_new(&(ph_client_conf){ .base_url = url }, &c, err) == SBX_OK, "client for %s", url);
    ok(ph_client_set_header(c, "X-Key", "s3cret-value") == SBX_OK, "a header for every request");

    rc = ph_json(c, "GET", "/json", NULL, 0, &status, &ra, &j, err);
    ok(rc == SBX_OK && status == 200 && json_integer_value(json_object_get(j, "a")) == 1,
       "GET /json: 200 and the object");
    json_decref(j);

    {
        json_t *body = json_pack("{s:s}", "name", "x");

        rc = ph_json(c, "POST", "/echo", body, 0, &status, NULL, &j, err);
        ok(rc == SBX_OK && status == 201 &&
           strcmp(json_string_value(json_object_get(j, "name")), "x") == 0,
           "POST /echo: the body went out as JSON and came back");
        json_decref(j);
        json_decref(body);
    }
    rc = ph_json(c, "DELETE", "/empty", NULL, 0, &status, NULL, &j, err);
    ok(rc == SBX_OK && status == 204 && j == NULL, "204 with no body: OK, no JSON");

    rc = ph_json(c, "GET", "/err500", NULL, 0, &status, NULL, &j, err);
    ok(rc == SBX_E_SERVER && status == 500 && j == NULL, "500 is SBX_E_SERVER");
    ok(strstr(err, "GET /err500: HTTP 500: boom again") != NULL,
       "its message names method, path, status and the service's words: %s", err);
    rc = ph_json(c, "GET", "/missing", NULL, 0, &status, NULL, &j, err);
    ok(rc == SBX_E_NOT_FOUND && strstr(err, "no such thing"), "404 with a nested message: %s", err);
    rc = ph_json(c, "GET", "/429", NULL, 0, &status, &ra, &j, err);
    ok(rc == SBX_E_RATE_LIMITED && ra == 2000, "429 is SBX_E_RATE_LIMITED, Retry-After 2 s read (%ld ms)", ra);
    rc = ph_json(c, "GET", "/notjson", NULL, 0, &status, NULL, &j, err);
    ok(rc == SBX_E_BACKEND && strstr(err, "not JSON"), "a 200 answer that is not JSON: %s", err);

    /* cppcheck-suppress uninitvar ; r is ph_do's output, not read */
    rc = ph_do(c, &(ph_request){ .path = "/key" }, &r, err);
    ok(rc == SBX_OK && strcmp(r.body, "s3cret-value") == 0, "the client's header was sent");
    ph_response_clear(&r);

    {
        static const char *const keep[] = { "x-next-token", "X-Empty", "X-Absent", NULL };

        rc = ph_do(c, &(ph_request){ .path = "/hdr", .keep_headers = keep }, &r, err);
        ok(rc == SBX_OK && r.status == 200, "GET /hdr");
        ok(ph_response_header(&r, "X-Next-Token") &&
           strcmp(ph_response_header(&r, "X-Next-Token"), "tok-2") == 0,
           "a kept header, any case, trimmed, the last of two: %s",
           ph_response_header(&r, "X-Next-Token") ? ph_response_header(&r, "X-Next-Token") : "NULL");
        ok(ph_response_header(&r, "x-empty") && !*ph_response_header(&r, "x-empty"),
           "a kept header with an empty value is \"\"");
        ok(!ph_response_header(&r, "X-Other") && !ph_response_header(&r, "X-Absent") &&
           !ph_response_header(&r, "X-Next"), "headers not asked for, absent or a prefix: NULL");
        ph_response_clear(&r);
        ok(r.kept == NULL && !ph_response_header(&r, "X-Next-Token"), "clear drops them");
        rc = ph_do(c, &(ph_request){ .method = "HEAD", .path = "/hdr", .keep_headers = keep },
                   &r, err);
        ok(rc == SBX_OK && ph_response_header(&r, "x-next-token"), "HEAD keeps them too");
        ph_response_clear(&r);
        rc = ph_do(c, &(ph_request){ .path = "/hdr" }, &r, err);
        ok(rc == SBX_OK && !r.kept && !ph_response_header(&r, "X-Next-Token"),
           "nothing kept unless asked");
        ph_response_clear(&r);
    }
    {
        char *e = ph_escape("/work/a b&c=%");

        ok(e && strcmp(e, "%2Fwork%2Fa%20b%26c%3D%25") == 0, "ph_escape: %s", e ? e : "NULL");
        free(e);
    }

    rc = ph_do(c, &(ph_request){ .path = "/big", .max_body = 1000 }, &r, err);
    ok(rc == SBX_E_LIMIT && strstr(err, "larger than 1000"), "a body over the cap: %s", err);
    ph_response_clear(&r);
    rc = ph_do(c, &(ph_request){ .path = "/big" }, &r, err);
    ok(rc == SBX_OK && r.body_len == 100000, "the same body under the default cap");
    ph_response_clear(&r);

    {
        sink s = { .len = 0 };

        rc = ph_do(c, &(ph_request){ .path = "/stream", .on_data = on_data, .ud = &s }, &r, err);
        ok(rc == SBX_OK && s.len == 7 && memcmp(s.buf, "abcdefg", 7) == 0 && r.body_len == 0,
           "a chunked answer streamed to the callback, not collected");
        ph_response_clear(&r);
        rc = ph_do(c, &(ph_request){ .path = "/stream", .on_data = stop_at_once }, &r, err);
        ok(rc == SBX_E_IO, "the callback's status stops the transfer and is returned");
        ph_response_clear(&r);
        s.len = 0;
        s.calls = 0;
        rc = ph_do(c, &(ph_request){ .path = "/err500", .on_data = on_data, .ud = &s }, &r, err);
        ok(rc == SBX_OK && r.status == 500 && s.calls == 0 && strstr(r.body, "boom"),
           "an error answer is collected, not streamed");
        ph_response_clear(&r);
    }

    rc = ph_do(c, &(ph_request){ .path = "/drop" }, &r, err);
    ok(rc == SBX_E_NETWORK && strstr(err, "GET /drop"), "a connection dropped mid-body: %s", err);
    ph_response_clear(&r);
    rc = ph_do(c, &(ph_request){ .path = "/slow", .timeout_ms = 200 }, &r, err);
    ok(rc == SBX_E_TIMEOUT && strstr(err, "200 ms"), "a late answer times out: %s", err);
    ph_response_clear(&r);
    ok(strstr(err, "s3cret") == NULL, "no error message carries the header's value");

    {
        int before = atomic_load(&connections);

        for (int i = 0; i < 5; i++) {
            ph_json(c, "GET", "/json", NULL, 0, NULL, NULL, &j, err);
            json_decref(j);
        }
        ok(atomic_load(&connections) - before <= 1,
           "five sequential requests share one kept-alive connection (%d new)",
           atomic_load(&connections) - before);
    }

    /* A port nobody listens on: the listener's own, closed. */
    shutdown(lfd, SHUT_RDWR);  /* wakes the accepting thread; close alone would not */
    close(lfd);
    rc = ph_json(c, "GET", "/json", NULL, 0, &status, NULL, &j, err);
    ok(rc == SBX_OK || rc == SBX_E_NETWORK, "after the listener closed: kept connection or refused");
    json_decref(j);
    ph_client_free(c);
    ok(ph_client_new(&(ph_client_conf){ .base_url = url }, &c, err) == SBX_OK &&
       ph_json(c, "GET", "/json", NULL, 0, &status, NULL, &j, err) == SBX_E_NETWORK && status == 0,
       "connection refused is SBX_E_NETWORK with no status: %s", err);
    ph_client_free(c);

    {
        char path[96], uurl[128];

        snprintf(path, sizeof(path), "%s/d.sock", sock);
        snprintf(uurl, sizeof(uurl), "unix://%s", path);
        if ((lfd = listen_unix(path)) < 0) {
            printf("Bail out! cannot listen on %s\n", path);
            return 1;
        }
        serve(lfd);
        rc = ph_client_new(&(ph_client_conf){ .base_url = uurl }, &u, err);
        ok(rc == SBX_OK && ph_json(u, "GET", "/v1.41/json", NULL, 0, &status, NULL, &j, err) ==
                               SBX_E_INVAL && status == 400,
           "over a unix socket, the path is sent as given");
        json_decref(j);
        ok(ph_json(u, "GET", "/json", NULL, 0, &status, NULL, &j, err) == SBX_OK && j,
           "GET /json over %s", uurl);
        json_decref(j);
        ph_client_free(u);
        unlink(path);
        rmdir(sock);
    }

    ok(ph_client_new(&(ph_client_conf){ .base_url = "ftp://x" }, &bad, err) == SBX_E_INVAL &&
       bad == NULL && strstr(err, "ftp://x"), "an unsupported scheme is refused: %s", err);
    ok(ph_client_new(&(ph_client_conf){ .base_url = "unix://rel.sock" }, &bad, err) == SBX_E_INVAL,
       "a relative unix socket path is refused");
    ok(ph_status_code(502) == SBX_E_SERVER && ph_status_code(401) == SBX_E_AUTH &&
       ph_status_code(409) == SBX_E_EXISTS && ph_status_code(302) == SBX_E_BACKEND &&
       ph_status_code(204) == SBX_OK, "status mapping");
    {
        unsigned char bin[256], *back;
        size_t n = 0;
        char *e;

        for (int i = 0; i < 256; i++)
            bin[i] = (unsigned char)i;
        e = pc_b64_encode(bin, 256);
        back = e ? pc_b64_decode(e, &n) : NULL;
        ok(back && n == 256 && memcmp(back, bin, 256) == 0, "base64: 256 bytes round trip");
        free(back);
        free(e);
        e = pc_b64_encode("ab", 2);
        ok(e && strcmp(e, "YWI=") == 0, "base64: standard alphabet, padded (%s)", e ? e : "NULL");
        free(e);
        back = pc_b64_decode("YWI", &n);
        ok(back && n == 2 && memcmp(back, "ab", 2) == 0, "base64: padding optional");
        free(back);
        back = pc_b64_decode("-_8", &n);
        ok(back && n == 2 && back[0] == 0xfb && back[1] == 0xff, "base64: the URL alphabet too");
        free(back);
        ok(!pc_b64_decode("YWJjZ", &n) && !pc_b64_decode("YW*=", &n) && !pc_b64_decode("Y=Jj", &n),
           "base64: a dangling character, a foreign one and inner padding are malformed");
    }
    curl_global_cleanup();
    return tap_done();
}
