/* plugins/kubernetes/kube-watch.c - waiting for an object to be ready, by a watch
 *
 * GET COLLECTION?watch=1&fieldSelector=metadata.name=NAME&resourceVersion=RV
 * answers a chunked stream of newline-delimited WatchEvents.  Each event's
 * object is judged (a pod by kube_pod_readiness, a SandboxClaim by
 * kube-agent.c's judge); BOOKMARKs move the resourceVersion on; an ERROR
 * event with 410 Gone (the version fell out of the server's window), a
 * stream that ended or broke, start again: from a fresh GET of the object
 * after a 410, from the last version seen otherwise.  No polling.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube-int.h"

#define MAX_LINE (4u * 1024 * 1024)
#define WATCH_MAX_S 60

/* Container waiting reasons after which a pod will not run. */
static const struct {
    const char *reason;
    int code;
    const char *what;
} fatal[] = {
    {"ErrImagePull", SBX_E_NOT_FOUND, "its image cannot be pulled"},
    {"ImagePullBackOff", SBX_E_NOT_FOUND, "its image cannot be pulled"},
    {"ErrImageNeverPull", SBX_E_NOT_FOUND, "its image is not on the node"},
    {"InvalidImageName", SBX_E_INVAL, "its image name is not valid"},
    {"CreateContainerConfigError", SBX_E_CONFIG, "its container cannot be configured"},
    {"CreateContainerError", SBX_E_BACKEND, "its container cannot be created"},
    {"RunContainerError", SBX_E_BACKEND, "its container cannot be run"},
    {"StartError", SBX_E_BACKEND, "its container cannot be started"},
    {"CrashLoopBackOff", SBX_E_BACKEND, "its container keeps exiting"},
};

static json_t *sandbox_status(json_t *pod)
{
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "containerStatuses"), i,
                       cs) {
        const char *n = json_string_value(json_object_get(cs, "name"));
        if (n && !strcmp(n, KUBE_CONTAINER))
            return cs;
    }
    return NULL;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

int kube_pod_readiness(struct kube_prov *p, json_t *pod, char *unsched, size_t cap)
{
    json_t *md = json_object_get(pod, "metadata");
    json_t *st = json_object_get(pod, "status");
    const char *name = str(md, "name");
    const char *phase = str(st, "phase");
    json_t *cs = sandbox_status(pod);
    json_t *state = json_object_get(cs, "state");
    if (json_object_get(md, "deletionTimestamp") && !json_is_null(json_object_get(md, "deletionTimestamp")))
        return -p->host->set_error(p->h, SBX_E_BACKEND, "pod %s was deleted while it started",
                                   name);
    if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded")) {
        json_t *term = json_object_get(state, "terminated");
        return -p->host->set_error(p->h, SBX_E_BACKEND, "pod %s ended before it ran (%s%s%s%s%s)",
                                   name, phase, str(st, "reason")[0] ? ": " : "",
                                   str(st, "reason"), term ? ": " : "",
                                   term ? str(term, "message")[0] ? str(term, "message")
                                                                   : str(term, "reason") : "");
    }
    json_t *waiting = json_object_get(state, "waiting");
    if (waiting) {
        const char *reason = str(waiting, "reason");
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
            if (!strcmp(reason, fatal[i].reason))
                return -p->host->set_error(p->h, fatal[i].code, "pod %s will not run: %s (%s: "
                                           "%.300s)", name, fatal[i].what, reason,
                                           str(waiting, "message"));
    }
    if (!strcmp(phase, "Running") && json_object_get(state, "running"))
        return 1;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c) {
        if (!strcmp(str(c, "type"), "PodScheduled") && !strcmp(str(c, "status"), "False"))
            snprintf(unsched, cap, "%s: %s", str(c, "reason"), str(c, "message"));
    }
    return 0;
}

struct watch {
    struct kube_prov *p;
    const char *collection;    /* ".../pods" */
    const char *noun;          /* "pod", for messages */
    kube_judge judge;
    const char *name;
    char *buf;
    size_t len, cap;
    char rv[64];
    char unsched[512];
    int verdict;           /* 0 undecided, 1 ready, < 0 minus an error */
    bool gone;             /* 410: start from a fresh GET */
    bool deleted;
    size_t got;            /* bytes of this round's stream */
    json_t *ready;         /* the object judged ready (a reference), or NULL */
};

static void take_event(struct watch *w, json_t *ev)
{
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    if (!type || !json_is_object(obj))
        return;
    const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                       "resourceVersion"));
    if (!strcmp(type, "ERROR")) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        if (code == 410) {
            w->gone = true;
            return;
        }
        const char *msg = json_string_value(json_object_get(obj, "message"));
        w->verdict = -w->p->host->set_error(w->p->h, code >= 500 ? SBX_E_SERVER : SBX_E_BACKEND,
                                            "watching %s %s: %s", w->noun, w->name,
                                            msg ? msg : "error");
        return;
    }
    if (rv && strlen(rv) < sizeof w->rv)
        snprintf(w->rv, sizeof w->rv, "%s", rv);
    if (!strcmp(type, "BOOKMARK"))
        return;
    if (!strcmp(type, "DELETED")) {
        w->deleted = true;
        w->verdict = -w->p->host->set_error(w->p->h, SBX_E_BACKEND, "%s %s was deleted while "
                                            "it started", w->noun, w->name);
        return;
    }
    int r = w->judge(w->p, obj, w->unsched, sizeof w->unsched);
    if (r != 0)
        w->verdict = r;
    if (r > 0)
        w->ready = json_incref(obj);
}

