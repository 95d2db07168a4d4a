/* plugins/docker/docker.c - the docker provider: descriptor, init and
 * fini, lifecycle, list (its settings are read in docker-settings.c,
 * health and doctor are in docker-doctor.c)
 *
 * A sandbox is a container named by its id, idling under the helper
 * (init/init.c) as PID 1; its work directory is the named volume
 * "<id>-work".  Create = create + start; destroy = force-remove + remove
 * the volume.  Everything the provider needs later (limits) is in the
 * container's labels, so attach works from any process.  See README.md.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "docker-int.h"

#define DK_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STREAM | \
                 SBX_CAP_STDIN | SBX_CAP_NETWORK_POLICY | SBX_CAP_LIST | SBX_CAP_CONCURRENT | \
                 SBX_CAP_MEMORY_LIMIT | SBX_CAP_CPU_STATS | SBX_CAP_CANCEL | \
                 SBX_CAP_STDIN_STREAM | SBX_CAP_SIGNAL | SBX_CAP_EGRESS)

static const char *const config_keys[] = {
    "pull", "pull_timeout", "registry_auth_host", "registry_auth",
    "socket", "ca_file", "cert_file", "key_file", "image", "image_aliases", "runtime", "cpus",
    "network", "readonly_rootfs", "exec_mode", "unenforced_limits", NULL,
};
static const char *const secret_keys[] = {"registry_auth", NULL};

static uint64_t now_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- init / fini ---- */

static void docker_fini(void *prov)
{
    struct dk_prov *p = prov;
    if (!p)
        return;
    ph_client_free(p->eng.http);
    dk_pull_fini(&p->pull);
    pthread_mutex_destroy(&p->init_lock);
    free(p->eng.socket);
    free(p->image);
    free(p->aliases);
    free(p->runtime);
    free(p->seccomp_opt);
    dk_seccomp_file_remove(p->seccomp_dir);
    free(p);
}

/* No daemon call here: loading the provider stays cheap and works while
 * the daemon is down ('polysandbox doctor' says what is wrong). */
