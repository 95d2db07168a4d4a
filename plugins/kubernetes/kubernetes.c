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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube-int.h"
#include "unenforced.h"
#include "setting-checks.h"
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

/* The checks of the settings table (see sbx_setting_v1.check). */

static const char *check_object_name(const char *v)
{
    return dns_name(v, true) ? NULL : "is not a Kubernetes object name";
}

/* A quantity as Kubernetes writes one ("500m", "2", "1.5"). */
static const char *check_cpu(const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    return !errno && end != v && x > 0 && (!*end || !strcmp(end, "m"))
               ? NULL : "use a CPU quantity (1, 0.5, 500m)";
}

static const char *check_image(const char *v)
{
    return strpbrk(v, " \t\r\n\"'\\") ? "is not an image reference" : NULL;
}

static const char *check_workdir(const char *v)
{
    const char *why = pc_check_workdir(v);
    size_t n = strlen(v);
    while (n > 1 && v[n - 1] == '/')
        n--;
    return why ? why : n == 4 && !strncmp(v, "/tmp", 4) ? "use a directory other than /tmp"
                                                          : NULL;
}

/* qps and burst: a rate, fractions allowed, which no integer type holds. */
static const char *check_rate(const char *v, double min, const char *why)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    return errno || end == v || *end || x < min || x > 100000 ? why : NULL;
}

static const char *check_qps(const char *v)
{
    return check_rate(v, 0, "is not a number from 0 to 100000");
}

static const char *check_burst(const char *v)
{
    return check_rate(v, 1, "is not a number from 1 to 100000");
}

/* What settings_read fills; copied into struct kube_prov. */
struct kube_conf {
    const char *image, *workdir, *runtime_class, *service_account, *priority_class, *cpu,
        *cpu_request, *netpol, *qps, *burst;
    int64_t run_as_user, warm_pool;
    uint64_t ttl_ns, ready_ns, request_ns, connect_ns;
    int allow_network, manage_netpol, exec_protocol, mode;
    struct kube_where where;
};

/* In the order of KUBE_IC_AUTO, _TRUE (three spellings), _FALSE (three). */
static const char *const in_cluster_values[] = {"auto", "true", "yes", "1",
                                                "false", "no", "0", NULL};
/* auto, then v5 and v4, each in two spellings. */
static const char *const exec_protocols[] = {"auto", "v5", "v5.channel.k8s.io", "v4",
                                             "v4.channel.k8s.io", NULL};
/* In the order of enum kube_mode. */
static const char *const modes[] = {"pods", "agent-sandbox", NULL};

#define KC(field) offsetof(struct kube_conf, field)
#define KW(field) offsetof(struct kube_conf, where.field)
static const sbx_setting_v1 kube_settings[] = {
    /* Where the cluster is: struct kube_where, for kube-config.c. */
    {.key = "kubeconfig", .type = SBX_SETTING_STRING, .offset = KW(kubeconfig)},
    {.key = "context", .type = SBX_SETTING_STRING, .offset = KW(context)},
    {.key = "serviceaccount_dir", .type = SBX_SETTING_STRING, .offset = KW(serviceaccount_dir)},
    {.key = "server", .type = SBX_SETTING_STRING, .offset = KW(server)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = KW(ca_file)},
    {.key = "namespace", .type = SBX_SETTING_STRING, .offset = KW(namespace)},
    {.key = "in_cluster", .type = SBX_SETTING_ENUM, .def = "auto", .choices = in_cluster_values,
     .offset = KW(in_cluster)},
    {.key = "token", .type = SBX_SETTING_SECRET, .offset = KW(have_token)},
    /* How pods are made. */
    {.key = "image", .type = SBX_SETTING_STRING, .def = KUBE_DEFAULT_IMAGE,
     .check = check_image, .offset = KC(image)},
    {.key = "workdir", .type = SBX_SETTING_STRING, .def = KUBE_DEFAULT_WORKDIR,
     .check = check_workdir, .offset = KC(workdir)},
    {.key = "runtime_class", .type = SBX_SETTING_STRING, .check = check_object_name,
     .offset = KC(runtime_class)},
    {.key = "service_account", .type = SBX_SETTING_STRING, .check = check_object_name,
     .offset = KC(service_account)},
    {.key = "priority_class", .type = SBX_SETTING_STRING, .check = check_object_name,
     .offset = KC(priority_class)},
    {.key = "network_policy", .type = SBX_SETTING_STRING, .def = KUBE_DEFAULT_NETPOL,
     .check = check_object_name, .offset = KC(netpol)},
    {.key = "cpu", .type = SBX_SETTING_STRING, .def = "1", .check = check_cpu,
     .offset = KC(cpu)},
    {.key = "cpu_request", .type = SBX_SETTING_STRING, .def = "100m", .check = check_cpu,
     .offset = KC(cpu_request)},
    {.key = "run_as_user", .type = SBX_SETTING_INT, .def = "65534", .min = "-1",
     .max = "2147483647", .offset = KC(run_as_user)},
    {.key = "ttl", .type = SBX_SETTING_DURATION, .def = KUBE_DEFAULT_TTL, .min = "1s",
     .max = "720h", .offset = KC(ttl_ns)},
    {.key = "ready_timeout", .type = SBX_SETTING_DURATION, .def = KUBE_DEFAULT_READY,
     .min = "1s", .max = "1h", .offset = KC(ready_ns)},
    {.key = "request_timeout", .type = SBX_SETTING_DURATION, .def = KUBE_DEFAULT_REQUEST,
     .min = "100ms", .max = "1h", .offset = KC(request_ns)},
    {.key = "connect_timeout", .type = SBX_SETTING_DURATION, .def = "10s", .min = "100ms",
     .max = "10m", .offset = KC(connect_ns)},
    {.key = "allow_network", .type = SBX_SETTING_BOOL, .def = "true",
     .offset = KC(allow_network)},
    {.key = "manage_network_policy", .type = SBX_SETTING_BOOL, .def = "true",
     .offset = KC(manage_netpol)},
    {.key = "qps", .type = SBX_SETTING_STRING, .def = "50", .check = check_qps,
     .offset = KC(qps)},
    {.key = "burst", .type = SBX_SETTING_STRING, .def = "100", .check = check_burst,
     .offset = KC(burst)},
    {.key = "exec_protocol", .type = SBX_SETTING_ENUM, .def = "auto", .choices = exec_protocols,
     .offset = KC(exec_protocol)},
    {.key = "mode", .type = SBX_SETTING_ENUM, .def = "pods", .choices = modes,
     .offset = KC(mode)},
    {.key = "warm_pool", .type = SBX_SETTING_INT, .def = "2", .min = "0", .max = "10000",
     .offset = KC(warm_pool)},
    {.key = NULL},
};
#undef KC
#undef KW

