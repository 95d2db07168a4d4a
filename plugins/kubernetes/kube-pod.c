/* plugins/kubernetes/kube-pod.c - a sandbox as a Pod
 *
 * The pod: one container "sandbox" of the template's image (or the
 * request's, or `image`), whose first process only waits; restartPolicy
 * Never; activeDeadlineSeconds and the label polysandbox.io/expires from
 * the time-to-live; no service account token; no service links; requests
 * and limits from the sandbox's limits (memory, ephemeral storage) and the
 * ini (cpu, cpu_request); runtimeClassName (gVisor, Kata) from the ini; a
 * restrictive security context (non-root user, no privilege escalation,
 * all capabilities dropped, read-only root, the runtime's default seccomp
 * profile); the work directory and /tmp as emptyDir volumes of the disk
 * limit.  A sandbox without network is labelled polysandbox.io/network=none,
 * which the provider's own NetworkPolicy (deny all ingress and egress)
 * selects.  Labels and annotations: kube-labels.c.
 *
 * Deletion is foreground with no grace period: the pod's processes die
 * at once, and the object goes when they have.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube-int.h"

#define MIB (UINT64_C(1024) * 1024)
#define LIST_PAGE 500
#define LIST_MAX_PAGES 10000

/* The first process of a sandbox: waits, reaps what exec leaves behind,
 * and leaves at once on SIGTERM. */
static const char idle_script[] =
    "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

static char *pods_path(struct kube_prov *p, const char *name)
{
    char *s = NULL;
    if (asprintf(&s, "/api/v1/namespaces/%s/pods%s%s", p->namespace, name ? "/" : "",
                 name ? name : "") < 0)
        return NULL;
    return s;
}

/* ---- the NetworkPolicy ---- */

static bool denies_all(json_t *np)
{
    json_t *spec = json_object_get(np, "spec");
    json_t *ml = json_object_get(json_object_get(spec, "podSelector"), "matchLabels");
    const char *sel = json_string_value(json_object_get(ml, KUBE_L_NETWORK));
    bool egress = false;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(spec, "policyTypes"), i, t)
        if (json_is_string(t) && !strcmp(json_string_value(t), "Egress"))
            egress = true;
    return sel && !strcmp(sel, "none") && egress && json_array_size(json_object_get(spec, "egress")) == 0 &&
           json_object_size(ml) == 1 && !json_object_get(json_object_get(spec, "podSelector"), "matchExpressions");
}

int kube_netpol_ensure(struct kube_prov *p)
{
    pthread_mutex_lock(&p->np_lock);
    bool ready = p->np_ready;
    pthread_mutex_unlock(&p->np_lock);
    if (ready)
        return SBX_OK;
    char path[512], what[300];
    snprintf(path, sizeof path, "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies/%s",
             p->namespace, p->netpol);
    snprintf(what, sizeof what, "NetworkPolicy %s/%s", p->namespace, p->netpol);
    json_t *np = NULL;
    int rc = kube_api(p, what, "GET", path, NULL, NULL, 404, NULL, &np);
    if (rc == SBX_OK) {
        bool ok = denies_all(np);
        json_decref(np);
        if (!ok)
            return p->host->set_error(p->h, SBX_E_CONFIG, "%s exists but does not deny all "
                                      "egress of the pods labelled %s=none; refusing to make a "
                                      "sandbox without network", what, KUBE_L_NETWORK);
    } else if (rc == SBX_E_NOT_FOUND) {
        json_decref(np);
        if (!p->manage_netpol)
            return p->host->set_error(p->h, SBX_E_CONFIG, "%s does not exist and "
                                      "manage_network_policy is false: apply it (README.md) "
                                      "before making sandboxes without network", what);
        json_t *body = json_pack(
            "{s:s,s:s,s:{s:s,s:{s:s}},s:{s:{s:{s:s}},s:[ss]}}", "apiVersion",
            "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata", "name", p->netpol,
            "labels", KUBE_L_MANAGED, KUBE_L_MANAGED_V, "spec", "podSelector", "matchLabels",
            KUBE_L_NETWORK, "none", "policyTypes", "Ingress", "Egress");
        char cpath[512];
        snprintf(cpath, sizeof cpath, "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies",
                 p->namespace);
        rc = body ? kube_api(p, what, "POST", cpath, body, NULL, 409, NULL, NULL)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        json_decref(body);
        if (rc == SBX_E_EXISTS)
            rc = SBX_OK;     /* made meanwhile by another process */
        if (rc)
            return rc;
    } else {
        json_decref(np);
        return rc;
    }
    pthread_mutex_lock(&p->np_lock);
    p->np_ready = true;
    pthread_mutex_unlock(&p->np_lock);
    return SBX_OK;
}

