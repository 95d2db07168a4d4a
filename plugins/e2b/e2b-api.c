/* plugins/e2b/e2b-api.c - E2B's control plane: JSON calls with the API key,
 * its error shape, sandbox objects, and the paged list
 *
 * The API key is opened from the configuration for each call only, put in
 * one header line that is wiped after the call, and never written into a
 * message.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b-int.h"

#define LIST_PAGE 100
#define LIST_MAX_PAGES 10000

/* "X-API-KEY: <key>" in a buffer the caller wipes and frees. */
static int key_header(struct e2b_prov *p, const char *what, char **out, size_t *outlen)
{
    const char *key = NULL;
    size_t klen = 0;
    *out = NULL;
    int rc = p->host->secret_get(p->h, "api_key", &key, &klen);
    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "%s: providers.d/e2b.ini sets no api_key (e.g. api_key = "
                                  "env:E2B_API_KEY)", what);
    if (rc != SBX_OK)
        return rc; /* the core said which reference failed, without the value */
    size_t n = sizeof "X-API-KEY: " + klen;
    char *line = malloc(n);
    if (line) {
        memcpy(line, "X-API-KEY: ", sizeof "X-API-KEY: " - 1);
        memcpy(line + sizeof "X-API-KEY: " - 1, key, klen);
        line[n - 1] = '\0';
    }
    p->host->secret_release(p->h, key);
    if (!line)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (klen == 0 || memchr(line, '\n', n - 1) || memchr(line, '\r', n - 1)) {
        explicit_bzero(line, n);
        free(line);
        return p->host->set_error(p->h, SBX_E_CONFIG,
                                  "%s: the api_key of providers.d/e2b.ini is empty or spans "
                                  "lines", what);
    }
    *out = line;
    *outlen = n;
    return SBX_OK;
}

static void drop_key(char *line, size_t n)
{
    if (line) {
        explicit_bzero(line, n);
        free(line);
    }
}

/* The service's message of an error answer {"code":N,"message":"..."},
 * printable and short. */
static void answer_text(const char *body, size_t len, char *out, size_t cap)
{
    json_t *j = len ? json_loadb(body, len, 0, NULL) : NULL;
    const char *m = NULL;
    if (json_is_object(j) && json_is_string(json_object_get(j, "message")))
        m = json_string_value(json_object_get(j, "message"));
    if (!m)
        m = body ? body : "";
    size_t o = 0;
    for (size_t i = 0; m[i] && o + 1 < cap && i < 300; i++)
        out[o++] = (m[i] >= 0x20 && m[i] < 0x7f) ? m[i] : ' ';
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    json_decref(j);
}

static int api_error(struct e2b_prov *p, const char *what, long status, const char *body,
                     size_t len, long retry_after_ms)
{
    char msg[320], ra[64] = "";
    answer_text(body, len, msg, sizeof msg);
    e2b_retry_after(p, NULL, retry_after_ms);
    if (retry_after_ms >= 0)
        snprintf(ra, sizeof ra, " (retry after %ld s)", (retry_after_ms + 999) / 1000);
    int code = ph_status_code(status);
    if (status == 401 || status == 403)
        return p->host->set_error(p->h, code, "%s: E2B refused the API key (HTTP %ld): %s", what,
                                  status, msg[0] ? msg : "unauthorised");
    return p->host->set_error(p->h, code, "%s: E2B answered HTTP %ld%s%s%s", what, status,
                              msg[0] ? ": " : "", msg, ra);
}

/* e2b_api, also copying the answer's header @keep (when not NULL) into
 * @kept (@kept_cap bytes; "" when absent, cut when longer). */