static int docker_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, free) + sizeof host->free)
        return SBX_E_INVAL;
    struct dk_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->eng.host = host;
    p->eng.h = h;
    if (pthread_mutex_init(&p->init_lock, NULL)) {
        free(p);
        return host->set_error(h, SBX_E_NOMEM, "pthread_mutex_init failed");
    }
    ph_client_conf cc = {.connect_timeout_ms = 10000, .timeout_ms = 60000};
    char err[PH_ERR_MAX];
    struct dk_pull_conf pull;
    int ret = dk_read_settings(p, &cc, &pull);
    if (!ret)
        ret = dk_pull_init(&p->pull, &p->eng, &pull);
    if (!ret && !(p->seccomp_opt = dk_seccomp_opt()))
        ret = dk_err(&p->eng, SBX_E_NOMEM,
                     "out of memory building the containers' seccomp profile");
    if (!ret && (ret = ph_client_new(&cc, &p->eng.http, err)))
        ret = dk_err(&p->eng, ret == SBX_E_INVAL ? SBX_E_CONFIG : ret, "providers.d/docker.ini: "
                     "socket: %s", err);
    if (ret) {
        docker_fini(p);
        return ret;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- helpers ---- */

static bool id_valid(const char *id)
{
    size_t n = strlen(id);
    return n > strlen(DK_ID_PREFIX) && n < SBX_ID_MAX - 8 &&
           !strncmp(id, DK_ID_PREFIX, strlen(DK_ID_PREFIX)) &&
           strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static int new_id(struct dk_prov *p, char id[SBX_ID_MAX])
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return dk_err(&p->eng, SBX_E_IO, "getrandom: %s", strerror(errno));
    int n = snprintf(id, SBX_ID_MAX, DK_ID_PREFIX);
    for (size_t i = 0; i < sizeof rnd; i++)
        n += snprintf(id + n, (size_t)(SBX_ID_MAX - n), "%02x", rnd[i]);
    return SBX_OK;
}

/* A JSON call; on failure sets the error "WHAT: message". */
static int call(struct dk_prov *p, const char *method, const char *path, json_t *body,
                long *status, json_t **out, const char *what)
{
    char err[PH_ERR_MAX];
    long st = 0;
    int ret = dk_json(&p->eng, method, path, body, 0, &st, out, err);
    if (status)
        *status = st;
    if (ret)
        dk_err(&p->eng, ret, "%s: %s", what, err);
    return ret;
}

static void remove_container(struct dk_prov *p, const char *id)
{
    char path[200];
    snprintf(path, sizeof path, DK_API "/containers/%s?force=1&v=1", id);
    dk_json(&p->eng, "DELETE", path, NULL, 0, NULL, NULL, (char[PH_ERR_MAX]){0});
    snprintf(path, sizeof path, DK_API "/volumes/%s-work", id);
    dk_json(&p->eng, "DELETE", path, NULL, 0, NULL, NULL, (char[PH_ERR_MAX]){0});
}

/* ---- create / attach / release / destroy ---- */

/* Podman (before 4.8) takes "size=" in a volume's options for an XFS
 * project quota, refuses it elsewhere, and ignores a mount's
 * VolumeOptions: its work volume is made here first, a tmpfs sized in
 * pages (nr_blocks, which it passes through to mount; the daemon is
 * assumed to have this machine's page size, as over a unix socket). */
static int podman_work_volume(struct dk_prov *p, const char *id, uint64_t disk_bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t pages = (disk_bytes + (uint64_t)(page > 0 ? page : 4096) - 1) /
                     (uint64_t)(page > 0 ? page : 4096);
    char name[SBX_ID_MAX + 8], o[96];
    snprintf(name, sizeof name, "%s-work", id);
    snprintf(o, sizeof o, "nr_blocks=%" PRIu64 ",nr_inodes=%d,mode=0755", pages ? pages : 1,
             DK_WORK_INODES);
    json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}", "Name", name, "Driver",
                             "local", "DriverOpts", "type", "tmpfs", "device", "tmpfs", "o", o,
                             "Labels", DK_LABEL_SANDBOX, id);
    if (!body)
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    int ret = call(p, "POST", DK_API "/volumes/create", body, NULL, NULL,
                   "creating the sandbox's work volume");
    json_decref(body);
    return ret;
}