static int on_data(void *ud, const void *data, size_t n)
{
    struct watch *w = ud;
    w->got += n;
    if (w->len + n + 1 > w->cap) {
        size_t nc = w->cap ? w->cap : 16384;
        while (nc < w->len + n + 1)
            nc *= 2;
        if (nc > MAX_LINE + 1)
            return SBX_E_LIMIT;
        char *nb = realloc(w->buf, nc);
        if (!nb)
            return SBX_E_NOMEM;
        w->buf = nb;
        w->cap = nc;
    }
    memcpy(w->buf + w->len, data, n);
    w->len += n;
    char *start = w->buf, *nl;
    while ((nl = memchr(start, '\n', w->len - (size_t)(start - w->buf)))) {
        json_t *ev = json_loadb(start, (size_t)(nl - start), 0, NULL);
        if (ev)
            take_event(w, ev);
        json_decref(ev);
        start = nl + 1;
        if (w->verdict || w->gone)
            return KUBE_STOP;
    }
    w->len -= (size_t)(start - w->buf);
    memmove(w->buf, start, w->len);
    return 0;
}

/* GET the pod: judge it and take its resourceVersion. */
static int fresh(struct watch *w)
{
    char path[512];
    json_t *pod = NULL;
    snprintf(path, sizeof path, "%s/%s", w->collection, w->name);
    char what[300];
    snprintf(what, sizeof what, "%s %s", w->noun, w->name);
    int rc = kube_api_persist(w->p, what, "GET", path, NULL, 404, NULL, &pod);
    if (rc == SBX_E_NOT_FOUND) {
        json_decref(pod);
        return w->p->host->set_error(w->p->h, SBX_E_BACKEND, "%s %s was deleted while it "
                                     "started", w->noun, w->name);
    }
    if (rc)
        return rc;
    const char *rv = json_string_value(json_object_get(json_object_get(pod, "metadata"),
                                                       "resourceVersion"));
    snprintf(w->rv, sizeof w->rv, "%s", rv && strlen(rv) < sizeof w->rv ? rv : "");
    int r = w->judge(w->p, pod, w->unsched, sizeof w->unsched);
    if (r != 0)
        w->verdict = r;
    if (r > 0)
        w->ready = json_incref(pod);
    json_decref(pod);
    return SBX_OK;
}

int kube_watch_ready(struct kube_prov *p, const char *name, const char *rv, uint64_t deadline_ns)
{
    char coll[300];
    snprintf(coll, sizeof coll, "/api/v1/namespaces/%s/pods", p->namespace);
    return kube_watch_until(p, coll, "pod", name, rv, deadline_ns, kube_pod_readiness, NULL);
}

int kube_watch_until(struct kube_prov *p, const char *collection, const char *noun,
                     const char *name, const char *rv, uint64_t deadline_ns, kube_judge judge,
                     json_t **ready)
{
    if (ready)
        *ready = NULL;
    struct watch w = {.p = p, .collection = collection, .noun = noun, .judge = judge,
                      .name = name};
    snprintf(w.rv, sizeof w.rv, "%s", rv ? rv : "");
    int rc = SBX_OK;
    int rounds = 0;
    unsigned failures = 0;     /* watch requests in a row that failed outright */
    if (!w.rv[0])
        rc = fresh(&w);
    while (rc == SBX_OK && !w.verdict) {
        uint64_t now = kube_now_ns();
        if (now >= deadline_ns) {
            if (w.unsched[0])
                rc = p->host->set_error(p->h, SBX_E_BUSY, "%s %s was not scheduled in time "
                                        "(%s)", noun, name, w.unsched);
            else
                rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "%s %s was not ready within %llu s",
                                        noun, name, (unsigned long long)(p->ready_ms / 1000));
            break;
        }
        if (rounds++ > 1000) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "watching %s %s: the stream kept "
                                    "ending without news", noun, name);
            break;
        }
        uint64_t left_s = (deadline_ns - now) / 1000000000u + 1;
        if (left_s > WATCH_MAX_S)
            left_s = WATCH_MAX_S;
        char *sel = kube_escape("metadata.name=");
        char *nm = kube_escape(name);
        char path[1024];
        if (sel && nm)
            snprintf(path, sizeof path, "%s?watch=1&fieldSelector=%s%s"
                     "&resourceVersion=%s&timeoutSeconds=%llu&allowWatchBookmarks=true",
                     collection, sel, nm, w.rv, (unsigned long long)left_s);
        free(sel);
        free(nm);
        if (!sel || !nm) {
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            break;
        }
        long status = 0;
        w.len = 0;
        w.got = 0;
        char what[300];
        snprintf(what, sizeof what, "watching %s %s", noun, name);
        int wr = kube_api_stream(p, what, path, (long)left_s * 1000 + 5000, on_data, &w, &status);
        if (w.verdict)
            break;
        if (w.gone) {
            w.gone = false;
            rc = fresh(&w);     /* 410: the version is too old; start again */
            continue;
        }
        if (wr == SBX_OK || wr == KUBE_STOP)
            continue;           /* the stream ended: on from the last version */
        if ((wr == SBX_E_NETWORK || wr == SBX_E_TIMEOUT) && w.got) {
            failures = 0;
            continue;           /* it broke after news: on from the last version */
        }
        if (status == 410) {
            rc = fresh(&w);
            continue;
        }
        /* The pod exists: a watch refused for now (5xx, 429, no connection)
         * is asked again a few times before the create gives up. */
        if (kube_transient(wr) && ++failures < KUBE_PERSIST_ATTEMPTS) {
            kube_backoff(p, failures - 1, kube_last_retry_after());
            continue;
        }
        rc = wr;
    }
    free(w.buf);
    if (!rc && w.verdict > 0 && ready) {
        *ready = w.ready;
        w.ready = NULL;
    }
    json_decref(w.ready);
    if (rc)
        return rc;
    return w.verdict < 0 ? -w.verdict : SBX_OK;
}