static int api_call(struct e2b_prov *p, const char *what, const char *method, const char *path,
                    json_t *body, json_t **out, const char *keep, char *kept, size_t kept_cap)
{
    char *key = NULL, *text = NULL, err[PH_ERR_MAX] = "";
    size_t klen = 0;
    if (out)
        *out = NULL;
    if (keep)
        kept[0] = '\0';
    int rc = key_header(p, what, &key, &klen);
    if (rc)
        return rc;
    const char *headers[] = {key, "Accept: application/json", NULL};
    const char *keep_headers[] = {keep, NULL};
    ph_request rq = {.method = method, .path = path, .headers = headers,
                     .timeout_ms = p->request_timeout_ms,
                     .keep_headers = keep ? keep_headers : NULL};
    if (body) {
        if (!(text = json_dumps(body, JSON_COMPACT))) {
            drop_key(key, klen);
            return p->host->set_error(p->h, SBX_E_NOMEM, "%s: out of memory", what);
        }
        rq.body = text;
        rq.body_len = strlen(text);
        rq.content_type = "application/json";
    }
    ph_response r;
    rc = ph_do(p->api, &rq, &r, err);
    drop_key(key, klen);
    free(text);
    if (rc != SBX_OK) {
        ph_response_clear(&r);
        return p->host->set_error(p->h, rc, "%s: %s", what, err);
    }
    if (r.status < 200 || r.status > 299) {
        rc = api_error(p, what, r.status, r.body, r.body_len, r.retry_after_ms);
        ph_response_clear(&r);
        return rc;
    }
    if (out && r.body_len > 0) {
        json_error_t jerr;
        if (!(*out = json_loadb(r.body, r.body_len, 0, &jerr)))
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "%s: the answer is not JSON (%s)", what,
                                    jerr.text);
    }
    if (keep && ph_response_header(&r, keep))
        snprintf(kept, kept_cap, "%s", ph_response_header(&r, keep));
    ph_response_clear(&r);
    return rc;
}

int e2b_api(struct e2b_prov *p, const char *what, const char *method, const char *path,
            json_t *body, json_t **out)
{
    return api_call(p, what, method, path, body, out, NULL, NULL, 0);
}

static bool id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= SBX_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

int e2b_sb_from_json(struct e2b_prov *p, json_t *j, const char *want_id, struct e2b_sb **out)
{
    *out = NULL;
    const char *id = json_string_value(json_object_get(j, "sandboxID"));
    const char *token = json_string_value(json_object_get(j, "envdAccessToken"));
    const char *domain = json_string_value(json_object_get(j, "domain"));
    const char *version = json_string_value(json_object_get(j, "envdVersion"));
    if (!id || !id_ok(id))
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "E2B answered a sandbox without a usable sandboxID");
    if (want_id && strcmp(id, want_id))
        return p->host->set_error(p->h, SBX_E_BACKEND, "E2B answered sandbox %s for %s", id,
                                  want_id);
    struct e2b_sb *sb = calloc(1, sizeof *sb);
    if (!sb)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    snprintf(sb->id, sizeof sb->id, "%s", id);
    int rc = e2b_envd_client(p, sb, token, domain, version);
    if (rc) {
        e2b_sb_free(sb);
        return rc;
    }
    *out = sb;
    return SBX_OK;
}

/* ---- percent-encoding ---- */

int e2b_pct_append(char **buf, size_t *len, size_t *cap, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t need = *len + strlen(s) * 3 + 1;
    if (need > *cap) {
        size_t n = *cap ? *cap : 64;
        while (n < need)
            n *= 2;
        char *nb = realloc(*buf, n);
        if (!nb)
            return SBX_E_NOMEM;
        *buf = nb;
        *cap = n;
    }
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '-' || *c == '.' || *c == '_' || *c == '~') {
            (*buf)[(*len)++] = (char)*c;
        } else {
            (*buf)[(*len)++] = '%';
            (*buf)[(*len)++] = hex[*c >> 4];
            (*buf)[(*len)++] = hex[*c & 15];
        }
    }
    (*buf)[*len] = '\0';
    return SBX_OK;
}

/* ---- list: GET /v2/sandboxes, paged by the X-Next-Token header ---- */

static bool matches(json_t *md, const sbx_kv_v1 *filter, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_object_get(md, filter[i].key ? filter[i].key : ""));
        if (!v || strcmp(v, filter[i].value ? filter[i].value : ""))
            return false;
    }
    return true;
}

/* One page's sandboxes to the callback. */
static int relay_page(struct e2b_prov *p, json_t *arr, const sbx_kv_v1 *filter, size_t n_filter,
                      sbx_list_cb_v1 cb, void *ud)
{
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it) {
        const char *id = json_string_value(json_object_get(it, "sandboxID"));
        json_t *md = json_object_get(it, "metadata");
        if (!id || !id_ok(id))
            continue;
        if (!json_is_object(md))
            md = NULL;
        if (n_filter && (!md || !matches(md, filter, n_filter)))
            continue;
        size_t n = md ? json_object_size(md) : 0, k = 0;
        sbx_kv_v1 *kv = calloc(n ? n : 1, sizeof *kv);
        if (!kv)
            return p->host->set_error(p->h, SBX_E_NOMEM, "list: out of memory");
        const char *key;
        json_t *val;
        if (md)
            json_object_foreach(md, key, val) {
                if (json_is_string(val) && k < n)
                    kv[k++] = (sbx_kv_v1){key, json_string_value(val)};
            }
        uint64_t created = pc_rfc3339_ns(json_string_value(json_object_get(it, "startedAt")));
        int rc = cb(ud, id, kv, k, created);
        free(kv);
        if (rc)
            return rc;
    }
    return SBX_OK;
}

