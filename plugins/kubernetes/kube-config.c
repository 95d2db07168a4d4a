/* plugins/kubernetes/kube-config.c - where the cluster is, as kubectl finds it
 *
 * In this order: `server` in kubernetes.ini (with `ca_file` and the
 * `token` credential key); else a kubeconfig (`kubeconfig` in the ini, else
 * $KUBECONFIG, a colon-separated list merged as kubectl merges it, else
 * ~/.kube/config) at its current context or the ini's `context`; else the
 * in-cluster service account ($KUBERNETES_SERVICE_HOST and _PORT, the
 * token, CA and namespace files under serviceaccount_dir).  `in_cluster =
 * true` skips the kubeconfig.
 *
 * From a kubeconfig: the cluster's server, certificate-authority(-data);
 * the user's token, tokenFile, client-certificate(-data) and
 * client-key(-data), or an exec credential plugin; the context's
 * namespace.  Relative paths are relative to the kubeconfig's directory.
 * What would weaken or bypass TLS verification (insecure-skip-tls-verify,
 * tls-server-name, proxy-url) and the retired auth-provider and basic
 * authentication are refused with the file and the field.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kube-int.h"

#define MAX_FILE (4u * 1024 * 1024)

static int cerr(struct kube_prov *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cerr(struct kube_prov *p, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return p->host->set_error(p->h, code, "%s", msg);
}

/* The whole file (NUL-terminated, malloc'd) or NULL with errno set. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            if (cap >= MAX_FILE) {
                free(buf);
                buf = NULL;
                errno = EFBIG;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                free(buf);
                buf = NULL;
                errno = EIO;
            }
            break;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

/* ---- the server URL ---- */

static int parse_server(struct kube_prov *p, const char *url, const char *origin)
{
    struct kube_conn *c = &p->conn;
    const char *rest;
    if (!strncmp(url, "https://", 8)) {
        c->tls = true;
        rest = url + 8;
    } else if (!strncmp(url, "http://", 7)) {
        c->tls = false;
        rest = url + 7;
    } else {
        return cerr(p, SBX_E_CONFIG, "%s: server '%s' is not an http:// or https:// URL", origin,
                    url);
    }
    const char *slash = strchr(rest, '/');
    size_t hl = slash ? (size_t)(slash - rest) : strlen(rest);
    char hostport[300];
    if (hl == 0 || hl >= sizeof hostport)
        return cerr(p, SBX_E_CONFIG, "%s: server '%s' has no usable host", origin, url);
    memcpy(hostport, rest, hl);
    hostport[hl] = '\0';
    if (strchr(hostport, '@'))
        return cerr(p, SBX_E_CONFIG, "%s: server '%s' carries credentials in the URL; use the "
                    "kubeconfig's user instead", origin, url);
    char *port = NULL;
    char *host = hostport;
    if (host[0] == '[') {
        char *close = strchr(host, ']');
        if (!close)
            return cerr(p, SBX_E_CONFIG, "%s: server '%s': unterminated IPv6 address", origin, url);
        if (close[1] == ':')
            port = close + 2;
        else if (close[1])
            return cerr(p, SBX_E_CONFIG, "%s: server '%s': junk after the address", origin, url);
        close[1] = '\0';
    } else if ((port = strrchr(host, ':'))) {
        *port++ = '\0';
    }
    long pn = c->tls ? 443 : 80;
    if (port) {
        char *end;
        errno = 0;
        pn = strtol(port, &end, 10);
        if (errno || *end || pn < 1 || pn > 65535)
            return cerr(p, SBX_E_CONFIG, "%s: server '%s': bad port", origin, url);
    }
    c->port = (int)pn;
    /* libwebsockets wants the bare address of an IPv6 host. */
    if (host[0] == '[') {
        host++;
        host[strlen(host) - 1] = '\0';
    }
    free(c->host);
    free(c->server);
    free(c->path_prefix);
    c->host = strdup(host);
    c->server = strdup(url);
    c->path_prefix = strdup(slash ? slash : "");
    if (!c->host || !c->server || !c->path_prefix)
        return cerr(p, SBX_E_NOMEM, "out of memory");
    size_t pl = strlen(c->path_prefix), sl = strlen(c->server);
    while (pl > 0 && c->path_prefix[pl - 1] == '/')
        c->path_prefix[--pl] = '\0';
    while (sl > 0 && c->server[sl - 1] == '/')
        c->server[--sl] = '\0';
    return SBX_OK;
}