/* ---- the pod's object ---- */

static json_t *quantity(uint64_t bytes)
{
    char b[32];
    if (bytes % MIB == 0)
        snprintf(b, sizeof b, "%" PRIu64 "Mi", bytes / MIB);
    else
        snprintf(b, sizeof b, "%" PRIu64, bytes);
    return json_string(b);
}

static json_t *env_list(const sbx_kv_v1 *env, size_t n, const char *home)
{
    json_t *a = json_array();
    bool have_home = false;
    for (size_t i = 0; a && i < n; i++) {
        if (!env[i].key || !*env[i].key || strchr(env[i].key, '=')) {
            json_decref(a);
            return NULL;
        }
        have_home = have_home || !strcmp(env[i].key, "HOME");
        if (json_array_append_new(a, json_pack("{s:s,s:s}", "name", env[i].key, "value",
                                               env[i].value ? env[i].value : ""))) {
            json_decref(a);
            return NULL;
        }
    }
    if (a && !have_home &&
        json_array_append_new(a, json_pack("{s:s,s:s}", "name", "HOME", "value", home))) {
        json_decref(a);
        return NULL;
    }
    return a;
}

json_t *kube_pod_spec(struct kube_prov *p, const sbx_create_spec_v1 *spec, const char *image,
                      uint64_t ttl_s)
{
    uint64_t disk = spec->limits.disk_bytes;
    json_t *env = env_list(spec->env, spec->n_env, p->workdir);
    if (!env)
        return NULL;
    json_t *res = json_pack("{s:{s:s,s:o,s:o},s:{s:s,s:o,s:o}}",
                            "requests", "cpu", p->cpu_request,
                            "memory", quantity(spec->limits.memory_bytes),
                            "ephemeral-storage", quantity(2 * disk + 64 * MIB),
                            "limits", "cpu", p->cpu,
                            "memory", quantity(spec->limits.memory_bytes),
                            "ephemeral-storage", quantity(2 * disk + 64 * MIB));
    json_t *csc = json_pack("{s:b,s:b,s:b,s:{s:[s]}}", "allowPrivilegeEscalation", 0,
                            "privileged", 0, "readOnlyRootFilesystem", 1, "capabilities",
                            "drop", "ALL");
    json_t *c = json_pack("{s:s,s:s,s:s,s:[sss],s:s,s:o,s:o,s:o,s:[{s:s,s:s},{s:s,s:s}]}",
                          "name", KUBE_CONTAINER, "image", image, "imagePullPolicy",
                          "IfNotPresent", "command", "/bin/sh", "-c", idle_script,
                          "workingDir", p->workdir, "env", env, "resources", res,
                          "securityContext", csc, "volumeMounts", "name", "work", "mountPath",
                          p->workdir, "name", "tmp", "mountPath", "/tmp");
    json_t *psc = json_pack("{s:{s:s}}", "seccompProfile", "type", "RuntimeDefault");
    if (psc && p->run_as_user >= 0) {
        json_object_set_new(psc, "runAsUser", json_integer(p->run_as_user));
        json_object_set_new(psc, "runAsGroup", json_integer(p->run_as_user));
        json_object_set_new(psc, "fsGroup", json_integer(p->run_as_user));
        json_object_set_new(psc, "runAsNonRoot", json_boolean(p->run_as_user != 0));
    }
    json_t *vols = json_pack("[{s:s,s:{s:o}},{s:s,s:{s:o}}]", "name", "work", "emptyDir",
                             "sizeLimit", quantity(disk), "name", "tmp", "emptyDir", "sizeLimit",
                             quantity(disk));
    if (!c || !psc || !vols) {
        json_decref(c);      /* json_pack took env, res and csc, made or not */
        json_decref(psc);
        json_decref(vols);
        return NULL;
    }
    json_t *ps = json_pack("{s:s,s:b,s:b,s:b,s:b,s:b,s:I,s:I,s:o,s:[o],s:o}",
                           "restartPolicy", "Never", "automountServiceAccountToken", 0,
                           "enableServiceLinks", 0, "hostNetwork", 0, "hostPID", 0, "hostIPC", 0,
                           "terminationGracePeriodSeconds", (json_int_t)0,
                           "activeDeadlineSeconds", (json_int_t)ttl_s, "securityContext", psc,
                           "containers", c, "volumes", vols);
    if (!ps)
        return NULL;
    if (p->runtime_class)
        json_object_set_new(ps, "runtimeClassName", json_string(p->runtime_class));
    if (p->service_account)
        json_object_set_new(ps, "serviceAccountName", json_string(p->service_account));
    if (p->priority_class)
        json_object_set_new(ps, "priorityClassName", json_string(p->priority_class));
    return ps;
}