/* Appends @s percent-encoded twice: once as the SDK's encodeURIComponent
 * of each key and value, once more as its URLSearchParams of the pairs. */
static int pct_twice(char **buf, size_t *len, size_t *cap, const char *s)
{
    char *once = NULL;
    size_t ol = 0, oc = 0;
    int rc = e2b_pct_append(&once, &ol, &oc, s);
    if (!rc)
        rc = e2b_pct_append(buf, len, cap, once);
    free(once);
    return rc;
}

int e2b_api_list(struct e2b_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                 sbx_list_cb_v1 cb, void *ud)
{
    /* metadata=<percent-encoded "k=v&k2=v2">, each k and v encoded twice
     * before: the service unescapes the parameter's value whole, splits it
     * on '&' and '=', then unescapes each key and value again (e2b-dev/infra
     * parseFilters), and the SDK encodes to match, so a '+', '%', '&' or
     * '=' in a label survives only this way. */
    char *inner = NULL, *base = NULL;
    size_t il = 0, ic = 0, bl = 0, bc = 0;
    int rc = SBX_OK;
    for (size_t i = 0; !rc && i < n_filter; i++) {
        rc = pct_twice(&inner, &il, &ic, filter[i].key ? filter[i].key : "");
        /* Separators go in raw: append a placeholder, then overwrite. */
        if (!rc)
            rc = e2b_pct_append(&inner, &il, &ic, "_");
        if (!rc) {
            inner[il - 1] = '=';
            rc = pct_twice(&inner, &il, &ic, filter[i].value ? filter[i].value : "");
        }
        if (!rc && i + 1 < n_filter && !(rc = e2b_pct_append(&inner, &il, &ic, "_")))
            inner[il - 1] = '&';
    }
    if (!rc)
        rc = e2b_pct_append(&base, &bl, &bc, "");
    if (!rc && inner) {
        char *q = NULL;
        size_t ql = 0, qc = 0;
        rc = e2b_pct_append(&q, &ql, &qc, inner);
        free(base);
        base = NULL;
        if (!rc && asprintf(&base, "metadata=%s&", q) < 0) {
            base = NULL;
            rc = SBX_E_NOMEM;
        }
        free(q);
    }
    free(inner);
    if (rc) {
        free(base);
        return p->host->set_error(p->h, SBX_E_NOMEM, "list: out of memory");
    }

    char next[512] = "";
    for (int pages = 0; !rc; pages++) {
        if (pages >= LIST_MAX_PAGES) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "list: E2B kept answering a next page "
                                    "after %d pages", LIST_MAX_PAGES);
            break;
        }
        char *tok = NULL;
        size_t tl = 0, tc = 0;
        if (next[0] && (rc = e2b_pct_append(&tok, &tl, &tc, next))) {
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "list: out of memory");
            break;
        }
        char *path = NULL;
        if (asprintf(&path, "/v2/sandboxes?%sstate=running,paused&limit=%d%s%s", base, LIST_PAGE,
                     tok ? "&nextToken=" : "", tok ? tok : "") < 0) {
            free(tok);
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "list: out of memory");
            break;
        }
        free(tok);
        char pg_next[sizeof next];
        json_t *arr = NULL;
        rc = api_call(p, "list", "GET", path, NULL, &arr, "X-Next-Token", pg_next,
                      sizeof pg_next);
        free(path);
        if (!rc) {
            if (!json_is_array(arr))
                rc = p->host->set_error(p->h, SBX_E_BACKEND, "list: the answer is not a JSON "
                                        "array");
            else
                rc = relay_page(p, arr, filter, n_filter, cb, ud);
        }
        json_decref(arr);
        if (rc || !pg_next[0])
            break;
        if (!strcmp(pg_next, next)) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "list: E2B answered the same next "
                                    "page token twice");
            break;
        }
        snprintf(next, sizeof next, "%s", pg_next);
    }
    free(base);
    return rc;
}
