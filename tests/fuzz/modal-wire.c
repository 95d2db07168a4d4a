/* tests/fuzz/modal-wire.c - the modal provider's transport under the
 * harness: its one call of ph_do (modal-grpc.c, renamed fz_modal_ph_do
 * when built for the harness) answered from the canned answers
 *
 * Modal speaks gRPC over HTTP/2, which the canned server (HTTP/1.1 bytes
 * as they are) cannot carry, so the answers skip the socket: each call
 * takes the next one (fz_canned_next), whose text is
 *
 *     name: value        a header or trailer (grpc-status, grpc-message,
 *                        grpc-status-details-bin, content-type)
 *     :status N          the HTTP status (default 200)
 *     :chunk N           the body in pieces of N bytes (default: at once)
 *     :cut               the stream breaks after the body (SBX_E_NETWORK)
 *                        an empty line, then
 *     body               the gRPC frames (flag byte, 4-byte length, message)
 *
 * and everything past the first empty line is the body, handed to the
 * request's on_data, that is to mg_framer_feed, as libcurl would.  Past
 * the last answer a call gets grpc-status 12 (UNIMPLEMENTED).
 * SBX_FUZZ_TRACE=1 prints each call, as the canned server does each
 * request.
 *
 * With SBX_FUZZ_MODAL_RECORD=FILE the calls go to the real ph_do (at the
 * server the target was given: SBX_FUZZ_MODAL_URL, the fake of
 * tests/fakes/modal.py) and each answer is appended to FILE in the form
 * above, separated by FZ_SEPARATOR: that is how the seeds of
 * corpus/modal/ were recorded (README).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <polysandbox/common.h>
#include <polysandbox/sandbox.h>

#include "canned.h"
#include "fuzz.h"
#include "http.h"

#undef ph_do
int ph_do(ph_client *c, const ph_request *rq, ph_response *resp, char err[PH_ERR_MAX]);
int fz_modal_ph_do(ph_client *c, const ph_request *rq, ph_response *resp, char err[PH_ERR_MAX]);

/* ---- recording ---- */

struct tape {
    const ph_request *rq;
    uint8_t *body;
    size_t len, cap;
};

static int tape_data(void *ud, const void *buf, size_t len)
{
    struct tape *t = ud;

    if (t->len + len > t->cap) {
        size_t n = t->cap ? t->cap : 4096;
        while (n < t->len + len)
            n *= 2;
        if (!(t->body = realloc(t->body, n)))
            fz_fail("out of memory");
        t->cap = n;
    }
    memcpy(t->body + t->len, buf, len);
    t->len += len;
    return t->rq->on_data(t->rq->ud, buf, len);
}

static int record(const char *file, ph_client *c, const ph_request *rq, ph_response *resp,
                  char err[PH_ERR_MAX])
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int calls;
    struct tape t = { rq, NULL, 0, 0 };
    ph_request copy = *rq;
    FILE *f;
    int rc;

    copy.on_data = tape_data;
    copy.ud = &t;
    rc = ph_do(c, &copy, resp, err);
    pthread_mutex_lock(&lock);
    if (!(f = fopen(file, "ab")))
        fz_fail("%s: cannot append", file);
    if (calls++)
        fputs(FZ_SEPARATOR, f);
    if (resp->status != 200)
        fprintf(f, ":status %ld\n", resp->status);
    for (const struct curl_slist *l = resp->kept; l; l = l->next) {
        const char *colon = strchr(l->data, ':');
        fprintf(f, "%.*s: %s\n", (int)(colon - l->data), l->data, colon + 1);
    }
    if (rc == SBX_E_NETWORK)
        fputs(":cut\n", f);
    fputs("\n", f);
    if (t.len)
        fwrite(t.body, 1, t.len, f);
    if (fclose(f))
        fz_fail("%s: cannot write", file);
    pthread_mutex_unlock(&lock);
    free(t.body);
    return rc;
}

/* ---- replaying ---- */

static int wanted(const ph_request *rq, const char *name, size_t nl)
{
    for (size_t i = 0; rq->keep_headers && rq->keep_headers[i]; i++)
        if (strlen(rq->keep_headers[i]) == nl && !strncasecmp(rq->keep_headers[i], name, nl))
            return 1;
    return 0;
}

