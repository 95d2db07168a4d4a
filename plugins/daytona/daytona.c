/* plugins/daytona/daytona.c - the Daytona provider: descriptor, settings
 * and the sandbox lifecycle on the Daytona API
 *
 * A PolySandbox sandbox is a Daytona sandbox: create POSTs /sandbox and
 * waits (bounded) for state "started"; destroy DELETEs it; attach GETs it
 * (starting it again when it was auto-stopped); list pages through
 * GET /sandbox?labels=.  Execs and files go to the sandbox's toolbox
 * (daytona-exec.c, daytona-files.c).  See README.md.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daytona-int.h"
#include "unenforced.h"
#include "noimage.h"
#include "setting-checks.h"

#define DT_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STDIN | \
                 SBX_CAP_NETWORK_POLICY | \
                 SBX_CAP_LIST | SBX_CAP_CONCURRENT)
#define DT_DEFAULT_API "https://app.daytona.io/api"
#define DT_PAGE 100
#define DT_MAX_PAGES 10000

static const char *const config_keys[] = {
    "api_url", "toolbox_url", "organization_id", "snapshot", "target", "ca_file",
    "request_timeout", "start_timeout", "auto_stop", "auto_delete", "cpu", "memory", "disk",
    "images", NULL,
};
static const char *const secret_keys[] = {"api_key", NULL};

/* ---- settings ---- */

/* What settings_read fills; copied into struct dt_prov. */
struct dt_conf {
    const char *api_url, *toolbox_url, *org_id, *snapshot, *target, *ca_file;
    uint64_t request_ns, start_ns;
    int64_t auto_stop_min, auto_delete_min, cpu, memory_gb, disk_gb;
    int images;
};

/* In the order of DT_IMG_BUILD, _SNAPSHOT, _IGNORE. */
static const char *const image_modes[] = {"build", "snapshot", "ignore", NULL};

#define DC(field) offsetof(struct dt_conf, field)
static const sbx_setting_v1 dt_settings[] = {
    {.key = "api_url", .type = SBX_SETTING_STRING, .def = DT_DEFAULT_API, .check = pc_check_http_url,
     .offset = DC(api_url)},
    {.key = "toolbox_url", .type = SBX_SETTING_STRING, .check = pc_check_http_url,
     .offset = DC(toolbox_url)},
    {.key = "organization_id", .type = SBX_SETTING_STRING, .offset = DC(org_id)},
    {.key = "snapshot", .type = SBX_SETTING_STRING, .offset = DC(snapshot)},
    {.key = "target", .type = SBX_SETTING_STRING, .offset = DC(target)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = DC(ca_file)},
    {.key = "request_timeout", .type = SBX_SETTING_DURATION, .def = "60s", .min = "1s",
     .max = "1h", .offset = DC(request_ns)},
    {.key = "start_timeout", .type = SBX_SETTING_DURATION, .def = "120s", .min = "1s",
     .max = "1h", .offset = DC(start_ns)},
    /* Daytona's own units: minutes, and whole cores, GiB. */
    {.key = "auto_stop", .type = SBX_SETTING_INT, .def = "15", .min = "0", .max = "525600",
     .offset = DC(auto_stop_min)},
    {.key = "auto_delete", .type = SBX_SETTING_INT, .def = "-1", .min = "-1", .max = "525600",
     .offset = DC(auto_delete_min)},
    {.key = "cpu", .type = SBX_SETTING_INT, .def = "0", .min = "0", .max = "1024",
     .offset = DC(cpu)},
    {.key = "memory", .type = SBX_SETTING_INT, .def = "0", .min = "0", .max = "4096",
     .offset = DC(memory_gb)},
    {.key = "disk", .type = SBX_SETTING_INT, .def = "0", .min = "0", .max = "65536",
     .offset = DC(disk_gb)},
    {.key = "images", .type = SBX_SETTING_ENUM, .def = "build", .choices = image_modes,
     .offset = DC(images)},
    {.key = NULL},
};
#undef DC