static int docker_create(void *prov, const sbx_create_spec_v1 *spec, void **sbp,
                         char id[SBX_ID_MAX])
{
    struct dk_prov *p = prov;
    *sbp = NULL;
    if (!spec || spec->struct_size < offsetof(sbx_create_spec_v1, ttl_ns) + sizeof spec->ttl_ns)
        return dk_err(&p->eng, SBX_E_INVAL, "create: bad spec");
    if (spec->network == SBX_NET_HOST && !p->allow_host_net)
        return dk_err(&p->eng, SBX_E_PERM, "host network requested but providers.d/docker.ini does "
                      "not set network = allow-host");
    if (spec->network != SBX_NET_HOST && spec->network != SBX_NET_NONE)
        return dk_err(&p->eng, SBX_E_INVAL, "unknown network policy %d", (int)spec->network);
    const char *image = spec->image && *spec->image ? spec->image : p->image;
    if (!image)
        return dk_err(&p->eng, SBX_E_CONFIG, "no image: give one (--image, or a template with "
                      "image =) or set image in providers.d/docker.ini");
    char alias[512];
    image = dk_alias(p->aliases, image, alias, sizeof alias);
    /* pull = always: before anything uses the image (the helper's
     * installer among them); missing: when the daemon says it is absent. */
    bool pulled = p->pull.policy == DK_PULL_ALWAYS;
    int ret = p->pull.policy != DK_PULL_NEVER ? dk_pull_check(&p->eng, image) : SBX_OK;
    if (!ret && pulled)
        ret = dk_pull(&p->pull, image);
    if (ret || (ret = dk_init_ensure(p, image)))
        return ret;
    struct dk_sb *sb = calloc(1, sizeof *sb);
    if (!sb)
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    sb->limits = spec->limits;
    sb->lock_fd = -1;
    /* Podman 4.3: a second process's attach to the exec server gets no
     * answer (tests/podman), so its sandboxes take the daemon's exec. */
    sb->serve = p->exec_attach && !p->eng.podman;
    sb->running_known = true;
    if ((ret = new_id(p, sb->id))) {
        free(sb);
        return ret;
    }
    char err[PH_ERR_MAX];
    struct dk_create_args a = {.id = sb->id, .image = image, .runtime = p->runtime,
                               .init_volume = p->init_volume, .nano_cpus = p->nano_cpus,
                               .readonly_rootfs = p->readonly_rootfs,
                               .host_network = spec->network == SBX_NET_HOST,
                               /* The daemon's default bridge: out, NATed. */
                               .egress = spec->struct_size >= offsetof(sbx_create_spec_v1, egress) +
                                         sizeof spec->egress && spec->egress,
                               .podman = p->eng.podman, .serve = sb->serve,
                               .seccomp = p->seccomp_opt, .now_unix_ns = now_unix_ns(), .spec = spec};
    json_t *body = dk_create_body(&a, err, sizeof err);
    if (!body) {
        free(sb);
        return dk_err(&p->eng, strstr(err, "out of memory") ? SBX_E_NOMEM : SBX_E_INVAL, "%s", err);
    }
    char path[200];
    long status = 0;
    if (p->eng.podman && (ret = podman_work_volume(p, sb->id, spec->limits.disk_bytes))) {
        json_decref(body);
        free(sb);
        return ret;
    }
    snprintf(path, sizeof path, DK_API "/containers/create?name=%s", sb->id);
    ret = dk_json(&p->eng, "POST", path, body, 0, &status, NULL, err);
    if (ret && status == 404 && p->pull.policy == DK_PULL_MISSING && !pulled) {
        pulled = true;
        int pret = dk_pull(&p->pull, image);
        if (pret) {
            json_decref(body);
            if (p->eng.podman)
                remove_container(p, sb->id); /* its volume */
            free(sb);
            return pret;
        }
        ret = dk_json(&p->eng, "POST", path, body, 0, &status, NULL, err);
    }
    json_decref(body);
    if (ret) {
        if (p->eng.podman)
            remove_container(p, sb->id); /* its volume */
        free(sb);
        if (status == 404 && pulled)
            return dk_err(&p->eng, SBX_E_NOT_FOUND, "image '%s' is not on the daemon %s even after "
                          "a pull: %s", image, p->eng.socket, err);
        if (status == 404)
            return dk_err(&p->eng, SBX_E_NOT_FOUND, "image '%s' is not on the daemon %s and "
                          "providers.d/docker.ini says pull = never (docker pull or docker "
                          "import it, or map it with image_aliases): %s", image, p->eng.socket,
                          err);
        return dk_err(&p->eng, ret, "creating a container of '%s': %s", image, err);
    }
    /* Rootless Podman on cgroup v1 drops the limits without a word. */
    if (p->eng.podman && (ret = dk_limits_check(p, sb->id, &spec->limits))) {
        remove_container(p, sb->id);
        free(sb);
        return ret;
    }
    snprintf(path, sizeof path, DK_API "/containers/%s/start", sb->id);
    ret = dk_json(&p->eng, "POST", path, NULL, 0, &status, NULL, err);
    if (ret) {
        dk_err(&p->eng, ret, "starting container %s: %s", sb->id, err);
        remove_container(p, sb->id);
        free(sb);
        return ret;
    }
    snprintf(id, SBX_ID_MAX, "%s", sb->id);
    /* A pool's sandbox then comes with its connection ready. */
    if (sb->serve)
        dk_serve_prepare(&p->eng, sb);
    *sbp = sb;
    return SBX_OK;
}

