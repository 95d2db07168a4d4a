/* plugins/e2b/e2b.c - the E2B provider: descriptor, settings, lifecycle ops
 *
 * A sandbox is an E2B micro-VM made by the control plane with a timeout
 * (our time-to-live) and metadata (our labels, the core's owner label
 * among them).  Commands and files go to envd inside it (e2b-exec.c,
 * e2b-files.c).  See README.md for the settings and what maps to what.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b-int.h"
#include "unenforced.h"
#include "noimage.h"
#include "retry-hints.h"
#include "setting-checks.h"

#define E2B_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STREAM | \
                  SBX_CAP_STDIN | SBX_CAP_NETWORK_POLICY | SBX_CAP_LIST | SBX_CAP_CONCURRENT)

static const char *const config_keys[] = {
    "api_key", "domain", "api_url", "envd_url", "ca_file", "template", "templates", "user",
    "workdir", "ttl", "keepalive", "request_timeout", "connect_timeout", "allow_internet", NULL,
};
static const char *const secret_keys[] = {"api_key", NULL};

/* ---- settings ---- */

/* The checks of settings_read: NULL, or why the value is refused. */
static const char *check_domain(const char *v)
{
    return pc_plain_name(v, ".-") ? NULL : "is not a host name";
}

static const char *check_template(const char *v)
{
    return pc_plain_name(v, "-_.") ? NULL : "is not a template id ([A-Za-z0-9._-])";
}

static const char *check_user(const char *v)
{
    return pc_plain_name(v, "-_.") ? NULL : "is not a user name";
}

/* "lang:templateID, lang2:templateID2" */
static const char *check_templates(const char *v)
{
    for (const char *s = v; *s;) {
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        if (!*s)
            break;
        const char *e = s + strcspn(s, ", \t"), *c = memchr(s, ':', (size_t)(e - s));
        if (!c || c == s || c + 1 == e)
            return "use LANGUAGE:TEMPLATE_ID pairs separated by commas";
        s = e;
    }
    return NULL;
}

/* What settings_read fills; copied into struct e2b_prov. */
struct e2b_conf {
    const char *domain, *api_url, *envd_url, *ca_file, *template_id, *templates, *user,
        *workdir;
    uint64_t ttl_ns, keepalive_ns, request_ns, connect_ns;
    int allow_internet;
};

#define EC(field) offsetof(struct e2b_conf, field)
static const sbx_setting_v1 e2b_settings[] = {
    {.key = "domain", .type = SBX_SETTING_STRING, .def = E2B_DEFAULT_DOMAIN,
     .check = check_domain, .offset = EC(domain)},
    {.key = "api_url", .type = SBX_SETTING_STRING, .check = pc_check_http_url, .offset = EC(api_url)},
    {.key = "envd_url", .type = SBX_SETTING_STRING, .check = pc_check_http_url, .offset = EC(envd_url)},
    {.key = "template", .type = SBX_SETTING_STRING, .def = E2B_DEFAULT_TEMPLATE,
     .check = check_template, .offset = EC(template_id)},
    {.key = "user", .type = SBX_SETTING_STRING, .def = E2B_DEFAULT_USER, .check = check_user,
     .offset = EC(user)},
    {.key = "workdir", .type = SBX_SETTING_STRING, .def = E2B_DEFAULT_WORKDIR,
     .check = pc_check_workdir, .offset = EC(workdir)},
    {.key = "templates", .type = SBX_SETTING_STRING, .check = check_templates,
     .offset = EC(templates)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = EC(ca_file)},
    {.key = "ttl", .type = SBX_SETTING_DURATION, .def = E2B_DEFAULT_TTL, .min = "1s",
     .max = "24h", .offset = EC(ttl_ns)},
    {.key = "keepalive", .type = SBX_SETTING_DURATION, .def = E2B_DEFAULT_KEEPALIVE,
     .min = "1s", .max = "1h", .offset = EC(keepalive_ns)},
    {.key = "request_timeout", .type = SBX_SETTING_DURATION,
     .def = E2B_DEFAULT_REQUEST_TIMEOUT, .min = "100ms", .max = "1h", .offset = EC(request_ns)},
    {.key = "connect_timeout", .type = SBX_SETTING_DURATION, .def = "10s", .min = "100ms",
     .max = "10m", .offset = EC(connect_ns)},
    {.key = "allow_internet", .type = SBX_SETTING_BOOL, .def = "true",
     .offset = EC(allow_internet)},
    {.key = NULL},
};
#undef EC