static int dup_to(struct dt_prov *p, const char *v, char **out)
{
    if (v && !(*out = strdup(v)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

static int read_settings(struct dt_prov *p)
{
    struct dt_conf c = {0};
    int rc;

    if (!SBX_HOST_HAS(p->host, settings_read))
        return p->host->set_error(p->h, SBX_E_INTERNAL, "daytona: the core lends no "
                                  "settings_read (ABI 1.9)");
    if ((rc = p->host->settings_read(p->h, dt_settings, sizeof dt_settings[0], &c)) ||
        (rc = dup_to(p, c.api_url, &p->api_url)) ||
        (rc = dup_to(p, c.toolbox_url, &p->toolbox_url)) ||
        (rc = dup_to(p, c.org_id, &p->org_id)) || (rc = dup_to(p, c.snapshot, &p->snapshot)) ||
        (rc = dup_to(p, c.target, &p->target)) || (rc = dup_to(p, c.ca_file, &p->ca_file)))
        return rc;
    p->request_ms = (long)(c.request_ns / 1000000u);
    p->start_ms = (long)(c.start_ns / 1000000u);
    p->auto_stop_min = (long)c.auto_stop_min;
    p->auto_delete_min = (long)c.auto_delete_min;
    p->cpu = (long)c.cpu;
    p->memory_gb = (long)c.memory_gb;
    p->disk_gb = (long)c.disk_gb;
    p->images = c.images == 1 ? DT_IMG_SNAPSHOT : c.images == 2 ? DT_IMG_IGNORE : DT_IMG_BUILD;
    return SBX_OK;
}

/* ---- init / fini ---- */

static void dt_fini(void *prov)
{
    struct dt_prov *p = prov;
    if (!p)
        return;
    ph_client_free(p->api);
    free(p->api_url);
    free(p->toolbox_url);
    free(p->snapshot);
    free(p->target);
    free(p->org_id);
    free(p->ca_file);
    free(p);
}

static int dt_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    char err[PH_ERR_MAX];
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    /* The key is kept in libsodium's guarded memory while it is used. */
    if (sodium_init() < 0)
        return host->set_error(h, SBX_E_INTERNAL, "daytona: libsodium failed to initialise");
    struct dt_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    int rc = read_settings(p);
    if (rc == SBX_OK) {
        ph_client_conf conf = {.base_url = p->api_url, .ca_file = p->ca_file,
                               .timeout_ms = p->request_ms};
        rc = ph_client_new(&conf, &p->api, err);
        if (rc != SBX_OK)
            rc = host->set_error(h, SBX_E_CONFIG, DT_INI ": api_url: %s", err);
    }
    /* The key is checked now so a missing one shows in `polysandbox
     * providers`; it lives on only in the clients' wiped header memory. */
    if (rc == SBX_OK)
        rc = dt_client_auth(p, p->api);
    if (rc != SBX_OK) {
        dt_fini(p);
        return rc;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- create / attach / release / destroy ---- */

static json_t *kv_object(const sbx_kv_v1 *kv, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++)
        if (!kv[i].key || !kv[i].value ||
            json_object_set_new(o, kv[i].key, json_string(kv[i].value)) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static json_t *create_body(struct dt_prov *p, const sbx_create_spec_v1 *spec)
{
    json_t *b = json_object();
    long stop = p->auto_stop_min, del;

    if (!b)
        return NULL;
    if (spec->ttl_ns) {
        /* A time-to-live: stop after that long idle, delete once stopped. */
        uint64_t m = (spec->ttl_ns + 60000000000u - 1) / 60000000000u;
        stop = m > 525600 ? 525600 : (long)m;
        del = 0;
    } else {
        /* One-shot sandboxes go as soon as they stop; kept ones as set. */
        del = spec->persistent ? p->auto_delete_min : 0;
    }
    /* Auto-stop counts inactivity from the last request: one exec running
     * for its whole wall limit must not look idle. */
    uint64_t wall_min = (spec->limits.wall_ns + 60000000000u - 1) / 60000000000u + 1;
    if (stop > 0 && (uint64_t)stop < wall_min)
        stop = wall_min > 525600 ? 525600 : (long)wall_min;
    const char *img = p->images == DT_IMG_IGNORE ? NULL : spec->image;
    int bad = 0;
    if (img && p->images == DT_IMG_BUILD) {
        /* A container image is built into a sandbox (as the SDK's
         * Image.base() does); a snapshot is Daytona's own name. */
        char *df = NULL;
        if (asprintf(&df, "FROM %s\n", img) < 0) {
            json_decref(b);
            return NULL;
        }
        bad |= json_object_set_new(b, "buildInfo", json_pack("{s:s}", "dockerfileContent", df));
        free(df);
    } else if (img || p->snapshot) {
        bad |= json_object_set_new(b, "snapshot", json_string(img ? img : p->snapshot));
    }
    if (p->target)
        bad |= json_object_set_new(b, "target", json_string(p->target));
    bad |= json_object_set_new(b, "env", kv_object(spec->env, spec->n_env));
    bad |= json_object_set_new(b, "labels", kv_object(spec->labels, spec->n_labels));
    bad |= json_object_set_new(b, "networkBlockAll", json_boolean(spec->network == SBX_NET_NONE));
    bad |= json_object_set_new(b, "autoStopInterval", json_integer(stop));
    bad |= json_object_set_new(b, "autoDeleteInterval", json_integer(del));
    if (p->cpu)
        bad |= json_object_set_new(b, "cpu", json_integer(p->cpu));
    if (p->memory_gb)
        bad |= json_object_set_new(b, "memory", json_integer(p->memory_gb));
    if (p->disk_gb)
        bad |= json_object_set_new(b, "disk", json_integer(p->disk_gb));
    if (bad) {
        json_decref(b);
        return NULL;
    }
    return b;
}

static void delete_quietly(struct dt_prov *p, const char *id)
{
    char path[SBX_ID_MAX + 16], err[PH_ERR_MAX];
    json_t *j = NULL;
    snprintf(path, sizeof path, "/sandbox/%s", id);
    if (ph_json(p->api, "DELETE", path, NULL, p->request_ms, NULL, NULL, &j, err) != SBX_OK)
        p->host->log(p->h, SBX_LOG_WARNING, "sandbox %s was left behind: %s (its auto-stop and "
                     "auto-delete intervals reap it)", id, err);
    json_decref(j);
}

/* Only the wall clock and the output caps are ours to hold: Daytona
 * sizes a sandbox for its whole life. */
static int unenforced(struct dt_prov *p)
{
    return pc_limits_sized_by_backend(p->host, p->h, "a Daytona sandbox is sized in whole vCPUs "
                                      "and GiB for its life (the cpu, memory and disk "
                                      "settings), with no per-process limit");
}

static int dt_create(void *prov, const sbx_create_spec_v1 *spec, void **sb, char id[SBX_ID_MAX])
{
    struct dt_prov *p = prov;
    json_t *body, *j = NULL, *ready = NULL;
    struct dt_sb *s = NULL;
    int rc;

    *sb = NULL;
    if (p->images == DT_IMG_IGNORE &&
        (rc = pc_image_cannot_run(p->host, p->h, "daytona", spec, DT_INI " sets images = "
                                  "ignore (every sandbox from its snapshot setting)")))
        return rc;
    if ((rc = unenforced(p)) != SBX_OK)
        return rc;
    body = create_body(p, spec);
    for (const char *c = spec->image; c && *c; c++)
        if (*c == '\n' || *c == '\r' || *c == ' ' || *c == '\t') {
            json_decref(body);
            return p->host->set_error(p->h, SBX_E_INVAL, "daytona: image '%s' has a blank or a "
                                      "line break", spec->image);
        }
    if (!body)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory (or a label or variable "
                                  "without a value)");
    rc = dt_api(p, "create", "POST", "/sandbox", body, NULL, &j);
    json_decref(body);
    if (rc != SBX_OK)
        return rc;
    const char *sid = json_string_value(json_object_get(j, "id"));
    if (!dt_id_ok(sid)) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "daytona: create: the answer has no usable "
                                "sandbox id");
        if (sid)
            delete_quietly(p, sid);
        json_decref(j);
        return rc;
    }
    if (!(s = calloc(1, sizeof *s))) {
        delete_quietly(p, sid);
        json_decref(j);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    snprintf(s->id, sizeof s->id, "%s", sid);
    rc = dt_wait_started(p, s->id, j, &ready);
    json_decref(j);
    if (rc == SBX_OK)
        rc = dt_toolbox_open(p, s, ready);
    json_decref(ready);
    if (rc != SBX_OK) {
        delete_quietly(p, s->id);
        dt_sb_free(s);
        return rc;
    }
    snprintf(id, SBX_ID_MAX, "%s", s->id);
    *sb = s;
    return SBX_OK;
}

static int dt_attach(void *prov, const char *id, void **sb)
{
    struct dt_prov *p = prov;
    char path[SBX_ID_MAX + 16];
    json_t *j = NULL, *ready = NULL;
    long status = 0;

    *sb = NULL;
    unenforced(p);      /* the core refuses its execs, if need be */
    if (!dt_id_ok(id))
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "daytona: no sandbox '%s' (not a "
                                  "Daytona id)", id ? id : "(null)");
    snprintf(path, sizeof path, "/sandbox/%s", id);
    int rc = dt_api(p, id, "GET", path, NULL, &status, &j);
    if (rc == SBX_E_NOT_FOUND)
        return p->host->set_error(p->h, rc, "daytona: no sandbox '%s'", id);
    if (rc != SBX_OK)
        return rc;
    struct dt_sb *s = calloc(1, sizeof *s);
    if (!s) {
        json_decref(j);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    snprintf(s->id, sizeof s->id, "%s", id);
    rc = dt_wait_started(p, id, j, &ready);
    json_decref(j);
    if (rc == SBX_OK)
        rc = dt_toolbox_open(p, s, ready);
    json_decref(ready);
    if (rc != SBX_OK) {
        dt_sb_free(s);
        return rc;
    }
    *sb = s;
    return SBX_OK;
}

static void dt_release(void *prov, void *sb)
{
    (void)prov;
    dt_sb_free(sb);
}

static int dt_destroy(void *prov, void *sb)
{
    struct dt_prov *p = prov;
    struct dt_sb *s = sb;
    char path[SBX_ID_MAX + 16];
    int rc;

    snprintf(path, sizeof path, "/sandbox/%s", s->id);
    rc = dt_api(p, s->id, "DELETE", path, NULL, NULL, NULL);
    if (rc == SBX_E_NOT_FOUND)
        rc = SBX_OK;  /* already gone (auto-deleted, say) */
    dt_sb_free(s);
    return rc;
}

/* ---- list ---- */

static const char *const gone_states[] = {"destroyed", "destroying", NULL};

static int list_one(struct dt_prov *p, json_t *it, const sbx_kv_v1 *filter, size_t n_filter,
                    sbx_list_cb_v1 cb, void *ud)
{
    const char *id = json_string_value(json_object_get(it, "id"));
    const char *st = json_string_value(json_object_get(it, "state"));
    json_t *labels = json_object_get(it, "labels");

    if (!dt_id_ok(id))
        return 0;
    for (size_t i = 0; st && gone_states[i]; i++)
        if (!strcmp(st, gone_states[i]))
            return 0;
    /* The service filtered already; an older one may not have. */
    for (size_t i = 0; i < n_filter; i++) {
        const char *v = json_string_value(json_object_get(labels, filter[i].key));
        if (!v || strcmp(v, filter[i].value))
            return 0;
    }
    size_t n = json_is_object(labels) ? json_object_size(labels) : 0, k = 0;
    sbx_kv_v1 *kv = calloc(n ? n : 1, sizeof *kv);
    if (!kv)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    const char *key;
    json_t *val;
    if (n)
        json_object_foreach(labels, key, val) {
            if (json_is_string(val) && k < n)
                kv[k++] = (sbx_kv_v1){key, json_string_value(val)};
        }
    uint64_t created = pc_rfc3339_ns(json_string_value(json_object_get(it, "createdAt")));
    int r = cb(ud, id, kv, k, created);
    free(kv);
    return r;
}

static int dt_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                   void *ud)
{
    struct dt_prov *p = prov;
    json_t *f = kv_object(filter, n_filter);
    char *fjson = f ? json_dumps(f, JSON_COMPACT) : NULL;
    char *cursor = NULL;
    int rc = SBX_OK;

    json_decref(f);
    if (!fjson)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    for (int page = 0; rc == SBX_OK; page++) {
        dt_buf path = {0};
        json_t *j = NULL;
        if (page >= DT_MAX_PAGES) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "daytona: list: more than %d pages "
                                    "(the cursor does not advance?)", DT_MAX_PAGES);
            break;
        }
        dt_buf_addf(&path, "/sandbox?limit=%d", DT_PAGE);
        if (n_filter) {
            dt_buf_adds(&path, "&labels=");
            dt_buf_addurl(&path, fjson);
        }
        if (cursor) {
            dt_buf_adds(&path, "&cursor=");
            dt_buf_addurl(&path, cursor);
        }
        if (path.oom) {
            dt_buf_free(&path);
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            break;
        }
        rc = dt_api(p, "list", "GET", path.p, NULL, NULL, &j);
        dt_buf_free(&path);
        if (rc != SBX_OK)
            break;
        /* Current API: {"items":[...],"nextCursor":...}; older: a bare array. */
        json_t *items = json_is_array(j) ? j : json_object_get(j, "items");
        if (!json_is_array(items)) {
            json_decref(j);
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "daytona: list: the answer is neither "
                                    "an array nor {\"items\": [...]}");
            break;
        }
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it) {
            if ((rc = list_one(p, it, filter, n_filter, cb, ud)) != 0)
                break;
        }
        const char *next = json_is_object(j) ? json_string_value(json_object_get(j, "nextCursor"))
                                              : NULL;
        bool more = rc == SBX_OK && next && *next && !(cursor && !strcmp(cursor, next));
        free(cursor);
        cursor = more ? strdup(next) : NULL;
        json_decref(j);
        if (more && !cursor)
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        if (!more)
            break;
    }
    free(cursor);
    free(fjson);
    return rc;
}