int kube_sandbox_meta(struct kube_prov *p, const sbx_create_spec_v1 *spec, uint64_t ttl_s,
                      json_t **labels_out, json_t **ann_out)
{
    json_t *labels = json_object(), *ann = json_object();
    char buf[64];
    int rc = labels && ann ? SBX_OK : SBX_E_NOMEM;
    if (!rc && (json_object_set_new(labels, KUBE_L_MANAGED, json_string(KUBE_L_MANAGED_V)) ||
                json_object_set_new(labels, KUBE_L_NETWORK,
                                    json_string(spec->network == SBX_NET_NONE ? "none" : "allow"))))
        rc = SBX_E_NOMEM;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(kube_wall_ns() / 1000000000u + ttl_s));
    if (!rc && json_object_set_new(labels, KUBE_L_EXPIRES, json_string(buf)))
        rc = SBX_E_NOMEM;
    for (size_t i = 0; !rc && i < spec->n_labels; i++)
        if (spec->labels[i].key && !strcmp(spec->labels[i].key, "polysandbox.owner")) {
            char *e = kube_label_encode(spec->labels[i].value ? spec->labels[i].value : "");
            if (!e || json_object_set_new(labels, KUBE_L_OWNER, json_string(e)))
                rc = SBX_E_NOMEM;
            free(e);
        }
    if (!rc && spec->template_name) {
        char *e = kube_label_encode(spec->template_name);
        if (!e || json_object_set_new(labels, KUBE_L_TEMPLATE, json_string(e)))
            rc = SBX_E_NOMEM;
        free(e);
    }
    if (!rc)
        rc = kube_labels_put(labels, ann, spec->labels, spec->n_labels);
    char lim[128];
    snprintf(lim, sizeof lim, "%llu,%llu,%llu",
             (unsigned long long)((spec->limits.cpu_ns + 999999999u) / 1000000000u),
             (unsigned long long)spec->limits.fsize_bytes, (unsigned long long)spec->limits.nofile);
    char created[32];
    snprintf(created, sizeof created, "%llu", (unsigned long long)kube_wall_ns());
    if (!rc && (json_object_set_new(ann, KUBE_A_WORKDIR, json_string(p->workdir)) ||
                json_object_set_new(ann, KUBE_A_LIMITS, json_string(lim)) ||
                json_object_set_new(ann, KUBE_A_CREATED, json_string(created))))
        rc = SBX_E_NOMEM;
    if (rc) {
        json_decref(labels);
        json_decref(ann);
        return p->host->set_error(p->h, rc, rc == SBX_E_INVAL
                                  ? "create: a label has an empty name or is not valid UTF-8"
                                  : "out of memory");
    }
    *labels_out = labels;
    *ann_out = ann;
    return SBX_OK;
}

