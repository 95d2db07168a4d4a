/* plugins/docker/engine/pull.c - pulling a missing image
 *
 * POST /images/create?fromImage=REPO&tag=TAG (X-Registry-Auth when
 * registry_auth is set for the image's registry), reading the daemon's
 * progress stream: it answers 200 at once and reports a failure inside
 * the stream, so every line is parsed (engine/pullref.c).  The whole pull
 * is bounded by pull_timeout: closing the connection cancels the daemon's
 * pull, so a registry that never answers cannot hang a create.
 *
 * Several creates needing one image (a pool filling) share one pull: the
 * first starts it, the others wait for its outcome (and its message).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"

struct dk_pulling {
    struct dk_pulling *next;
    char image[512];
    int refs;          /* the puller and its waiters */
    bool done;
    int code;
    char msg[1024];
};

/* A host[:port] is what an image "HOST/x" names as its registry. */
const char *dk_check_registry_host(const char *v)
{
    struct dk_imgref r;
    char err[300], probe[300];

    snprintf(probe, sizeof probe, "%s/x", v);
    return strlen(v) > 200 || dk_imgref_parse(probe, &r, err, sizeof err) ||
                   (strcmp(r.registry, v) && strcmp(v, "docker.io"))
               ? "a registry host[:port] (e.g. registry.example.com:5000, or docker.io)"
               : NULL;
}

int dk_pull_init(struct dk_puller *pl, struct dk_engine *e, const struct dk_pull_conf *c)
{
    pl->eng = e;
    if (pthread_mutex_init(&pl->lock, NULL))
        return dk_err(e, SBX_E_NOMEM, "pthread_mutex_init failed");
    if (pthread_cond_init(&pl->cond, NULL)) {
        pthread_mutex_destroy(&pl->lock);
        return dk_err(e, SBX_E_NOMEM, "pthread_cond_init failed");
    }
    pl->sync = true;
    pl->policy = c->policy == 1 ? DK_PULL_ALWAYS : c->policy == 2 ? DK_PULL_NEVER
                                                                      : DK_PULL_MISSING;
    pl->timeout_ms = (long)(c->timeout_ns / 1000000u);
    if (c->auth_host && !(pl->auth_host = strdup(c->auth_host)))
        return dk_err(e, SBX_E_NOMEM, "out of memory");
    bool auth = c->auth;
    if (auth && !pl->auth_host)
        return dk_err(e, SBX_E_CONFIG, "providers.d/docker.ini: registry_auth is set but "
                      "registry_auth_host is not (the registry it is for)");
    if (!auth && pl->auth_host)
        return dk_err(e, SBX_E_CONFIG, "providers.d/docker.ini: registry_auth_host is set but "
                      "registry_auth (user:password) is not");
    return SBX_OK;
}

void dk_pull_fini(struct dk_puller *pl)
{
    if (pl->sync) {
        pthread_cond_destroy(&pl->cond);
        pthread_mutex_destroy(&pl->lock);
        pl->sync = false;
    }
    free(pl->auth_host);
    pl->auth_host = NULL;
}

static int on_data(void *ud, const void *buf, size_t len)
{
    dk_pullstream_feed(ud, buf, len);
    return 0;
}

/* The X-Registry-Auth line for @ref's registry, or NULL when none goes
 * there (*line NULL).  Errors are set; the value never is in one. */
static int auth_line(struct dk_puller *pl, const struct dk_imgref *ref, char **line, size_t *n,
                     char *msg, size_t msglen)
{
    *line = NULL;
    *n = 0;
    const struct dk_engine *e = pl->eng;
    if (!pl->auth_host || !dk_registry_same(pl->auth_host, ref->registry))
        return SBX_OK;
    const char *sec = NULL;
    size_t len = 0;
    int ret = e->host->secret_get(e->h, "registry_auth", &sec, &len);
    if (ret) {
        snprintf(msg, msglen, "pulling '%s': providers.d/docker.ini: registry_auth cannot be "
                 "opened ('polysandbox secret check' says why)", ref->repo);
        return ret;
    }
    ret = dk_registry_auth_header(sec, len, pl->auth_host, line, n);
    e->host->secret_release(e->h, sec);
    if (ret == SBX_E_CONFIG)
        snprintf(msg, msglen, "providers.d/docker.ini: registry_auth: the value is not "
                 "user:password (not shown)");
    else if (ret)
        snprintf(msg, msglen, "out of memory");
    return ret;
}

