/* plugins/volcengine/volcengine.c - the Volcengine provider: descriptor,
 * settings, lifecycle ops
 *
 * A sandbox is a veFaaS sandbox instance of one function (function_id),
 * made by CreateSandbox with a timeout (our time-to-live, in minutes),
 * Metadata (our labels, the core's owner label among them), Envs and the
 * network rule; ListSandboxes by Metadata finds them again (gc), and
 * KillSandbox ends them.  Commands and files go to its AIO sandbox server
 * (volc-exec.c).  See README.md for the sources and what maps to what.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "rfc3339.h"
#include "volc-int.h"
#include "unenforced.h"
#include "noimage.h"
#include "retry-hints.h"
#include "setting-checks.h"

/* What runs in place of a sandbox's image. */
#define VC_NO_IMAGES "every sandbox runs the image of the veFaaS function (function_id)"

#define VC_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STREAM | \
                 SBX_CAP_STDIN | SBX_CAP_NETWORK_POLICY | SBX_CAP_LIST | SBX_CAP_CONCURRENT)
#define LIST_PAGE 100
#define LIST_MAX_PAGES 10000

static const char *const config_keys[] = {
    "function_id", "gateway_url", "api_url", "region", "workdir", "ttl", "cpu_milli",
    "memory_mb", "request_timeout", "ca_file", NULL,
};
static const char *const secret_keys[] = {
    "access_key_id", "secret_access_key", "session_token", "sandbox_api_key", NULL,
};

/* ---- host helpers ---- */

void vc_retry_after(struct vc_prov *p, struct vc_sb *s, long ms)
{
    pc_retry_after(p->host, p->h, s ? &s->hints : NULL, ms);
}

void vc_not_started(struct vc_sb *s)
{
    pc_hints_not_started(&s->hints);
}

uint64_t vc_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- settings ---- */

static bool http_url(const char *u)
{
    return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8);
}