static int new_sb(const char *name, const char *workdir, const char *limits, struct kube_sb **out)
{
    struct kube_sb *sb = calloc(1, sizeof *sb);
    if (!sb || !(sb->workdir = strdup(workdir))) {
        free(sb);
        return SBX_E_NOMEM;
    }
    snprintf(sb->id, sizeof sb->id, "%s", name);
    snprintf(sb->pod, sizeof sb->pod, "%s", name);
    unsigned long long cpu = 0, fsize = 0, nofile = 0;
    if (limits && sscanf(limits, "%llu,%llu,%llu", &cpu, &fsize, &nofile) == 3) {
        sb->cpu_s = cpu;
        sb->fsize_bytes = fsize;
        sb->nofile = nofile;
    }
    *out = sb;
    return SBX_OK;
}

int kube_pod_create(struct kube_prov *p, const sbx_create_spec_v1 *spec, struct kube_sb **out)
{
    *out = NULL;
    if (spec->network == SBX_NET_HOST && !p->allow_network)
        return p->host->set_error(p->h, SBX_E_PERM, "network access requested but "
                                  "providers.d/kubernetes.ini sets allow_network = false");
    if (spec->network != SBX_NET_HOST && spec->network != SBX_NET_NONE)
        return p->host->set_error(p->h, SBX_E_INVAL, "unknown network policy %d",
                                  (int)spec->network);
    int rc;
    if (spec->network == SBX_NET_NONE && (rc = kube_netpol_ensure(p)))
        return rc;
    uint64_t t0 = kube_now_ns();
    uint64_t ttl = spec->ttl_ns ? (spec->ttl_ns + 999999999u) / 1000000000u : p->ttl_s;
    char hex[17], name[32];
    if (pc_random_hex(hex, 8))
        return p->host->set_error(p->h, SBX_E_IO, "create: no random bytes for the pod's name");
    snprintf(name, sizeof name, "sbx-%s", hex);
    json_t *labels = NULL, *ann = NULL;
    if ((rc = kube_sandbox_meta(p, spec, ttl, &labels, &ann)))
        return rc;
    const char *image = spec->image && *spec->image ? spec->image : p->image;
    json_t *ps = kube_pod_spec(p, spec, image, ttl);
    json_t *pod = ps ? json_pack("{s:s,s:s,s:{s:s,s:o,s:o},s:o}", "apiVersion", "v1", "kind",
                                 "Pod", "metadata", "name", name, "labels", labels,
                                 "annotations", ann, "spec", ps)
                     : NULL;
    if (!pod) {
        if (!ps) {
            json_decref(labels);
            json_decref(ann);
        }
        return p->host->set_error(p->h, SBX_E_INVAL, "create: an environment entry has an "
                                  "empty name, a '=' in its name, or is not valid UTF-8");
    }
    char *path = pods_path(p, NULL);
    char what[128];
    snprintf(what, sizeof what, "create pod %s", name);
    json_t *made = NULL;
    rc = path ? kube_api(p, what, "POST", path, pod, NULL, -1, NULL, &made)
              : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    free(path);
    json_decref(pod);
    if (rc) {
        json_decref(made);
        if (rc == SBX_E_NETWORK || rc == SBX_E_TIMEOUT || rc == SBX_E_SERVER) {
            /* The answer was lost, not necessarily the pod: leave none
             * behind.  (When this delete fails too, its words replace the
             * create's; the code stays the create's.) */
            kube_pod_delete(p, name);
        }
        return rc;
    }
    const char *rv = json_string_value(json_object_get(json_object_get(made, "metadata"),
                                                       "resourceVersion"));
    char rvbuf[64];
    snprintf(rvbuf, sizeof rvbuf, "%s", rv && strlen(rv) < sizeof rvbuf ? rv : "");
    json_decref(made);
    rc = kube_watch_ready(p, name, rvbuf, t0 + p->ready_ms * 1000000u);
    if (rc) {
        int keep = rc;
        p->host->log(p->h, SBX_LOG_DEBUG, "pod %s did not become ready: removing it", name);
        kube_pod_delete(p, name);
        return keep;
    }
    char lim[128];
    snprintf(lim, sizeof lim, "%llu,%llu,%llu",
             (unsigned long long)((spec->limits.cpu_ns + 999999999u) / 1000000000u),
             (unsigned long long)spec->limits.fsize_bytes, (unsigned long long)spec->limits.nofile);
    if (new_sb(name, p->workdir, lim, out)) {
        kube_pod_delete(p, name);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    return SBX_OK;
}

int kube_pod_delete(struct kube_prov *p, const char *name)
{
    char what[160];
    snprintf(what, sizeof what, "delete pod %s", name);
    return kube_api_delete_now(p, what, pods_path(p, name));
}

/* The pod as the API answers it; NULL with the error set. */
static json_t *get_pod(struct kube_prov *p, const char *name, int *rc)
{
    char *path = pods_path(p, name);
    char what[160];
    snprintf(what, sizeof what, "pod %s", name);
    json_t *pod = NULL;
    *rc = path ? kube_api(p, what, "GET", path, NULL, NULL, 404, NULL, &pod)
               : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    free(path);
    if (*rc == SBX_E_NOT_FOUND)
        *rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, "no sandbox pod '%s' in namespace %s "
                                 "(destroyed, expired, or never made)", name, p->namespace);
    if (*rc) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

static const char *annotation(json_t *pod, const char *key)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(pod, "metadata"),
                                                             "annotations"), key));
}

