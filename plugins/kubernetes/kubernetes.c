/* plugins/kubernetes/kubernetes.c - the kubernetes provider: descriptor,
 * settings, lifecycle ops
 *
 * A sandbox is a Pod (kube-pod.c) or, in agent-sandbox mode, a
 * SandboxClaim on a warm pool (kube-agent.c); commands go through the
 * pods/exec WebSocket (kube-exec.c) and files through exec and tar
 * (kube-files.c).  See README.md for the settings, the RBAC the provider
 * needs and what maps to what.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube-int.h"
#include "unenforced.h"
#include "settings.h"
#include "retry-hints.h"

#define KUBE_CAPS (SBX_CAP_FILES | SBX_CAP_PERSISTENT | SBX_CAP_LABELS | SBX_CAP_STREAM | \
                   SBX_CAP_STDIN | SBX_CAP_NETWORK_POLICY | SBX_CAP_LIST | SBX_CAP_CONCURRENT | \
                   SBX_CAP_CANCEL | SBX_CAP_STDIN_STREAM | SBX_CAP_SIGNAL)

static const char *const config_keys[] = {
    "kubeconfig", "context", "in_cluster", "serviceaccount_dir", "server", "ca_file", "token",
    "namespace", "image", "workdir", "runtime_class", "service_account", "priority_class",
    "cpu", "cpu_request", "run_as_user", "ttl", "ready_timeout", "request_timeout",
    "connect_timeout", "allow_network", "network_policy", "manage_network_policy",
    "exec_protocol", "qps", "burst", "mode", "warm_pool", NULL,
};
static const char *const secret_keys[] = {"token", NULL};

/* ---- time ---- */

uint64_t kube_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t kube_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- settings ---- */

static const char *setting(struct kube_prov *p, const char *key)
{
    return pc_setting(p->host, p->h, key);
}

/* "300", "300s", "5m", "1h", "1500ms" into milliseconds. */
static int duration_ms(struct kube_prov *p, const char *key, uint64_t def_ms, uint64_t min_ms,
                       uint64_t max_ms, uint64_t *out)
{
    return pc_setting_duration_ms(p->host, p->h, "providers.d/kubernetes.ini", key, def_ms,
                                  min_ms, max_ms, out);
}

static int boolean(struct kube_prov *p, const char *key, bool def, bool *out)
{
    return pc_setting_bool(p->host, p->h, "providers.d/kubernetes.ini", key, def, out);
}

static int number(struct kube_prov *p, const char *key, double def, double min, double max,
                  double *out)
{
    const char *v = setting(p, key);
    *out = def;
    if (!v)
        return SBX_OK;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || x < min || x > max)
        return p->host->set_error(p->h, SBX_E_CONFIG, "providers.d/kubernetes.ini: %s = '%s' is "
                                  "not a number from %g to %g", key, v, min, max);
    *out = x;
    return SBX_OK;
}

