/* plugins/e2b/e2b-envd.c - the address of a sandbox's envd, its headers,
 * and unary Connect RPCs (JSON)
 *
 * envd lives in the sandbox on port 49983.  On E2B's own domains it is
 * reached through https://sandbox.<domain> with the headers
 * E2b-Sandbox-Id and E2b-Sandbox-Port; elsewhere at
 * https://49983-<id>.<domain>.  The envd_url setting overrides the
 * address (a fake, a proxy): the routing headers go with it, unless it
 * holds "{id}", which then stands for the sandbox id in the host name.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b-int.h"

static const char *const routed_domains[] = {
    "e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev", NULL,
};

/* envd >= 0.5.7 takes an application/octet-stream upload body. */
static bool version_at_least(const char *v, int maj, int min, int pat)
{
    int a = 0, b = 0, c = 0;
    if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) < 2)
        return false;
    if (a != maj)
        return a > maj;
    if (b != min)
        return b > min;
    return c >= pat;
}

static bool routed(const char *dom)
{
    for (size_t i = 0; routed_domains[i]; i++)
        if (!strcmp(dom, routed_domains[i]))
            return true;
    return false;
}

static int new_client(struct e2b_prov *p, const char *url, ph_client **out)
{
    char err[PH_ERR_MAX] = "";
    ph_client_conf conf = {
        .base_url = url,
        .ca_file = p->ca_file,
        .connect_timeout_ms = p->connect_timeout_ms,
    };
    int rc = ph_client_new(&conf, out, err);
    if (rc)
        return p->host->set_error(p->h, rc == SBX_E_INVAL ? SBX_E_CONFIG : rc, "envd at %s: %s",
                                  url, err);
    return SBX_OK;
}

int e2b_envd_shared(struct e2b_prov *p)
{
    char *url = NULL;
    if (p->envd_url && strstr(p->envd_url, "{id}"))
        return SBX_OK; /* a host per sandbox: clients are made per sandbox */
    if (p->envd_url)
        url = strdup(p->envd_url);
    else if (routed(p->domain) && asprintf(&url, "https://sandbox.%s", p->domain) < 0)
        url = NULL;
    else if (!routed(p->domain))
        return SBX_OK; /* one host per sandbox: clients are made per sandbox */
    if (!url)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = new_client(p, url, &p->envd);
    free(url);
    return rc;
}