/* ---- kubeconfig ---- */

/* @name's entry of the named list @list ("clusters") across the merged
 * files: the first one wins, as in kubectl. */
static json_t *named(json_t *const *docs, size_t n, const char *list, const char *name,
                     const char *field, size_t *which)
{
    for (size_t i = 0; i < n; i++) {
        json_t *arr = json_object_get(docs[i], list);
        size_t k;
        json_t *e;
        json_array_foreach(arr, k, e) {
            const char *nm = json_string_value(json_object_get(e, "name"));
            if (nm && !strcmp(nm, name)) {
                json_t *v = json_object_get(e, field);
                if (json_is_object(v)) {
                    *which = i;
                    return v;
                }
            }
        }
    }
    return NULL;
}

/* A path in a kubeconfig: relative to the file's directory. */
static char *resolve(const char *dir, const char *path)
{
    char *out = NULL;
    if (!path)
        return NULL;
    if (path[0] == '/' || !dir)
        return strdup(path);
    if (asprintf(&out, "%s/%s", dir, path) < 0)
        return NULL;
    return out;
}

/* A PEM from a *-data field (base64) or a file field. */
static int pem_field(struct kube_prov *p, json_t *obj, const char *data_key, const char *file_key,
                     const char *dir, const char *where, char **pem, char **file)
{
    const char *data = json_string_value(json_object_get(obj, data_key));
    const char *path = json_string_value(json_object_get(obj, file_key));
    if (data && *data) {
        size_t n = 0;
        unsigned char *raw = pc_b64_decode(data, &n);
        if (!raw)
            return cerr(p, SBX_E_CONFIG, "%s: %s is not base64", where, data_key);
        char *s = malloc(n + 1);
        if (!s) {
            explicit_bzero(raw, n);
            free(raw);
            return cerr(p, SBX_E_NOMEM, "out of memory");
        }
        memcpy(s, raw, n);
        s[n] = '\0';
        explicit_bzero(raw, n);
        free(raw);
        if (!strstr(s, "-----BEGIN ")) {
            explicit_bzero(s, n);
            free(s);
            return cerr(p, SBX_E_CONFIG, "%s: %s does not hold PEM", where, data_key);
        }
        *pem = s;
        return SBX_OK;
    }
    if (path && *path) {
        char *full = resolve(dir, path);
        if (!full)
            return cerr(p, SBX_E_NOMEM, "out of memory");
        if (file) {
            struct stat st;
            if (stat(full, &st) != 0) {
                int e = errno;
                cerr(p, SBX_E_CONFIG, "%s: %s '%s': %s", where, file_key, full, strerror(e));
                free(full);
                return SBX_E_CONFIG;
            }
            *file = full;
            return SBX_OK;
        }
        size_t n = 0;
        char *s = slurp(full, &n);
        if (!s) {
            int e = errno;
            cerr(p, SBX_E_CONFIG, "%s: %s '%s': %s", where, file_key, full, strerror(e));
            free(full);
            return SBX_E_CONFIG;
        }
        free(full);
        *pem = s;
    }
    return SBX_OK;
}

static char **strv_from(json_t *arr, const char *first)
{
    size_t n = json_array_size(arr);
    char **v = calloc(n + 2, sizeof *v);
    size_t k = 0;
    if (!v)
        return NULL;
    if (first && !(v[k++] = strdup(first)))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (!s || !(v[k++] = strdup(s)))
            goto fail;
    }
    return v;
