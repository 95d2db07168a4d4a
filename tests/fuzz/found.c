/* tests/fuzz/found.c - what the fuzz targets found, as unit tests
 *
 * Each case feeds the input a fuzzer found (kept in tests/fuzz/corpus/
 * too, where tests/fuzz/replay runs it again) to the code it broke, and
 * checks what was fixed.  Leaks are measured with mallinfo2() in a plain
 * build; under the sanitizers (whose allocator it does not see) LSan
 * reports them at exit.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "../unit/tap.h"

/* Bytes in use on the heap, or 0 when the allocator is not glibc's. */
static __attribute__((unused)) size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}

#if HAVE_FZ_DOCKER
#include "engine/engine.h"

/* corpus/docker/found-tar-name-leak: a name libarchive cannot write
 * (not UTF-8) made dk_tar_file fail, and the 16 KiB its archive wrote
 * while being freed (after the buffer was) leaked, on every upload of
 * such a path. */
static void tar_name_leak(void)
{
    char name[64];
    void *tar = NULL;
    size_t tl = 0, before, after;
    char err[256] = "";
    int rc = 0;

    memset(name, 'L', 20);
    memset(name + 20, 0xfc, 40);
    name[60] = '\0';
    before = heap_in_use();
    for (int i = 0; i < 100; i++)
        rc |= dk_tar_file(name, "data", 4, 0644, &tar, &tl, err, sizeof err);
    after = heap_in_use();
    ok(rc != 0 && tar == NULL && strstr(err, "making the tar of"),
       "docker: a tar of an unwritable name fails and says why");
    if (before)
        ok(after < before + 100 * 1024, "docker: ... and leaks nothing (heap %zu -> %zu bytes "
           "over 100 tries)", before, after);
    else
        ok(1, "docker: ... and leaks nothing (left to LSan: not glibc's allocator) # SKIP");
}
#endif

#if HAVE_FZ_HTTP
#include <polysandbox/common.h>
#include <polysandbox/provider.h>

#include "canned.h"
#include "fuzz.h"
#include "host.h"
#include "http.h"

/* A client of the canned server, or NULL (said). */
static ph_client *canned_client(void)
{
    ph_client_conf conf = { .base_url = fz_canned_url(), .timeout_ms = 5000 };
    ph_client *c = NULL;
    char err[PH_ERR_MAX] = "";

    if (ph_client_new(&conf, &c, err) != SBX_OK)
        ok(0, "http: a client (%s)", err);
    return c;
}

/* corpus/http/found-status-0: a reply cut inside its headers after a
 * malformed status line ("HTTP/200 OK") came back from ph_do as an answer
 * (SBX_OK) with HTTP status 0, which the providers then reported as a
 * non-retryable backend error "HTTP 0".  It is a broken reply: a network
 * error, retryable like a dropped connection. */
