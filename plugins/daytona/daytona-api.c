/* plugins/daytona/daytona-api.c - calls on the Daytona API: auth headers,
 * error messages, waiting for a sandbox to start, finding its toolbox */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "daytona-int.h"
#include "retry-hints.h"

int dt_client_auth(struct dt_prov *p, ph_client *c)
{
    const char *key = NULL;
    size_t len = 0;
    int rc = p->host->secret_get(p->h, "api_key", &key, &len);

    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  DT_INI ": api_key is not set (e.g. api_key = env:DAYTONA_API_KEY)");
    if (rc != SBX_OK)
        return rc;  /* the core said which reference failed */
    if (len == 0 || memchr(key, '\n', len) || memchr(key, '\r', len)) {
        p->host->secret_release(p->h, key);
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  DT_INI ": api_key is empty or holds a line break");
    }
    /* "Bearer " + key, in memory wiped before it is freed. */
    char *v = sodium_malloc(len + 8);
    if (!v) {
        p->host->secret_release(p->h, key);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    memcpy(v, "Bearer ", 7);
    memcpy(v + 7, key, len + 1);
    p->host->secret_release(p->h, key);
    rc = ph_client_set_header(c, "Authorization", v);
    sodium_free(v);
    if (rc == SBX_OK && p->org_id)
        rc = ph_client_set_header(c, "X-Daytona-Organization-ID", p->org_id);
    if (rc == SBX_OK)
        rc = ph_client_set_header(c, "X-Daytona-Source", "polysandbox");
    if (rc != SBX_OK)
        return p->host->set_error(p->h, rc, "out of memory");
    return SBX_OK;
}

void dt_retry_after(struct dt_prov *p, struct dt_sb *s, long ms)
{
    pc_retry_after(p->host, p->h, s ? &s->hints : NULL, ms);
}

void dt_not_started(struct dt_sb *s)
{
    pc_hints_not_started(&s->hints);
}

