/* plugins/cloudflare/cloudflare.c - the Cloudflare provider: sandboxes of
 * the bridge Worker that @cloudflare/sandbox ships, over its /v1 REST+SSE
 * API (wire-apis.md section 7, README.md)
 *
 * create POSTs /v1/sandbox (which only mints an id) and then asks
 * /running, which binds a container from the warm pool (503 when the
 * instance limit is reached: the core retries); destroy DELETEs it.
 * Every exec, upload and download is one POST /exec running the shwrap
 * wrapper (plugins/common/shwrap.h): the bridge streams output as base64
 * of UTF-8 text and has no stdin, no environment and no file modes, which
 * the wrapper supplies, and stdin and files travel first as PUT /file.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "base64.h"
#include "http.h"
#include "randhex.h"
#include "shwrap.h"
#include "unenforced.h"
#include "noimage.h"
#include "retry-hints.h"
#include "setting-checks.h"

#define CF_NAME "cloudflare"
#define CF_INI "providers.d/cloudflare.ini"
#define CF_WORKDIR "/workspace"
#define CF_CAPS (SBX_CAP_FILES | SBX_CAP_STDIN | SBX_CAP_STREAM | SBX_CAP_CONCURRENT)
/* The bridge refuses a larger PUT body (413 payload_too_large). */
#define CF_PUT_MAX (32u * 1024 * 1024)
/* Tries of a destroy that fails on the way (a 5xx, a dropped connection):
 * the core cannot try again (no attach), and a sandbox whose DELETE never
 * got through runs until sleepAfter.  Ten, at most a second apart: under
 * 30% failures one destroy in 170000 still fails (four left one in 120).
 * The fuzz target builds with fewer: every input ends in a destroy, and
 * most inputs end before the answers it needs. */
#ifndef CF_DELETE_TRIES
#define CF_DELETE_TRIES 10
#endif
#define CF_DELETE_WAIT_MAX_MS 1000L

static const char *const config_keys[] = {"api_url", "api_prefix", "request_timeout", "ca_file",
                                          NULL};
static const char *const secret_keys[] = {"api_key", NULL};

struct cf_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    ph_client *api;
    char *api_url, *prefix, *ca_file;
    long request_ms;
};

struct cf_sb {
    char id[SBX_ID_MAX];
    sbx_kv_v1 *env;             /* the create spec's environment (copied) */
    size_t n_env;
    pc_hints hints;             /* the retry hints of the exec running on it */
};

static void sb_free(struct cf_sb *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_env; i++) {
        free((char *)s->env[i].key);
        free((char *)s->env[i].value);
    }
    free(s->env);
    free(s);
}

/* ---- host helpers ---- */

/* The pause the bridge asked for (@ms < 0: none): to the core
 * (host->retry_after) and, for a request of the exec on @s (or NULL),
 * into its hints (retry-hints.h). */
static void cf_retry_after(struct cf_prov *p, struct cf_sb *s, long ms)
{
    pc_retry_after(p->host, p->h, s ? &s->hints : NULL, ms);
}