static int dup_to(struct vc_prov *p, const char *v, size_t n, char **out)
{
    if (!(*out = strndup(v, n)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

/* The checks of settings_read: NULL, or why the value is refused. */
static const char *check_function_id(const char *v)
{
    return pc_plain_name(v, "-_.") ? NULL : "is not a function id ([A-Za-z0-9._-])";
}

static const char *check_gateway(const char *v)
{
    return http_url(v) && !strpbrk(v, "?# \t\r\n") ? NULL
                                                     : "is not an http(s) URL without a query";
}

static const char *check_api_url(const char *v)
{
    const char *auth = strstr(v, "://");
    return !http_url(v) || strpbrk(v, "?#@ \t\r\n") || !auth || !auth[3] ||
                   strchr(auth + 3, '/')
               ? "is not http(s)://HOST[:PORT] (the OpenAPI gateway signs the path /)"
               : NULL;
}

static const char *check_region(const char *v)
{
    return pc_plain_name(v, "-_") ? NULL : "is not a region name (e.g. cn-beijing)";
}

/* What settings_read fills; copied into struct vc_prov. */
struct vc_conf {
    const char *function_id, *gateway_url, *api_url, *region, *workdir, *ca_file;
    uint64_t ttl_ns, request_ns;
    int64_t cpu_milli, memory_mb;
};

#define VCC(field) offsetof(struct vc_conf, field)
static const sbx_setting_v1 vc_settings[] = {
    {.key = "function_id", .type = SBX_SETTING_STRING, .check = check_function_id,
     .offset = VCC(function_id)},
    {.key = "gateway_url", .type = SBX_SETTING_STRING, .check = check_gateway,
     .offset = VCC(gateway_url)},
    {.key = "api_url", .type = SBX_SETTING_STRING, .def = VC_DEFAULT_API_URL,
     .check = check_api_url, .offset = VCC(api_url)},
    {.key = "region", .type = SBX_SETTING_STRING, .def = VC_DEFAULT_REGION,
     .check = check_region, .offset = VCC(region)},
    {.key = "workdir", .type = SBX_SETTING_STRING, .def = VC_DEFAULT_WORKDIR,
     .check = pc_check_workdir, .offset = VCC(workdir)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = VCC(ca_file)},
    /* veFaaS counts whole minutes: rounded up below. */
    {.key = "ttl", .type = SBX_SETTING_DURATION, .def = VC_DEFAULT_TTL, .min = "1s",
     .max = "720h", .offset = VCC(ttl_ns)},
    {.key = "cpu_milli", .type = SBX_SETTING_INT, .def = "0", .min = "0", .max = "1000000",
     .offset = VCC(cpu_milli)},
    {.key = "memory_mb", .type = SBX_SETTING_INT, .def = "0", .min = "0", .max = "10000000",
     .offset = VCC(memory_mb)},
    {.key = "request_timeout", .type = SBX_SETTING_DURATION, .def = "60s", .min = "1s",
     .max = "1h", .offset = VCC(request_ns)},
    {.key = NULL},
};
#undef VCC

static int read_settings(struct vc_prov *p)
{
    struct vc_conf c = {0};
    int rc;

    if (!SBX_HOST_HAS(p->host, settings_read))
        return p->host->set_error(p->h, SBX_E_INTERNAL, "volcengine: the core lends no "
                                  "settings_read (ABI 1.9)");
    if ((rc = p->host->settings_read(p->h, vc_settings, sizeof vc_settings[0], &c)))
        return rc;
    if (!c.function_id)
        return p->host->set_error(p->h, SBX_E_CONFIG, VC_INI ": function_id is not set (the "
                                  "veFaaS function whose sandboxes to run, e.g. function_id = "
                                  "abcd1234)");
    if (!c.gateway_url)
        return p->host->set_error(p->h, SBX_E_CONFIG, VC_INI ": gateway_url is not set (the "
                                  "function's API gateway address, e.g. https://sd1234."
                                  "apigateway-cn-beijing.volceapi.com)");
    const char *gw = c.gateway_url, *wd = c.workdir, *auth = strstr(c.api_url, "://");
    size_t gl = strlen(gw), wl = strlen(wd);
    while (gl > 0 && gw[gl - 1] == '/')
        gl--;
    while (wl > 1 && wd[wl - 1] == '/')
        wl--;
    if ((rc = dup_to(p, c.function_id, strlen(c.function_id), &p->function_id)) ||
        (rc = dup_to(p, gw, gl, &p->gateway_url)) ||
        (rc = dup_to(p, c.api_url, strlen(c.api_url), &p->api_url)) ||
        (rc = dup_to(p, auth + 3, strlen(auth + 3), &p->api_host)) ||
        (rc = dup_to(p, c.region, strlen(c.region), &p->region)) ||
        (rc = dup_to(p, wd, wl, &p->workdir)) ||
        (c.ca_file && (rc = dup_to(p, c.ca_file, strlen(c.ca_file), &p->ca_file))))
        return rc;
    p->ttl_min = (c.ttl_ns + 60000000000u - 1) / 60000000000u;
    p->cpu_milli = (long)c.cpu_milli;
    p->memory_mb = (long)c.memory_mb;
    p->request_ms = (long)(c.request_ns / 1000000u);
    return SBX_OK;
}

/* ---- init / fini ---- */

static void vc_fini(void *prov)
{
    struct vc_prov *p = prov;
    if (!p)
        return;
    ph_client_free(p->api);
    ph_client_free(p->gw);
    free(p->api_url);
    free(p->api_host);
    free(p->gateway_url);
    free(p->function_id);
    free(p->region);
    free(p->workdir);
    free(p->ca_file);
    free(p);
}

static int vc_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    char err[PH_ERR_MAX];
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    if (sodium_init() < 0)
        return host->set_error(h, SBX_E_INTERNAL, VC_NAME ": libsodium failed to initialise");
    struct vc_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    int rc = read_settings(p);
    if (rc == SBX_OK) {
        ph_client_conf conf = {.base_url = p->api_url, .ca_file = p->ca_file,
                               .timeout_ms = p->request_ms};
        if ((rc = ph_client_new(&conf, &p->api, err)) != SBX_OK)
            rc = host->set_error(h, SBX_E_CONFIG, VC_INI ": api_url: %s", err);
    }
    if (rc == SBX_OK) {
        ph_client_conf conf = {.base_url = p->gateway_url, .ca_file = p->ca_file,
                               .timeout_ms = p->request_ms};
        if ((rc = ph_client_new(&conf, &p->gw, err)) != SBX_OK)
            rc = host->set_error(h, SBX_E_CONFIG, VC_INI ": gateway_url: %s", err);
    }
    if (rc != SBX_OK) {
        vc_fini(p);
        return rc;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- create / attach / release / destroy ---- */

static bool id_ok(const char *id)
{
    return pc_plain_name(id, "-_.") && strlen(id) < SBX_ID_MAX;
}

static int new_sb(struct vc_prov *p, const char *id, struct vc_sb **out)
{
    struct vc_sb *s = calloc(1, sizeof *s);
    if (!s)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    snprintf(s->id, sizeof s->id, "%s", id);
    *out = s;
    return SBX_OK;
}

/* Only the wall clock and the output caps are ours to hold: a veFaaS
 * sandbox has its function's size. */
static int unenforced(struct vc_prov *p)
{
    return pc_limits_sized_by_backend(p->host, p->h, "a veFaaS sandbox has the CPU and memory of "
                                      "its function (or cpu_milli and memory_mb of "
                                      "volcengine.ini), not the sandbox's limits, and its AIO "
                                      "sandbox sets no per-process limit");
}

static int vc_create(void *prov, const sbx_create_spec_v1 *spec, void **sb, char id[SBX_ID_MAX])
{
    struct vc_prov *p = prov;
    *sb = NULL;
    if (!spec || spec->struct_size < offsetof(sbx_create_spec_v1, ttl_ns) + sizeof spec->ttl_ns)
        return p->host->set_error(p->h, SBX_E_INVAL, VC_NAME ": create: bad spec");
    if (spec->network != SBX_NET_HOST && spec->network != SBX_NET_NONE)
        return p->host->set_error(p->h, SBX_E_INVAL, VC_NAME ": unknown network policy %d",
                                  (int)spec->network);
    /* The image is the function's (the AIO sandbox the exec needs). */
    int rc0 = pc_image_cannot_run(p->host, p->h, VC_NAME, spec, VC_NO_IMAGES);
    if (rc0 == SBX_OK)
        rc0 = unenforced(p);
    if (rc0 != SBX_OK)
        return rc0;
    uint64_t ttl = spec->ttl_ns ? (spec->ttl_ns + 60000000000u - 1) / 60000000000u : p->ttl_min;
    json_t *md = json_object(), *envs = json_array();
    int rc = (md && envs) ? SBX_OK : SBX_E_NOMEM;
    for (size_t i = 0; rc == SBX_OK && i < spec->n_labels; i++)
        if (!spec->labels[i].key || !strcmp(spec->labels[i].key, VC_CREATED_KEY) ||
            json_object_set_new(md, spec->labels[i].key,
                json_string(spec->labels[i].value ? spec->labels[i].value : "")))
            rc = SBX_E_INVAL;
    char created[32];
    struct timespec now;
    if (rc == SBX_OK && clock_gettime(CLOCK_REALTIME, &now) == 0) {
        snprintf(created, sizeof created, "%llu",
                 (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
        if (json_object_set_new(md, VC_CREATED_KEY, json_string(created)))
            rc = SBX_E_NOMEM;
    }
    for (size_t i = 0; rc == SBX_OK && i < spec->n_env; i++) {
        const char *k = spec->env[i].key, *v = spec->env[i].value ? spec->env[i].value : "";
        if (!k || !*k || strchr(k, '=') || json_array_append_new(envs,
                json_pack("{s:s, s:s}", "Key", k, "Value", v)))
            rc = SBX_E_INVAL;
    }
    json_t *body = rc == SBX_OK
        ? json_pack("{s:s, s:I, s:o, s:o, s:{s:b}}", "FunctionId", p->function_id, "Timeout",
                    (json_int_t)ttl, "Metadata", md, "Envs", envs, "NetworkRules",
                    "AllowEgressAccess", spec->network == SBX_NET_HOST)
        : NULL;
    if (!body) {
        if (rc == SBX_OK)
            rc = SBX_E_NOMEM;
        else {
            json_decref(md);
            json_decref(envs);
        }
        return p->host->set_error(p->h, rc, rc == SBX_E_NOMEM ? "out of memory" :
                                  VC_NAME ": create: a label or environment entry is not valid "
                                  "UTF-8 or has a bad name");
    }
    if (p->cpu_milli)
        json_object_set_new(body, "CpuMilli", json_integer(p->cpu_milli));
    if (p->memory_mb)
        json_object_set_new(body, "MemoryMB", json_integer(p->memory_mb));
    json_t *res = NULL;
    rc = vc_openapi(p, "create", "CreateSandbox", body, &res, NULL);
    json_decref(body);
    const char *sid = json_string_value(json_object_get(res, "SandboxId"));
    struct vc_sb *s = NULL;
    if (rc == SBX_OK && !id_ok(sid))
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": create: the answer has no "
                                "usable SandboxId");
    if (rc == SBX_OK)
        rc = new_sb(p, sid, &s);
    json_decref(res);
    if (rc != SBX_OK)
        return rc;
    snprintf(id, SBX_ID_MAX, "%s", s->id);
    *sb = s;
    return SBX_OK;
}

static json_t *sandbox_ref(struct vc_prov *p, const char *id)
{
    return json_pack("{s:s, s:s}", "FunctionId", p->function_id, "SandboxId", id);
}

static int vc_attach(void *prov, const char *id, void **sb)
{
    struct vc_prov *p = prov;
    char what[SBX_ID_MAX + 32];
    json_t *res = NULL, *body = sandbox_ref(p, id);
    long status = 0;
    *sb = NULL;
    if (!body)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    snprintf(what, sizeof what, "sandbox %s", id);
    int rc = vc_openapi(p, what, "DescribeSandbox", body, &res, &status);
    json_decref(body);
    if (vc_not_found(rc, status))
        rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, VC_NAME ": no sandbox '%s' of function "
                                "%s (killed, expired, or never made)", id, p->function_id);
    const char *got = json_string_value(json_object_get(res, "Id"));
    if (rc == SBX_OK && got && strcmp(got, id))
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": DescribeSandbox %s answered "
                                "sandbox %s", id, got);
    json_decref(res);
    struct vc_sb *s = NULL;
    if (rc == SBX_OK && (rc = new_sb(p, id, &s)) == SBX_OK) {
        unenforced(p);  /* the core refuses its execs, if need be */
        *sb = s;
    }
    return rc;
}

static void vc_release(void *prov, void *sb)
{
    (void)prov;
    free(sb);
}

static int vc_destroy(void *prov, void *sb)
{
    struct vc_prov *p = prov;
    struct vc_sb *s = sb;
    char what[SBX_ID_MAX + 32];
    long status = 0;
    json_t *body = sandbox_ref(p, s->id);
    snprintf(what, sizeof what, "destroy %s", s->id);
    int rc = body ? vc_openapi(p, what, "KillSandbox", body, NULL, &status)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    json_decref(body);
    if (vc_not_found(rc, status)) {
        /* Gone already (its time-to-live ran out): that is what we wanted. */
        p->host->log(p->h, SBX_LOG_DEBUG, "sandbox %s was already gone", s->id);
        rc = SBX_OK;
    }
    free(s);
    return rc;
}

/* ---- list ---- */

/* One listed sandbox to @cb, when its labels hold every pair of @filter
 * (the service filters by Metadata too; this is the guarantee). */
static int list_one(json_t *sbj, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                    void *ud)
{
    const char *id = json_string_value(json_object_get(sbj, "Id"));
    json_t *md = json_object_get(sbj, "Metadata");
    if (!id_ok(id))
        return 0;
    for (size_t i = 0; i < n_filter; i++) {
        const char *v = json_string_value(json_object_get(md, filter[i].key));
        if (!v || strcmp(v, filter[i].value ? filter[i].value : ""))
            return 0;
    }
    size_t n = json_is_object(md) ? json_object_size(md) : 0, k = 0;
    sbx_kv_v1 *labels = calloc(n ? n : 1, sizeof *labels);
    if (!labels)
        return SBX_E_NOMEM;
    const char *key;
    json_t *val;
    json_object_foreach(md, key, val)
        if (json_is_string(val) && strcmp(key, VC_CREATED_KEY))
            labels[k++] = (sbx_kv_v1){key, json_string_value(val)};
    uint64_t at = pc_rfc3339_ns(json_string_value(json_object_get(sbj, "CreatedAt")));
    /* CreatedAt has whole seconds: our own stamp orders sandboxes made in
     * the same second (get-or-create opens the oldest), when it agrees
     * with the service's second. */
    const char *mine = json_string_value(json_object_get(md, VC_CREATED_KEY));
    if (mine && at) {
        char *end;
        errno = 0;
        unsigned long long ns = strtoull(mine, &end, 10);
        if (!errno && end != mine && !*end && ns / 1000000000ull == at / 1000000000ull)
            at = ns;
    }
    int r = cb(ud, id, labels, k, at);
    free(labels);
    return r;
}

static int list_pages(struct vc_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                      json_int_t page_size, sbx_list_cb_v1 cb, void *ud)
{
    json_t *md = json_object();
    if (!md)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n_filter; i++)
        if (!filter[i].key || json_object_set_new(md, filter[i].key,
                json_string(filter[i].value ? filter[i].value : ""))) {
            json_decref(md);
            return p->host->set_error(p->h, SBX_E_INVAL, VC_NAME ": list: a label filter is "
                                      "not valid UTF-8");
        }
    int rc = SBX_OK;
    json_int_t seen = 0;
    for (json_int_t page = 1; rc == SBX_OK && page <= LIST_MAX_PAGES; page++) {
        json_t *body = json_pack("{s:s, s:O, s:I, s:I}", "FunctionId", p->function_id,
                                 "Metadata", md, "PageNumber", page, "PageSize", page_size);
        json_t *res = NULL;
        rc = body ? vc_openapi(p, "list", "ListSandboxes", body, &res, NULL)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        json_decref(body);
        json_t *list = json_object_get(res, "Sandboxes"), *sbj;
        json_int_t total = json_integer_value(json_object_get(res, "Total"));
        size_t i;
        if (rc == SBX_OK && list && !json_is_array(list))
            rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": ListSandboxes: Sandboxes "
                                    "is not a list");
        json_array_foreach(rc == SBX_OK ? list : NULL, i, sbj)
            if (rc == SBX_OK && cb && (rc = list_one(sbj, filter, n_filter, cb, ud)) ==
                SBX_E_NOMEM)
                rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        size_t got = json_is_array(list) ? json_array_size(list) : 0;
        seen += (json_int_t)got;
        json_decref(res);
        if (!cb || got < (size_t)page_size || seen >= total)
            break;
    }
    json_decref(md);
    return rc;
}

static int vc_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                   void *ud)
{
    return list_pages(prov, filter, n_filter, LIST_PAGE, cb, ud);
}