/* The decimal number at @p (the input is not NUL-terminated): at most 6
 * digits, the rest ignored. */
static size_t number(const uint8_t *p, size_t len)
{
    size_t n = 0;

    for (size_t i = 0; i < len && i < 6 && p[i] >= '0' && p[i] <= '9'; i++)
        n = n * 10 + (size_t)(p[i] - '0');
    return n;
}

/* Keeps "name:value" (trimmed) as ph_do would; 0 when out of memory. */
static int keep(ph_response *resp, const char *name, size_t nl, const char *v, size_t vl)
{
    char line[1024];
    struct curl_slist *l;

    while (vl && (*v == ' ' || *v == '\t'))
        v++, vl--;
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r'))
        vl--;
    if (nl + vl + 2 > sizeof line)
        vl = sizeof line - nl - 2;
    memcpy(line, name, nl);
    line[nl] = ':';
    memcpy(line + nl + 1, v, vl);
    line[nl + 1 + vl] = '\0';
    if (!(l = curl_slist_append(resp->kept, line)))
        return 0;
    resp->kept = l;
    return 1;
}

int fz_modal_ph_do(ph_client *c, const ph_request *rq, ph_response *resp, char err[PH_ERR_MAX])
{
    static const uint8_t none[] = "grpc-status: 12\ngrpc-message: no more answers\n\n";
    const char *rec = getenv("SBX_FUZZ_MODAL_RECORD");
    fz_part a = { none, sizeof none - 1 };
    const uint8_t *p, *end, *body;
    size_t chunk = 0;
    int cut = 0, got;

    memset(resp, 0, sizeof *resp);
    resp->retry_after_ms = -1;
    err[0] = '\0';
    if (rec && *rec)
        return record(rec, c, rq, resp, err);
    got = fz_canned_next(&a);
    if (getenv("SBX_FUZZ_TRACE"))
        fprintf(stderr, "modal: %s: %s\n", rq->path, got ? "answered" : "past the last answer");
    end = a.p + a.len;
    body = end;
    resp->status = 200;
    /* The head: lines up to the first empty one (or the end). */
    for (p = a.p; p < end;) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        size_t ll = (size_t)(le - p);
        const uint8_t *colon = memchr(p, ':', ll);

        if (ll == 0 || (ll == 1 && *p == '\r')) {
            body = le + (nl ? 1 : 0);
            break;
        }
        if (ll > 8 && !memcmp(p, ":status ", 8))
            resp->status = (long)number(p + 8, ll - 8);
        else if (ll > 7 && !memcmp(p, ":chunk ", 7))
            chunk = number(p + 7, ll - 7);
        else if (ll == 4 && !memcmp(p, ":cut", 4))
            cut = 1;
        else if (colon && colon > p && wanted(rq, (const char *)p, (size_t)(colon - p)) &&
                 !keep(resp, (const char *)p, (size_t)(colon - p), (const char *)colon + 1,
                       (size_t)(le - colon - 1)))
            goto nomem;
        p = le + (nl ? 1 : 0);
    }
    /* The body, to on_data of a 2xx answer as libcurl hands it over
     * (never in pieces of 0 bytes); collected otherwise. */
    if (resp->status >= 200 && resp->status < 300 && rq->on_data) {
        for (const uint8_t *q = body; q < end;) {
            size_t n = chunk && chunk < (size_t)(end - q) ? chunk : (size_t)(end - q);
            int rc = rq->on_data(rq->ud, q, n);
            if (rc) {
                snprintf(err, PH_ERR_MAX, "%s %s: the receiver stopped the transfer",
                         rq->method, rq->path);
                return rc;
            }
            q += n;
        }
        if (!(resp->body = strdup("")))
            goto nomem;
    } else {
        if (!(resp->body = fz_strndup(body, (size_t)(end - body))))
            goto nomem;
        resp->body_len = (size_t)(end - body);
    }
    if (cut) {
        snprintf(err, PH_ERR_MAX, "%s %s: the stream was reset", rq->method, rq->path);
        return SBX_E_NETWORK;
    }
    return SBX_OK;
nomem:
    snprintf(err, PH_ERR_MAX, "%s %s: out of memory", rq->method, rq->path);
    return SBX_E_NOMEM;
}
