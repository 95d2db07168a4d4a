/* tests/fuzz/fuzz-http.c - the HTTP client of the network providers
 * (plugins/common/http.c over libcurl): whatever a service answers
 *
 * The rest of the input after the first byte is up to four raw answers
 * separated by FZ_SEPARATOR; one request is made for each, with options
 * from the first byte (headers kept, a streaming callback that may stop
 * the transfer, a small body cap, the method, ph_json instead of ph_do).
 * Beyond not crashing: a body is NUL-terminated and within its cap, kept
 * headers come trimmed, Retry-After is within a day, a failure says why,
 * and the client's key header never shows in a message (unless the
 * answer itself holds it: error messages quote what the service said).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/common.h>
#include <polysandbox/sandbox.h>

#include "canned.h"
#include "fuzz.h"
#include "http.h"

#define KEY "fz-http-key-5f2d1c"
#define MAX_ANSWERS 4

static ph_client *client;

static void init(void)
{
    ph_client_conf conf = { .base_url = fz_canned_url(), .timeout_ms = 5000 };
    char err[PH_ERR_MAX];

    if (ph_client_new(&conf, &client, err) != SBX_OK ||
        ph_client_set_header(client, "X-API-KEY", KEY) != SBX_OK)
        fz_fail("the harness's client: %s", err);
}

struct stream {
    size_t got, stop_at;
};

static int on_data(void *ud, const void *buf, size_t len)
{
    struct stream *s = ud;
    (void)buf;
    s->got += len;
    return s->stop_at && s->got >= s->stop_at ? SBX_E_LIMIT : 0;
}

static void check_text(const char *err, const char *what)
{
    if (strstr(err, KEY) && !fz_canned_holds(KEY))
        fz_fail("the key header is in %s: %s", what, err);
}

static void check_header(const char *v, const char *name)
{
    size_t n;

    if (!v)
        return;
    n = strlen(v);
    if (n && (v[0] == ' ' || v[0] == '\t' || v[n - 1] == ' ' || v[n - 1] == '\t' ||
              v[n - 1] == '\r' || v[n - 1] == '\n'))
        fz_fail("header %s kept untrimmed: '%s'", name, v);
}

static void request(unsigned opts, unsigned arg)
{
    static const char *const methods[] = { "GET", "HEAD", "POST", "DELETE" };
    static const char *const keep[] = { "X-Next-Token", "Retry-After", "Location", NULL };
    const char *method = methods[(opts >> 3) & 3];
    struct stream st = { 0, (opts & 2) && arg ? arg * 16 : 0 };
    char err[PH_ERR_MAX] = "";
    ph_request rq = {
        .method = method, .path = "/v1/fuzz?x=1",
        .body = !strcmp(method, "POST") ? "{\"a\":1}" : NULL,
        .body_len = !strcmp(method, "POST") ? 7 : 0,
        .content_type = !strcmp(method, "POST") ? "application/json" : NULL,
        .on_data = (opts & 2) ? on_data : NULL, .ud = &st,
        .max_body = (opts & 4) ? (size_t)arg * 4 : 0,
        .keep_headers = (opts & 1) ? keep : NULL,
    };
    ph_response r;
    int rc;

    if (opts & 32) {
        json_t *out = NULL;
        long status = 0, ra = 0;
        rc = ph_json(client, method, "/v1/fuzz", NULL, 0, &status, &ra, &out, err);
        if (rc != SBX_OK && !err[0])
            fz_fail("ph_json failed (%d) without a message", rc);
        if (rc == SBX_OK && (status < 200 || status > 299))
            fz_fail("ph_json succeeded on HTTP %ld", status);
        if (ra < -1 || ra > 86400L * 1000)
            fz_fail("Retry-After of %ld ms", ra);
        check_text(err, "an error");
        json_decref(out);
        return;
    }
    rc = ph_do(client, &rq, &r, err);
    if (rc != SBX_OK) {
        if (!err[0])
            fz_fail("ph_do failed (%d) without a message", rc);
        check_text(err, "an error");
    } else {
        size_t cap = rq.max_body ? rq.max_body : 16u << 20;
        if (!r.body || r.body[r.body_len] != '\0')
            fz_fail("a body that is not NUL-terminated");
        if (r.body_len > cap)
            fz_fail("a body of %zu bytes over its cap of %zu", r.body_len, cap);
        if (r.status < 100 || r.status > 999)
            fz_fail("HTTP status %ld", r.status);
        for (size_t i = 0; keep[i] && rq.keep_headers; i++)
            check_header(ph_response_header(&r, keep[i]), keep[i]);
        (void)ph_status_code(r.status);
    }
    if (r.retry_after_ms < -1 || r.retry_after_ms > 86400L * 1000)
        fz_fail("Retry-After of %ld ms", r.retry_after_ms);
    ph_response_clear(&r);
}

static int one(const uint8_t *data, size_t size)
{
    fz_part parts[MAX_ANSWERS];
    unsigned opts = size ? data[0] : 0, arg = size > 1 ? data[1] : 0;
    size_t n = fz_split(size > 2 ? data + 2 : data, size > 2 ? size - 2 : 0, parts, MAX_ANSWERS);

    if (!client)
        init();
    fz_canned_set(parts, n);
    for (size_t i = 0; i < n; i++)
        request(opts, arg);
    return 0;
}

FZ_TARGET(http, init, one)