int kube_pod_attach(struct kube_prov *p, const char *name, struct kube_sb **out)
{
    int rc;
    *out = NULL;
    json_t *pod = get_pod(p, name, &rc);
    if (!pod)
        return rc;
    json_t *md = json_object_get(pod, "metadata");
    if (json_object_get(md, "deletionTimestamp")) {
        json_decref(pod);
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "sandbox pod '%s' is being deleted",
                                  name);
    }
    json_t *labels = json_object_get(md, "labels");
    const char *managed = json_string_value(json_object_get(labels, KUBE_L_MANAGED));
    if (!managed || strcmp(managed, KUBE_L_MANAGED_V)) {
        json_decref(pod);
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "pod '%s' in namespace %s is not a "
                                  "sandbox (no %s=%s label)", name, p->namespace, KUBE_L_MANAGED,
                                  KUBE_L_MANAGED_V);
    }
    const char *wd = annotation(pod, KUBE_A_WORKDIR);
    rc = new_sb(name, wd && wd[0] == '/' ? wd : p->workdir, annotation(pod, KUBE_A_LIMITS), out);
    json_decref(pod);
    if (rc)
        return p->host->set_error(p->h, rc, "out of memory");
    return SBX_OK;
}

char *kube_pod_trouble(struct kube_prov *p, const char *name, int *code)
{
    int rc;
    char *out = NULL;
    *code = SBX_E_BACKEND;
    json_t *pod = get_pod(p, name, &rc);
    if (!pod) {
        *code = rc;
        return strdup(rc == SBX_E_NOT_FOUND ? "the sandbox's pod is gone (deleted or expired)"
                                            : "the sandbox's pod cannot be read");
    }
    json_t *md = json_object_get(pod, "metadata");
    json_t *st = json_object_get(pod, "status");
    const char *phase = json_string_value(json_object_get(st, "phase"));
    const char *reason = json_string_value(json_object_get(st, "reason"));
    const char *msg = json_string_value(json_object_get(st, "message"));
    if (json_object_get(md, "deletionTimestamp"))
        rc = asprintf(&out, "the sandbox's pod is being deleted");
    else if (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded")))
        rc = asprintf(&out, "the sandbox's pod has ended (%s%s%s%s%.200s)", phase,
                      reason ? ": " : "", reason ? reason : "", msg ? ": " : "", msg ? msg : "");
    else
        rc = 0, out = NULL;
    if (rc < 0)
        out = NULL;
    json_decref(pod);
    return out;
}

/* ---- list ---- */

struct relay {
    struct kube_prov *p;
    const sbx_kv_v1 *filter;
    size_t n_filter;
    sbx_list_cb_v1 cb;
    void *ud;
};

int kube_relay_object(struct kube_prov *p, json_t *obj, const sbx_kv_v1 *filter,
                      size_t n_filter, sbx_list_cb_v1 cb, void *ud)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    if (!name || json_object_get(md, "deletionTimestamp"))
        return 0;
    const char *text = json_string_value(json_object_get(json_object_get(md, "annotations"),
                                                         KUBE_A_LABELS));
    json_t *exact = text ? json_loads(text, 0, NULL) : json_object();
    if (!json_is_object(exact)) {
        json_decref(exact);
        return 0;   /* not ours after all, or tampered with */
    }
    for (size_t i = 0; i < n_filter; i++) {
        const char *v = json_string_value(json_object_get(exact, filter[i].key ? filter[i].key : ""));
        if (!v || strcmp(v, filter[i].value ? filter[i].value : "")) {
            json_decref(exact);
            return 0;
        }
    }
    size_t n = json_object_size(exact), k = 0;
    sbx_kv_v1 *kv = calloc(n ? n : 1, sizeof *kv);
    if (!kv) {
        json_decref(exact);
        return p->host->set_error(p->h, SBX_E_NOMEM, "list: out of memory");
    }
    const char *key;
    json_t *val;
    json_object_foreach(exact, key, val) {
        if (json_is_string(val) && k < n)
            kv[k++] = (sbx_kv_v1){key, json_string_value(val)};
    }
    const char *cns = json_string_value(json_object_get(json_object_get(md, "annotations"),
                                                         KUBE_A_CREATED));
    uint64_t created = cns ? strtoull(cns, NULL, 10) : 0;
    if (!created)
        created = pc_rfc3339_ns(json_string_value(json_object_get(md, "creationTimestamp")));
    int rc = cb(ud, name, kv, k, created);
    free(kv);
    json_decref(exact);
    return rc;
}

