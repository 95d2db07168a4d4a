/* plugins/volcengine/volc-api.c - the volcengine provider's two services:
 * signed calls to the OpenAPI gateway and its error shape, and calls to a
 * sandbox's AIO server through the function gateway
 *
 * The credentials are opened from the configuration for each call only:
 * the secret key is lent to the signature (volc-sign.c) and given back,
 * the access key id and the session token go out in header lines that
 * are wiped after the call.  No message says any of them: the service's
 * own message is scrubbed of the access key id before it is shown.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "volc-int.h"
#include "volc-sign.h"

/* Error codes of the gateway that mean "slow down" (the Volcengine SDKs'
 * throttle list, and the gateway's own flow limit). */
static const char *const throttle_codes[] = {
    "FlowLimitExceeded", "RequestLimitExceeded", "Throttling", "ThrottlingException",
    "RequestThrottled", "TooManyRequests", NULL,
};
/* Codes that refuse the request's time, not its key. */
static const char *const clock_codes[] = {
    "InvalidTimestamp", "RequestExpired", "SignatureExpired", NULL,
};
/* Codes that refuse the credentials. */
static const char *const auth_codes[] = {
    "SignatureDoesNotMatch", "InvalidAccessKey", "InvalidSecretToken", "InvalidCredential",
    "InvalidAuthorization", "MissingAuthenticationToken", "AccessDenied", "ExpiredToken",
    NULL,
};

static bool listed(const char *const *codes, const char *code)
{
    for (size_t i = 0; code && codes[i]; i++)
        if (!strcmp(codes[i], code))
            return true;
    return false;
}

/* @m made printable and short into @out, every occurrence of @hide (the
 * access key id, when not NULL) replaced by "***". */
static void printable(const char *m, const char *hide, size_t hide_len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; m && m[i] && o + 4 < cap && i < 400; i++) {
        if (hide_len && !strncmp(m + i, hide, hide_len)) {
            memcpy(out + o, "***", 3);
            o += 3;
            i += hide_len - 1;
            continue;
        }
        out[o++] = (m[i] >= 0x20 && m[i] < 0x7f) ? m[i] : ' ';
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
}

/* ---- the OpenAPI gateway ---- */

struct creds {
    const char *ak, *sk, *token;
    size_t ak_len, sk_len, token_len;
};

static void creds_release(struct vc_prov *p, struct creds *c)
{
    if (c->ak)
        p->host->secret_release(p->h, c->ak);
    if (c->sk)
        p->host->secret_release(p->h, c->sk);
    if (c->token)
        p->host->secret_release(p->h, c->token);
    memset(c, 0, sizeof *c);
}

static bool one_line(const char *s, size_t n)
{
    return n > 0 && !memchr(s, '\n', n) && !memchr(s, '\r', n);
}

static int creds_open(struct vc_prov *p, struct creds *c)
{
    static const char *const names[] = {"access_key_id", "secret_access_key"};
    memset(c, 0, sizeof *c);
    int rc = p->host->secret_get(p->h, names[0], &c->ak, &c->ak_len);
    if (rc == SBX_OK)
        rc = p->host->secret_get(p->h, names[1], &c->sk, &c->sk_len);
    if (rc == SBX_E_NOT_FOUND) {
        creds_release(p, c);
        return p->host->set_error(p->h, SBX_E_CONFIG, VC_INI " sets no %s (e.g. %s = "
                                  "env:VOLCENGINE_%s)", c->ak ? names[1] : names[0],
                                  c->ak ? names[1] : names[0],
                                  c->ak ? "SECRET_KEY" : "ACCESS_KEY");
    }
    if (rc != SBX_OK) {
        creds_release(p, c);
        return rc;  /* the core said which reference failed, without the value */
    }
    rc = p->host->secret_get(p->h, "session_token", &c->token, &c->token_len);
    if (rc == SBX_E_NOT_FOUND) {
        c->token = NULL;
        rc = SBX_OK;
    }
    if (rc != SBX_OK) {
        creds_release(p, c);
        return rc;
    }
    if (!one_line(c->ak, c->ak_len) || !one_line(c->sk, c->sk_len) ||
        (c->token && !one_line(c->token, c->token_len))) {
        creds_release(p, c);
        return p->host->set_error(p->h, SBX_E_CONFIG, VC_INI ": access_key_id, "
                                  "secret_access_key or session_token is empty or spans lines");
    }
    return SBX_OK;
}

/* "Name: value" in memory that is wiped on free. */
static char *line_of(const char *name, const char *value, size_t vlen)
{
    size_t nl = strlen(name), n = nl + 2 + vlen + 1;
    char *l = sodium_malloc(n);
    if (!l)
        return NULL;
    memcpy(l, name, nl);
    memcpy(l + nl, ": ", 2);
    memcpy(l + nl + 2, value, vlen);
    l[n - 1] = '\0';
    return l;
}