static int dup_setting(struct kube_prov *p, const char *key, const char *def, char **out)
{
    const char *v = setting(p, key);
    *out = NULL;
    if (!v && !def)
        return SBX_OK;
    if (!(*out = strdup(v ? v : def)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

/* A DNS-1123 label (namespace) or subdomain (names of objects). */
static bool dns_name(const char *s, bool subdomain)
{
    size_t n = strlen(s);
    if (n == 0 || n > (subdomain ? 253u : 63u))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                  (subdomain && c == '.');
        if (!ok)
            return false;
    }
    return s[0] != '-' && s[n - 1] != '-' && s[0] != '.' && s[n - 1] != '.';
}

/* A quantity as Kubernetes writes one ("500m", "2", "1.5"). */
static bool cpu_quantity(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    return !errno && end != s && v > 0 && (!*end || !strcmp(end, "m"));
}

static int read_settings(struct kube_prov *p)
{
    int rc;
    uint64_t v;
    if ((rc = dup_setting(p, "image", KUBE_DEFAULT_IMAGE, &p->image)) ||
        (rc = dup_setting(p, "workdir", KUBE_DEFAULT_WORKDIR, &p->workdir)) ||
        (rc = dup_setting(p, "runtime_class", NULL, &p->runtime_class)) ||
        (rc = dup_setting(p, "service_account", NULL, &p->service_account)) ||
        (rc = dup_setting(p, "priority_class", NULL, &p->priority_class)) ||
        (rc = dup_setting(p, "cpu", "1", &p->cpu)) ||
        (rc = dup_setting(p, "cpu_request", "100m", &p->cpu_request)) ||
        (rc = dup_setting(p, "network_policy", KUBE_DEFAULT_NETPOL, &p->netpol)))
        return rc;
    const char *ini = "providers.d/kubernetes.ini";
    size_t wl = strlen(p->workdir);
    while (wl > 1 && p->workdir[wl - 1] == '/')
        p->workdir[--wl] = '\0';
    if (p->workdir[0] != '/' || strstr(p->workdir, "/..") || wl < 2 || !strcmp(p->workdir, "/tmp"))
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: workdir = '%s': use an absolute "
                                  "directory other than / and /tmp", ini, p->workdir);
    const char *names[] = {p->runtime_class, p->service_account, p->priority_class, p->netpol};
    const char *keys[] = {"runtime_class", "service_account", "priority_class", "network_policy"};
    for (size_t i = 0; i < 4; i++)
        if (names[i] && !dns_name(names[i], true))
            return p->host->set_error(p->h, SBX_E_CONFIG, "%s: %s = '%s' is not a Kubernetes "
                                      "object name", ini, keys[i], names[i]);
    if (!cpu_quantity(p->cpu) || !cpu_quantity(p->cpu_request))
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: cpu = '%s', cpu_request = '%s': use "
                                  "CPU quantities (1, 0.5, 500m)", ini, p->cpu, p->cpu_request);
    if (strpbrk(p->image, " \t\r\n\"'\\"))
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: image = '%s' is not an image "
                                  "reference", ini, p->image);
    double d;
    if ((rc = number(p, "run_as_user", 65534, -1, 2147483647, &d)))
        return rc;
    p->run_as_user = (long long)d;
    if ((rc = duration_ms(p, "ttl", KUBE_DEFAULT_TTL_S * 1000ull, 1000, 30ull * 86400000, &v)))
        return rc;
    p->ttl_s = v / 1000;
    if ((rc = duration_ms(p, "ready_timeout", KUBE_DEFAULT_READY_S * 1000ull, 1000, 3600000, &v)))
        return rc;
    p->ready_ms = v;
    if ((rc = duration_ms(p, "request_timeout", KUBE_DEFAULT_REQUEST_MS, 100, 3600000, &v)))
        return rc;
    p->request_ms = (long)v;
    if ((rc = duration_ms(p, "connect_timeout", 10000, 100, 600000, &v)))
        return rc;
    p->connect_ms = (long)v;
    if ((rc = boolean(p, "allow_network", true, &p->allow_network)) ||
        (rc = boolean(p, "manage_network_policy", true, &p->manage_netpol)))
        return rc;
    if ((rc = number(p, "qps", 50, 0, 100000, &p->qps)) ||
        (rc = number(p, "burst", 100, 1, 100000, &p->burst)))
        return rc;
    p->rl_tokens = p->burst;
    p->rl_last_ns = kube_now_ns();
    const char *ep = setting(p, "exec_protocol");
    if (!ep || !strcmp(ep, "auto"))
        p->exec_protocol = 0;
    else if (!strcmp(ep, "v5") || !strcmp(ep, "v5.channel.k8s.io"))
        p->exec_protocol = 5;
    else if (!strcmp(ep, "v4") || !strcmp(ep, "v4.channel.k8s.io"))
        p->exec_protocol = 4;
    else
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: exec_protocol = '%s': use auto, v5 or "
                                  "v4", ini, ep);
    const char *mode = setting(p, "mode");
    if (!mode || !strcmp(mode, "pods"))
        p->mode = KUBE_MODE_PODS;
    else if (!strcmp(mode, "agent-sandbox"))
        p->mode = KUBE_MODE_AGENT;
    else
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s: mode = '%s': use pods or "
                                  "agent-sandbox", ini, mode);
    if ((rc = number(p, "warm_pool", 2, 0, 10000, &d)))
        return rc;
    p->warm_pool = (unsigned)d;
    return SBX_OK;
}

/* ---- ABI 1.1 hints ---- */

void kube_retry_after(struct kube_prov *p, long ms)
{
    pc_retry_after(p->host, p->h, ms);
}

void kube_not_started(struct kube_prov *p)
{
    pc_not_started(p->host, p->h);
}

/* ---- init / fini ---- */

void kube_sb_free(struct kube_sb *sb)
{
    if (!sb)
        return;
    free(sb->workdir);
    free(sb);
}