/* ---- exec, files ---- */

static int vc_exec_op(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct vc_prov *p = prov;
    if (!spec || spec->struct_size < offsetof(sbx_exec_spec_v1, stderr_cap) + sizeof spec->stderr_cap)
        return p->host->set_error(p->h, SBX_E_INVAL, VC_NAME ": exec: bad spec");
    struct vc_sb *s = sb;
    pc_hints_reset(&s->hints);
    int rc = vc_exec(p, s, spec, sink, out);
    if (rc != SBX_OK)
        pc_hints_to_outcome(&s->hints, p->host, p->h, out);
    return rc;
}

static int vc_upload_op(void *prov, void *sb, const char *path, const void *data, size_t len,
                        uint32_t mode)
{
    return vc_upload(prov, sb, path, data, len, mode);
}

static int vc_download_op(void *prov, void *sb, const char *path, size_t max, void **data,
                          size_t *len)
{
    return vc_download(prov, sb, path, max, data, len);
}

/* ---- health, doctor ---- */

static int vc_health(void *prov)
{
    return list_pages(prov, NULL, 0, 1, NULL, NULL);
}

static void vc_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct vc_prov *p = prov;
    static const char *const keys[] = {"access_key_id", "secret_access_key"};
    char detail[600];
    for (size_t i = 0; i < 2; i++) {
        const char *v = NULL;
        size_t n = 0;
        int rc = p->host->secret_get(p->h, keys[i], &v, &n);
        if (rc == SBX_OK)
            p->host->secret_release(p->h, v);
        cb(ud, keys[i], rc == SBX_OK && n > 0,
           rc == SBX_OK ? (n ? "set (not shown)" : "empty")
                        : rc == SBX_E_NOT_FOUND ? "not set in " VC_INI
                                                : "set, but the reference cannot be opened");
    }
    int rc = vc_health(p);
    const char *why = rc == SBX_OK ? "reachable, signature accepted"
                    : rc == SBX_E_AUTH ? "the credentials or the request's time were refused"
                    : rc == SBX_E_NETWORK ? "cannot connect"
                    : rc == SBX_E_TIMEOUT ? "no answer in time"
                    : rc == SBX_E_RATE_LIMITED ? "rate limited"
                    : rc == SBX_E_SERVER ? "server error (HTTP 5xx)"
                    : rc == SBX_E_CONFIG ? "no usable credentials"
                    : rc == SBX_E_NOT_FOUND ? "the function is not found"
                    : "cannot list sandboxes";
    snprintf(detail, sizeof detail, "%s (%s, function %s): %s", p->api_url, p->region,
             p->function_id, why);
    cb(ud, "control plane", rc == SBX_OK, detail);
    snprintf(detail, sizeof detail, "%s?faasInstanceName=<id>, work directory %s",
             p->gateway_url, p->workdir);
    cb(ud, "sandbox gateway", 1, detail);
    cb(ud, "images", 1, "none: " VC_NO_IMAGES " (--image and a template's image.volcengine "
       "are refused, a template's plain image is ignored)");
}

static const sbx_provider_ops_v1 vc_ops = {
    .init = vc_init, .fini = vc_fini, .create = vc_create, .exec = vc_exec_op,
    .destroy = vc_destroy, .attach = vc_attach, .release = vc_release, .list = vc_list,
    .upload = vc_upload_op, .download = vc_download_op, .health = vc_health,
    .doctor = vc_doctor,
};

SBX_PROVIDER_DEFINE(VC_NAME, PACKAGE_VERSION,
                    "Volcengine veFaaS sandboxes (AIO sandbox) over the signed OpenAPI",
                    "MIT", VC_CAPS, config_keys, secret_keys, &vc_ops);