static int openapi_error(struct vc_prov *p, const char *what, const ph_response *r,
                         json_t *ans, const struct creds *c)
{
    json_t *e = json_object_get(json_object_get(ans, "ResponseMetadata"), "Error");
    const char *code = json_string_value(json_object_get(e, "Code"));
    char msg[420], ra[48] = "";
    printable(json_string_value(json_object_get(e, "Message")), c->ak, c->ak ? c->ak_len : 0,
              msg, sizeof msg);
    if (!json_is_object(ans) && r->body_len)
        printable(r->body, c->ak, c->ak ? c->ak_len : 0, msg, sizeof msg);
    long s = r->status;
    vc_retry_after(p, NULL, r->retry_after_ms);
    if (r->retry_after_ms >= 0)
        snprintf(ra, sizeof ra, " (retry after %ld ms)", r->retry_after_ms);
    if (listed(throttle_codes, code) || s == 429)
        return p->host->set_error(p->h, SBX_E_RATE_LIMITED, VC_NAME ": %s: rate limited (HTTP "
                                  "%ld %s)%s: %s", what, s, code ? code : "", ra, msg);
    if (listed(clock_codes, code))
        return p->host->set_error(p->h, SBX_E_AUTH, VC_NAME ": %s: the request's time was "
                                  "refused (HTTP %ld %s: %s): is this host's clock right?",
                                  what, s, code, msg);
    if (listed(auth_codes, code) || s == 401 || s == 403)
        return p->host->set_error(p->h, SBX_E_AUTH, VC_NAME ": %s: the credentials were "
                                  "refused (HTTP %ld %s: %s; check access_key_id and "
                                  "secret_access_key in " VC_INI ")", what, s,
                                  code ? code : "", msg);
    int rc = (s >= 200 && s < 300) ? SBX_E_BACKEND : ph_status_code(s);
    if (code && strstr(code, "NotFound"))
        rc = SBX_E_NOT_FOUND;
    return p->host->set_error(p->h, rc, VC_NAME ": %s: HTTP %ld %s%s: %s", what, s,
                              code ? code : "", ra, msg[0] ? msg : "no message");
}

bool vc_not_found(int rc, long status)
{
    return rc == SBX_E_NOT_FOUND || (rc != SBX_OK && status == 404);
}

int vc_openapi(struct vc_prov *p, const char *what, const char *action, json_t *body,
               json_t **result, long *status)
{
    struct creds c;
    char path[168], query[160], x_date[17], body_hash[65], err[PH_ERR_MAX];
    char *text = NULL, *auth = NULL, *l_auth = NULL, *l_token = NULL, *l_host = NULL;
    char l_date[32], l_hash[96];
    ph_response r = {0};
    json_t *ans = NULL;
    int rc;

    if (result)
        *result = NULL;
    if (status)
        *status = 0;
    if ((rc = creds_open(p, &c)) != SBX_OK)
        return rc;
    snprintf(query, sizeof query, "Action=%s&Version=" VC_VERSION, action);
    snprintf(path, sizeof path, "/?%s", query);
    vc_x_date(time(NULL), x_date);
    if (!(text = json_dumps(body, JSON_COMPACT))) {
        creds_release(p, &c);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    vc_sha256_hex(text, strlen(text), body_hash);
    vc_header hs[5] = {
        {"Content-Type", "application/json"},
        {"Host", p->api_host},
        {"X-Content-Sha256", body_hash},
        {"X-Date", x_date},
        {"X-Security-Token", c.token},
    };
    vc_sign_in in = {.method = "POST", .path = "/", .query = query, .headers = hs,
                     .n_headers = c.token ? 5 : 4, .body = text, .body_len = strlen(text),
                     .access_key = c.ak, .secret_key = c.sk, .secret_len = c.sk_len,
                     .region = p->region, .service = VC_SERVICE, .x_date = x_date};
    auth = vc_authorization(&in, NULL);
    if (auth)
        l_auth = line_of("Authorization", auth, strlen(auth));
    if (c.token)
        l_token = line_of("X-Security-Token", c.token, c.token_len);
    l_host = line_of("Host", p->api_host, strlen(p->api_host));
    if (auth) {
        sodium_memzero(auth, strlen(auth));
        free(auth);
    }
    if (!l_auth || !l_host || (c.token && !l_token)) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto done;
    }
    snprintf(l_date, sizeof l_date, "X-Date: %s", x_date);
    snprintf(l_hash, sizeof l_hash, "X-Content-Sha256: %s", body_hash);
    const char *headers[] = {l_host, l_date, l_hash, l_auth, "Accept: application/json",
                             l_token, NULL};
    ph_request rq = {.method = "POST", .path = path, .headers = headers, .body = text,
                     .body_len = strlen(text), .content_type = "application/json",
                     .timeout_ms = p->request_ms};
    rc = ph_do(p->api, &rq, &r, err);
    if (status)
        *status = r.status;
    if (rc != SBX_OK) {
        rc = p->host->set_error(p->h, rc, VC_NAME ": %s: %s", what, err);
        goto done;
    }
    ans = r.body_len ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    json_t *meta = json_object_get(ans, "ResponseMetadata");
    if (r.status < 200 || r.status > 299 || json_object_get(meta, "Error")) {
        rc = openapi_error(p, what, &r, ans, &c);
        goto done;
    }
    json_t *res = json_object_get(ans, "Result");
    if (!json_is_object(res)) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": %s: the answer (HTTP %ld) has "
                                "no Result object", what, r.status);
        goto done;
    }
    if (result)
        *result = json_incref(res);