int kube_list_objects(struct kube_prov *p, const char *collection, const char *what,
                      const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb, void *ud)
{
    char *sel = kube_label_selector(filter, n_filter);
    char *esel = sel ? kube_escape(sel) : NULL;
    free(sel);
    if (!esel)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    char cont[1024] = "";
    int rc = SBX_OK;
    for (int page = 0; !rc; page++) {
        if (page >= LIST_MAX_PAGES) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "%s: the API kept answering a next "
                                    "page", what);
            break;
        }
        char *econt = cont[0] ? kube_escape(cont) : NULL;
        char *path = NULL;
        if ((cont[0] && !econt) ||
            asprintf(&path, "%s?labelSelector=%s&limit=%d%s%s", collection, esel, LIST_PAGE,
                     econt ? "&continue=" : "", econt ? econt : "") < 0) {
            free(econt);
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            break;
        }
        free(econt);
        json_t *list = NULL;
        rc = kube_api(p, what, "GET", path, NULL, NULL, -1, NULL, &list);
        free(path);
        if (rc) {
            json_decref(list);
            break;
        }
        json_t *items = json_object_get(list, "items");
        if (!json_is_array(items)) {
            json_decref(list);
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "%s: the answer has no items", what);
            break;
        }
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it) {
            if ((rc = kube_relay_object(p, it, filter, n_filter, cb, ud)))
                break;
        }
        const char *next = json_string_value(json_object_get(json_object_get(list, "metadata"),
                                                             "continue"));
        bool more = !rc && next && *next && strlen(next) < sizeof cont && strcmp(next, cont);
        if (more)
            snprintf(cont, sizeof cont, "%s", next);
        json_decref(list);
        if (!more)
            break;
    }
    free(esel);
    return rc;
}

int kube_pod_list(struct kube_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                  sbx_list_cb_v1 cb, void *ud)
{
    char *path = pods_path(p, NULL);
    if (!path)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = kube_list_objects(p, path, "list pods", filter, n_filter, cb, ud);
    free(path);
    return rc;
}