int dt_toolbox_refused(struct dt_prov *p, struct dt_sb *s, const ph_response *r,
                       const char *fmt, ...)
{
    char *what = NULL;
    va_list ap;

    va_start(ap, fmt);
    int n = vasprintf(&what, fmt, ap);
    va_end(ap);
    if (n < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    json_t *ej = json_loadb(r->body, r->body_len, 0, NULL);
    const char *m = json_string_value(json_object_get(ej, "message"));
    int rc = ph_status_code(r->status);
    dt_retry_after(p, s, r->retry_after_ms);
    if (rc == SBX_E_RATE_LIMITED && r->retry_after_ms >= 0)
        p->host->set_error(p->h, rc, "daytona: sandbox %s: %s: HTTP %ld: %.200s (retry after %ld ms)",
                           s->id, what, r->status, m ? m : "", r->retry_after_ms);
    else
        p->host->set_error(p->h, rc, "daytona: sandbox %s: %s: HTTP %ld: %.200s", s->id, what,
                           r->status, m ? m : "");
    json_decref(ej);
    free(what);
    return rc;
}

int dt_api(struct dt_prov *p, const char *what, const char *method, const char *path,
           json_t *body, long *status, json_t **out)
{
    char err[PH_ERR_MAX];
    long st = 0, ra = -1;
    json_t *j = NULL;
    int rc = ph_json(p->api, method, path, body, p->request_ms, &st, &ra, &j, err);

    if (status)
        *status = st;
    if (rc != SBX_OK) {
        json_decref(j);
        if (out)
            *out = NULL;
        dt_retry_after(p, NULL, ra);
        if (rc == SBX_E_RATE_LIMITED && ra >= 0)
            return p->host->set_error(p->h, rc, "daytona: %s: %s (retry after %ld ms)", what,
                                      err, ra);
        if (rc == SBX_E_AUTH)
            return p->host->set_error(p->h, rc, "daytona: %s: %s (check api_key in " DT_INI ")",
                                      what, err);
        return p->host->set_error(p->h, rc, "daytona: %s: %s", what, err);
    }
    if (out)
        *out = j;
    else
        json_decref(j);
    return SBX_OK;
}

static const char *str_of(json_t *j, const char *key)
{
    json_t *v = json_object_get(j, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int dt_wait_started(struct dt_prov *p, const char *id, json_t *first, json_t **sandbox)
{
    uint64_t deadline = dt_now_ns() + (uint64_t)p->start_ms * 1000000u;
    json_t *j = json_incref(first);
    long nap = 50;
    bool started_once = false;
    char path[SBX_ID_MAX + 32], what[SBX_ID_MAX + 64];
    int rc;

    *sandbox = NULL;
    snprintf(path, sizeof path, "/sandbox/%s", id);
    snprintf(what, sizeof what, "sandbox %s", id);
    for (;;) {
        const char *st = j ? str_of(j, "state") : NULL;
        if (st && !strcmp(st, "started")) {
            *sandbox = j;
            return SBX_OK;
        }
        if (st && (!strcmp(st, "error") || !strcmp(st, "build_failed"))) {
            const char *why = str_of(j, "errorReason");
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "daytona: sandbox %s is in state '%s'%s%s",
                                    id, st, why ? ": " : "", why ? why : "");
            json_decref(j);
            return rc;
        }
        if (st && (!strcmp(st, "destroyed") || !strcmp(st, "destroying"))) {
            json_decref(j);
            return p->host->set_error(p->h, SBX_E_NOT_FOUND, "daytona: sandbox %s is %s", id, st);
        }
        if (st && !started_once && (!strcmp(st, "stopped") || !strcmp(st, "archived"))) {
            /* Auto-stopped (or archived): start it again. */
            char sp[SBX_ID_MAX + 40];
            json_t *n = NULL;
            snprintf(sp, sizeof sp, "/sandbox/%s/start", id);
            started_once = true;
            json_decref(j);
            j = NULL;
            if ((rc = dt_api(p, what, "POST", sp, NULL, NULL, &n)) != SBX_OK)
                return rc;
            j = n;
            continue;
        }
        if (dt_now_ns() >= deadline) {
            rc = p->host->set_error(p->h, SBX_E_TIMEOUT,
                                    "daytona: sandbox %s was not started within %ld ms (state '%s'; "
                                    "start_timeout in " DT_INI ")",
                                    id, p->start_ms, st ? st : "unknown");
            json_decref(j);
            return rc;
        }
        nap_ms(nap);
        if (nap < 500)
            nap = nap * 3 / 2;
        json_decref(j);
        j = NULL;
        rc = dt_api(p, what, "GET", path, NULL, NULL, &j);
        /* A passing failure is part of the wait, not its end; a refusal
         * (auth, not found, bad request) is. */
        if (rc != SBX_OK && rc != SBX_E_NETWORK && rc != SBX_E_SERVER &&
            rc != SBX_E_RATE_LIMITED && rc != SBX_E_TIMEOUT)
            return rc;
        if (rc != SBX_OK && dt_now_ns() >= deadline)
            return rc;
    }
}

int dt_toolbox_open(struct dt_prov *p, struct dt_sb *s, json_t *j)
{
    char err[PH_ERR_MAX];
    json_t *pj = NULL;
    const char *base = p->toolbox_url ? p->toolbox_url : str_of(j, "toolboxProxyUrl");
    char *url = NULL;
    int rc;

    if (!base || !*base) {
        /* Older API answers lack toolboxProxyUrl: ask for it. */
        char path[SBX_ID_MAX + 40];
        snprintf(path, sizeof path, "/sandbox/%s/toolbox-proxy-url", s->id);
        if ((rc = dt_api(p, "toolbox proxy URL", "GET", path, NULL, NULL, &pj)) != SBX_OK)
            return rc;
        base = str_of(pj, "url");
        if (!base || !*base) {
            json_decref(pj);
            return p->host->set_error(p->h, SBX_E_BACKEND,
                                      "daytona: sandbox %s: no toolbox proxy URL in the answer",
                                      s->id);
        }
    }
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    if (asprintf(&url, "%.*s/%s", (int)n, base, s->id) < 0) {
        json_decref(pj);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    json_decref(pj);
    ph_client_conf conf = {.base_url = url, .ca_file = p->ca_file, .timeout_ms = p->request_ms};
    rc = ph_client_new(&conf, &s->tb, err);
    if (rc != SBX_OK) {
        rc = p->host->set_error(p->h, rc, "daytona: toolbox URL '%s': %s", url, err);
        free(url);
        return rc;
    }
    free(url);
    return dt_client_auth(p, s->tb);
}

int dt_workdir(struct dt_prov *p, struct dt_sb *s)
{
    char err[PH_ERR_MAX];
    json_t *j = NULL;
    long st = 0, ra = -1;

    if (s->workdir)
        return SBX_OK;
    int rc = ph_json(s->tb, "GET", "/work-dir", NULL, p->request_ms, &st, &ra, &j, err);
    if (rc != SBX_OK && dt_revive(p, s, st)) {
        json_decref(j);
        j = NULL;
        rc = ph_json(s->tb, "GET", "/work-dir", NULL, p->request_ms, &st, &ra, &j, err);
    }
    if (rc != SBX_OK)
        return p->host->set_error(p->h, rc, "daytona: sandbox %s: work directory: %s", s->id, err);
    const char *d = str_of(j, "dir");
    if (!d || d[0] != '/' || strchr(d, '\n')) {
        json_decref(j);
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "daytona: sandbox %s: GET /work-dir gave no absolute \"dir\"",
                                  s->id);
    }
    s->workdir = strdup(d);
    json_decref(j);
    if (!s->workdir)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    /* "/" would make scratch paths start with "//": harmless, but keep it tidy. */
    size_t n = strlen(s->workdir);
    while (n > 1 && s->workdir[n - 1] == '/')
        s->workdir[--n] = '\0';
    return SBX_OK;
}

bool dt_revive(struct dt_prov *p, struct dt_sb *s, long status)
{
    char path[SBX_ID_MAX + 16];
    json_t *j = NULL, *ready = NULL;

    /* Refusals of the proxy for a sandbox that is not running are 4xx;
     * credentials, rate limits and timeouts mean something else. */
    if (status < 400 || status >= 500 || status == 401 || status == 403 || status == 408 ||
        status == 429)
        return false;
    snprintf(path, sizeof path, "/sandbox/%s", s->id);
    if (dt_api(p, s->id, "GET", path, NULL, NULL, &j) != SBX_OK)
        return false;
    const char *st = str_of(j, "state");
    if (!st || !strcmp(st, "started")) {
        json_decref(j);
        return false;
    }
    p->host->log(p->h, SBX_LOG_INFO, "sandbox %s is %s: starting it again", s->id, st);
    int rc = dt_wait_started(p, s->id, j, &ready);
    json_decref(j);
    json_decref(ready);
    return rc == SBX_OK;
}

void dt_sb_free(struct dt_sb *s)
{
    if (!s)
        return;
    ph_client_free(s->tb);
    free(s->workdir);
    free(s);
}