static void kube_fini(void *prov)
{
    struct kube_prov *p = prov;
    if (!p)
        return;
    kube_agent_free(p);
    ph_client_free(p->api);
    kube_ws_tls_free(p);
    kube_conn_free(&p->conn);
    free(p->namespace);
    free(p->image);
    free(p->workdir);
    free(p->runtime_class);
    free(p->service_account);
    free(p->priority_class);
    free(p->cpu);
    free(p->cpu_request);
    free(p->netpol);
    pthread_mutex_destroy(&p->rl_lock);
    pthread_mutex_destroy(&p->np_lock);
    pthread_mutex_destroy(&p->agent_lock);
    free(p);
}

static int kube_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    *prov = NULL;
    if (!host || host->struct_size < offsetof(sbx_host_v1, state_dir) + sizeof host->state_dir)
        return SBX_E_INVAL;
    struct kube_prov *p = calloc(1, sizeof *p);
    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    p->host = host;
    p->h = h;
    pthread_mutex_init(&p->rl_lock, NULL);
    pthread_mutex_init(&p->np_lock, NULL);
    pthread_mutex_init(&p->agent_lock, NULL);
    int rc = read_settings(p);
    if (!rc)
        rc = kube_conn_load(p);
    if (!rc) {
        const char *ns = setting(p, "namespace");
        if (!ns)
            ns = p->conn.namespace ? p->conn.namespace : "default";
        if (!dns_name(ns, false))
            rc = host->set_error(h, SBX_E_CONFIG, "namespace '%s' is not a namespace name", ns);
        else if (!(p->namespace = strdup(ns)))
            rc = host->set_error(h, SBX_E_NOMEM, "out of memory");
    }
    if (!rc) {
        char err[PH_ERR_MAX] = "";
        ph_client_conf conf = {
            .base_url = p->conn.server,
            .ca_file = p->conn.ca_file,
            .ca_pem = p->conn.ca_pem,
            .cert_pem = p->conn.cert_pem,
            .key_pem = p->conn.key_pem,
            .connect_timeout_ms = p->connect_ms,
            .timeout_ms = p->request_ms,
        };
        if ((rc = ph_client_new(&conf, &p->api, err)))
            rc = host->set_error(h, rc == SBX_E_INVAL ? SBX_E_CONFIG : rc, "%s: %s",
                                 p->conn.origin, err);
    }
    if (!rc)
        rc = kube_ws_tls_init(p);
    if (rc) {
        kube_fini(p);
        return rc;
    }
    *prov = p;
    return SBX_OK;
}

/* ---- create / attach / release / destroy ---- */

/* The pod holds memory and disk, each exec CPU time, file size and open
 * files (kube-exec.c); nothing in the Pod API bounds its processes. */
static int unenforced(struct kube_prov *p)
{
    return pc_limits_unenforced(p->host, p->h, SBX_LIMIT_BIT_PIDS,
                                "a Pod has no process limit of its own: only the kubelet's "
                                "podPidsLimit, one number for every pod of the node, bounds it");
}

static int kube_create(void *prov, const sbx_create_spec_v1 *spec, void **sbp, char id[SBX_ID_MAX])
{
    struct kube_prov *p = prov;
    *sbp = NULL;
    if (!spec || spec->struct_size < offsetof(sbx_create_spec_v1, ttl_ns) + sizeof spec->ttl_ns)
        return p->host->set_error(p->h, SBX_E_INVAL, "create: bad spec");
    if (spec->image && strpbrk(spec->image, " \t\r\n\"'\\"))
        return p->host->set_error(p->h, SBX_E_INVAL, "create: '%s' is not an image reference",
                                  spec->image);
    int rc0 = unenforced(p);
    if (rc0 != SBX_OK)
        return rc0;
    struct kube_sb *sb = NULL;
    int rc = p->mode == KUBE_MODE_AGENT ? kube_agent_create(p, spec, &sb)
                                        : kube_pod_create(p, spec, &sb);
    if (rc)
        return rc;
    snprintf(id, SBX_ID_MAX, "%s", sb->id);
    *sbp = sb;
    return SBX_OK;
}

static int kube_exec_op(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                        const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct kube_prov *p = prov;
    if (!spec || spec->struct_size < offsetof(sbx_exec_spec_v1, stderr_cap) + sizeof spec->stderr_cap)
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: bad spec");
    return kube_exec(p, sb, spec, sink, out);
}

static bool id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static int kube_attach(void *prov, const char *id, void **sbp)
{
    struct kube_prov *p = prov;
    *sbp = NULL;
    if (!id_ok(id))
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "'%s' is not a sandbox id of the "
                                  "kubernetes provider", id);
    struct kube_sb *sb = NULL;
    int rc = p->mode == KUBE_MODE_AGENT ? kube_agent_attach(p, id, &sb)
                                        : kube_pod_attach(p, id, &sb);
    if (!rc) {
        unenforced(p);  /* the core refuses its execs, if need be */
        *sbp = sb;
    }
    return rc;
}