static int docker_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                       const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct dk_prov *p = prov;
    if (!spec || spec->struct_size < offsetof(sbx_exec_spec_v1, stderr_cap) + sizeof spec->stderr_cap)
        return dk_err(&p->eng, SBX_E_INVAL, "exec: bad spec");
    if (!spec->argv || !spec->argv[0] || !*spec->argv[0])
        return dk_err(&p->eng, SBX_E_INVAL, "exec: empty command");
    for (size_t i = 0; i < spec->n_files; i++) {
        int ret = dk_upload(p, sb, spec->files[i].path, spec->files[i].data, spec->files[i].len,
                            spec->files[i].mode);
        if (ret)
            return ret;
    }
    return dk_exec(&p->eng, p->exec_attach, sb, spec, sink, out);
}

static int docker_attach(void *prov, const char *id, void **sbp)
{
    struct dk_prov *p = prov;
    *sbp = NULL;
    if (!id || !id_valid(id))
        return dk_err(&p->eng, SBX_E_NOT_FOUND, "no docker sandbox '%s' (ids look like sbx-<hex>)",
                      id ? id : "(null)");
    char path[200];
    long status = 0;
    json_t *ans = NULL;
    snprintf(path, sizeof path, DK_API "/containers/%s/json", id);
    int ret = call(p, "GET", path, NULL, &status, &ans, "inspecting the sandbox");
    if (ret) {
        json_decref(ans);
        return status == 404 ? dk_err(&p->eng, SBX_E_NOT_FOUND, "no docker sandbox '%s'", id) : ret;
    }
    json_t *labels = json_object_get(json_object_get(ans, "Config"), "Labels");
    const char *mine = json_string_value(json_object_get(labels, DK_LABEL_SANDBOX));
    const char *lim = json_string_value(json_object_get(labels, DK_LABEL_LIMITS));
    const char *xmode = json_string_value(json_object_get(labels, DK_LABEL_EXEC));
    bool running = json_is_true(json_object_get(json_object_get(ans, "State"), "Running"));
    struct dk_sb *sb = calloc(1, sizeof *sb);
    if (!sb) {
        json_decref(ans);
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    }
    snprintf(sb->id, sizeof sb->id, "%s", id);
    sb->lock_fd = -1;
    sb->serve = xmode && !strcmp(xmode, "attach");
    sb->running_known = true; /* or started again below */
    if (!mine || strcmp(mine, "1") || !lim || dk_limits_parse(lim, &sb->limits)) {
        json_decref(ans);
        free(sb);
        return dk_err(&p->eng, SBX_E_NOT_FOUND, "container '%s' is not a polysandbox sandbox", id);
    }
    json_decref(ans);
    if (!running) {
        /* Stopped (a daemon restart): the work volume is a tmpfs, so what
         * was in it is gone, but the sandbox can run again. */
        snprintf(path, sizeof path, DK_API "/containers/%s/start", id);
        if ((ret = call(p, "POST", path, NULL, NULL, NULL, "restarting the sandbox"))) {
            free(sb);
            return ret;
        }
    }
    *sbp = sb;
    return SBX_OK;
}

static void docker_release(void *prov, void *sb)
{
    (void)prov;
    dk_serve_close(sb);
    free(sb);
}

