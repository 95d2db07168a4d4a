/* plugins/kubernetes/kube-agent.c - agent-sandbox mode: SandboxClaims on warm pools
 *
 * With `mode = agent-sandbox` (kubernetes-sigs/agent-sandbox's CRDs and
 * controller installed, extensions enabled), a sandbox is a SandboxClaim
 * (extensions.agents.x-k8s.io/v1beta1) on a SandboxWarmPool, which keeps
 * `warm_pool` pods ready, made from a SandboxTemplate whose pod template
 * is the one pods mode would make.  The provider makes the template and
 * the pool the first time it needs them, named after the language
 * template and a hash of the pod spec (requests with the same image,
 * limits, environment and network share a pool), so the cluster keeps
 * warm pods and a create is a claim: no scheduling, no image pull, no
 * container start on the request's path.
 *
 * The claim carries the sandbox's labels (and gives them to the pod
 * through additionalPodMetadata), the time-to-live as lifecycle
 * shutdownTime with shutdownPolicy Delete, and is ready when its
 * condition Ready is True and status.sandbox names the Sandbox; exec and
 * files then go to that Sandbox's pod (annotation
 * agents.x-k8s.io/pod-name) exactly as in pods mode.  The sandbox id is
 * the claim's name; destroy deletes the claim (foreground), which deletes
 * its Sandbox and pod.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "kube-int.h"

#define EXT_API "/apis/extensions.agents.x-k8s.io/v1beta1"
#define AGENTS_API "/apis/agents.x-k8s.io/v1beta1"
#define A_POD "agents.x-k8s.io/pod-name"

static char *path_of(struct kube_prov *p, const char *api, const char *plural, const char *name)
{
    char *s = NULL;
    if (asprintf(&s, "%s/namespaces/%s/%s%s%s", api, p->namespace, plural, name ? "/" : "",
                 name ? name : "") < 0)
        return NULL;
    return s;
}

static bool known(struct kube_prov *p, const char *name)
{
    bool found = false;
    pthread_mutex_lock(&p->agent_lock);
    for (size_t i = 0; i < p->n_agent_ready && !found; i++)
        found = !strcmp(p->agent_ready[i], name);
    pthread_mutex_unlock(&p->agent_lock);
    return found;
}

static void remember(struct kube_prov *p, const char *name)
{
    pthread_mutex_lock(&p->agent_lock);
    char **n = realloc(p->agent_ready, (p->n_agent_ready + 1) * sizeof *n);
    if (n) {
        p->agent_ready = n;
        if ((n[p->n_agent_ready] = strdup(name)))
            p->n_agent_ready++;
    }
    pthread_mutex_unlock(&p->agent_lock);
}

/* POST @obj to @collection; an existing one of that name is fine. */
static int make(struct kube_prov *p, const char *what, const char *collection, json_t *obj)
{
    int rc = kube_api(p, what, "POST", collection, obj, NULL, 409, NULL, NULL);
    return rc == SBX_E_EXISTS ? SBX_OK : rc;
}

/* The SandboxTemplate and SandboxWarmPool of a create spec: their name
 * into @pool. */