done:
    creds_release(p, &c);
    if (l_auth)
        sodium_free(l_auth);
    if (l_token)
        sodium_free(l_token);
    if (l_host)
        sodium_free(l_host);
    free(text);
    json_decref(ans);
    ph_response_clear(&r);
    return rc;
}

/* ---- the AIO server of a sandbox ---- */

int vc_aio(struct vc_prov *p, struct vc_sb *s, const char *what, const char *path, json_t *body,
           long timeout_ms, json_t **data, long *status)
{
    const char *id = s->id;
    char err[PH_ERR_MAX], *text = NULL, *url = NULL, *l_key = NULL, *eid = ph_escape(id);
    const char *key = NULL;
    size_t klen = 0;
    ph_response r = {0};
    json_t *ans = NULL;
    int rc;

    if (data)
        *data = NULL;
    if (status)
        *status = 0;
    rc = p->host->secret_get(p->h, "sandbox_api_key", &key, &klen);
    if (rc == SBX_E_NOT_FOUND) {
        key = NULL;
        rc = SBX_OK;
    }
    if (rc != SBX_OK) {
        free(eid);
        return rc;
    }
    if (key) {
        bool usable = one_line(key, klen);
        if (usable)
            l_key = line_of("X-AIO-API-Key", key, klen);
        p->host->secret_release(p->h, key);
        if (!l_key) {
            free(eid);
            if (!usable)
                return p->host->set_error(p->h, SBX_E_CONFIG, VC_INI ": sandbox_api_key is "
                                          "empty or spans lines");
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        }
    }
    if (!eid || asprintf(&url, "%s?faasInstanceName=%s", path, eid) < 0 ||
        !(text = json_dumps(body, JSON_COMPACT))) {
        if (l_key)
            sodium_free(l_key);
        free(eid);
        free(url);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    free(eid);
    const char *headers[] = {"Accept: application/json", l_key, NULL};
    ph_request rq = {.method = "POST", .path = url, .headers = headers, .body = text,
                     .body_len = strlen(text), .content_type = "application/json",
                     .timeout_ms = timeout_ms > 0 ? timeout_ms : p->request_ms,
                     .max_body = 256u * 1024 * 1024};
    rc = ph_do(p->gw, &rq, &r, err);
    if (l_key)
        sodium_free(l_key);
    free(text);
    free(url);
    if (status)
        *status = r.status;
    if (rc != SBX_OK) {
        ph_response_clear(&r);
        return p->host->set_error(p->h, rc, VC_NAME ": sandbox %s: %s: %s", id, what, err);
    }
    ans = r.body_len ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    char msg[420];
    const char *m = json_string_value(json_object_get(ans, "message"));
    printable(m ? m : (ans ? NULL : r.body), NULL, 0, msg, sizeof msg);
    if (r.status < 200 || r.status > 299) {
        vc_retry_after(p, s, r.retry_after_ms);
        if (r.status == 401 || r.status == 403)
            rc = p->host->set_error(p->h, SBX_E_AUTH, VC_NAME ": sandbox %s: %s: the sandbox "
                                    "refused the request (HTTP %ld: %s; check sandbox_api_key "
                                    "in " VC_INI ")", id, what, r.status, msg);
        else if (r.status == 404)
            rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, VC_NAME ": sandbox %s: %s: the "
                                    "gateway finds no such sandbox (HTTP 404: %s): killed or "
                                    "expired", id, what, msg);
        else
            rc = p->host->set_error(p->h, ph_status_code(r.status), VC_NAME ": sandbox %s: %s: "
                                    "HTTP %ld: %s", id, what, r.status, msg);
    } else if (!json_is_object(ans)) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: %s: the answer is "
                                "not JSON (is gateway_url the function's AIO sandbox?)", id,
                                what);
    } else if (json_is_false(json_object_get(ans, "success"))) {
        json_t *d = json_object_get(ans, "data");
        const char *dm = json_string_value(json_object_get(d, "message"));
        char dmsg[420];
        printable(dm, NULL, 0, dmsg, sizeof dmsg);
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: %s failed: %s%s%s",
                                id, what, msg, dm ? ": " : "", dm ? dmsg : "");
    } else if (data) {
        *data = json_incref(json_object_get(ans, "data"));
    }
    json_decref(ans);
    ph_response_clear(&r);
    return rc;
}
