/* plugins/docker/docker-pull.c - pulling a missing image
 *
 * POST /images/create?fromImage=REPO&tag=TAG (X-Registry-Auth when
 * registry_auth is set for the image's registry), reading the daemon's
 * progress stream: it answers 200 at once and reports a failure inside
 * the stream, so every line is parsed (docker-pullref.c).  The whole pull
 * is bounded by pull_timeout: closing the connection cancels the daemon's
 * pull, so a registry that never answers cannot hang a create.
 *
 * Several creates needing one image (a pool filling) share one pull: the
 * first starts it, the others wait for its outcome (and its message).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker-int.h"
#include "settings.h"

#define PULL_TIMEOUT_DEFAULT_MS (300L * 1000)
#define PULL_TIMEOUT_MAX_MS (24L * 3600 * 1000)

struct dk_pulling {
    struct dk_pulling *next;
    char image[512];
    int refs;          /* the puller and its waiters */
    bool done;
    int code;
    char msg[1024];
};

static const char *setting(struct dk_prov *p, const char *key)
{
    return pc_setting(p->host, p->h, key);
}

/* "N" seconds, or N with s, m or h. */
static bool parse_timeout(const char *v, long *ms)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || n <= 0)
        return false;
    long long unit = 1000;
    if (!strcmp(end, "m"))
        unit = 60000;
    else if (!strcmp(end, "h"))
        unit = 3600000;
    else if (*end && strcmp(end, "s"))
        return false;
    if (n > PULL_TIMEOUT_MAX_MS / unit)
        return false;
    *ms = (long)(n * unit);
    return true;
}

int dk_pull_init(struct dk_prov *p)
{
    if (pthread_mutex_init(&p->pull_lock, NULL))
        return dk_err(p, SBX_E_NOMEM, "pthread_mutex_init failed");
    if (pthread_cond_init(&p->pull_cond, NULL)) {
        pthread_mutex_destroy(&p->pull_lock);
        return dk_err(p, SBX_E_NOMEM, "pthread_cond_init failed");
    }
    p->pull_sync = true;
    const char *v = setting(p, "pull");
    if (!v || !strcmp(v, "missing"))
        p->pull_policy = DK_PULL_MISSING;
    else if (!strcmp(v, "always"))
        p->pull_policy = DK_PULL_ALWAYS;
    else if (!strcmp(v, "never"))
        p->pull_policy = DK_PULL_NEVER;
    else
        return dk_err(p, SBX_E_CONFIG, "providers.d/docker.ini: pull = '%s': use missing, "
                      "always or never", v);
    p->pull_timeout_ms = PULL_TIMEOUT_DEFAULT_MS;
    if ((v = setting(p, "pull_timeout")) && !parse_timeout(v, &p->pull_timeout_ms))
        return dk_err(p, SBX_E_CONFIG, "providers.d/docker.ini: pull_timeout = '%s': a time "
                      "from 1s to 24h (seconds, or with s, m or h)", v);
    v = setting(p, "registry_auth_host");
    if (v) {
        struct dk_imgref r;
        char err[300];
        /* A host[:port] is what an image "HOST/x" names as its registry. */
        char probe[300];
        snprintf(probe, sizeof probe, "%s/x", v);
        if (strlen(v) > 200 || dk_imgref_parse(probe, &r, err, sizeof err) ||
            (strcmp(r.registry, v) && strcmp(v, "docker.io")))
            return dk_err(p, SBX_E_CONFIG, "providers.d/docker.ini: registry_auth_host = '%s': "
                          "a registry host[:port] (e.g. registry.example.com:5000, or docker.io)",
                          v);
        if (!(p->auth_host = strdup(v)))
            return dk_err(p, SBX_E_NOMEM, "out of memory");
    }
    /* Only whether it is set: the value is opened for each pull, so
     * loading the provider never needs the secret key. */
    bool auth = setting(p, "registry_auth") != NULL;
    if (auth && !p->auth_host)
        return dk_err(p, SBX_E_CONFIG, "providers.d/docker.ini: registry_auth is set but "
                      "registry_auth_host is not (the registry it is for)");
    if (!auth && p->auth_host)
        return dk_err(p, SBX_E_CONFIG, "providers.d/docker.ini: registry_auth_host is set but "
                      "registry_auth (user:password) is not");
    return SBX_OK;
}

