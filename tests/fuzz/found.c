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

#include "../unit/tap.h"

/* Bytes in use on the heap, or 0 when the allocator is not glibc's. */
static __attribute__((unused)) size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}

#if HAVE_FZ_DOCKER
#include "docker-int.h"

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

#include "canned.h"
#include "fuzz.h"
#include "http.h"

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
    ph_client_conf conf = { .base_url = fz_canned_url(), .timeout_ms = 5000 };
    ph_client *c = NULL;
    ph_request rq = { .method = "GET", .path = "/x" };
    ph_response r;
    char err[PH_ERR_MAX] = "";
    int rc;

    if (ph_client_new(&conf, &c, err) != SBX_OK) {
        ok(0, "http: a client (%s)", err);
        return;
    }
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
    ph_client_conf conf = { .base_url = fz_canned_url(), .timeout_ms = 5000 };
    ph_client *c = NULL;
    ph_request rq = { .method = "GET", .path = "/x" };
    ph_response r;
    char err[PH_ERR_MAX] = "";
    long status[3] = { 0, 0, 0 };
    int rc[3];

    if (ph_client_new(&conf, &c, err) != SBX_OK) {
        ok(0, "http: a client (%s)", err);
        return;
    }
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
#endif

int main(void)
{
#if HAVE_FZ_DOCKER
    tar_name_leak();
#endif
#if HAVE_FZ_HTTP
    http_status_0();
    http_folded_header();
#endif
    return tap_done();
}