static int dup_to(struct e2b_prov *p, const char *v, char **out)
{
    if (v && !(*out = strdup(v)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

static int read_settings(struct e2b_prov *p)
{
    struct e2b_conf c = {0};
    int rc;

    if (!SBX_HOST_HAS(p->host, settings_read))
        return p->host->set_error(p->h, SBX_E_INTERNAL, "e2b: the core lends no "
                                  "settings_read (ABI 1.9)");
    if ((rc = p->host->settings_read(p->h, e2b_settings, sizeof e2b_settings[0], &c)) ||
        (rc = dup_to(p, c.domain, &p->domain)) || (rc = dup_to(p, c.envd_url, &p->envd_url)) ||
        (rc = dup_to(p, c.ca_file, &p->ca_file)) ||
        (rc = dup_to(p, c.template_id, &p->template_id)) ||
        (rc = dup_to(p, c.user, &p->user)) || (rc = dup_to(p, c.workdir, &p->workdir)))
        return rc;
    if (c.api_url ? !(p->api_url = strdup(c.api_url))
                  : asprintf(&p->api_url, "https://api.%s", p->domain) < 0 &&
                        !(p->api_url = NULL))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    size_t wl = strlen(p->workdir);
    while (wl > 1 && p->workdir[wl - 1] == '/')
        p->workdir[--wl] = '\0';
    p->templates = c.templates;
    p->ttl_s = c.ttl_ns / 1000000000u;
    p->keepalive_s = (unsigned)(c.keepalive_ns / 1000000000u);
    p->request_timeout_ms = (long)(c.request_ns / 1000000u);
    p->connect_timeout_ms = (long)(c.connect_ns / 1000000u);
    p->allow_internet = c.allow_internet;
    char *up = NULL;
    if (asprintf(&up, "%s:", p->user) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    char *b64 = pc_b64_encode(up, strlen(up));
    free(up);
    if (!b64 || asprintf(&p->auth_basic, "Basic %s", b64) < 0) {
        free(b64);
        p->auth_basic = NULL;
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    free(b64);
    return SBX_OK;
}

/* The E2B template for a language template, from "templates", or NULL. */
static char *mapped_template(struct e2b_prov *p, const char *lang)
{
    const char *tm = p->templates;
    size_t ll = lang ? strlen(lang) : 0;
    for (const char *s = tm; s && *s && ll;) {
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        const char *e = s + strcspn(s, ", \t"), *c = memchr(s, ':', (size_t)(e - s));
        if (c && (size_t)(c - s) == ll && !strncmp(s, lang, ll))
            /* cppcheck-suppress nullPointerArithmeticRedundantCheck ; s is never NULL here */
            return strndup(c + 1, (size_t)(e - c - 1));
        s = e;
    }
    return NULL;
}

/* ---- retry hints ---- */

void e2b_retry_after(struct e2b_prov *p, struct e2b_sb *sb, long ms)
{
    pc_retry_after(p->host, p->h, sb ? &sb->hints : NULL, ms);
}

void e2b_not_started(struct e2b_sb *sb)
{
    pc_hints_not_started(&sb->hints);
}

/* ---- init / fini ---- */

void e2b_sb_free(struct e2b_sb *sb)
{
    if (!sb)
        return;
    e2b_envd_free(sb);
    free(sb);
}

static void e2b_fini(void *prov)
{
    struct e2b_prov *p = prov;
    if (!p)
        return;
    ph_client_free(p->api);
    ph_client_free(p->envd);
    free(p->api_url);
    free(p->domain);
    free(p->envd_url);
    free(p->ca_file);
    free(p->template_id);
    free(p->user);
    free(p->workdir);
    free(p->auth_basic);
    free(p);
}

static int e2b_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    struct e2b_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    int rc = read_settings(p);
    if (!rc) {
        char err[PH_ERR_MAX] = "";
        ph_client_conf conf = {
            .base_url = p->api_url,
            .ca_file = p->ca_file,
            .connect_timeout_ms = p->connect_timeout_ms,
            .timeout_ms = p->request_timeout_ms,
        };
        if ((rc = ph_client_new(&conf, &p->api, err)))
            rc = host->set_error(h, rc == SBX_E_INVAL ? SBX_E_CONFIG : rc,
                                 "providers.d/e2b.ini: api_url: %s", err);
    }
    if (!rc)
        rc = e2b_envd_shared(p);
    if (rc) {
        e2b_fini(p);
        return rc;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- create / attach / release / destroy ---- */

/* Only the wall clock and the output caps are ours to hold: E2B sizes a
 * sandbox by its template. */
static int unenforced(struct e2b_prov *p)
{
    return pc_limits_sized_by_backend(p->host, p->h, "an E2B sandbox has the CPU, memory, "
                                      "process and disk sizes of the template it was built "
                                      "from, and envd sets no per-process limit");
}

static int e2b_create(void *prov, const sbx_create_spec_v1 *spec, void **sbp, char id[SBX_ID_MAX])
{
    struct e2b_prov *p = prov;
    *sbp = NULL;
    if (!spec || spec->struct_size < offsetof(sbx_create_spec_v1, ttl_ns) + sizeof spec->ttl_ns)
        return p->host->set_error(p->h, SBX_E_INVAL, "create: bad spec");
    if (spec->network == SBX_NET_HOST && !p->allow_internet)
        return p->host->set_error(p->h, SBX_E_PERM, "network access requested but "
                                  "providers.d/e2b.ini sets allow_internet = false");
    if (spec->network != SBX_NET_HOST && spec->network != SBX_NET_NONE)
        return p->host->set_error(p->h, SBX_E_INVAL, "unknown network policy %d", (int)spec->network);
    /* An image that is no template id (a docker name) cannot run here:
     * refused when asked for, else the language's template runs. */
    bool tmpl_id = spec->image && pc_plain_name(spec->image, "-_.");
    if (spec->image && !tmpl_id && spec->image_explicit)
        return pc_image_cannot_run(p->host, p->h, "e2b", spec, "it is not an E2B template id "
                                   "([A-Za-z0-9._-], such as base)");
    int rc0 = unenforced(p);
    if (rc0 != SBX_OK)
        return rc0;

    /* The E2B template: an image that is a plain template id, else the
     * language's mapping, else the default. */
    char *tmpl = NULL;
    if (tmpl_id)
        tmpl = strdup(spec->image);
    else if (!(tmpl = mapped_template(p, spec->template_name)))
        tmpl = strdup(p->template_id);
    if (!tmpl)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (spec->image && !tmpl_id)
        p->host->log(p->h, SBX_LOG_INFO, "image '%s' is not an E2B template id: using template "
                     "'%s'", spec->image, tmpl);

    uint64_t ttl = spec->ttl_ns ? (spec->ttl_ns + 999999999u) / 1000000000u : p->ttl_s;
    json_t *md = json_object(), *env = json_object(), *body = NULL, *ans = NULL;
    int rc = SBX_OK;
    for (size_t i = 0; md && i < spec->n_labels; i++)
        if (!spec->labels[i].key ||
            json_object_set_new(md, spec->labels[i].key,
                                json_string(spec->labels[i].value ? spec->labels[i].value : "")))
            rc = SBX_E_INVAL;
    for (size_t i = 0; env && i < spec->n_env; i++)
        if (!spec->env[i].key || !*spec->env[i].key || strchr(spec->env[i].key, '=') ||
            json_object_set_new(env, spec->env[i].key,
                                json_string(spec->env[i].value ? spec->env[i].value : "")))
            rc = SBX_E_INVAL;
    if (rc || !md || !env) {
        json_decref(md);
        json_decref(env);
        free(tmpl);
        return p->host->set_error(p->h, rc ? rc : SBX_E_NOMEM,
                                  rc ? "create: a label or environment entry is not valid UTF-8 "
                                       "or has a bad name" : "out of memory");
    }
    body = json_pack("{s:s,s:I,s:o,s:o,s:b}", "templateID", tmpl, "timeout", (json_int_t)ttl,
                     "metadata", md, "envVars", env, "allow_internet_access",
                     spec->network == SBX_NET_HOST);
    free(tmpl);
    if (!body)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    rc = e2b_api(p, "create", "POST", "/v2/sandboxes", body, &ans);
    json_decref(body);
    struct e2b_sb *sb = NULL;
    if (!rc)
        rc = e2b_sb_from_json(p, ans, NULL, &sb);
    json_decref(ans);
    if (rc)
        return rc;
    snprintf(id, SBX_ID_MAX, "%s", sb->id);
    *sbp = sb;
    return SBX_OK;
}

static int e2b_exec_op(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                       const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct e2b_prov *p = prov;
    if (!spec || spec->struct_size < offsetof(sbx_exec_spec_v1, stderr_cap) + sizeof spec->stderr_cap)
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: bad spec");
    struct e2b_sb *s = sb;
    pc_hints_reset(&s->hints);
    int rc = e2b_exec(p, s, spec, sink, out);
    if (rc != SBX_OK)
        pc_hints_to_outcome(&s->hints, p->host, p->h, out);
    return rc;
}

static int e2b_attach(void *prov, const char *id, void **sbp)
{
    struct e2b_prov *p = prov;
    char path[SBX_ID_MAX + 64], what[SBX_ID_MAX + 32];
    json_t *ans = NULL;
    *sbp = NULL;
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    snprintf(what, sizeof what, "sandbox %s", id);
    unenforced(p);      /* the core refuses its execs, if need be */
    int rc = e2b_api(p, what, "GET", path, NULL, &ans);
    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "no E2B sandbox '%s' (destroyed, "
                                  "expired, or never made)", id);
    if (!rc && !json_is_object(ans))
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "%s: the answer is not a sandbox", what);
    const char *state = rc ? NULL : json_string_value(json_object_get(ans, "state"));
    if (!rc && state && !strcmp(state, "paused")) {
        /* Resume it: connect answers a running sandbox's credentials. */
        json_t *body = json_pack("{s:I}", "timeout", (json_int_t)p->ttl_s);
        json_decref(ans);
        ans = NULL;
        snprintf(path, sizeof path, "/v2/sandboxes/%s/connect", id);
        rc = body ? e2b_api(p, what, "POST", path, body, &ans)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        json_decref(body);
    }
    struct e2b_sb *sb = NULL;
    if (!rc)
        rc = e2b_sb_from_json(p, ans, id, &sb);
    json_decref(ans);
    if (!rc)
        *sbp = sb;
    return rc;
}

static void e2b_release(void *prov, void *sb)
{
    (void)prov;
    e2b_sb_free(sb);
}

static int e2b_destroy(void *prov, void *sbp)
{
    struct e2b_prov *p = prov;
    struct e2b_sb *sb = sbp;
    char path[SBX_ID_MAX + 32], what[SBX_ID_MAX + 32];
    snprintf(path, sizeof path, "/sandboxes/%s", sb->id);
    snprintf(what, sizeof what, "destroy %s", sb->id);
    int rc = e2b_api(p, what, "DELETE", path, NULL, NULL);
    if (rc == SBX_E_NOT_FOUND) {
        /* Gone already (its time-to-live ran out): that is what we wanted. */
        p->host->log(p->h, SBX_LOG_DEBUG, "sandbox %s was already gone", sb->id);
        rc = SBX_OK;
    }
    e2b_sb_free(sb);
    return rc;
}

/* ---- list / files / health / doctor ---- */

static int e2b_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                    void *ud)
{
    return e2b_api_list(prov, filter, n_filter, cb, ud);
}

static int e2b_upload_op(void *prov, void *sb, const char *path, const void *data, size_t len,
                         uint32_t mode)
{
    return e2b_upload(prov, sb, path, data, len, mode);
}

static int e2b_download_op(void *prov, void *sb, const char *path, size_t max, void **data,
                           size_t *len)
{
    return e2b_download(prov, sb, path, max, data, len);
}

static int e2b_health(void *prov)
{
    json_t *ans = NULL;
    int rc = e2b_api(prov, "health", "GET", "/v2/sandboxes?limit=1", NULL, &ans);
    json_decref(ans);
    return rc;
}

static void e2b_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct e2b_prov *p = prov;
    const char *key = NULL;
    size_t klen = 0;
    char detail[600];
    int rc = p->host->secret_get(p->h, "api_key", &key, &klen);
    if (!rc)
        p->host->secret_release(p->h, key);
    cb(ud, "api_key", rc == SBX_OK && klen > 0,
       rc == SBX_OK ? (klen ? "set (not shown)" : "empty")
                    : rc == SBX_E_NOT_FOUND ? "not set in providers.d/e2b.ini"
                                            : "set, but the reference cannot be opened");
    rc = e2b_health(p);
    const char *why = rc == SBX_OK ? "reachable, key accepted"
                    : rc == SBX_E_AUTH ? "the API key was refused"
                    : rc == SBX_E_NETWORK ? "cannot connect"
                    : rc == SBX_E_TIMEOUT ? "no answer in time"
                    : rc == SBX_E_RATE_LIMITED ? "rate limited (HTTP 429)"
                    : rc == SBX_E_SERVER ? "server error (HTTP 5xx)"
                    : rc == SBX_E_CONFIG ? "no usable api_key"
                    : "cannot list sandboxes";
    snprintf(detail, sizeof detail, "%s: %s", p->api_url, why);
    cb(ud, "control plane", rc == SBX_OK, detail);
    if (p->envd_url)
        snprintf(detail, sizeof detail, "%s (envd_url)", p->envd_url);
    else
        snprintf(detail, sizeof detail, "https://sandbox.%s or https://%d-<id>.%s", p->domain,
                 E2B_ENVD_PORT, p->domain);
    cb(ud, "envd address", 1, detail);
    cb(ud, "images", 1, "E2B template ids only: any other --image or template's image.e2b is "
       "refused, a template's plain image that is none is ignored");
}

static const sbx_provider_ops_v1 e2b_ops = {
    .init = e2b_init,
    .fini = e2b_fini,
    .create = e2b_create,
    .exec = e2b_exec_op,
    .destroy = e2b_destroy,
    .attach = e2b_attach,
    .release = e2b_release,
    .list = e2b_list,
    .upload = e2b_upload_op,
    .download = e2b_download_op,
    .health = e2b_health,
    .doctor = e2b_doctor,
};

SBX_PROVIDER_DEFINE("e2b", PACKAGE_VERSION,
                    "E2B cloud sandboxes (Firecracker micro-VMs) over E2B's REST API and envd",
                    "MIT", E2B_CAPS, config_keys, secret_keys, &e2b_ops);