void dk_pull_fini(struct dk_prov *p)
{
    if (p->pull_sync) {
        pthread_cond_destroy(&p->pull_cond);
        pthread_mutex_destroy(&p->pull_lock);
        p->pull_sync = false;
    }
    free(p->auth_host);
    p->auth_host = NULL;
}

static int on_data(void *ud, const void *buf, size_t len)
{
    dk_pullstream_feed(ud, buf, len);
    return 0;
}

/* The X-Registry-Auth line for @ref's registry, or NULL when none goes
 * there (*line NULL).  Errors are set; the value never is in one. */
static int auth_line(struct dk_prov *p, const struct dk_imgref *ref, char **line, size_t *n,
                     char *msg, size_t msglen)
{
    *line = NULL;
    *n = 0;
    if (!p->auth_host || !dk_registry_same(p->auth_host, ref->registry))
        return SBX_OK;
    const char *sec = NULL;
    size_t len = 0;
    int ret = p->host->secret_get(p->h, "registry_auth", &sec, &len);
    if (ret) {
        snprintf(msg, msglen, "pulling '%s': providers.d/docker.ini: registry_auth cannot be "
                 "opened ('polysandbox secret check' says why)", ref->repo);
        return ret;
    }
    ret = dk_registry_auth_header(sec, len, p->auth_host, line, n);
    p->host->secret_release(p->h, sec);
    if (ret == SBX_E_CONFIG)
        snprintf(msg, msglen, "providers.d/docker.ini: registry_auth: the value is not "
                 "user:password (not shown)");
    else if (ret)
        snprintf(msg, msglen, "out of memory");
    return ret;
}

/* One pull; the outcome's message into @msg (no error set here). */
static int pull_once(struct dk_prov *p, const char *image, char *msg, size_t msglen)
{
    struct dk_imgref ref;
    char err[PH_ERR_MAX];
    int ret = dk_imgref_parse(image, &ref, err, sizeof err);
    if (ret) {
        snprintf(msg, msglen, "cannot pull: %s", err);
        return ret;
    }
    char *auth = NULL;
    size_t auth_n = 0;
    if ((ret = auth_line(p, &ref, &auth, &auth_n, msg, msglen)))
        return ret;
    char *repo = ph_escape(ref.repo), *tag = ph_escape(ref.tag), *path = NULL;
    struct dk_pullstream *st = malloc(sizeof *st);
    if (!repo || !tag || !st ||
        asprintf(&path, DK_API "/images/create?fromImage=%s&tag=%s", repo, tag) < 0) {
        path = NULL;
        ret = SBX_E_NOMEM;
        snprintf(msg, msglen, "out of memory");
        goto out;
    }
    dk_pullstream_init(st);
    const char *headers[] = {auth, NULL};
    ph_request rq = {.method = "POST", .path = path, .headers = auth ? headers : NULL,
                     .timeout_ms = p->pull_timeout_ms, .on_data = on_data, .ud = st,
                     .max_body = 64 * 1024};
    ph_response resp;
    p->host->log(p->h, SBX_LOG_INFO, "pulling image '%s' (registry %s%s)", image, ref.registry,
                 auth ? ", with registry_auth" : "");
    ret = ph_do(p->http, &rq, &resp, err);
    dk_pullstream_finish(st);
    long status = resp.status;
    if (ret == SBX_E_TIMEOUT) {
        snprintf(msg, msglen, "pulling image '%s' from %s: not done within pull_timeout (%ld s; "
                 "providers.d/docker.ini)%s%s", image, ref.registry, p->pull_timeout_ms / 1000,
                 st->status[0] ? "; last progress: " : "", st->status);
    } else if (ret) {
        snprintf(msg, msglen, "pulling image '%s' through the daemon %s: %s", image, p->socket,
                 err);
    } else if (status < 200 || status >= 300) {
        /* The daemon refused before streaming: its message is the body's. */
        json_t *j = resp.body_len ? json_loadb(resp.body, resp.body_len, 0, NULL) : NULL;
        const char *m = json_string_value(json_object_get(j, "message"));
        char clean[512];
        snprintf(clean, sizeof clean, "%s", m ? m : resp.body ? resp.body : "");
        for (char *c = clean; *c; c++)
            if (*c < 0x20 || *c >= 0x7f)
                *c = ' ';
        ret = dk_pull_classify(clean, status);
        snprintf(msg, msglen, "pulling image '%s' from %s: HTTP %ld: %s", image, ref.registry,
                 status, clean[0] ? clean : "(no message)");
        json_decref(j);
    } else if (st->error[0]) {
        ret = dk_pull_classify(st->error, 200);
        snprintf(msg, msglen, "pulling image '%s' from %s: %s", image, ref.registry, st->error);
    } else {
        p->host->log(p->h, SBX_LOG_INFO, "pulled image '%s'%s%s", image,
                     st->status[0] ? ": " : "", st->status);
    }
    ph_response_clear(&resp);
out:
    if (auth) {
        explicit_bzero(auth, auth_n);
        free(auth);
    }
    free(repo);
    free(tag);
    free(path);
    free(st);
    return ret;
}