static int add_line(struct e2b_prov *p, struct e2b_sb *sb, const char *name, const char *value)
{
    char *line = NULL;
    if (sb->n_headers >= E2B_SB_HEADERS || asprintf(&line, "%s: %s", name, value) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    sb->headers[sb->n_headers++] = line;
    return SBX_OK;
}

int e2b_envd_client(struct e2b_prov *p, struct e2b_sb *sb, const char *token,
                    const char *domain, const char *version)
{
    const char *dom = domain && *domain ? domain : p->domain;
    char port[16];
    int rc;

    /* The shared client serves the sandbox unless it lives elsewhere. */
    bool by_host = false;
    if (p->envd && (p->envd_url || !strcmp(dom, p->domain))) {
        sb->envd = p->envd;
    } else {
        char *url = NULL;
        int n;
        if (p->envd_url) {
            /* "http://49983-{id}.localhost:8080": the sandbox in the host. */
            const char *at = strstr(p->envd_url, "{id}");
            n = asprintf(&url, "%.*s%s%s", (int)(at - p->envd_url), p->envd_url, sb->id, at + 4);
            by_host = true;
        } else if (routed(dom)) {
            n = asprintf(&url, "https://sandbox.%s", dom);
        } else {
            n = asprintf(&url, "https://%d-%s.%s", E2B_ENVD_PORT, sb->id, dom);
            by_host = true;
        }
        if (n < 0)
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        rc = new_client(p, url, &sb->own_envd);
        free(url);
        if (rc)
            return rc;
        sb->envd = sb->own_envd;
    }
    snprintf(port, sizeof port, "%d", E2B_ENVD_PORT);
    /* Routing headers when one address serves every sandbox. */
    if (!by_host && ((rc = add_line(p, sb, "E2b-Sandbox-Id", sb->id)) ||
                     (rc = add_line(p, sb, "E2b-Sandbox-Port", port))))
        return rc;
    if ((rc = add_line(p, sb, "Connect-Protocol-Version", "1")) ||
        (rc = add_line(p, sb, "Authorization", p->auth_basic)))
        return rc;
    if (token && *token) {
        if (strpbrk(token, "\r\n"))
            return p->host->set_error(p->h, SBX_E_BACKEND, "sandbox %s: E2B answered an access "
                                      "token spanning lines", sb->id);
        if ((rc = add_line(p, sb, "X-Access-Token", token)))
            return rc;
    }
    sb->octet_upload = version_at_least(version, 0, 5, 7);
    return SBX_OK;
}

void e2b_envd_free(struct e2b_sb *sb)
{
    for (size_t i = 0; i < sb->n_headers; i++) {
        explicit_bzero(sb->headers[i], strlen(sb->headers[i]));
        free(sb->headers[i]);
    }
    sb->n_headers = 0;
    ph_client_free(sb->own_envd);
    sb->own_envd = sb->envd = NULL;
}

void e2b_envd_headers(const struct e2b_sb *sb, const char *const *extra,
                      const char *out[E2B_SB_HEADERS + 5])
{
    size_t n = 0;
    for (size_t i = 0; i < sb->n_headers; i++)
        out[n++] = sb->headers[i];
    for (size_t i = 0; extra && extra[i] && i < 4; i++)
        out[n++] = extra[i];
    out[n] = NULL;
}

int e2b_connect_code(const char *code)
{
    static const struct {
        const char *name;
        int code;
    } map[] = {
        {"invalid_argument", SBX_E_INVAL}, {"out_of_range", SBX_E_INVAL},
        {"deadline_exceeded", SBX_E_TIMEOUT}, {"not_found", SBX_E_NOT_FOUND},
        {"already_exists", SBX_E_EXISTS}, {"permission_denied", SBX_E_PERM},
        {"unauthenticated", SBX_E_AUTH}, {"resource_exhausted", SBX_E_RATE_LIMITED},
        {"unimplemented", SBX_E_NOTSUP}, {"unavailable", SBX_E_SERVER},
    };
    for (size_t i = 0; code && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(code, map[i].name))
            return map[i].code;
    return SBX_E_BACKEND; /* canceled, unknown, internal, aborted, data_loss, ... */
}

/* The message of an error answer, printable and short. */
static void answer_text(const ph_response *r, char *out, size_t cap)
{
    json_t *j = r->body_len ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(j, "message"));
    snprintf(out, cap, "%s", m ? m : (r->body ? r->body : ""));
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    json_decref(j);
}

int e2b_rpc(struct e2b_prov *p, struct e2b_sb *sb, const char *method, json_t *req,
            long timeout_ms, int quiet, json_t **out)
{
    static const char *const accept[] = {"Accept: application/json", NULL};
    const char *headers[E2B_SB_HEADERS + 5];
    char err[PH_ERR_MAX] = "", msg[300];
    char *text = req ? json_dumps(req, JSON_COMPACT) : strdup("{}");
    ph_response r;
    int rc;

    if (out)
        *out = NULL;
    if (!text)
        return quiet == -1 ? SBX_E_NOMEM : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    e2b_envd_headers(sb, accept, headers);
    ph_request rq = {.method = "POST", .path = method, .headers = headers, .body = text,
                     .body_len = strlen(text), .content_type = "application/json",
                     .timeout_ms = timeout_ms > 0 ? timeout_ms : p->request_timeout_ms};
    rc = ph_do(sb->envd, &rq, &r, err);
    free(text);
    if (rc == SBX_OK && (rc = ph_status_code(r.status)) != SBX_OK) {
        char ra[48] = "";
        answer_text(&r, msg, sizeof msg);
        if (r.retry_after_ms >= 0)
            snprintf(ra, sizeof ra, " (retry after %ld s)", (r.retry_after_ms + 999) / 1000);
        if (quiet != -1 && rc != quiet)
            e2b_retry_after(p, sb, r.retry_after_ms);
        snprintf(err, sizeof err, "POST %s: HTTP %ld%s%s%s%s", method, r.status,
                 msg[0] ? ": " : "", msg, ra,
                 r.status == 502 ? " (the sandbox is not running: expired or killed?)" : "");
    } else if (rc == SBX_OK && r.body_len > 0) {
        json_error_t jerr;
        json_t *ans = json_loadb(r.body, r.body_len, 0, &jerr);
        if (!ans) {
            rc = SBX_E_BACKEND;
            snprintf(err, sizeof err, "POST %s: the answer is not JSON (%s)", method, jerr.text);
        } else if (out) {
            *out = ans;
        } else {
            json_decref(ans);
        }
    }
    ph_response_clear(&r);
    if (rc && quiet != -1 && rc != quiet)
        return p->host->set_error(p->h, rc, "sandbox %s: %s", sb->id, err);
    return rc;
}