static int ensure_pool(struct kube_prov *p, const sbx_create_spec_v1 *spec, char pool[64])
{
    const char *image = spec->image && *spec->image ? spec->image : p->image;
    json_t *ps = kube_pod_spec(p, spec, image, 1);
    if (!ps)
        return p->host->set_error(p->h, SBX_E_INVAL, "create: an environment entry has an "
                                  "empty name, a '=' in its name, or is not valid UTF-8");
    /* A warm pod waits for its claim: the claim's shutdownTime is the TTL. */
    json_object_del(ps, "activeDeadlineSeconds");
    const char *net = spec->network == SBX_NET_NONE ? "none" : "allow";
    char *text = json_dumps(ps, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!text || !EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL)) {
        free(text);
        json_decref(ps);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    free(text);
    char tn[24] = "default";
    if (spec->template_name) {
        size_t k = 0;
        for (const char *c = spec->template_name; *c && k < 16; c++)
            if ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9'))
                tn[k++] = *c;
            else if (*c >= 'A' && *c <= 'Z')
                tn[k++] = (char)(*c - 'A' + 'a');
        tn[k] = '\0';
        if (!k)
            snprintf(tn, sizeof tn, "default");
    }
    snprintf(pool, 64, "polysandbox-%s-%02x%02x%02x%02x%02x%s", tn, md[0], md[1], md[2], md[3],
             md[4], net[0] == 'n' ? "n" : "h");
    if (known(p, pool)) {
        json_decref(ps);
        return SBX_OK;
    }
    json_t *tmpl = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:{s:{s:{s:s,s:s}},s:o}}}",
                             "apiVersion", "extensions.agents.x-k8s.io/v1beta1", "kind",
                             "SandboxTemplate", "metadata", "name", pool, "labels",
                             KUBE_L_MANAGED, KUBE_L_MANAGED_V, "spec", "podTemplate", "metadata",
                             "labels", KUBE_L_MANAGED, KUBE_L_MANAGED_V, KUBE_L_NETWORK, net,
                             "spec", ps);
    json_t *wp = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:I,s:{s:s}}}", "apiVersion",
                           "extensions.agents.x-k8s.io/v1beta1", "kind", "SandboxWarmPool",
                           "metadata", "name", pool, "labels", KUBE_L_MANAGED, KUBE_L_MANAGED_V,
                           "spec", "replicas", (json_int_t)p->warm_pool, "sandboxTemplateRef",
                           "name", pool);
    char *tpath = path_of(p, EXT_API, "sandboxtemplates", NULL);
    char *wpath = path_of(p, EXT_API, "sandboxwarmpools", NULL);
    char what[160];
    int rc = tmpl && wp && tpath && wpath ? SBX_OK
                                          : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (!rc) {
        snprintf(what, sizeof what, "SandboxTemplate %s", pool);
        rc = make(p, what, tpath, tmpl);
    }
    if (!rc) {
        snprintf(what, sizeof what, "SandboxWarmPool %s", pool);
        rc = make(p, what, wpath, wp);
    }
    json_decref(tmpl);
    json_decref(wp);
    free(tpath);
    free(wpath);
    if (!rc)
        remember(p, pool);
    return rc;
}

static const char *cond_status(json_t *obj, const char *type, const char **reason,
                               const char **message)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type)) {
            *reason = json_string_value(json_object_get(c, "reason"));
            *message = json_string_value(json_object_get(c, "message"));
            return json_string_value(json_object_get(c, "status"));
        }
    }
    return NULL;
}

/* The judge of a claim's watch (kube_watch_until). */
static int claim_readiness(struct kube_prov *p, json_t *claim, char *why, size_t cap)
{
    const char *reason = NULL, *msg = NULL;
    const char *st = cond_status(claim, "Ready", &reason, &msg);
    const char *sname = json_string_value(json_object_get(
        json_object_get(json_object_get(claim, "status"), "sandbox"), "name"));
    const char *name = json_string_value(json_object_get(json_object_get(claim, "metadata"), "name"));
    if (st && !strcmp(st, "True") && sname && *sname)
        return 1;
    if (reason && (!strcmp(reason, "WarmPoolNotFound") || !strcmp(reason, "TemplateNotFound")))
        return -p->host->set_error(p->h, SBX_E_CONFIG, "SandboxClaim %s: %s%s%s", name ? name : "",
                                   reason, msg && *msg ? ": " : "", msg ? msg : "");
    if (reason && (!strcmp(reason, "SandboxDeleted") || !strcmp(reason, "PodFailed")))
        return -p->host->set_error(p->h, SBX_E_BACKEND, "SandboxClaim %s: %s", name ? name : "",
                                   reason);
    if (reason)
        snprintf(why, cap, "%s%s%s", reason, msg && *msg ? ": " : "", msg ? msg : "");
    return 0;
}