int dk_pull_check(struct dk_prov *p, const char *image)
{
    struct dk_imgref ref;
    char err[PH_ERR_MAX];
    if (dk_imgref_parse(image, &ref, err, sizeof err))
        return dk_err(p, SBX_E_INVAL, "%s", err);
    return SBX_OK;
}

int dk_pull(struct dk_prov *p, const char *image)
{
    if (strlen(image) >= sizeof ((struct dk_pulling *)0)->image)
        return dk_err(p, SBX_E_INVAL, "image '%.100s...': the name is too long", image);
    pthread_mutex_lock(&p->pull_lock);
    struct dk_pulling *e = p->pulling;
    while (e && strcmp(e->image, image))
        e = e->next;
    if (e) {
        /* Another create pulls this image: its outcome is ours. */
        e->refs++;
        while (!e->done)
            pthread_cond_wait(&p->pull_cond, &p->pull_lock);
    } else {
        if (!(e = calloc(1, sizeof *e))) {
            pthread_mutex_unlock(&p->pull_lock);
            return dk_err(p, SBX_E_NOMEM, "out of memory");
        }
        snprintf(e->image, sizeof e->image, "%s", image);
        e->refs = 1;
        e->next = p->pulling;
        p->pulling = e;
        pthread_mutex_unlock(&p->pull_lock);
        char msg[sizeof e->msg] = "";
        int code = pull_once(p, image, msg, sizeof msg);
        pthread_mutex_lock(&p->pull_lock);
        e->code = code;
        memcpy(e->msg, msg, sizeof msg);
        e->done = true;
        /* Later creates start a pull of their own. */
        for (struct dk_pulling **pp = &p->pulling; *pp; pp = &(*pp)->next)
            if (*pp == e) {
                *pp = e->next;
                break;
            }
        pthread_cond_broadcast(&p->pull_cond);
    }
    int code = e->code;
    char msg[sizeof e->msg];
    memcpy(msg, e->msg, sizeof msg);
    if (--e->refs == 0)
        free(e);
    pthread_mutex_unlock(&p->pull_lock);
    return code ? dk_err(p, code, "%s", msg) : SBX_OK;
}
