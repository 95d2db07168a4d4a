/* plugins/kubernetes/kube-api.c - REST calls to the API server (libcurl)
 *
 * Each call takes a token of the client-side rate limit (qps, burst: the
 * client-go defaults' idea, so that a burst of creates does not meet the
 * server's priority-and-fairness 429s head on), a fresh bearer token, and
 * maps the answer's Status onto the core's codes.  A 401 with an exec
 * credential plugin runs the plugin again and retries once, as client-go
 * does; anything else retryable (429 with Retry-After, 5xx, transport
 * failures) goes back to the core, whose retries and circuit breaker
 * handle it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "kube-int.h"

/* The Retry-After of this thread's last error answer (-1: none), read by
 * kube_api_persist right after the call. */
static _Thread_local long last_retry_after_ms = -1;

void kube_rate_wait(struct kube_prov *p)
{
    __atomic_add_fetch(&p->n_requests, 1, __ATOMIC_RELAXED);
    if (p->qps <= 0)
        return;
    for (;;) {
        pthread_mutex_lock(&p->rl_lock);
        uint64_t now = kube_now_ns();
        p->rl_tokens += (double)(now - p->rl_last_ns) / 1e9 * p->qps;
        if (p->rl_tokens > p->burst)
            p->rl_tokens = p->burst;
        p->rl_last_ns = now;
        double wait_s = 0;
        if (p->rl_tokens >= 1.0)
            p->rl_tokens -= 1.0;
        else
            wait_s = (1.0 - p->rl_tokens) / p->qps;
        pthread_mutex_unlock(&p->rl_lock);
        if (wait_s <= 0)
            return;
        struct timespec ts = {(time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

char *kube_escape(const char *s)
{
    return ph_escape(s);
}

/* The Status of an error answer: its message (printable, short) and reason. */
static void status_text(const char *body, size_t len, char *msg, size_t cap, char *reason,
                        size_t rcap)
{
    json_t *j = len ? json_loadb(body, len, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(j, "message"));
    const char *r = json_string_value(json_object_get(j, "reason"));
    if (!m)
        m = body ? body : "";
    size_t o = 0;
    for (size_t i = 0; m[i] && o + 1 < cap && i < 400; i++)
        msg[o++] = (m[i] >= 0x20 && m[i] < 0x7f) ? m[i] : ' ';
    while (o > 0 && msg[o - 1] == ' ')
        o--;
    msg[o] = '\0';
    snprintf(reason, rcap, "%s", r ? r : "");
    json_decref(j);
}

int kube_status_error(struct kube_prov *p, const char *what, long status, const char *body,
                      size_t len, long retry_after_ms)
{
    char msg[420], reason[64], ra[64] = "";
    status_text(body, len, msg, sizeof msg, reason, sizeof reason);
    last_retry_after_ms = retry_after_ms;
    if (retry_after_ms >= 0) {
        kube_retry_after(p, retry_after_ms);
        snprintf(ra, sizeof ra, " (retry after %ld s)", (retry_after_ms + 999) / 1000);
    }
    int code = ph_status_code(status);
    const char *why = "";
    switch (status) {
    case 401:
        code = SBX_E_AUTH;
        why = " (the credential of the connection was refused: expired or revoked?)";
        break;
    case 403:
        if (strstr(msg, "exceeded quota")) {
            code = SBX_E_BUSY;   /* the namespace is full for now: retry, or fall back */
            why = " (a ResourceQuota of the namespace is used up)";
        } else if (strstr(msg, "failed quota") || strstr(msg, "must specify")) {
            code = SBX_E_INVAL;
        } else if (strstr(msg, "RuntimeClass")) {
            code = SBX_E_CONFIG;
            why = " (check runtime_class in providers.d/kubernetes.ini)";
        } else if (strstr(msg, "violates PodSecurity")) {
            code = SBX_E_CONFIG;
            why = " (the namespace's Pod Security level refuses the pod: check run_as_user)";
        } else if (strstr(msg, "being terminated")) {
            code = SBX_E_BUSY;
        } else {
            code = SBX_E_PERM;
            why = " (RBAC: see the Role in plugins/kubernetes/README.md)";
        }
        break;
    case 410:
        code = SBX_E_BACKEND;
        break;
    case 429:
        code = SBX_E_RATE_LIMITED;
        break;
    default:
        break;
    }
    return p->host->set_error(p->h, code, "%s: the API server answered %ld%s%s%s%s%s%s", what,
                              status, reason[0] ? " " : "", reason, msg[0] ? ": " : "", msg, ra,
                              why);
}

/* One request with the auth header; 401 retried once after the exec
 * plugin ran again. */
static int request(struct kube_prov *p, const char *what, ph_request *rq, ph_response *r)
{
    char err[PH_ERR_MAX];
    const char *extra_hdrs[6];
    size_t n = 0;
    for (size_t i = 0; rq->headers && rq->headers[i] && n < 4; i++)
        extra_hdrs[n++] = rq->headers[i];
    for (int attempt = 0;; attempt++) {
        char *line = NULL;
        size_t llen = 0;
        int rc = kube_auth_header(p, &line, &llen);
        if (rc)
            return rc;
        const char *hdrs[6];
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            hdrs[k++] = extra_hdrs[i];
        if (line)
            hdrs[k++] = line;
        hdrs[k] = NULL;
        const char *const *saved = rq->headers;
        rq->headers = hdrs;
        kube_rate_wait(p);
        rc = ph_do(p->api, rq, r, err);
        rq->headers = saved;
        kube_auth_drop(line, llen);
        if (rc == KUBE_STOP) {
            ph_response_clear(r);
            return rc;      /* the caller's callback had seen enough */
        }
        if (rc != SBX_OK) {
            ph_response_clear(r);
            return p->host->set_error(p->h, rc, "%s: %s (%s)", what, err, p->conn.server);
        }
        if (r->status == 401 && attempt == 0 && kube_auth_invalidate(p)) {
            ph_response_clear(r);
            continue;
        }
        return SBX_OK;
    }
}

int kube_api(struct kube_prov *p, const char *what, const char *method, const char *path,
             json_t *body, const char *content_type, long quiet, long *status, json_t **out)
{
    char *text = NULL;
    char *full = NULL;
    if (out)
        *out = NULL;
    if (status)
        *status = 0;
    if (asprintf(&full, "%s%s", p->conn.path_prefix, path) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    static const char *const accept[] = {"Accept: application/json", NULL};
    ph_request rq = {.method = method, .path = full, .headers = accept,
                     .timeout_ms = p->request_ms};
    if (body) {
        if (!(text = json_dumps(body, JSON_COMPACT))) {
            free(full);
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        }
        rq.body = text;
        rq.body_len = strlen(text);
        rq.content_type = content_type ? content_type : "application/json";
    }
    ph_response r;
    int rc = request(p, what, &rq, &r);
    free(text);
    free(full);
    if (rc)
        return rc;
    if (status)
        *status = r.status;
    if (r.status < 200 || r.status > 299) {
        rc = r.status == quiet ? ph_status_code(r.status)
                               : kube_status_error(p, what, r.status, r.body, r.body_len,
                                                   r.retry_after_ms);
        if (r.status == quiet && out && r.body_len)
            *out = json_loadb(r.body, r.body_len, 0, NULL);
        ph_response_clear(&r);
        return rc;
    }
    if (out && r.body_len > 0) {
        json_error_t je;
        if (!(*out = json_loadb(r.body, r.body_len, 0, &je)))
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "%s: the answer is not JSON (%s)", what,
                                    je.text);
    }
    ph_response_clear(&r);
    return rc;
}

long kube_last_retry_after(void)
{
    return last_retry_after_ms;
}

bool kube_transient(int rc)
{
    return rc == SBX_E_NETWORK || rc == SBX_E_SERVER || rc == SBX_E_RATE_LIMITED ||
           rc == SBX_E_TIMEOUT;
}

void kube_backoff(struct kube_prov *p, unsigned attempt, long retry_after_ms)
{
    (void)p;
    uint64_t ms = 50u << (attempt < 6 ? attempt : 6);
    if (ms > 2000)
        ms = 2000;
    unsigned char r = 0;
    if (getrandom(&r, 1, GRND_NONBLOCK) == 1)
        ms = ms / 2 + ms * r / 512;     /* jitter: half to the full wait */
    if (retry_after_ms >= 0 && (uint64_t)retry_after_ms > ms)
        ms = retry_after_ms > 5000 ? 5000 : (uint64_t)retry_after_ms;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int kube_api_persist(struct kube_prov *p, const char *what, const char *method, const char *path,
                     json_t *body, long quiet, long *status, json_t **out)
{
    for (unsigned attempt = 0;; attempt++) {
        long st = 0;
        last_retry_after_ms = -1;
        int rc = kube_api(p, what, method, path, body, NULL, quiet, &st, out);
        if (status)
            *status = st;
        if (!kube_transient(rc) || attempt + 1 >= KUBE_PERSIST_ATTEMPTS)
            return rc;
        if (out) {
            json_decref(*out);
            *out = NULL;
        }
        kube_backoff(p, attempt, last_retry_after_ms);
    }
}

int kube_api_delete_now(struct kube_prov *p, const char *what, char *path)
{
    json_t *body = json_pack("{s:s,s:s,s:I,s:s}", "kind", "DeleteOptions", "apiVersion", "v1",
                             "gracePeriodSeconds", (json_int_t)0, "propagationPolicy",
                             "Foreground");
    int rc = path && body ? kube_api_persist(p, what, "DELETE", path, body, 404, NULL, NULL)
                          : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    free(path);
    json_decref(body);
    return rc == SBX_E_NOT_FOUND ? SBX_OK : rc;   /* gone already: what we wanted */
}

int kube_api_stream(struct kube_prov *p, const char *what, const char *path, long timeout_ms,
                    int (*on_data)(void *ud, const void *buf, size_t len), void *ud, long *status)
{
    char *full = NULL;
    *status = 0;
    if (asprintf(&full, "%s%s", p->conn.path_prefix, path) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    static const char *const accept[] = {"Accept: application/json", NULL};
    ph_request rq = {.method = "GET", .path = full, .headers = accept, .timeout_ms = timeout_ms,
                     .on_data = on_data, .ud = ud};
    ph_response r;
    int rc = request(p, what, &rq, &r);
    free(full);
    if (rc)
        return rc;
    *status = r.status;
    if (r.status < 200 || r.status > 299)
        rc = kube_status_error(p, what, r.status, r.body, r.body_len, r.retry_after_ms);
    ph_response_clear(&r);
    return rc;
}