/* The failing exec on @s never started its command. */
static void cf_not_started(struct cf_sb *s)
{
    pc_hints_not_started(&s->hints);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An answer outside 2xx: the bridge's {"error","code"}; passes on the
 * pause it asks for (see cf_retry_after for @s); returns the error's
 * code. */
static int refused(struct cf_prov *p, struct cf_sb *s, const char *what, const ph_response *r)
{
    json_t *j = json_loadb(r->body, r->body_len, 0, NULL);
    const char *m = json_string_value(json_object_get(j, "error"));
    const char *code = json_string_value(json_object_get(j, "code"));
    int rc = ph_status_code(r->status);
    cf_retry_after(p, s, r->retry_after_ms);
    if (rc == SBX_E_AUTH)
        rc = p->host->set_error(p->h, rc, CF_NAME ": %s: HTTP %ld: %.200s (check api_key in "
                                CF_INI ")", what, r->status, m ? m : "");
    else if (r->retry_after_ms >= 0)
        rc = p->host->set_error(p->h, rc, CF_NAME ": %s: HTTP %ld %s: %.200s (retry after %ld ms)",
                                what, r->status, code ? code : "", m ? m : "", r->retry_after_ms);
    else
        rc = p->host->set_error(p->h, rc, CF_NAME ": %s: HTTP %ld %s: %.200s", what, r->status,
                                code ? code : "", m ? m : "");
    json_decref(j);
    return rc;
}

/* One request with a collected answer; SBX_OK only for 2xx.  A request
 * made for sandbox @s (or NULL) gives its Retry-After to the exec
 * running there too (cf_retry_after). */
static int cf_call(struct cf_prov *p, struct cf_sb *s, const char *what, const char *method,
                   const char *path, const void *body, size_t len, const char *ctype,
                   ph_response *r)
{
    char err[PH_ERR_MAX];
    ph_request rq = {.method = method, .path = path, .body = body, .body_len = len,
                     .content_type = ctype, .timeout_ms = p->request_ms};
    int rc = ph_do(p->api, &rq, r, err);
    if (rc != SBX_OK)
        return p->host->set_error(p->h, rc, CF_NAME ": %s: %s", what, err);
    if (r->status < 200 || r->status > 299)
        return refused(p, s, what, r);
    return SBX_OK;
}

/* ---- settings, init, fini ---- */

static void cf_fini(void *prov)
{
    struct cf_prov *p = prov;
    if (!p)
        return;
    ph_client_free(p->api);
    free(p->api_url);
    free(p->prefix);
    free(p->ca_file);
    free(p);
}

static const char *prefix_ok(const char *v)
{
    return v[0] != '/' || strpbrk(v, "?# \t\r\n") ? "must start with '/' and hold no query"
                                                     : NULL;
}

/* What settings_read fills. */
struct cf_conf {
    const char *api_url, *api_prefix, *ca_file;
    uint64_t request_ns;
};

static const sbx_setting_v1 cf_settings[] = {
    {.key = "api_url", .type = SBX_SETTING_STRING, .check = pc_check_http_url,
     .offset = offsetof(struct cf_conf, api_url)},
    {.key = "api_prefix", .type = SBX_SETTING_STRING, .def = "/v1", .check = prefix_ok,
     .offset = offsetof(struct cf_conf, api_prefix)},
    {.key = "request_timeout", .type = SBX_SETTING_DURATION, .def = "60s", .min = "1s",
     .max = "1h", .offset = offsetof(struct cf_conf, request_ns)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = offsetof(struct cf_conf, ca_file)},
    {.key = NULL},
};

static int read_settings(struct cf_prov *p)
{
    struct cf_conf c = {0};
    int rc;

    if (!SBX_HOST_HAS(p->host, settings_read))
        return p->host->set_error(p->h, SBX_E_INTERNAL, CF_NAME ": the core lends no "
                                  "settings_read (ABI 1.9)");
    if ((rc = p->host->settings_read(p->h, cf_settings, sizeof cf_settings[0], &c)) != SBX_OK)
        return rc;
    if (!c.api_url)
        return p->host->set_error(p->h, SBX_E_CONFIG, CF_INI ": api_url is not set (the URL of "
                                  "your bridge Worker, e.g. https://sandbox.NAME.workers.dev)");
    p->request_ms = (long)(c.request_ns / 1000000u);
    size_t n = strlen(c.api_url);
    while (n > 0 && c.api_url[n - 1] == '/')
        n--;
    if (!(p->api_url = strndup(c.api_url, n)) || !(p->prefix = strdup(c.api_prefix)) ||
        (c.ca_file && !(p->ca_file = strdup(c.ca_file))))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    n = strlen(p->prefix);
    while (n > 1 && p->prefix[n - 1] == '/')
        p->prefix[--n] = '\0';
    return SBX_OK;
}

static int set_auth(struct cf_prov *p)
{
    const char *key = NULL;
    size_t len = 0;
    int rc = p->host->secret_get(p->h, "api_key", &key, &len);
    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, SBX_E_CONFIG, CF_INI ": api_key is not set (the "
                                  "bridge's SANDBOX_API_KEY, e.g. api_key = env:SANDBOX_API_KEY)");
    if (rc != SBX_OK)
        return rc;
    if (len == 0 || memchr(key, '\n', len) || memchr(key, '\r', len)) {
        p->host->secret_release(p->h, key);
        return p->host->set_error(p->h, SBX_E_CONFIG, CF_INI ": api_key is empty or holds a "
                                  "line break");
    }
    char *v = sodium_malloc(len + 8);
    if (!v) {
        p->host->secret_release(p->h, key);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    memcpy(v, "Bearer ", 7);
    memcpy(v + 7, key, len + 1);
    p->host->secret_release(p->h, key);
    rc = ph_client_set_header(p->api, "Authorization", v);
    sodium_free(v);
    return rc == SBX_OK ? SBX_OK : p->host->set_error(p->h, rc, "out of memory");
}

static int cf_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    char err[PH_ERR_MAX];
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    if (sodium_init() < 0)
        return host->set_error(h, SBX_E_INTERNAL, CF_NAME ": libsodium failed to initialise");
    struct cf_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    int rc = read_settings(p);
    if (rc == SBX_OK) {
        ph_client_conf conf = {.base_url = p->api_url, .ca_file = p->ca_file,
                               .timeout_ms = p->request_ms};
        if ((rc = ph_client_new(&conf, &p->api, err)) != SBX_OK)
            rc = host->set_error(h, SBX_E_CONFIG, CF_INI ": api_url: %s", err);
    }
    if (rc == SBX_OK)
        rc = set_auth(p);
    if (rc != SBX_OK) {
        cf_fini(p);
        return rc;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- lifecycle ---- */

/* The bridge's ids: [a-z2-7]{1,128} (base32 of 16 random bytes). */
static bool id_ok(const char *id)
{
    size_t n = 0;
    if (!id)
        return false;
    for (; id[n]; n++)
        if (!((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= '2' && id[n] <= '7')))
            return false;
    return n > 0 && n < SBX_ID_MAX && n <= 128;
}

static int sb_path(struct cf_prov *p, const char *id, const char *tail, char **out)
{
    if (asprintf(out, "%s/sandbox/%s%s", p->prefix, id, tail) < 0) {
        *out = NULL;
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    return SBX_OK;
}

/* DELETE is idempotent (nothing bound: 204), and the core cannot retry a
 * destroy without attach: a transient failure is retried here. */
static int delete_sandbox(struct cf_prov *p, const char *id)
{
    char *path = NULL;
    char what[SBX_ID_MAX + 32];
    int rc = sb_path(p, id, "", &path);
    if (rc != SBX_OK)
        return rc;
    snprintf(what, sizeof what, "destroy sandbox %s", id);
    for (int tries = 0;; tries++) {
        ph_response r = {0};
        rc = cf_call(p, NULL, what, "DELETE", path, NULL, 0, NULL, &r);
        long wait = r.retry_after_ms;
        ph_response_clear(&r);
        if (rc == SBX_OK || tries + 1 >= CF_DELETE_TRIES ||
            (rc != SBX_E_SERVER && rc != SBX_E_NETWORK && rc != SBX_E_RATE_LIMITED &&
             rc != SBX_E_TIMEOUT))
            break;
        if (wait < 0 || wait >= 2000)
            wait = tries < 4 ? 100L << tries : CF_DELETE_WAIT_MAX_MS;
        struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    free(path);
    if (rc != SBX_OK)
        p->host->log(p->h, SBX_LOG_WARNING, "sandbox %s may be left behind (it sleeps after the "
                     "Worker's sleepAfter)", id);
    return rc;
}

/* Only the wall clock and the output caps are ours to hold: the bridge's
 * containers are all of the Worker's instance type. */
static int unenforced(struct cf_prov *p)
{
    return pc_limits_sized_by_backend(p->host, p->h, "a Cloudflare sandbox is a container of "
                                      "the Worker's instance type (its wrangler configuration), "
                                      "the same for every sandbox, and the bridge sets no "
                                      "per-process limit");
}

static int cf_create(void *prov, const sbx_create_spec_v1 *spec, void **sb, char id[SBX_ID_MAX])
{
    struct cf_prov *p = prov;
    ph_response r = {0};
    char *path = NULL;
    *sb = NULL;

    /* The image is the one of the Worker's container (Dockerfile). */
    int rc0 = pc_image_cannot_run(p->host, p->h, CF_NAME, spec, "every sandbox runs the "
                                  "container image of the bridge Worker (its Dockerfile)");
    if (rc0 == SBX_OK)
        rc0 = unenforced(p);
    if (rc0 != SBX_OK)
        return rc0;
    /* network = none cannot be enforced: with no SBX_CAP_NETWORK_POLICY
     * the core refuses it, or reports it where allowed, before create. */
    if (asprintf(&path, "%s/sandbox", p->prefix) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = cf_call(p, NULL, "create", "POST", path, NULL, 0, NULL, &r);
    free(path);
    json_t *j = rc == SBX_OK ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    const char *sid = json_string_value(json_object_get(j, "id"));
    if (rc == SBX_OK && !id_ok(sid))
        rc = p->host->set_error(p->h, SBX_E_BACKEND, CF_NAME ": create: the answer has no "
                                "usable sandbox id");
    struct cf_sb *s = NULL;
    if (rc == SBX_OK && !(s = calloc(1, sizeof *s)))
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (rc == SBX_OK) {
        snprintf(s->id, sizeof s->id, "%s", sid);
        /* The bridge keeps no environment: the execs export it. */
        if (spec->n_env && !(s->env = calloc(spec->n_env, sizeof *s->env)))
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        for (size_t i = 0; rc == SBX_OK && i < spec->n_env; i++) {
            if (!sw_env_name_ok(spec->env[i].key))
                rc = p->host->set_error(p->h, SBX_E_INVAL, CF_NAME ": '%s' is not a variable "
                                        "name the shell can export", spec->env[i].key);
            else if (!(s->env[i].key = strdup(spec->env[i].key)) ||
                     !(s->env[i].value = strdup(spec->env[i].value)))
                rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            s->n_env = i + 1;
        }
    }
    json_decref(j);
    ph_response_clear(&r);
    if (rc != SBX_OK) {
        sb_free(s);
        return rc;
    }
    /* Bind a container now, so a full pool shows at create (503, retried
     * by the core) and not in the first exec. */
    char what[SBX_ID_MAX + 32];
    snprintf(what, sizeof what, "sandbox %s: start", s->id);
    if ((rc = sb_path(p, s->id, "/running", &path)) == SBX_OK)
        rc = cf_call(p, NULL, what, "GET", path, NULL, 0, NULL, &r);
    free(path);
    j = rc == SBX_OK ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    if (rc == SBX_OK && !json_is_true(json_object_get(j, "running")))
        rc = p->host->set_error(p->h, SBX_E_BACKEND, CF_NAME ": sandbox %s did not start (its "
                                "container answers no command)", s->id);
    json_decref(j);
    ph_response_clear(&r);
    if (rc != SBX_OK) {
        int keep = rc;
        (void)delete_sandbox(p, s->id); /* what fails is logged */
        sb_free(s);
        return keep;
    }
    snprintf(id, SBX_ID_MAX, "%s", s->id);
    *sb = s;
    return SBX_OK;
}

static int cf_destroy(void *prov, void *sb)
{
    struct cf_sb *s = sb;
    int rc = delete_sandbox(prov, s->id);
    sb_free(s);
    return rc;
}

/* ---- exec through the bridge ---- */

/* Server-sent events, parsed as they arrive. */
struct sse {
    struct cf_prov *p;
    sw_buf line, event, data;
    sw_dec dec;
    bool exited, errored, bad;
    long exit_code;
    char error[256];
};

static int sse_event(struct sse *e)
{
    const char *ev = e->event.len ? e->event.p : "message";
    const char *data = e->data.len ? e->data.p : "";
    int stream = !strcmp(ev, "stdout") ? 1 : !strcmp(ev, "stderr") ? 2 : 0;

    if (stream) {
        size_t n = 0;
        unsigned char *text = pc_b64_decode(data, &n);
        if (!text) {
            e->bad = true;
            return SBX_E_BACKEND;
        }
        int r = sw_dec_feed(&e->dec, stream, (const char *)text, n);
        free(text);
        return r ? SBX_E_LIMIT : 0;
    }
    json_t *j = json_loads(data, 0, NULL);
    if (!strcmp(ev, "exit")) {
        json_t *c = json_object_get(j, "exit_code");
        e->exited = json_is_integer(c);
        e->exit_code = e->exited ? (long)json_integer_value(c) : -1;
        if (!e->exited)
            e->bad = true;
    } else if (!strcmp(ev, "error")) {
        const char *m = json_string_value(json_object_get(j, "error"));
        const char *code = json_string_value(json_object_get(j, "code"));
        e->errored = true;
        snprintf(e->error, sizeof e->error, "%.180s (%.40s)", m ? m : "no message",
                 code ? code : "no code");
    }
    json_decref(j);
    return 0;
}

static int sse_line(struct sse *e, const char *l, size_t n)
{
    if (n == 0) {
        int r = (e->event.len || e->data.len) ? sse_event(e) : 0;
        e->event.len = e->data.len = 0;
        if (e->event.p)
            e->event.p[0] = '\0';
        if (e->data.p)
            e->data.p[0] = '\0';
        return r;
    }
    if (l[0] == ':')
        return 0;
    const char *colon = memchr(l, ':', n);
    size_t fl = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    size_t vl = colon ? n - fl - 1 : 0;
    if (vl && *v == ' ')
        v++, vl--;
    if (fl == 5 && !memcmp(l, "event", 5)) {
        e->event.len = 0;
        sw_buf_add(&e->event, v, vl);
    } else if (fl == 4 && !memcmp(l, "data", 4)) {
        if (e->data.len)
            sw_buf_add(&e->data, "\n", 1);
        sw_buf_add(&e->data, v, vl);
    }
    if (e->event.oom || e->data.oom)
        return SBX_E_NOMEM;
    return 0;
}

static int sse_data(void *ud, const void *buf, size_t len)
{
    struct sse *e = ud;
    const char *s = buf;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\n') {
            /* An event's data is at most one base64 chunk: bound it. */
            if (e->line.len > 64u * 1024 * 1024)
                return SBX_E_BACKEND;
            sw_buf_add(&e->line, s + i, 1);
            if (e->line.oom)
                return SBX_E_NOMEM;
            continue;
        }
        size_t n = e->line.len;
        if (n && e->line.p[n - 1] == '\r')
            n--;
        int r = sse_line(e, e->line.p ? e->line.p : "", n);
        e->line.len = 0;
        if (r)
            return r;
    }
    return 0;
}

static void sse_free(struct sse *e)
{
    sw_buf_free(&e->line);
    sw_buf_free(&e->event);
    sw_buf_free(&e->data);
    sw_dec_free(&e->dec);
}

/* Writes @data to the absolute path @abs (under /workspace). */
static int put_file(struct cf_prov *p, struct cf_sb *s, const char *abs, const void *data,
                    size_t len)
{
    ph_response r = {0};
    char *path = NULL, what[SBX_ID_MAX + 32];
    if (len > CF_PUT_MAX)
        return p->host->set_error(p->h, SBX_E_LIMIT, CF_NAME ": sandbox %s: %zu bytes is more "
                                  "than the bridge takes in one file (32 MiB)", s->id, len);
    if (asprintf(&path, "%s/sandbox/%s/file%s", p->prefix, s->id, abs) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    snprintf(what, sizeof what, "sandbox %s: write", s->id);
    int rc = cf_call(p, s, what, "PUT", path, data, len, "application/octet-stream", &r);
    ph_response_clear(&r);
    free(path);
    return rc;
}

/* What one run of the wrapper is. */
struct run {
    sw_job job;
    const char *const *argv;
    const void *stdin_data;
    size_t stdin_len;
    uint64_t timeout_ns;
    const sbx_output_sink_v1 *sink;
    /* job.scratch points here, so that it lives as long as the run. */
    char scratch[32];
};

/* Runs the wrapper; fills @out for a command (or leaves the wrapper's
 * outcome in *kind and *code for the caller). */
static int run_wrapper(struct cf_prov *p, struct cf_sb *s, struct run *w, sbx_exec_outcome_v1 *out,
                       sw_kind *kind, long *code)
{
    char hex[17], *scratch = w->scratch, fpath[128], err[PH_ERR_MAX];
    int rc;

    if (pc_random_hex(hex, 8) != 0)
        return p->host->set_error(p->h, SBX_E_INTERNAL, CF_NAME ": no random bytes");
    /* The wrapper works from the exec's cwd, /workspace, never from an
     * absolute path of its own. */
    snprintf(scratch, sizeof w->scratch, ".sbx-%s", hex);
    w->job.workdir = NULL;
    w->job.scratch = scratch;
    uint64_t t0 = now_ns();
    for (size_t i = 0; i < w->job.n_files; i++) {
        snprintf(fpath, sizeof fpath, CF_WORKDIR "/%s.f%zu", scratch, i);
        if ((rc = put_file(p, s, fpath, w->job.files[i].data, w->job.files[i].len)) != SBX_OK) {
            cf_not_started(s);
            return rc;
        }
    }
    if (w->stdin_len) {
        w->job.stdin_file = true;
        snprintf(fpath, sizeof fpath, CF_WORKDIR "/%s.in", scratch);
        if ((rc = put_file(p, s, fpath, w->stdin_data, w->stdin_len)) != SBX_OK) {
            cf_not_started(s);
            return rc;
        }
    }
    char *script = sw_script(&w->job);
    json_t *argv = json_array();
    if (!script || !argv ||
        json_array_append_new(argv, json_string("sh")) || json_array_append_new(argv, json_string("-c")) ||
        json_array_append_new(argv, json_string(script)) ||
        json_array_append_new(argv, json_string("sbx"))) {
        free(script);
        json_decref(argv);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    free(script);
    for (size_t i = 0; w->argv && w->argv[i]; i++)
        if (json_array_append_new(argv, json_string(w->argv[i]))) {
            json_decref(argv);
            return p->host->set_error(p->h, SBX_E_INVAL, CF_NAME ": argument %zu is not UTF-8 "
                                      "(the bridge takes JSON strings)", i);
        }
    uint64_t tms = (w->timeout_ns + 999999) / 1000000;
    json_t *body = json_pack("{s:o, s:I, s:s}", "argv", argv, "timeout_ms", (json_int_t)tms,
                             "cwd", CF_WORKDIR);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    char *path = NULL;
    if (!text || sb_path(p, s->id, "/exec", &path) != SBX_OK) {
        free(text);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    struct sse e = {.p = p};
    sw_dec_init(&e.dec, w->sink);
    static const char *const accept[] = {"Accept: text/event-stream", NULL};
    ph_request rq = {.method = "POST", .path = path, .headers = accept, .body = text,
                     .body_len = strlen(text), .content_type = "application/json",
                     .timeout_ms = (long)(tms + (uint64_t)p->request_ms), .on_data = sse_data,
                     .ud = &e};
    ph_response r = {0};
    uint64_t t1 = now_ns();
    rc = ph_do(p->api, &rq, &r, err);
    uint64_t t2 = now_ns();
    free(text);
    free(path);
    if (out) {
        out->start_ns = t1 - t0;
        out->exec_ns = t2 - t1;
    }
    bool late = t2 - t1 >= w->timeout_ns;
    if (rc == SBX_OK && (r.status < 200 || r.status > 299)) {
        rc = refused(p, s, "exec", &r);
        cf_not_started(s);  /* refused before the container saw it */
        goto done;
    }
    if (rc == SBX_E_LIMIT && !e.dec.bad && !e.bad) {
        /* The sink said stop (past a cap, or for the caller): the
         * transfer was ended. */
        if (out)
            out->status = SBX_RUN_OUTPUT_LIMIT;
        rc = SBX_OK;
        goto done;
    }
    if (rc == SBX_E_TIMEOUT && out) {
        out->status = SBX_RUN_TIMEOUT;
        rc = SBX_OK;
        goto done;
    }
    if (rc != SBX_OK && (e.dec.bad || e.bad)) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, CF_NAME ": sandbox %s: the exec's output is "
                                "not the wrapper's (no sh or base64 in the image?)", s->id);
        goto done;
    }
    if (rc != SBX_OK) {
        rc = p->host->set_error(p->h, rc, CF_NAME ": sandbox %s: exec: %s", s->id, err);
        goto done;
    }
    sw_dec_finish(&e.dec);
    *kind = sw_outcome(&e.dec, code);
    if (e.errored && *kind == SW_NONE) {
        if (late && out) {
            out->status = SBX_RUN_TIMEOUT;
        } else {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, CF_NAME ": sandbox %s: exec failed: %s",
                                    s->id, e.error);
        }
        goto done;
    }
    if (!e.exited && *kind == SW_NONE) {
        rc = p->host->set_error(p->h, SBX_E_NETWORK, CF_NAME ": sandbox %s: the exec stream "
                                "ended without its exit event", s->id);
        goto done;
    }
    if (*kind == SW_NONE || *kind == SW_BAD) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, CF_NAME ": sandbox %s: the wrapper ended "
                                "without a status (exit %ld)", s->id, e.exit_code);
        goto done;
    }
done:
    ph_response_clear(&r);
    sse_free(&e);
    return rc;
}

static int exec_run(struct cf_prov *p, struct cf_sb *s, const sbx_exec_spec_v1 *spec,
                    const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    sw_kind kind = SW_NONE;
    long code = 0;

    if (spec->cwd && !sw_path_ok(spec->cwd))
        return p->host->set_error(p->h, SBX_E_PATH, CF_NAME ": cwd '%s' is not a safe relative "
                                  "path", spec->cwd);
    for (size_t i = 0; i < spec->n_files; i++)
        if (!sw_path_ok(spec->files[i].path))
            return p->host->set_error(p->h, SBX_E_PATH, CF_NAME ": file '%s' is not a safe "
                                      "relative path", spec->files[i].path);
    for (size_t i = 0; i < spec->n_env; i++)
        if (!sw_env_name_ok(spec->env[i].key))
            return p->host->set_error(p->h, SBX_E_INVAL, CF_NAME ": '%s' is not a variable name "
                                      "the shell can export", spec->env[i].key);
    /* The sandbox's environment first: the exec's, exported later, wins. */
    sbx_kv_v1 *env = calloc(s->n_env + spec->n_env + 1, sizeof *env);
    if (!env)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (s->n_env)
        memcpy(env, s->env, s->n_env * sizeof *env);
    if (spec->n_env)
        memcpy(env + s->n_env, spec->env, spec->n_env * sizeof *env);
    struct run w = {.job = {.cwd = spec->cwd, .env = env, .n_env = s->n_env + spec->n_env,
                            .files = spec->files, .n_files = spec->n_files},
                    .argv = spec->argv, .stdin_data = spec->stdin_data,
                    .stdin_len = spec->stdin_data ? spec->stdin_len : 0,
                    .timeout_ns = spec->timeout_ns, .sink = sink};
    out->status = SBX_RUN_OK;
    int rc = run_wrapper(p, s, &w, out, &kind, &code);
    free(env);
    if (rc != SBX_OK || out->status == SBX_RUN_TIMEOUT || out->status == SBX_RUN_OUTPUT_LIMIT)
        return rc;
    switch (kind) {
    case SW_EXITED:
    case SW_WAITED:
    case SW_EXEC_FAILED:
        sw_fill_exit(kind, code, out);
        return SBX_OK;
    case SW_PATH:
        cf_not_started(s);
        return p->host->set_error(p->h, SBX_E_PATH, CF_NAME ": file '%s' goes through a "
                                  "symbolic link", spec->files[code < 0 ? 0 : code].path);
    case SW_CWD:
        cf_not_started(s);
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, CF_NAME ": cwd '%s' is missing or goes "
                                  "through a symbolic link", spec->cwd ? spec->cwd : ".");
    default:
        cf_not_started(s);
        return p->host->set_error(p->h, SBX_E_IO, CF_NAME ": sandbox %s: a file could not be "
                                  "placed before the command", s->id);
    }
}