/* ---- health / doctor ---- */

static int dt_health(void *prov)
{
    return dt_api(prov, "health", "GET", "/sandbox?limit=1", NULL, NULL, NULL);
}

static void dt_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct dt_prov *p = prov;
    char detail[320];
    int rc = dt_health(p);
    snprintf(detail, sizeof detail, "%s%s", p->api_url, rc == SBX_OK ? " answers, key accepted" :
             " does not answer as expected (see 'polysandbox providers')");
    cb(ud, "daytona API", rc == SBX_OK, detail);
    snprintf(detail, sizeof detail, "%s", p->toolbox_url ? p->toolbox_url :
             "from each sandbox's toolboxProxyUrl");
    cb(ud, "daytona toolbox", 1, detail);
    cb(ud, "images", 1, p->images == DT_IMG_BUILD ? "a sandbox is built FROM its image "
                                                    "(images = build)"
                      : p->images == DT_IMG_SNAPSHOT ? "an image is a snapshot name "
                                                       "(images = snapshot)"
                      : "none (images = ignore): --image and a template's image.daytona are "
                        "refused, a template's plain image is ignored");
}

static const sbx_provider_ops_v1 dt_ops = {
    .init = dt_init,
    .fini = dt_fini,
    .create = dt_create,
    .exec = dt_exec,
    .destroy = dt_destroy,
    .attach = dt_attach,
    .release = dt_release,
    .list = dt_list,
    .upload = dt_upload,
    .download = dt_download,
    .health = dt_health,
    .doctor = dt_doctor,
};

SBX_PROVIDER_DEFINE(DT_NAME, PACKAGE_VERSION, "Daytona cloud sandboxes (REST API and toolbox)", "MIT",
                    DT_CAPS, config_keys, secret_keys, &dt_ops);