static int dup_to(struct kube_prov *p, const char *v, char **out)
{
    if (v && !(*out = strdup(v)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

static int read_settings(struct kube_prov *p)
{
    struct kube_conf c = {0};
    int rc;

    if (!SBX_HOST_HAS(p->host, settings_read))
        return p->host->set_error(p->h, SBX_E_INTERNAL, "kubernetes: the core lends no "
                                  "settings_read (ABI 1.9)");
    if ((rc = p->host->settings_read(p->h, kube_settings, sizeof kube_settings[0], &c)) ||
        (rc = dup_to(p, c.image, &p->image)) || (rc = dup_to(p, c.workdir, &p->workdir)) ||
        (rc = dup_to(p, c.runtime_class, &p->runtime_class)) ||
        (rc = dup_to(p, c.service_account, &p->service_account)) ||
        (rc = dup_to(p, c.priority_class, &p->priority_class)) ||
        (rc = dup_to(p, c.cpu, &p->cpu)) || (rc = dup_to(p, c.cpu_request, &p->cpu_request)) ||
        (rc = dup_to(p, c.netpol, &p->netpol)))
        return rc;
    p->where = c.where;
    size_t wl = strlen(p->workdir);
    while (wl > 1 && p->workdir[wl - 1] == '/')
        p->workdir[--wl] = '\0';
    p->run_as_user = (long long)c.run_as_user;
    p->ttl_s = c.ttl_ns / 1000000000u;
    p->ready_ms = c.ready_ns / 1000000u;
    p->request_ms = (long)(c.request_ns / 1000000u);
    p->connect_ms = (long)(c.connect_ns / 1000000u);
    p->allow_network = c.allow_network;
    p->manage_netpol = c.manage_netpol;
    p->qps = strtod(c.qps, NULL);
    p->burst = strtod(c.burst, NULL);
    p->rl_tokens = p->burst;
    p->rl_last_ns = kube_now_ns();
    p->exec_protocol = c.exec_protocol == 0 ? 0 : c.exec_protocol <= 2 ? 5 : 4;
    p->mode = c.mode == 1 ? KUBE_MODE_AGENT : KUBE_MODE_PODS;
    p->warm_pool = (unsigned)c.warm_pool;
    return SBX_OK;
}

/* ---- retry hints ---- */

void kube_retry_after(struct kube_prov *p, long ms)
{
    pc_retry_after(p->host, p->h, NULL, ms);
}

void kube_not_started(struct kube_sb *sb)
{
    pc_hints_not_started(&sb->hints);
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
        const char *ns = p->where.namespace;
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
    struct kube_sb *s = sb;
    pc_hints_reset(&s->hints);
    int rc = kube_exec(p, s, spec, sink, out);
    if (rc != SBX_OK)
        pc_hints_to_outcome(&s->hints, p->host, p->h, out);
    return rc;
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