static int cf_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                   const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct cf_prov *p = prov;
    struct cf_sb *s = sb;
    pc_hints_reset(&s->hints);
    int rc = exec_run(p, s, spec, sink, out);
    if (rc != SBX_OK)
        pc_hints_to_outcome(&s->hints, p->host, p->h, out);
    return rc;
}

/* ---- files ---- */

static int cf_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
                     uint32_t mode)
{
    struct cf_prov *p = prov;
    static const char *const argv[] = {"true", NULL};
    sw_kind kind = SW_NONE;
    long code = 0;
    if (!sw_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH, CF_NAME ": '%s' is not a safe relative path",
                                  path);
    sbx_file_v1 f = {.path = path, .data = data, .len = len, .mode = mode};
    sbx_exec_outcome_v1 o = {.struct_size = sizeof o};
    struct run w = {.job = {.files = &f, .n_files = 1}, .argv = argv,
                    .timeout_ns = (uint64_t)p->request_ms * 1000000u};
    int rc = run_wrapper(p, sb, &w, &o, &kind, &code);
    return rc != SBX_OK ? rc : sw_upload_result(p->host, p->h, CF_NAME, path, kind, code);
}

static int cf_download(void *prov, void *sb, const char *path, size_t max, void **data,
                       size_t *len)
{
    struct cf_prov *p = prov;
    sw_kind kind = SW_NONE;
    long code = 0;
    *data = NULL;
    *len = 0;
    if (!sw_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH, CF_NAME ": '%s' is not a safe relative path",
                                  path);
    sw_collect c = {.cap = max};
    if (!(c.buf = p->host->alloc(max ? max : 1)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    sbx_output_sink_v1 sink = {.write = sw_collect_write, .ud = &c};
    sbx_exec_outcome_v1 o = {.struct_size = sizeof o};
    struct run w = {.job = {.download = path, .download_max = max},
                    .timeout_ns = (uint64_t)p->request_ms * 1000000u, .sink = &sink};
    int rc = run_wrapper(p, sb, &w, &o, &kind, &code);
    if (rc == SBX_OK && o.status == SBX_RUN_OUTPUT_LIMIT)
        kind = SW_TOO_BIG;
    if (rc == SBX_OK)
        rc = sw_download_result(p->host, p->h, CF_NAME, path, max, kind);
    if (rc == SBX_OK) {
        *data = c.buf;
        *len = c.len;
        return SBX_OK;
    }
    p->host->free(c.buf);
    return rc;
}

static const sbx_provider_ops_v1 cf_ops = {
    .init = cf_init, .fini = cf_fini, .create = cf_create, .exec = cf_exec,
    .destroy = cf_destroy, .upload = cf_upload, .download = cf_download,
};

SBX_PROVIDER_DEFINE(CF_NAME, PACKAGE_VERSION,
                    "Cloudflare sandbox containers through the bridge Worker of @cloudflare/sandbox",
                    "MIT", CF_CAPS, config_keys, secret_keys, &cf_ops);