fail:
    for (size_t i = 0; i < k; i++)
        free(v[i]);
    free(v);
    return NULL;
}

static int exec_plugin(struct kube_prov *p, json_t *ex, json_t *cluster, const char *dir,
                       const char *where)
{
    const char *cmd = json_string_value(json_object_get(ex, "command"));
    const char *api = json_string_value(json_object_get(ex, "apiVersion"));
    if (!cmd || !*cmd)
        return cerr(p, SBX_E_CONFIG, "%s: exec.command is missing", where);
    if (!api || (strcmp(api, "client.authentication.k8s.io/v1") &&
                 strcmp(api, "client.authentication.k8s.io/v1beta1")))
        return cerr(p, SBX_E_CONFIG, "%s: exec.apiVersion '%s' is not "
                    "client.authentication.k8s.io/v1 or v1beta1", where, api ? api : "(none)");
    json_t *args = json_object_get(ex, "args");
    if (args && !json_is_array(args))
        return cerr(p, SBX_E_CONFIG, "%s: exec.args is not a list", where);
    struct kube_execcred *e = calloc(1, sizeof *e);
    if (!e)
        return cerr(p, SBX_E_NOMEM, "out of memory");
    pthread_mutex_init(&e->lock, NULL);
    p->conn.exec = e;
    /* A command with a slash is relative to the kubeconfig, as in client-go. */
    char *full = strchr(cmd, '/') ? resolve(dir, cmd) : strdup(cmd);
    e->argv = full ? strv_from(args, full) : NULL;
    free(full);
    e->api_version = strdup(api);
    e->dir = dir ? strdup(dir) : NULL;
    json_t *env = json_object_get(ex, "env");
    size_t n = json_array_size(env);
    e->env = calloc(n + 1, sizeof *e->env);
    if (!e->argv || !e->api_version || !e->env || (dir && !e->dir))
        return cerr(p, SBX_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_array_get(env, i);
        const char *k = json_string_value(json_object_get(it, "name"));
        const char *v = json_string_value(json_object_get(it, "value"));
        if (!k || !*k || strchr(k, '=') || !v)
            return cerr(p, SBX_E_CONFIG, "%s: exec.env[%zu] needs a name and a value", where, i);
        if (asprintf(&e->env[i], "%s=%s", k, v) < 0) {
            e->env[i] = NULL;
            return cerr(p, SBX_E_NOMEM, "out of memory");
        }
    }
    json_t *pci = json_object_get(ex, "provideClusterInfo");
    if (json_is_true(pci) || (json_is_string(pci) && !strcmp(json_string_value(pci), "true"))) {
        json_t *ci = json_pack("{s:s*,s:s*}", "server", json_string_value(json_object_get(cluster, "server")),
                               "certificate-authority-data",
                               json_string_value(json_object_get(cluster, "certificate-authority-data")));
        e->cluster_info = ci ? json_dumps(ci, JSON_COMPACT) : NULL;
        json_decref(ci);
    }
    p->conn.auth = KUBE_AUTH_EXEC;
    return SBX_OK;
}