static int docker_destroy(void *prov, void *sbp)
{
    struct dk_prov *p = prov;
    struct dk_sb *sb = sbp;
    char path[200];
    long status = 0;
    dk_serve_forget(&p->eng, sb);
    snprintf(path, sizeof path, DK_API "/containers/%s?force=1&v=1", sb->id);
    int ret = call(p, "DELETE", path, NULL, &status, NULL, "removing the sandbox's container");
    if (ret && status == 404)
        ret = SBX_OK;
    snprintf(path, sizeof path, DK_API "/volumes/%s-work", sb->id);
    for (int i = 0; i < 20; i++) {
        int r = call(p, "DELETE", path, NULL, &status, NULL, "removing the sandbox's volume");
        if (!r || status == 404)
            break;
        if (status != 409) {
            ret = ret ? ret : r;
            break;
        }
        /* Still in use for a moment after the removal. */
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    free(sb);
    return ret;
}

/* ---- list ---- */

static int docker_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                       void *ud)
{
    struct dk_prov *p = prov;
    json_t *f = json_pack("{s:[s]}", "label", DK_LABEL_SANDBOX "=1");
    json_t *lab = json_object_get(f, "label");
    int bad = !f;
    for (size_t i = 0; !bad && i < n_filter; i++) {
        const char *k = filter[i].key ? filter[i].key : "", *v = filter[i].value ? filter[i].value : "";
        char *kv = malloc(strlen(k) + strlen(v) + 2);
        if (!kv) {
            bad = 1;
            break;
        }
        sprintf(kv, "%s=%s", k, v);
        bad = json_array_append_new(lab, json_string(kv)) < 0;
        free(kv);
    }
    char *fs = bad ? NULL : json_dumps(f, JSON_COMPACT);
    json_decref(f);
    char *esc = fs ? ph_escape(fs) : NULL;
    free(fs);
    if (!esc)
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    char *path = malloc(strlen(esc) + 64);
    if (!path) {
        free(esc);
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    }
    sprintf(path, DK_API "/containers/json?all=1&filters=%s", esc);
    free(esc);
    json_t *ans = NULL;
    int ret = call(p, "GET", path, NULL, NULL, &ans, "listing sandboxes");
    free(path);
    if (ret) {
        json_decref(ans);
        return ret;
    }
    size_t i;
    json_t *c;
    json_array_foreach(ans, i, c) {
        const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
        json_t *labels = json_object_get(c, "Labels");
        if (!name || !json_is_object(labels))
            continue;
        if (*name == '/')
            name++;
        if (!id_valid(name))
            continue;
        /* The daemon filtered; check exactly anyway (its matching rules
         * are its own). */
        bool match = true;
        for (size_t k = 0; match && k < n_filter; k++) {
            const char *v = json_string_value(json_object_get(labels, filter[k].key ? filter[k].key : ""));
            match = v && !strcmp(v, filter[k].value ? filter[k].value : "");
        }
        if (!match)
            continue;
        size_t n = 0, cap = json_object_size(labels);
        sbx_kv_v1 *kv = calloc(cap ? cap : 1, sizeof *kv);
        if (!kv) {
            ret = dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
            break;
        }
        const char *key;
        json_t *val;
        json_object_foreach(labels, key, val) {
            if (strncmp(key, DK_LABEL_PREFIX, strlen(DK_LABEL_PREFIX)) && json_is_string(val))
                kv[n++] = (sbx_kv_v1){key, json_string_value(val)};
        }
        const char *cns = json_string_value(json_object_get(labels, DK_LABEL_CREATED));
        uint64_t created = cns ? strtoull(cns, NULL, 10)
                         : (uint64_t)json_integer_value(json_object_get(c, "Created")) * 1000000000u;
        ret = cb(ud, name, kv, n, created);
        free(kv);
        if (ret)
            break;
    }
    json_decref(ans);
    return ret;
}

/* ---- files ---- */

static int docker_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
                         uint32_t mode)
{
    return dk_upload(prov, sb, path, data, len, mode);
}

static int docker_download(void *prov, void *sb, const char *path, size_t max, void **data,
                           size_t *len)
{
    return dk_download(prov, sb, path, max, data, len);
}


static const sbx_provider_ops_v1 docker_ops = {
    .init = docker_init,
    .fini = docker_fini,
    .create = docker_create,
    .exec = docker_exec,
    .destroy = docker_destroy,
    .attach = docker_attach,
    .release = docker_release,
    .list = docker_list,
    .upload = docker_upload,
    .download = docker_download,
    .health = dk_health,
    .doctor = dk_doctor,
};

SBX_PROVIDER_DEFINE("docker", PACKAGE_VERSION,
                    "containers of a Docker or Podman daemon, through its Engine API",
                    "MIT", DK_CAPS, config_keys, secret_keys, &docker_ops);