static void http_status_0(void)
{
    static const char bad[] = "HTTP/200 OK\r\nContent-Type: application/json\r\nConnt-Typ";
    static const char good[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    fz_part answers[] = { { (const uint8_t *)bad, sizeof bad - 1 },
                          { (const uint8_t *)good, sizeof good - 1 } };
    ph_client *c = canned_client();
    ph_request rq = { .method = "GET", .path = "/x" };
    ph_response r;
    char err[PH_ERR_MAX] = "";
    int rc;

    if (!c)
        return;
    fz_canned_set(answers, 2);
    rc = ph_do(c, &rq, &r, err);
    ok(rc == SBX_E_NETWORK && strstr(err, "no valid HTTP status line"),
       "http: a reply without a valid status line is a network error (%d: %s)", rc, err);
    ph_response_clear(&r);
    rc = ph_do(c, &rq, &r, err);
    ok(rc == SBX_OK && r.status == 200 && r.body_len == 2, "http: the next answer reads as usual");
    ph_response_clear(&r);
    ph_client_free(c);
}

/* corpus/e2b/found-curl-folded-header, corpus/http/found-folded-header:
 * libcurl 7.88 (Debian 12) reads freed memory when an easy handle that
 * made a request before gets an answer with a folded header line (curl
 * issue #11101); the client reused its easy handles (curl_easy_reset),
 * so any service could corrupt the provider's memory at will.  Each
 * request has a fresh easy handle now.  A plain build cannot see the
 * use-after-free; the sanitizer build of CI aborts on it. */
static void http_folded_header(void)
{
    static const char good[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}";
    static const char bad[] = "HTTP/1.1 429 X\r\n A: b\r\nContent-Length: 0\r\n\r\n";
    fz_part answers[] = { { (const uint8_t *)good, sizeof good - 1 },
                          { (const uint8_t *)bad, sizeof bad - 1 },
                          { (const uint8_t *)good, sizeof good - 1 } };
    ph_client *c = canned_client();
    ph_request rq = { .method = "GET", .path = "/x" };
    ph_response r;
    char err[PH_ERR_MAX] = "";
    long status[3] = { 0, 0, 0 };
    int rc[3];

    if (!c)
        return;
    fz_canned_set(answers, 3);
    for (int i = 0; i < 3; i++) {
        rc[i] = ph_do(c, &rq, &r, err);
        status[i] = r.status;
        ph_response_clear(&r);
    }
    ok(rc[0] == SBX_OK && status[0] == 404 && rc[2] == SBX_OK && status[2] == 404,
       "http: an answer with a folded header line between two others (%d, %d %ld, %d)",
       rc[0], rc[1], status[1], rc[2]);
    ph_client_free(c);
}

/* A binary-safe buffer of an answer. */
struct buf {
    uint8_t p[4096];
    size_t len;
};

static void put(struct buf *b, const void *d, size_t n)
{
    if (b->len + n > sizeof b->p)
        abort();
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

/* An HTTP answer with @body, chunked when it is a Connect stream. */
static void answer(struct buf *b, const char *head, const uint8_t *body, size_t n, int chunked)
{
    char line[128];

    b->len = 0;
    put(b, head, strlen(head));
    if (chunked) {
        put(b, "Transfer-Encoding: chunked\r\n\r\n", strlen("Transfer-Encoding: chunked\r\n\r\n"));
        snprintf(line, sizeof line, "%zx\r\n", n);
        put(b, line, strlen(line));
        put(b, body, n);
        put(b, "\r\n0\r\n\r\n", strlen("\r\n0\r\n\r\n"));
    } else {
        snprintf(line, sizeof line, "Content-Length: %zu\r\n\r\n", n);
        put(b, line, strlen(line));
        put(b, body, n);
    }
}

/* One Connect envelope: a flag byte, a 4-byte length, the JSON. */
static void envelope(struct buf *b, uint8_t flags, const char *json)
{
    size_t n = strlen(json);
    uint8_t h[5] = { flags, (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8),
                     (uint8_t)n };

    put(b, h, 5);
    put(b, json, n);
}

static int discard(void *ud, int stream, const void *b, size_t n)
{
    (void)ud, (void)stream, (void)b, (void)n;
    return 0;
}

/* Create, exec "true", destroy on provider @d over @n canned answers; the
 * exec's code is returned, its error left in exec_error. */
static char exec_error[2048];

static int exec_on(const sbx_provider_v1 *d, void *prov, const struct buf *answers, size_t n,
                   sbx_exec_outcome_v1 *out)
{
    static const char *const argv[] = { "true", NULL };
    static const sbx_kv_v1 label = { "polysandbox.owner", "0@found" };
    sbx_create_spec_v1 cs = { .struct_size = sizeof cs, .labels = &label, .n_labels = 1 };
    sbx_exec_spec_v1 es = { .struct_size = sizeof es, .argv = argv, .timeout_ns = 2000000000u,
                            .stdout_cap = 1024, .stderr_cap = 1024 };
    static const sbx_output_sink_v1 sink = { discard, NULL };
    fz_part parts[8];
    char id[SBX_ID_MAX];
    void *sb = NULL;
    int rc;

    for (size_t i = 0; i < n && i < 8; i++)
        parts[i] = (fz_part){ answers[i].p, answers[i].len };
    fz_canned_set(parts, n < 8 ? n : 8);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (d->ops->create(prov, &cs, &sb, id) != SBX_OK)
        return -1;
    fz_host_clear();
    rc = d->ops->exec(prov, sb, &es, &sink, out);
    snprintf(exec_error, sizeof exec_error, "%s", fz_host_error());
    d->ops->destroy(prov, sb);
    return rc;
}
#endif

#if HAVE_FZ_E2B || HAVE_FZ_DAYTONA
/* Exit codes 4294967296 and 256 (an int would make them 0, and a code no
 * process has) must be refused naming @refusal, 3 read as exit code 3;
 * @exec_answer makes answer @at of @a, the exec's, for a code. */
static void exit_codes(const char *name, const sbx_provider_v1 *d, fz_host_conf *conf,
                       const char **settings, struct buf *a, size_t n, size_t at,
                       void (*exec_answer)(struct buf *, const char *), const char *refusal)
{
    static const char *const codes[] = { "4294967296", "256", "3" };
    void *prov = fz_provider_start(d, conf, settings);
    sbx_exec_outcome_v1 out;

    for (int i = 0; i < 3; i++) {
        int rc;
        exec_answer(&a[at], codes[i]);
        rc = exec_on(d, prov, a, n, &out);
        if (i < 2)
            ok(rc == SBX_E_BACKEND && strstr(exec_error, refusal),
               "%s: exit code %s is a protocol error, not a result (%d: %s)", name, codes[i],
               rc, exec_error);
        else
            ok(rc == SBX_OK && out.status == SBX_RUN_NONZERO_EXIT && out.exit_code == 3,
               "%s: exit code 3 reads as 3", name);
    }
    d->ops->fini(prov);
}
#endif

#if HAVE_FZ_E2B
extern const sbx_provider_v1 fz_e2b_provider_v1;

/* envd's Start stream: the process starts, ends with @code, stream ends. */
static void e2b_stream(struct buf *b, const char *code)
{
    struct buf stream = { .len = 0 };
    char end[160];

    envelope(&stream, 0, "{\"event\":{\"start\":{\"pid\":7}}}");
    snprintf(end, sizeof end, "{\"event\":{\"end\":{\"exited\":true,\"exitCode\":%s,"
             "\"status\":\"exit status %s\"}}}", code, code);
    envelope(&stream, 0, end);
    envelope(&stream, 2, "{}");
    answer(b, "HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\n", stream.p,
           stream.len, 1);
}

/* corpus/e2b/found-exit-code-*: envd's end event said exitCode 4294967296,
 * which the provider cut to an int: exit code 0, status "ok", for a
 * process whose answer said otherwise (256 came out as an exit code no
 * process has).  Outside 0-255 (-1: killed) it is a protocol error. */
static void e2b_exit_code(void)
{
    static const char *settings[] = { "api_url", NULL, "envd_url", NULL,
                                      "request_timeout", "5s", NULL };
    static const char *const secrets[] = { "api_key", "e2b_found_key", NULL };
    static fz_host_conf conf = { .secrets = secrets };
    static const char sb[] = "{\"sandboxID\":\"ifound0\",\"envdVersion\":\"0.5.7\","
                             "\"envdAccessToken\":\"t\"}";
    struct buf a[3];

    answer(&a[0], "HTTP/1.1 201 Created\r\n", (const uint8_t *)sb, sizeof sb - 1, 0);
    answer(&a[2], "HTTP/1.1 204 No Content\r\n", (const uint8_t *)"", 0, 0);
    exit_codes("e2b", &fz_e2b_provider_v1, &conf, settings, a, 3, 1, e2b_stream, "exit code");
}
#endif

#if HAVE_FZ_DAYTONA
extern const sbx_provider_v1 fz_daytona_provider_v1;

/* The toolbox's answer to the exec wrapper: its result line says x@code. */
static void daytona_result(struct buf *b, const char *code)
{
    char res[200];

    snprintf(res, sizeof res, "{\"exitCode\":0,\"result\":\"SBX1 R x%s 0 0\\n\\nSBX1-E"
             "\\n\\nSBX1-Z\\n\"}", code);
    answer(b, "HTTP/1.1 200 OK\r\n", (const uint8_t *)res, strlen(res), 0);
}

/* corpus/daytona/found-exit-code: the wrapper's result line said
 * "x4294967296", cut to an int: status nonzero_exit with exit code 0. */
static void daytona_exit_code(void)
{
    static const char *settings[] = { "api_url", NULL, "toolbox_url", NULL,
                                      "request_timeout", "5", NULL };
    static const char *const secrets[] = { "api_key", "dtn_found_key", NULL };
    static fz_host_conf conf = { .secrets = secrets };
    static const char sb[] = "{\"id\":\"dfound0\",\"state\":\"started\"}";
    static const char dir[] = "{\"dir\":\"/home/daytona\"}";
    struct buf a[4];

    answer(&a[0], "HTTP/1.1 200 OK\r\n", (const uint8_t *)sb, sizeof sb - 1, 0);
    answer(&a[1], "HTTP/1.1 200 OK\r\n", (const uint8_t *)dir, sizeof dir - 1, 0);
    answer(&a[3], "HTTP/1.1 200 OK\r\n", (const uint8_t *)"", 0, 0);
    exit_codes("daytona", &fz_daytona_provider_v1, &conf, settings, a, 4, 2, daytona_result,
               "status is unknown");
}
#endif

#if HAVE_FZ_MODAL
#include <signal.h>

extern const sbx_provider_v1 fz_modal_provider_v1;

static const char modal_jwt[] = "eyJhbGciOiJub25lIn0.eyJleHAiOjQxMDI0NDQ4MDB9.x";

/* A gRPC answer (tests/fuzz/modal-wire.c) of one message holding string
 * field 1 (and field 2, when @s2), or of @raw (@n bytes) when @s1 is
 * NULL. */
static void grpc_answer(struct buf *b, const char *s1, const char *s2, const uint8_t *raw,
                        size_t n)
{
    uint8_t m[512];
    size_t ml = 0;

    if (s1) {
        const char *f[2] = { s1, s2 };
        for (int i = 0; i < 2 && f[i]; i++) {
            size_t l = strlen(f[i]);
            m[ml++] = (uint8_t)((i + 1) << 3 | 2);
            m[ml++] = (uint8_t)l;     /* < 128 here */
            memcpy(m + ml, f[i], l);
            ml += l;
        }
        raw = m;
        n = ml;
    }
    b->len = 0;
    put(b, "grpc-status: 0\n\n", strlen("grpc-status: 0\n\n"));
    put(b, (uint8_t[]){ 0, (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8),
                        (uint8_t)n }, 5);
    put(b, raw, n);
}

/* Attach, exec "true", destroy on a modal provider of its own whose exec
 * setting is @path ("router", "legacy"), over @n answers (at most 10);
 * the exec's code is returned, its error left in exec_error. */
static int modal_exec_on(const char *path, const struct buf *a, size_t n,
                         sbx_exec_outcome_v1 *out)
{
    static const char *settings[] = { "server_url", "http://127.0.0.1:9", "exec", NULL, NULL };
    static const char *const secrets[] = { "token_id", "ak-found", "token_secret", "as-found",
                                           NULL };
    static fz_host_conf conf = { .secrets = secrets };
    static const char *const argv[] = { "true", NULL };
    static const sbx_output_sink_v1 sink = { discard, NULL };
    sbx_exec_spec_v1 es = { .struct_size = sizeof es, .argv = argv, .timeout_ns = 2000000000u,
                            .stdout_cap = 64, .stderr_cap = 64 };
    fz_part parts[10];
    void *prov, *sb = NULL;
    int rc;

    settings[3] = path;
    prov = fz_provider_start(&fz_modal_provider_v1, &conf, settings);
    for (size_t i = 0; i < n && i < 10; i++)
        parts[i] = (fz_part){ a[i].p, a[i].len };
    fz_canned_set(parts, n < 10 ? n : 10);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    exec_error[0] = '\0';
    rc = fz_modal_provider_v1.ops->attach(prov, "sb-found", &sb);
    if (rc == SBX_OK) {
        fz_host_clear();
        rc = fz_modal_provider_v1.ops->exec(prov, sb, &es, &sink, out);
        snprintf(exec_error, sizeof exec_error, "%s", fz_host_error());
        fz_modal_provider_v1.ops->destroy(prov, sb);
    }
    fz_modal_provider_v1.ops->fini(prov);
    return rc;
}

/* The answers to attach and exec through the router: @last_read and
 * @more (may be NULL) are the second stdio read's and what follows it,
 * then the terminate's. */
static size_t modal_router_answers(struct buf *a, const struct buf *last_read,
                                   const struct buf *more)
{
    size_t n = 0;

    grpc_answer(&a[n++], modal_jwt, NULL, NULL, 0);                  /* AuthTokenGet */
    grpc_answer(&a[n++], "ta-found", NULL, NULL, 0);                 /* SandboxGetTaskId */
    grpc_answer(&a[n++], modal_jwt, "https://127.0.0.1:9", NULL, 0); /* ...RouterAccess */
    for (int i = 0; i < 3; i++)                 /* Start, StdinWrite, one StdioRead */
        grpc_answer(&a[n++], NULL, NULL, (const uint8_t *)"", 0);
    a[n++] = *last_read;
    if (more)
        a[n++] = *more;
    grpc_answer(&a[n++], NULL, NULL, (const uint8_t *)"", 0);        /* SandboxTerminate */
    return n;
}

/* corpus/modal/found-wait-* (seen in the code while the target was
 * written, and reproduced with it): TaskExecWait said exit code 256 (or
 * -1), an int32 on the wire, and the exec was reported as nonzero_exit
 * with a code no process has; "signal 0" read as exit code 0, a success
 * the service never reported; a signal past Linux's 64 was passed on as
 * one.  The legacy exec's last output batch likewise (exit code 256).
 * Each is a protocol error now. */
static void modal_exit_code(void)
{
    static const struct { uint8_t wait[12]; size_t n; int rc, status, code; } cases[] = {
        { { 0x08, 0x80, 0x02 }, 3, SBX_E_BACKEND, 0, 0 },                   /* code 256 */
        { { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 11,
          SBX_E_BACKEND, 0, 0 },                                            /* code -1 */
        { { 0x10, 0x00 }, 2, SBX_E_BACKEND, 0, 0 },                         /* signal 0 */
        { { 0x10, 0xac, 0x02 }, 3, SBX_E_BACKEND, 0, 0 },                   /* signal 300 */
        { { 0x10, 0x09 }, 2, SBX_OK, SBX_RUN_SIGNAL, -1 },                  /* signal 9 */
        { { 0x08, 0x03 }, 2, SBX_OK, SBX_RUN_NONZERO_EXIT, 3 },             /* code 3 */
    };
    static const uint8_t last[] = { 0x10, 0x01, 0x18, 0x80, 0x02 }; /* index 1, exit 256 */
    struct buf a[10], read, wait;
    sbx_exec_outcome_v1 out;
    int rc;

    grpc_answer(&read, NULL, NULL, (const uint8_t *)"", 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        grpc_answer(&wait, NULL, NULL, cases[c].wait, cases[c].n);   /* TaskExecWait */
        rc = modal_exec_on("router", a, modal_router_answers(a, &read, &wait), &out);
        if (cases[c].rc != SBX_OK)
            ok(rc == cases[c].rc && strstr(exec_error, "which no process ends with"),
               "modal: wait answer %zu is a protocol error, not a result (%d: %s)", c, rc,
               exec_error);
        else
            ok(rc == SBX_OK && (int)out.status == cases[c].status &&
               out.exit_code == cases[c].code && (cases[c].code >= 0 || out.signal == SIGKILL),
               "modal: wait answer %zu reads as status %d, exit code %d (%d: %d %d %d)", c,
               cases[c].status, cases[c].code, rc, (int)out.status, out.exit_code, out.signal);
    }

    grpc_answer(&a[0], modal_jwt, NULL, NULL, 0);                  /* AuthTokenGet */
    grpc_answer(&a[1], "ta-found", NULL, NULL, 0);                 /* SandboxGetTaskId */
    grpc_answer(&a[2], "ex-found", NULL, NULL, 0);                 /* ContainerExec */
    grpc_answer(&a[3], NULL, NULL, (const uint8_t *)"", 0);        /* ...PutInput */
    grpc_answer(&a[4], NULL, NULL, last, sizeof last);             /* ...GetOutput */
    grpc_answer(&a[5], NULL, NULL, last, sizeof last);
    grpc_answer(&a[6], NULL, NULL, (const uint8_t *)"", 0);        /* SandboxTerminate */
    rc = modal_exec_on("legacy", a, 7, &out);
    ok(rc == SBX_E_BACKEND && strstr(exec_error, "which no process ends with") &&
           !strstr(exec_error, "stream broke"),
       "modal: a legacy batch's exit code 256 is a protocol error, not a result (%d: %s)", rc,
       exec_error);
}

/* corpus/modal/found-stderr-renewal: the stderr stream's router token
 * was refused and could not be renewed: the error was set on the
 * stderr reader's thread, where the core (errors are per thread) never
 * saw it, and the exec failed without a word.  Which stream gets which
 * answer is up to the threads: tried 16 times. */
static void modal_stream_error(void)
{
    static const char refused[] = "grpc-status: 16\n\n";
    static const char compressed[] = "grpc-status: 0\n\n\001\0\0\0\0";
    struct buf a[10], read = { .len = 0 }, renewal = { .len = 0 };
    sbx_exec_outcome_v1 out;
    int silent = 0;

    put(&read, refused, sizeof refused - 1);               /* the token refused */
    put(&renewal, compressed, sizeof compressed - 1);      /* its renewal: not an answer */
    for (int t = 0; t < 16; t++) {
        int rc = modal_exec_on("router", a, modal_router_answers(a, &read, &renewal), &out);
        if (rc == SBX_OK || !exec_error[0])
            silent++;
    }
    ok(silent == 0, "modal: a stream whose token cannot be renewed fails the exec, saying why "
       "(%d of 16 silent; the last: %s)", silent, exec_error);
}
#endif

#if HAVE_FZ_HTTP
#include "shwrap.h"

/* corpus/cloudflare/found-exit-status-768: the wrapper's status line,
 * which the sandbox writes, said "S x768": read as exit code 768, a code
 * no process has.  Each kind's number has its range (an exit status
 * 0-255, a wait status 0-65535, an errno 0-4095), else it is no status. */
static void shwrap_status_range(void)
{
    static const struct { const char *line; sw_kind kind; long code; } cases[] = {
        { "S x768", SW_BAD, 0 },       { "S x256", SW_BAD, 0 },
        { "S x-1", SW_BAD, 0 },        { "S x 3", SW_BAD, 0 },
        { "S x+3", SW_BAD, 0 },        { "S w65536", SW_BAD, 0 },
        { "S e-2", SW_BAD, 0 },        { "S x99999999999999999999", SW_BAD, 0 },
        { "S x255", SW_EXITED, 255 },  { "S x0", SW_EXITED, 0 },
        { "S w512", SW_WAITED, 512 },  { "S e2", SW_EXEC_FAILED, 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sw_dec d;
        long code = -7;
        memset(&d, 0, sizeof d);
        snprintf(d.status, sizeof d.status, "%s", cases[i].line);
        sw_kind k = sw_outcome(&d, &code);
        ok(k == cases[i].kind && (k == SW_BAD || code == cases[i].code),
           "shwrap: status line '%s' reads as kind %d code %ld (got %d, %ld)", cases[i].line,
           (int)cases[i].kind, cases[i].code, (int)k, code);
    }
}
#endif

#include "server.h"

/* corpus/server/found-query-not-utf8: an error message quoting a query
 * key that is not UTF-8 (or a provider named so) could not be packed
 * into JSON, and polysandboxd answered 500 "out of memory" instead of
 * the 400 it meant; the bytes are now made text (U+FFFD each). */
static void server_error_not_utf8(void)
{
    json_t *j = srv_error_json("invalid", "p\xa2", "unknown query parameter 'x\xa2y'"), *e;

    e = json_object_get(j, "error");
    ok(j != NULL && e != NULL, "server: an error quoting bytes that are not UTF-8 is made");
    ok(e && !strcmp(json_string_value(json_object_get(e, "message")),
                    "unknown query parameter 'x\xef\xbf\xbdy'"),
       "server: ...each invalid byte quoted as U+FFFD");
    ok(e && !strcmp(json_string_value(json_object_get(e, "provider")), "p\xef\xbf\xbd"),
       "server: ...and the provider's name too");
    json_decref(j);
}

#if HAVE_FZ_IMAGE
#include "image/image-int.h"

/* corpus/image/found-long-registry: a registry of more than 255
 * characters was cut to fit the reference, which then named another
 * registry than the one written. */
static void image_long_registry(void)
{
    char s[400], why[160] = "";
    img_ref r;

    memset(s, 'm', 300);
    memcpy(s + 300, ".io/too", 8);
    ok(!img_ref_parse(s, &r, why, sizeof why) && strstr(why, "longer than 255"),
       "image: a registry longer than 255 characters is refused (%s)", why);
    memcpy(s + 255 - 3, ".io/too", 8);
    ok(img_ref_parse(s, &r, why, sizeof why) && strlen(r.domain) == 255,
       "image: ... one of 255 is kept whole");
}
#endif

int main(void)
{
    server_error_not_utf8();
#if HAVE_FZ_IMAGE
    image_long_registry();
#endif
#if HAVE_FZ_DOCKER
    tar_name_leak();
#endif
#if HAVE_FZ_HTTP
    shwrap_status_range();
    http_status_0();
    http_folded_header();
#endif
#if HAVE_FZ_E2B
    e2b_exit_code();
#endif
#if HAVE_FZ_DAYTONA
    daytona_exit_code();
#endif
#if HAVE_FZ_MODAL
    modal_exit_code();
    modal_stream_error();
#endif
    return tap_done();
}