static int from_kubeconfig(struct kube_prov *p, const char *paths)
{
    json_t *docs[16];
    char *dirs[16];
    char *files[16];
    size_t n = 0;
    int rc = SBX_OK;
    char *list = strdup(paths);
    if (!list)
        return cerr(p, SBX_E_NOMEM, "out of memory");
    for (char *save = NULL, *f = strtok_r(list, ":", &save); f && n < 16;
         f = strtok_r(NULL, ":", &save)) {
        size_t len = 0;
        char *text = slurp(f, &len);
        if (!text) {
            if (errno == ENOENT && strchr(paths, ':'))
                continue;    /* kubectl skips missing files of a list */
            int e = errno;
            rc = cerr(p, SBX_E_CONFIG, "kubeconfig '%s': %s", f, strerror(e));
            break;
        }
        char yerr[256];
        json_t *doc = kube_yaml_load(text, len, yerr, sizeof yerr);
        explicit_bzero(text, len);
        free(text);
        if (!doc || !json_is_object(doc)) {
            json_decref(doc);
            rc = cerr(p, SBX_E_CONFIG, "kubeconfig '%s' is not a YAML mapping: %s", f,
                      yerr[0] ? yerr : "not a mapping");
            break;
        }
        char *slash = strrchr(f, '/');
        dirs[n] = slash ? strndup(f, (size_t)(slash - f)) : strdup(".");
        files[n] = strdup(f);
        docs[n++] = doc;
    }
    free(list);
    if (rc == SBX_OK && n == 0)
        rc = cerr(p, SBX_E_CONFIG, "no kubeconfig found in '%s'", paths);
    const char *ctxname = p->where.context;
    for (size_t i = 0; rc == SBX_OK && !ctxname && i < n; i++) {
        const char *cc = json_string_value(json_object_get(docs[i], "current-context"));
        if (cc && *cc)
            ctxname = cc;
    }
    if (rc == SBX_OK && !ctxname)
        rc = cerr(p, SBX_E_CONFIG, "kubeconfig '%s' has no current-context (set context = "
                  "NAME in providers.d/kubernetes.ini)", paths);
    size_t wc = 0, wl = 0, wu = 0;
    json_t *ctx = NULL, *cluster = NULL, *user = NULL;
    char where[600];
    if (rc == SBX_OK && !(ctx = named(docs, n, "contexts", ctxname, "context", &wc)))
        rc = cerr(p, SBX_E_CONFIG, "kubeconfig '%s': no context '%s'", paths, ctxname);
    const char *cname = ctx ? json_string_value(json_object_get(ctx, "cluster")) : NULL;
    const char *uname = ctx ? json_string_value(json_object_get(ctx, "user")) : NULL;
    if (rc == SBX_OK && (!cname || !(cluster = named(docs, n, "clusters", cname, "cluster", &wl))))
        rc = cerr(p, SBX_E_CONFIG, "kubeconfig '%s': context '%s' names no known cluster ('%s')",
                  files[wc], ctxname, cname ? cname : "");
    if (rc == SBX_OK && uname && *uname && !(user = named(docs, n, "users", uname, "user", &wu)))
        rc = cerr(p, SBX_E_CONFIG, "kubeconfig '%s': context '%s' names no known user ('%s')",
                  files[wc], ctxname, uname);
    if (rc == SBX_OK) {
        snprintf(where, sizeof where, "kubeconfig '%s', cluster '%s'", files[wl], cname);
        const char *server = json_string_value(json_object_get(cluster, "server"));
        json_t *insecure = json_object_get(cluster, "insecure-skip-tls-verify");
        if (json_is_true(insecure) ||
            (json_is_string(insecure) && !strcmp(json_string_value(insecure), "true")))
            rc = cerr(p, SBX_E_CONFIG, "%s: insecure-skip-tls-verify is set; the kubernetes "
                      "provider always verifies TLS (give certificate-authority or "
                      "certificate-authority-data)", where);
        else if (json_object_get(cluster, "tls-server-name") || json_object_get(cluster, "proxy-url"))
            rc = cerr(p, SBX_E_CONFIG, "%s: tls-server-name and proxy-url are not supported",
                      where);
        else if (!server)
            rc = cerr(p, SBX_E_CONFIG, "%s: no server", where);
        else
            rc = parse_server(p, server, where);
        if (rc == SBX_OK)
            rc = pem_field(p, cluster, "certificate-authority-data", "certificate-authority",
                           dirs[wl], where, &p->conn.ca_pem, &p->conn.ca_file);
    }
    if (rc == SBX_OK && user) {
        snprintf(where, sizeof where, "kubeconfig '%s', user '%s'", files[wu], uname);
        const char *tok = json_string_value(json_object_get(user, "token"));
        const char *tokf = json_string_value(json_object_get(user, "tokenFile"));
        json_t *ex = json_object_get(user, "exec");
        if (json_object_get(user, "auth-provider"))
            rc = cerr(p, SBX_E_CONFIG, "%s: auth-provider plugins were removed from Kubernetes; "
                      "use an exec credential plugin", where);
        else if (json_object_get(user, "username") || json_object_get(user, "password"))
            rc = cerr(p, SBX_E_CONFIG, "%s: basic authentication is not supported", where);
        if (rc == SBX_OK)
            rc = pem_field(p, user, "client-certificate-data", "client-certificate", dirs[wu],
                           where, &p->conn.cert_pem, NULL);
        if (rc == SBX_OK)
            rc = pem_field(p, user, "client-key-data", "client-key", dirs[wu], where,
                           &p->conn.key_pem, NULL);
        if (rc == SBX_OK && (!p->conn.cert_pem) != (!p->conn.key_pem))
            rc = cerr(p, SBX_E_CONFIG, "%s: a client certificate needs its key and a key its "
                      "certificate", where);
        if (rc == SBX_OK && tok && *tok) {
            p->conn.auth = KUBE_AUTH_TOKEN;
            if (!(p->conn.token = strdup(tok)))
                rc = cerr(p, SBX_E_NOMEM, "out of memory");
        } else if (rc == SBX_OK && tokf && *tokf) {
            p->conn.auth = KUBE_AUTH_TOKEN_FILE;
            if (!(p->conn.token_file = resolve(dirs[wu], tokf)))
                rc = cerr(p, SBX_E_NOMEM, "out of memory");
        } else if (rc == SBX_OK && json_is_object(ex)) {
            rc = exec_plugin(p, ex, cluster, dirs[wu], where);
        }
    }
    if (rc == SBX_OK) {
        const char *ns = json_string_value(json_object_get(ctx, "namespace"));
        if (ns && *ns && !(p->conn.namespace = strdup(ns)))
            rc = cerr(p, SBX_E_NOMEM, "out of memory");
        char buf[700];
        snprintf(buf, sizeof buf, "kubeconfig %s, context %s", files[wc], ctxname);
        if (rc == SBX_OK && !(p->conn.origin = strdup(buf)))
            rc = cerr(p, SBX_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        json_decref(docs[i]);
        free(dirs[i]);
        free(files[i]);
    }
    return rc;
}

/* ---- in-cluster ---- */

static int from_cluster(struct kube_prov *p)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = p->where.serviceaccount_dir;
    if (!dir)
        dir = KUBE_SA_DIR;
    if (!host || !*host || !port || !*port)
        return cerr(p, SBX_E_CONFIG, "in-cluster configuration: KUBERNETES_SERVICE_HOST and "
                    "KUBERNETES_SERVICE_PORT are not set (not running in a pod?)");
    char url[400];
    snprintf(url, sizeof url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    int rc = parse_server(p, url, "in-cluster configuration");
    if (rc)
        return rc;
    if (asprintf(&p->conn.ca_file, "%s/ca.crt", dir) < 0 ||
        asprintf(&p->conn.token_file, "%s/token", dir) < 0) {
        p->conn.ca_file = p->conn.token_file = NULL;
        return cerr(p, SBX_E_NOMEM, "out of memory");
    }
    struct stat st;
    if (stat(p->conn.token_file, &st) != 0) {
        int e = errno;
        return cerr(p, SBX_E_CONFIG, "in-cluster configuration: %s: %s", p->conn.token_file,
                    strerror(e));
    }
    p->conn.auth = KUBE_AUTH_TOKEN_FILE;
    char *nsf = NULL;
    if (asprintf(&nsf, "%s/namespace", dir) < 0)
        return cerr(p, SBX_E_NOMEM, "out of memory");
    char *ns = slurp(nsf, NULL);
    free(nsf);
    if (ns) {
        ns[strcspn(ns, "\r\n")] = '\0';
        if (*ns)
            p->conn.namespace = ns;
        else
            free(ns);
    }
    char buf[500];
    snprintf(buf, sizeof buf, "in-cluster service account (%s)", dir);
    if (!(p->conn.origin = strdup(buf)))
        return cerr(p, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

/* ---- the ini's own server ---- */

static int from_settings(struct kube_prov *p, const char *server)
{
    int rc = parse_server(p, server, "providers.d/kubernetes.ini: server");
    if (rc)
        return rc;
    const char *ca = p->where.ca_file;
    if (ca && !(p->conn.ca_file = strdup(ca)))
        return cerr(p, SBX_E_NOMEM, "out of memory");
    const char *tok = NULL;
    size_t len = 0;
    rc = p->host->secret_get(p->h, "token", &tok, &len);
    if (rc == SBX_OK) {
        p->host->secret_release(p->h, tok);
        p->conn.auth = KUBE_AUTH_SECRET;
    } else if (rc != SBX_E_NOT_FOUND) {
        return rc;    /* the core named the reference that failed */
    }
    char buf[500];
    snprintf(buf, sizeof buf, "providers.d/kubernetes.ini server %s", server);
    if (!(p->conn.origin = strdup(buf)))
        return cerr(p, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

int kube_conn_load(struct kube_prov *p)
{
    const char *server = p->where.server;
    int ic = p->where.in_cluster;
    bool in_cluster = ic != KUBE_IC_AUTO && ic < KUBE_IC_FALSE;
    if (server)
        return from_settings(p, server);
    if (in_cluster)
        return from_cluster(p);
    const char *kc = p->where.kubeconfig;
    char *home_kc = NULL;
    if (!kc)
        kc = getenv("KUBECONFIG");
    if (!kc || !*kc) {
        const char *home = getenv("HOME");
        if (home && asprintf(&home_kc, "%s/.kube/config", home) < 0)
            home_kc = NULL;
        struct stat st;
        if (!home_kc || stat(home_kc, &st) != 0) {
            free(home_kc);
            /* No kubeconfig: in a pod, the service account. */
            if (getenv("KUBERNETES_SERVICE_HOST") && ic < KUBE_IC_FALSE)
                return from_cluster(p);
            return cerr(p, SBX_E_CONFIG, "no cluster configured: set kubeconfig or server in "
                        "providers.d/kubernetes.ini, or KUBECONFIG, or run in a pod");
        }
        kc = home_kc;
    }
    int rc = from_kubeconfig(p, kc);
    free(home_kc);
    if (rc == SBX_OK && p->where.have_token) {
        /* A sealed token in the ini wins over the kubeconfig's user. */
        p->conn.auth = KUBE_AUTH_SECRET;
    }
    return rc;
}

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void kube_conn_free(struct kube_conn *c)
{
    free(c->server);
    free(c->host);
    free(c->path_prefix);
    free(c->ca_pem);
    free(c->ca_file);
    free(c->cert_pem);
    wipe_free(c->key_pem);
    free(c->namespace);
    wipe_free(c->token);
    free(c->token_file);
    free(c->origin);
    if (c->exec) {
        for (char **a = c->exec->argv; a && *a; a++)
            free(*a);
        free(c->exec->argv);
        for (char **a = c->exec->env; a && *a; a++)
            free(*a);
        free(c->exec->env);
        free(c->exec->api_version);
        free(c->exec->cluster_info);
        free(c->exec->dir);
        wipe_free(c->exec->token);
        pthread_mutex_destroy(&c->exec->lock);
        free(c->exec);
    }
    memset(c, 0, sizeof *c);
}