/* The pod of a claim: its Sandbox's annotation, else the Sandbox's name. */
static int claim_pod(struct kube_prov *p, json_t *claim, char pod[SBX_ID_MAX])
{
    const char *sname = json_string_value(json_object_get(
        json_object_get(json_object_get(claim, "status"), "sandbox"), "name"));
    if (!sname || !*sname || strlen(sname) >= SBX_ID_MAX)
        return p->host->set_error(p->h, SBX_E_BACKEND, "the SandboxClaim names no Sandbox");
    char *path = path_of(p, AGENTS_API, "sandboxes", sname);
    json_t *sb = NULL;
    char what[SBX_ID_MAX + 32];
    snprintf(what, sizeof what, "Sandbox %s", sname);
    int rc = path ? kube_api_persist(p, what, "GET", path, NULL, -1, NULL, &sb)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    free(path);
    if (!rc) {
        const char *pn = json_string_value(json_object_get(
            json_object_get(json_object_get(sb, "metadata"), "annotations"), A_POD));
        snprintf(pod, SBX_ID_MAX, "%s", pn && *pn && strlen(pn) < SBX_ID_MAX ? pn : sname);
    }
    json_decref(sb);
    return rc;
}

static int handle_of(struct kube_prov *p, json_t *claim, struct kube_sb **out)
{
    json_t *md = json_object_get(claim, "metadata");
    json_t *ann = json_object_get(md, "annotations");
    struct kube_sb *sb = calloc(1, sizeof *sb);
    const char *wd = json_string_value(json_object_get(ann, KUBE_A_WORKDIR));
    const char *lim = json_string_value(json_object_get(ann, KUBE_A_LIMITS));
    if (!sb || !(sb->workdir = strdup(wd && wd[0] == '/' ? wd : p->workdir))) {
        free(sb);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    snprintf(sb->id, sizeof sb->id, "%s", json_string_value(json_object_get(md, "name")));
    unsigned long long cpu = 0, fsize = 0, nofile = 0;
    if (lim && sscanf(lim, "%llu,%llu,%llu", &cpu, &fsize, &nofile) == 3) {
        sb->cpu_s = cpu;
        sb->fsize_bytes = fsize;
        sb->nofile = nofile;
    }
    sb->claim = true;
    int rc = claim_pod(p, claim, sb->pod);
    if (rc) {
        kube_sb_free(sb);
        return rc;
    }
    *out = sb;
    return SBX_OK;
}

int kube_agent_create(struct kube_prov *p, const sbx_create_spec_v1 *spec, struct kube_sb **out)
{
    *out = NULL;
    if (spec->network == SBX_NET_HOST && !p->allow_network)
        return p->host->set_error(p->h, SBX_E_PERM, "network access requested but "
                                  "providers.d/kubernetes.ini sets allow_network = false");
    int rc;
    if (spec->network == SBX_NET_NONE && (rc = kube_netpol_ensure(p)))
        return rc;
    uint64_t t0 = kube_now_ns();
    char pool[64];
    if ((rc = ensure_pool(p, spec, pool)))
        return rc;
    uint64_t ttl = spec->ttl_ns ? (spec->ttl_ns + 999999999u) / 1000000000u : p->ttl_s;
    json_t *labels = NULL, *ann = NULL;
    if ((rc = kube_sandbox_meta(p, spec, ttl, &labels, &ann)))
        return rc;
    char hex[17], name[32], shutdown[40];
    if (pc_random_hex(hex, 8)) {
        json_decref(labels);
        json_decref(ann);
        return p->host->set_error(p->h, SBX_E_IO, "create: no random bytes for the claim's name");
    }
    snprintf(name, sizeof name, "sbx-%s", hex);
    time_t end = (time_t)(kube_wall_ns() / 1000000000u + ttl);
    struct tm tm;
    gmtime_r(&end, &tm);
    strftime(shutdown, sizeof shutdown, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *claim = json_pack(
        "{s:s,s:s,s:{s:s,s:O,s:O},s:{s:{s:s},s:{s:s,s:s},s:{s:O,s:O}}}", "apiVersion",
        "extensions.agents.x-k8s.io/v1beta1", "kind", "SandboxClaim", "metadata", "name", name,
        "labels", labels, "annotations", ann, "spec", "warmPoolRef", "name", pool, "lifecycle",
        "shutdownTime", shutdown, "shutdownPolicy", "Delete", "additionalPodMetadata", "labels",
        labels, "annotations", ann);
    json_decref(labels);
    json_decref(ann);
    char *cpath = path_of(p, EXT_API, "sandboxclaims", NULL);
    json_t *made = NULL;
    char what[80];
    snprintf(what, sizeof what, "create SandboxClaim %s", name);
    rc = claim && cpath ? kube_api(p, what, "POST", cpath, claim, NULL, -1, NULL, &made)
                        : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    json_decref(claim);
    if (rc) {
        free(cpath);
        json_decref(made);
        if (kube_transient(rc))
            kube_agent_delete_name(p, name);
        return rc;
    }
    const char *rv = json_string_value(json_object_get(json_object_get(made, "metadata"),
                                                       "resourceVersion"));
    char rvbuf[64];
    snprintf(rvbuf, sizeof rvbuf, "%s", rv && strlen(rv) < sizeof rvbuf ? rv : "");
    json_decref(made);
    /* The claim as the watch saw it ready is the handle's: no GET. */
    json_t *ready = NULL;
    rc = kube_watch_until(p, cpath, "SandboxClaim", name, rvbuf, t0 + p->ready_ms * 1000000u,
                          claim_readiness, &ready);
    free(cpath);
    if (!rc)
        rc = handle_of(p, ready, out);
    json_decref(ready);
    if (rc) {
        int keep = rc;
        kube_agent_delete_name(p, name);
        return keep;
    }
    return SBX_OK;
}

int kube_agent_delete_name(struct kube_prov *p, const char *name)
{
    char what[160];
    snprintf(what, sizeof what, "delete SandboxClaim %s", name);
    return kube_api_delete_now(p, what, path_of(p, EXT_API, "sandboxclaims", name));
}

int kube_agent_destroy(struct kube_prov *p, struct kube_sb *sb)
{
    return kube_agent_delete_name(p, sb->id);
}

int kube_agent_attach(struct kube_prov *p, const char *name, struct kube_sb **out)
{
    *out = NULL;
    char *path = path_of(p, EXT_API, "sandboxclaims", name);
    json_t *claim = NULL;
    char what[SBX_ID_MAX + 32];
    snprintf(what, sizeof what, "SandboxClaim %s", name);
    int rc = path ? kube_api(p, what, "GET", path, NULL, NULL, 404, NULL, &claim)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    free(path);
    if (rc == SBX_E_NOT_FOUND)
        rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, "no SandboxClaim '%s' in namespace %s "
                                "(destroyed, expired, or never made)", name, p->namespace);
    else if (!rc && json_object_get(json_object_get(claim, "metadata"), "deletionTimestamp"))
        rc = p->host->set_error(p->h, SBX_E_NOT_FOUND, "SandboxClaim '%s' is being deleted",
                                name);
    if (!rc)
        rc = handle_of(p, claim, out);
    json_decref(claim);
    return rc;
}

int kube_agent_list(struct kube_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                    sbx_list_cb_v1 cb, void *ud)
{
    char *path = path_of(p, EXT_API, "sandboxclaims", NULL);
    if (!path)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = kube_list_objects(p, path, "list SandboxClaims", filter, n_filter, cb, ud);
    free(path);
    return rc;
}

void kube_agent_free(struct kube_prov *p)
{
    for (size_t i = 0; i < p->n_agent_ready; i++)
        free(p->agent_ready[i]);
    free(p->agent_ready);
    p->agent_ready = NULL;
    p->n_agent_ready = 0;
}
