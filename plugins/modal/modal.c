/* plugins/modal/modal.c - the Modal provider: descriptor, settings,
 * lifecycle ops
 *
 * A sandbox is a Modal Sandbox of one app (the `app` setting, made when
 * missing), from an image built from a registry reference ("FROM ref"),
 * with resources, a timeout (our time-to-live), blocked or open network,
 * and tags (our labels, the core's owner label among them).  Commands and
 * files go through its task's command router (modal-exec.c,
 * modal-files.c).  See README.md for the settings and what maps to what.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "modal-int.h"
#include "unenforced.h"
#include "retry-hints.h"
#include "setting-checks.h"

#define MODAL_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STREAM | \
                    SBX_CAP_STDIN | SBX_CAP_NETWORK_POLICY | SBX_CAP_LIST | SBX_CAP_CONCURRENT)

static const char *const config_keys[] = {
    "token_id", "token_secret", "server_url", "environment", "app", "image", "workdir", "ttl",
    "cpu", "request_timeout", "connect_timeout", "allow_internet", "ca_file", "exec", "files_in_exec", NULL,
};
static const char *const secret_keys[] = {"token_id", "token_secret", NULL};

/* ---- helpers ---- */

uint64_t modal_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void modal_pause_ms(long ms)
{
    if (!MODAL_PAUSES || ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

time_t modal_jwt_exp(const char *jwt)
{
    const char *a = jwt ? strchr(jwt, '.') : NULL;
    const char *b = a ? strchr(a + 1, '.') : NULL;
    if (!b || b - a - 1 <= 0 || b - a - 1 > 8192)
        return 0;
    char *part = strndup(a + 1, (size_t)(b - a - 1));
    size_t n = 0;
    unsigned char *raw = part ? pc_b64_decode(part, &n) : NULL;
    free(part);
    if (!raw)
        return 0;
    json_t *j = json_loadb((const char *)raw, n, 0, NULL);
    free(raw);
    json_t *exp = json_object_get(j, "exp");
    time_t t = json_is_number(exp) && json_number_value(exp) > 0 ? (time_t)json_number_value(exp) : 0;
    json_decref(j);
    return t;
}

/* ---- settings ---- */

/* An image reference fit for "FROM ref": no white space, no shell or
 * Dockerfile syntax. */
static bool image_ref_ok(const char *s)
{
    return pc_plain_name(s, "._-/:@") && strlen(s) <= 255;
}

static bool name_ok(const char *s)
{
    return pc_plain_name(s, "._-") && strlen(s) <= 64;
}

/* The checks of settings_read: NULL, or why the value is refused. */
static const char *check_server_url(const char *v)
{
    return strncmp(v, "http://", 7) && strncmp(v, "https://", 8)
               ? "use an https:// URL (http:// for a local server)" : NULL;
}

static const char *check_environment(const char *v)
{
    return *v && !name_ok(v) ? "is not an environment name" : NULL;
}

static const char *check_app(const char *v)
{
    return name_ok(v) ? NULL : "is not an app name ([A-Za-z0-9._-], at most 64)";
}

static const char *check_image(const char *v)
{
    return image_ref_ok(v) ? NULL : "is not an image reference";
}

/* Cores, a decimal number: none of the typed reader's types. */
static bool cpu_parse(const char *v, unsigned *milli)
{
    char *end;
    errno = 0;
    double c = strtod(v, &end);
    if (errno || end == v || *end || !(c >= 0.125 && c <= 64))
        return false;
    *milli = (unsigned)(c * 1000 + 0.5);
    return true;
}

static const char *check_cpu(const char *v)
{
    unsigned m;
    return cpu_parse(v, &m) ? NULL : "use a number of cores from 0.125 to 64";
}

/* What settings_read fills; copied into struct modal_prov. */
struct modal_conf {
    const char *server_url, *environment, *app, *image, *workdir, *ca_file, *cpu;
    uint64_t ttl_ns, request_ns, connect_ns;
    int allow_internet, files_in_exec, exec_path;
};

/* In the order of MODAL_EXEC_AUTO, _ROUTER, _LEGACY. */
static const char *const exec_paths[] = {"auto", "router", "legacy", NULL};

#define MC(field) offsetof(struct modal_conf, field)
static const sbx_setting_v1 modal_settings[] = {
    {.key = "server_url", .type = SBX_SETTING_STRING, .def = MODAL_DEFAULT_SERVER,
     .check = check_server_url, .offset = MC(server_url)},
    {.key = "environment", .type = SBX_SETTING_STRING, .def = "", .check = check_environment,
     .offset = MC(environment)},
    {.key = "app", .type = SBX_SETTING_STRING, .def = MODAL_DEFAULT_APP, .check = check_app,
     .offset = MC(app)},
    {.key = "image", .type = SBX_SETTING_STRING, .def = MODAL_DEFAULT_IMAGE,
     .check = check_image, .offset = MC(image)},
    {.key = "workdir", .type = SBX_SETTING_STRING, .def = MODAL_DEFAULT_WORKDIR,
     .check = pc_check_workdir, .offset = MC(workdir)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = MC(ca_file)},
    {.key = "ttl", .type = SBX_SETTING_DURATION, .def = MODAL_DEFAULT_TTL, .min = "1s",
     .max = "24h", .offset = MC(ttl_ns)},
    {.key = "request_timeout", .type = SBX_SETTING_DURATION,
     .def = MODAL_DEFAULT_REQUEST_TIMEOUT, .min = "100ms", .max = "1h",
     .offset = MC(request_ns)},
    {.key = "connect_timeout", .type = SBX_SETTING_DURATION, .def = "10s", .min = "100ms",
     .max = "10m", .offset = MC(connect_ns)},
    {.key = "cpu", .type = SBX_SETTING_STRING, .check = check_cpu, .offset = MC(cpu)},
    {.key = "allow_internet", .type = SBX_SETTING_BOOL, .def = "true",
     .offset = MC(allow_internet)},
    {.key = "files_in_exec", .type = SBX_SETTING_BOOL, .def = "true",
     .offset = MC(files_in_exec)},
    {.key = "exec", .type = SBX_SETTING_ENUM, .def = "auto", .choices = exec_paths,
     .offset = MC(exec_path)},
    {.key = NULL},
};
#undef MC

static int dup_to(struct modal_prov *p, const char *v, char **out)
{
    if (v && !(*out = strdup(v)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

static int read_settings(struct modal_prov *p)
{
    struct modal_conf c = {0};
    int rc;

    if (!SBX_HOST_HAS(p->host, settings_read))
        return p->host->set_error(p->h, SBX_E_INTERNAL, "modal: the core lends no "
                                  "settings_read (ABI 1.9)");
    if ((rc = p->host->settings_read(p->h, modal_settings, sizeof modal_settings[0], &c)) ||
        (rc = dup_to(p, c.server_url, &p->server_url)) ||
        (rc = dup_to(p, c.environment, &p->environment)) ||
        (rc = dup_to(p, c.app, &p->app_name)) || (rc = dup_to(p, c.image, &p->image)) ||
        (rc = dup_to(p, c.workdir, &p->workdir)) || (rc = dup_to(p, c.ca_file, &p->ca_file)))
        return rc;
    p->plain_router = !strncmp(p->server_url, "http://", 7);
    size_t wl = strlen(p->workdir);
    while (wl > 1 && p->workdir[wl - 1] == '/')
        p->workdir[--wl] = '\0';
    p->ttl_s = c.ttl_ns / 1000000000u;
    p->request_timeout_ms = (long)(c.request_ns / 1000000u);
    p->connect_timeout_ms = (long)(c.connect_ns / 1000000u);
    if (c.cpu)
        (void)cpu_parse(c.cpu, &p->milli_cpu); /* checked by settings_read */
    p->allow_internet = c.allow_internet;
    p->files_in_exec = c.files_in_exec;
    p->exec_path = c.exec_path;
    return SBX_OK;
}

/* ---- retry hints ---- */

void modal_retry_after(struct modal_prov *p, struct modal_sb *sb, long ms)
{
    pc_retry_after(p->host, p->h, sb ? &sb->hints : NULL, ms);
}

void modal_not_started(struct modal_sb *sb)
{
    pc_hints_not_started(&sb->hints);
}

/* ---- init / fini ---- */

struct modal_sb *modal_sb_new(const char *id)
{
    struct modal_sb *sb = calloc(1, sizeof *sb);
    if (!sb)
        return NULL;
    if (pthread_mutex_init(&sb->lock, NULL)) {
        free(sb);
        return NULL;
    }
    snprintf(sb->id, sizeof sb->id, "%s", id);
    return sb;
}

void modal_sb_free(struct modal_sb *sb)
{
    if (!sb)
        return;
    pthread_mutex_destroy(&sb->lock);
    ph_client_free(sb->router);
    ph_client_free(sb->old_router);
    free(sb->router_url);
    modal_wipe_free(sb->jwt);
    free(sb->task_id);
    free(sb);
}

static void modal_fini(void *prov)
{
    struct modal_prov *p = prov;
    if (!p)
        return;
    ph_client_free(p->api);
    free(p->server_url);
    free(p->environment);
    free(p->app_name);
    free(p->image);
    free(p->workdir);
    free(p->ca_file);
    modal_wipe_free(p->auth_token);
    free(p->app_id);
    free(p->builder_version);
    for (size_t i = 0; i < p->n_images; i++) {
        free(p->images[i].ref);
        free(p->images[i].id);
    }
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static int modal_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    struct modal_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    if (pthread_mutex_init(&p->lock, NULL)) {
        free(p);
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    }
    p->host = host;
    p->h = h;
    int rc = read_settings(p);
    if (!rc) {
        char err[PH_ERR_MAX] = "";
        ph_client_conf conf = {
            .base_url = p->server_url, .ca_file = p->ca_file,
            .connect_timeout_ms = p->connect_timeout_ms, .timeout_ms = p->request_timeout_ms,
            .http2 = 1,
        };
        if ((rc = ph_client_new(&conf, &p->api, err)))
            rc = host->set_error(h, rc == SBX_E_INVAL ? SBX_E_CONFIG : rc,
                                 "providers.d/modal.ini: server_url: %s", err);
    }
    if (rc) {
        modal_fini(p);
        return rc;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- create / attach / release / destroy ---- */

static int make_tags(struct modal_prov *p, const sbx_create_spec_v1 *spec,
                     Modal__Client__SandboxTag **tags, Modal__Client__SandboxTag ***ptrs)
{
    *tags = calloc(spec->n_labels ? spec->n_labels : 1, sizeof **tags);
    *ptrs = calloc(spec->n_labels ? spec->n_labels : 1, sizeof **ptrs);
    if (!*tags || !*ptrs)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    for (size_t i = 0; i < spec->n_labels; i++) {
        if (!spec->labels[i].key || !*spec->labels[i].key)
            return p->host->set_error(p->h, SBX_E_INVAL, "create: a label has no name");
        modal__client__sandbox_tag__init(&(*tags)[i]);
        (*tags)[i].tag_name = (char *)spec->labels[i].key;
        (*tags)[i].tag_value = (char *)(spec->labels[i].value ? spec->labels[i].value : "");
        (*ptrs)[i] = &(*tags)[i];
    }
    return SBX_OK;
}

static int create_sandbox(struct modal_prov *p, const sbx_create_spec_v1 *spec, const char *app,
                          const char *image_id, char *secret_id, char **out)
{
    Modal__Client__SandboxTag *tags = NULL, **tp = NULL;
    int rc = make_tags(p, spec, &tags, &tp);
    if (rc) {
        free(tags);
        free(tp);
        return rc;
    }
    Modal__Client__Resources res = MODAL__CLIENT__RESOURCES__INIT;
    uint64_t mib = (spec->limits.memory_bytes + (1u << 20) - 1) >> 20;
    res.memory_mb = res.memory_mb_max = (uint32_t)(mib > UINT32_MAX ? UINT32_MAX : mib);
    res.milli_cpu = p->milli_cpu;
    Modal__Client__NetworkAccess net = MODAL__CLIENT__NETWORK_ACCESS__INIT;
    net.network_access_type = spec->network == SBX_NET_NONE
                                  ? MODAL__CLIENT__NETWORK_ACCESS__NETWORK_ACCESS_TYPE__BLOCKED
                                  : MODAL__CLIENT__NETWORK_ACCESS__NETWORK_ACCESS_TYPE__OPEN;
    Modal__Client__Sandbox def = MODAL__CLIENT__SANDBOX__INIT;
    def.image_id = (char *)image_id;
    def.resources = &res;
    uint64_t ttl = spec->ttl_ns ? (spec->ttl_ns + 999999999u) / 1000000000u : p->ttl_s;
    def.timeout_secs = (uint32_t)(ttl > 86400 ? 86400 : ttl);
    def._workdir_case = MODAL__CLIENT__SANDBOX___WORKDIR_WORKDIR;
    def.workdir = p->workdir;
    def.block_network = spec->network == SBX_NET_NONE;
    def.network_access = &net;
    if (secret_id) {
        def.n_secret_ids = 1;
        def.secret_ids = &secret_id;
    }
    Modal__Client__SandboxCreateRequest req = MODAL__CLIENT__SANDBOX_CREATE_REQUEST__INIT;
    req.app_id = (char *)app;
    req.definition = &def;
    req.n_tags = spec->n_labels;
    req.tags = tp;
    Modal__Client__SandboxCreateResponse *ans = NULL;
    rc = modal_api(p, "create", "SandboxCreate", &req.base,
                   &modal__client__sandbox_create_response__descriptor,
                   (ProtobufCMessage **)&ans, 0, -1);
    free(tags);
    free(tp);
    if (rc)
        return rc;
    const char *id = ans->sandbox_id ? ans->sandbox_id : "";
    bool ok = *id && strlen(id) < SBX_ID_MAX && strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGH"
                                                           "IJKLMNOPQRSTUVWXYZ0123456789._-") ==
                                                    strlen(id);
    if (!ok)
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "Modal: SandboxCreate answered no usable "
                                "sandbox id");
    else if (!(*out = strdup(id)))
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    modal__client__sandbox_create_response__free_unpacked(ans, NULL);
    return rc;
}

/* Modal applies the memory limit (memory_mb_max) and a CPU share, not a
 * CPU time; the wall clock and the output caps are ours to hold. */
static int unenforced(struct modal_prov *p)
{
    return pc_limits_unenforced(p->host, p->h, PC_LIMITS_SIZED_BY_BACKEND & ~SBX_LIMIT_BIT_MEMORY,
                                "a Modal sandbox gets the memory limit and a share of CPU cores "
                                "(cpu in modal.ini), but Modal has no limit of CPU time, "
                                "processes, open files, file size or disk; only the memory, the "
                                "wall clock and the output caps are applied");
}

static int modal_create(void *prov, const sbx_create_spec_v1 *spec, void **sbp,
                        char id[SBX_ID_MAX])
{
    struct modal_prov *p = prov;
    *sbp = NULL;
    if (!spec || spec->struct_size < offsetof(sbx_create_spec_v1, ttl_ns) + sizeof spec->ttl_ns)
        return p->host->set_error(p->h, SBX_E_INVAL, "create: bad spec");
    if (spec->network == SBX_NET_HOST && !p->allow_internet)
        return p->host->set_error(p->h, SBX_E_PERM, "network access requested but "
                                  "providers.d/modal.ini sets allow_internet = false");
    if (spec->network != SBX_NET_HOST && spec->network != SBX_NET_NONE)
        return p->host->set_error(p->h, SBX_E_INVAL, "unknown network policy %d",
                                  (int)spec->network);
    int rc0 = unenforced(p);
    if (rc0 != SBX_OK)
        return rc0;
    const char *ref = spec->image ? spec->image : p->image;
    if (!image_ref_ok(ref))
        return p->host->set_error(p->h, SBX_E_DECLINED, "create: image '%s' is not a registry "
                                  "reference Modal can build from", ref);
    for (size_t i = 0; i < spec->n_env; i++)
        if (!spec->env[i].key || !*spec->env[i].key || strchr(spec->env[i].key, '='))
            return p->host->set_error(p->h, SBX_E_INVAL, "create: environment name '%s' is not "
                                      "valid", spec->env[i].key ? spec->env[i].key : "(null)");

    char *app = NULL, *image_id = NULL, *secret = NULL, *sid = NULL;
    int rc = modal_app_id(p, &app);
    if (!rc)
        rc = modal_image_id(p, ref, &image_id);
    if (!rc && spec->n_env)
        rc = modal_env_secret(p, spec->env, spec->n_env, &secret);
    if (!rc)
        rc = create_sandbox(p, spec, app, image_id, secret, &sid);
    free(app);
    free(image_id);
    free(secret);
    if (rc)
        return rc;
    struct modal_sb *sb = modal_sb_new(sid);
    if (!sb) {
        modal_terminate(p, sid, false);
        free(sid);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    free(sid);
    /* Wait for its task, so that a sandbox that cannot start fails here. */
    rc = modal_task_id(p, sb->id, p->request_timeout_ms, &sb->task_id);
    if (rc) {
        modal_terminate(p, sb->id, false); /* quietly: the error said is the first one */
        modal_sb_free(sb);
        return rc == SBX_E_NOT_FOUND ? SBX_E_BACKEND : rc;
    }
    snprintf(id, SBX_ID_MAX, "%s", sb->id);
    *sbp = sb;
    return SBX_OK;
}

static int modal_exec_op(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                         const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct modal_prov *p = prov;
    if (!spec ||
        spec->struct_size < offsetof(sbx_exec_spec_v1, stderr_cap) + sizeof spec->stderr_cap)
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: bad spec");
    struct modal_sb *s = sb;
    pc_hints_reset(&s->hints);
    int rc = modal_exec(p, s, spec, sink, out);
    if (rc != SBX_OK)
        pc_hints_to_outcome(&s->hints, p->host, p->h, out);
    return rc;
}

static int modal_attach(void *prov, const char *id, void **sbp)
{
    struct modal_prov *p = prov;
    *sbp = NULL;
    if (!id || !*id || strlen(id) >= SBX_ID_MAX)
        return p->host->set_error(p->h, SBX_E_INVAL, "attach: bad sandbox id");
    struct modal_sb *sb = modal_sb_new(id);
    if (!sb)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = modal_task_id(p, id, 0, &sb->task_id);
    if (rc) {
        modal_sb_free(sb);
        return rc;
    }
    unenforced(p);      /* the core refuses its execs, if need be */
    *sbp = sb;
    return SBX_OK;
}

static void modal_release(void *prov, void *sb)
{
    (void)prov;
    modal_sb_free(sb);
}

static int modal_destroy(void *prov, void *sbp)
{
    struct modal_prov *p = prov;
    struct modal_sb *sb = sbp;
    int rc = modal_terminate(p, sb->id, true);
    if (rc == SBX_E_NOT_FOUND) {
        /* Gone already (its timeout passed): that is what we wanted. */
        p->host->log(p->h, SBX_LOG_DEBUG, "sandbox %s was already gone", sb->id);
        rc = SBX_OK;
    }
    modal_sb_free(sb);
    return rc;
}

/* ---- list / files / health / doctor ---- */

static int modal_list_op(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                         void *ud)
{
    return modal_list(prov, filter, n_filter, cb, ud);
}

static int modal_upload_op(void *prov, void *sb, const char *path, const void *data, size_t len,
                           uint32_t mode)
{
    return modal_upload(prov, sb, path, data, len, mode);
}

static int modal_download_op(void *prov, void *sb, const char *path, size_t max, void **data,
                             size_t *len)
{
    return modal_download(prov, sb, path, max, data, len);
}

static int modal_health_op(void *prov)
{
    return modal_health(prov);
}

static void modal_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct modal_prov *p = prov;
    static const char *const keys[] = {"token_id", "token_secret"};
    char detail[600];
    for (size_t i = 0; i < 2; i++) {
        const char *v = NULL;
        size_t n = 0;
        int rc = p->host->secret_get(p->h, keys[i], &v, &n);
        if (!rc)
            p->host->secret_release(p->h, v);
        snprintf(detail, sizeof detail, "%s",
                 rc == SBX_OK ? (n ? "set (not shown)" : "empty")
                 : rc == SBX_E_NOT_FOUND ? "not set in providers.d/modal.ini"
                                         : "set, but the reference cannot be opened");
        cb(ud, keys[i], rc == SBX_OK && n > 0, detail);
    }
    int rc = modal_health(p);
    const char *why = rc == SBX_OK ? "reachable, credentials accepted"
                    : rc == SBX_E_AUTH ? "the token was refused"
                    : rc == SBX_E_NETWORK ? "cannot connect"
                    : rc == SBX_E_TIMEOUT ? "no answer in time"
                    : rc == SBX_E_RATE_LIMITED ? "rate limited (RESOURCE_EXHAUSTED)"
                    : rc == SBX_E_SERVER ? "server error (UNAVAILABLE or INTERNAL)"
                    : rc == SBX_E_CONFIG ? "no usable token_id and token_secret"
                    : "no auth token";
    snprintf(detail, sizeof detail, "%s: %s", p->server_url, why);
    cb(ud, "control plane", rc == SBX_OK, detail);
}

static const sbx_provider_ops_v1 modal_ops = {
    .init = modal_init,
    .fini = modal_fini,
    .create = modal_create,
    .exec = modal_exec_op,
    .destroy = modal_destroy,
    .attach = modal_attach,
    .release = modal_release,
    .list = modal_list_op,
    .upload = modal_upload_op,
    .download = modal_download_op,
    .health = modal_health_op,
    .doctor = modal_doctor,
};

SBX_PROVIDER_DEFINE("modal", PACKAGE_VERSION,
                    "Modal sandboxes (gVisor containers) over Modal's gRPC API",
                    "MIT", MODAL_CAPS, config_keys, secret_keys, &modal_ops);