/* One pull; the outcome's message into @msg (no error set here). */
static int pull_once(struct dk_puller *pl, const char *image, char *msg, size_t msglen)
{
    const struct dk_engine *e = pl->eng;
    struct dk_imgref ref;
    char err[PH_ERR_MAX];
    int ret = dk_imgref_parse(image, &ref, err, sizeof err);
    if (ret) {
        snprintf(msg, msglen, "cannot pull: %s", err);
        return ret;
    }
    char *auth = NULL;
    size_t auth_n = 0;
    if ((ret = auth_line(pl, &ref, &auth, &auth_n, msg, msglen)))
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
                     .timeout_ms = pl->timeout_ms, .on_data = on_data, .ud = st,
                     .max_body = 64 * 1024};
    ph_response resp;
    e->host->log(e->h, SBX_LOG_INFO, "pulling image '%s' (registry %s%s)", image, ref.registry,
                 auth ? ", with registry_auth" : "");
    ret = ph_do(e->http, &rq, &resp, err);
    dk_pullstream_finish(st);
    long status = resp.status;
    if (ret == SBX_E_TIMEOUT) {
        snprintf(msg, msglen, "pulling image '%s' from %s: not done within pull_timeout (%ld s; "
                 "providers.d/docker.ini)%s%s", image, ref.registry, pl->timeout_ms / 1000,
                 st->status[0] ? "; last progress: " : "", st->status);
    } else if (ret) {
        snprintf(msg, msglen, "pulling image '%s' through the daemon %s: %s", image, e->socket,
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
        e->host->log(e->h, SBX_LOG_INFO, "pulled image '%s'%s%s", image,
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

int dk_pull_check(struct dk_engine *e, const char *image)
{
    struct dk_imgref ref;
    char err[PH_ERR_MAX];
    if (dk_imgref_parse(image, &ref, err, sizeof err))
        return dk_err(e, SBX_E_INVAL, "%s", err);
    return SBX_OK;
}

int dk_pull(struct dk_puller *pl, const char *image)
{
    struct dk_engine *eng = pl->eng;
    if (strlen(image) >= sizeof ((struct dk_pulling *)0)->image)
        return dk_err(eng, SBX_E_INVAL, "image '%.100s...': the name is too long", image);
    pthread_mutex_lock(&pl->lock);
    struct dk_pulling *e = pl->pulling;
    while (e && strcmp(e->image, image))
        e = e->next;
    if (e) {
        /* Another create pulls this image: its outcome is ours. */
        e->refs++;
        while (!e->done)
            pthread_cond_wait(&pl->cond, &pl->lock);
    } else {
        if (!(e = calloc(1, sizeof *e))) {
            pthread_mutex_unlock(&pl->lock);
            return dk_err(eng, SBX_E_NOMEM, "out of memory");
        }
        snprintf(e->image, sizeof e->image, "%s", image);
        e->refs = 1;
        e->next = pl->pulling;
        pl->pulling = e;
        pthread_mutex_unlock(&pl->lock);
        char msg[sizeof e->msg] = "";
        int code = pull_once(pl, image, msg, sizeof msg);
        pthread_mutex_lock(&pl->lock);
        e->code = code;
        memcpy(e->msg, msg, sizeof msg);
        e->done = true;
        /* Later creates start a pull of their own. */
        for (struct dk_pulling **pp = &pl->pulling; *pp; pp = &(*pp)->next)
            if (*pp == e) {
                *pp = e->next;
                break;
            }
        pthread_cond_broadcast(&pl->cond);
    }
    int code = e->code;
    char msg[sizeof e->msg];
    memcpy(msg, e->msg, sizeof msg);
    if (--e->refs == 0)
        free(e);
    pthread_mutex_unlock(&pl->lock);
    return code ? dk_err(eng, code, "%s", msg) : SBX_OK;
}