static void kube_release(void *prov, void *sb)
{
    (void)prov;
    kube_sb_free(sb);
}

static int kube_destroy(void *prov, void *sbp)
{
    struct kube_prov *p = prov;
    struct kube_sb *sb = sbp;
    int rc = sb->claim ? kube_agent_destroy(p, sb) : kube_pod_delete(p, sb->pod);
    kube_sb_free(sb);
    return rc;
}

/* ---- list / files / health / doctor ---- */

static int kube_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb,
                     void *ud)
{
    struct kube_prov *p = prov;
    return p->mode == KUBE_MODE_AGENT ? kube_agent_list(p, filter, n_filter, cb, ud)
                                      : kube_pod_list(p, filter, n_filter, cb, ud);
}

static int kube_upload_op(void *prov, void *sb, const char *path, const void *data, size_t len,
                          uint32_t mode)
{
    return kube_upload(prov, sb, path, data, len, mode);
}

static int kube_download_op(void *prov, void *sb, const char *path, size_t max, void **data,
                            size_t *len)
{
    return kube_download(prov, sb, path, max, data, len);
}

static int kube_health(void *prov)
{
    struct kube_prov *p = prov;
    char path[300];
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods?limit=1", p->namespace);
    int rc = kube_api(p, "health", "GET", path, NULL, NULL, -1, NULL, &ans);
    json_decref(ans);
    return rc;
}

static void kube_doctor(void *prov, sbx_doctor_cb_v1 cb, void *ud)
{
    struct kube_prov *p = prov;
    char detail[800];
    snprintf(detail, sizeof detail, "%s: %s, namespace %s", p->conn.origin, p->conn.server,
             p->namespace);
    cb(ud, "cluster", 1, detail);
    static const char *const auth_names[] = {"client certificate", "bearer token (kubeconfig)",
                                             "bearer token file", "bearer token (ini, not shown)",
                                             "exec credential plugin"};
    snprintf(detail, sizeof detail, "%s%s", auth_names[p->conn.auth],
             p->conn.cert_pem && p->conn.auth != KUBE_AUTH_NONE ? " and client certificate" : "");
    cb(ud, "credentials", 1, detail);
    int rc = kube_health(p);
    const char *why = rc == SBX_OK ? "reachable, may list pods"
                    : rc == SBX_E_AUTH ? "the credential was refused (401)"
                    : rc == SBX_E_PERM ? "RBAC forbids listing pods (see README.md)"
                    : rc == SBX_E_NETWORK ? "cannot connect (or TLS failed)"
                    : rc == SBX_E_TIMEOUT ? "no answer in time"
                    : rc == SBX_E_RATE_LIMITED ? "rate limited (HTTP 429)"
                    : rc == SBX_E_SERVER ? "server error (HTTP 5xx)"
                    : "cannot list pods";
    snprintf(detail, sizeof detail, "%s: %s", p->conn.server, why);
    cb(ud, "API server", rc == SBX_OK, detail);
    snprintf(detail, sizeof detail, "%s%s%s, runtime class %s, mode %s", p->image,
             p->run_as_user >= 0 ? ", user " : "", p->run_as_user >= 0 ? "set" : "",
             p->runtime_class ? p->runtime_class : "(cluster default)",
             p->mode == KUBE_MODE_AGENT ? "agent-sandbox" : "pods");
    cb(ud, "sandbox pods", 1, detail);
    /* Said rather than hidden: Kubernetes has no per-pod process limit. */
    cb(ud, "limits", 1, "memory and disk per pod; CPU time, file size and open files per exec; "
                        "processes: only the node's podPidsLimit, not the sandbox's pids limit "
                        "(sandboxes are refused unless unenforced_limits allows pids)");
}

static const sbx_provider_ops_v1 kube_ops = {
    .init = kube_init,
    .fini = kube_fini,
    .create = kube_create,
    .exec = kube_exec_op,
    .destroy = kube_destroy,
    .attach = kube_attach,
    .release = kube_release,
    .list = kube_list,
    .upload = kube_upload_op,
    .download = kube_download_op,
    .health = kube_health,
    .doctor = kube_doctor,
};

SBX_PROVIDER_DEFINE("kubernetes", PACKAGE_VERSION,
                    "Pods on a Kubernetes cluster, exec over the API's WebSocket (gVisor or Kata "
                    "through a RuntimeClass; agent-sandbox warm pools)",
                    "MIT", KUBE_CAPS, config_keys, secret_keys, &kube_ops);
