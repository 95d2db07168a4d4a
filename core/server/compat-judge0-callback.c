/* core/server/compat-judge0-callback.c - Judge0's callback_url: a
 * finished submission PUT to the URL its client gave
 *
 * As Judge0's worker does (app/jobs/isolate_job.rb, call_callback): the
 * body is what GET /submissions/{token}?base64_encoded=true shows with
 * the default fields, sent with PUT and Content-Type application/json,
 * each try bounded by [server] judge0_callbacks_timeout (Judge0's
 * CALLBACKS_TIMEOUT, 5 s), up to SRV_J0_CB_TRIES tries
 * while the transfer fails; any HTTP answer, even an error status, ends
 * it (Judge0 retries only when no answer came).  Unlike Judge0 a failed
 * try waits a little before the next one, so a receiver restarting gets
 * a chance.
 *
 * The PUTs are made by threads of their own (at most SRV_J0_CB_THREADS,
 * made when first needed), never by the network threads nor the runs':
 * a slow receiver holds no run, and one that never answers holds one
 * thread for the tries' timeouts only.  What is in memory is bounded
 * ([server] judge0_callbacks_pending): past it a callback that is kept
 * waits in its file (its token in the backlog) until a place frees,
 * oldest first; one that could not be kept is dropped, with a log line
 * (the result stays for GET).  The files are bounded too ([server]
 * judge0_callbacks_kept): past that a callback is refused, logged and
 * counted in /metrics, never kept in memory only.
 *
 * A callback is durable (compat-judge0-cbfile.c) when the state
 * directory can be used: kept there before it is queued, written again
 * with its count of tries after each that got no answer, removed once an
 * answer came or its tries are over.  At the server's stop those are
 * left at once to the next start, which sends them again with the tries
 * they have left (a PUT under way is abandoned, not counted: its
 * callback may come twice, at least once is what is promised).  One that could not be kept is
 * sent until the grace time is over, then dropped, as before.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compat-judge0.h"
#include "jobs.h"

#ifdef SRV_HAVE_CURL
#include <curl/curl.h>

struct cb_item {
    struct cb_item *next;
    srv_j0_cbrec r;
    bool durable;                /* kept in the state directory */
};

struct srv_j0cb {
    pthread_mutex_t mu;
    pthread_cond_t work;         /* an item came, or the stop */
    pthread_cond_t halt;         /* the stop (ends a pause between tries) */
    struct cb_item *head, *tail; /* pending, oldest first */
    unsigned count, idle, n_threads, busy;
    pthread_t threads[SRV_J0_CB_THREADS];
    bool stop;
    uint64_t deadline_ns;        /* with stop: give up at it */
    bool global;                 /* curl_global_init done */
    char *dir;                   /* where callbacks are kept (NULL: not durable) */
    unsigned pending_max;        /* [server] judge0_callbacks_pending: queued in memory */
    unsigned kept_max;           /* [server] judge0_callbacks_kept: files in dir */
    long timeout_ms;             /* [server] judge0_callbacks_timeout: a try's */
    unsigned kept;               /* files in dir that are ours */
    unsigned loading;            /* taken from the backlog, being read */
    /* The callbacks kept that wait on disk only for a place in the queue,
     * oldest first: their tokens (a ring). */
    char (*backlog)[SRV_J0_TOKEN_LEN + 1];
    unsigned bl_cap, bl_head, bl_count;
    unsigned long long refused, dropped, given_up, delivered;
};

static void item_free(struct cb_item *it)
{
    if (!it)
        return;
    free(it->r.url);
    free(it->r.body);
    free(it);
}

/* A transfer's: the sender and what it sends. */
struct xfer {
    struct srv_j0cb *C;
    const struct cb_item *it;
};

/* Whether @it is abandoned: at the stop when it is durable (the next
 * start sends it), past the stop's deadline when it is not. */
static bool given_up(struct srv_j0cb *C, const struct cb_item *it)
{
    bool up;

    pthread_mutex_lock(&C->mu);
    up = C->stop && (it->durable || srv_now_ns() >= C->deadline_ns);
    pthread_mutex_unlock(&C->mu);
    return up;
}

static int progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    const struct xfer *x = ud;

    return given_up(x->C, x->it) ? 1 : 0;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    return size * n;   /* the receiver's answer is not ours to keep */
}

/* One PUT: the transfer's result (CURLE_OK: an HTTP answer came). */
static CURLcode put(struct srv_j0cb *C, CURL *h, const struct cb_item *it, long *http)
{
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    struct xfer x = { C, it };
    CURLcode rc;

    *http = 0;
    if (!hdr)
        return CURLE_OUT_OF_MEMORY;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, it->r.url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, it->r.body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(it->r.body));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "polysandboxd/" PACKAGE_VERSION);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, C->timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
    rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, http);
    curl_slist_free_all(hdr);
    return rc;
}

/* What came of a callback's tries. */
enum { CB_ANSWERED, CB_GIVEN_UP, CB_STOPPED };

/* Pause until @it's next try is due (a time read back is trusted for
 * the longest pause only), or the stop. */
static void pause_until_due(struct srv_j0cb *C, const struct cb_item *it)
{
    double wait_s = it->r.next - job_now();
    const double longest = SRV_J0_CB_TRIES * SRV_J0_CB_PAUSE_MS / 1000.0;

    if (!(wait_s > 0))
        return;
    if (wait_s > longest)
        wait_s = longest;
    pthread_mutex_lock(&C->mu);
    struct timespec until = job_deadline((uint64_t)(wait_s * 1e9));
    /* Woken early by the stop: a try more is made at once (bounded by
     * the deadline) when it is not kept for the next start. */
    if (!C->stop)
        pthread_cond_timedwait(&C->halt, &C->mu, &until);
    pthread_mutex_unlock(&C->mu);
}

/* Deliver @it: its tries left, a pause between them, each that got no
 * answer counted in its file (so a restart does not grant fresh ones). */
static int deliver(struct srv_j0cb *C, CURL *h, struct cb_item *it)
{
    CURLcode rc = CURLE_FAILED_INIT;
    long http = 0;

    while (it->r.tries < SRV_J0_CB_TRIES) {
        pause_until_due(C, it);
        if (given_up(C, it))
            return CB_STOPPED;
        if (h && (rc = put(C, h, it, &http)) == CURLE_OK)
            return CB_ANSWERED;
        if (given_up(C, it))
            return CB_STOPPED;   /* abandoned, not a try that failed */
        it->r.tries++;
        it->r.next = job_now() + it->r.tries * SRV_J0_CB_PAUSE_MS / 1000.0;
        if (it->durable && it->r.tries < SRV_J0_CB_TRIES && srv_j0_cb_save(C->dir, &it->r) != 0)
            srv_log(NULL, "Judge0 submission %s: cannot count its callback's try in %s: %s "
                    "(a restart may try it more)", it->r.token, C->dir, strerror(errno));
    }
    srv_log(NULL, "Judge0 submission %s: its callback could not be delivered (%s): given up "
            "after %d tries", it->r.token, h ? curl_easy_strerror(rc) : "out of memory",
            SRV_J0_CB_TRIES);
    return CB_GIVEN_UP;
}

/* What the stop does to @it, not delivered. */
static void stopped(const struct cb_item *it)
{
    if (it->durable)
        srv_log(NULL, "Judge0 submission %s: its callback is kept for the next start",
                it->r.token);
    else
        srv_log(NULL, "Judge0 submission %s: its callback was dropped (the server stops)",
                it->r.token);
}

/* Under C->mu: a sending thread more, when there are fewer than the
 * callbacks waiting (and than SRV_J0_CB_THREADS). */
static void more_threads(struct srv_j0cb *C);

/* Under C->mu: queue @it (transfer full). */
static void enqueue(struct srv_j0cb *C, struct cb_item *it)
{
    if (C->tail)
        C->tail->next = it;
    else
        C->head = it;
    C->tail = it;
    C->count++;
    pthread_cond_signal(&C->work);
}

/* Under C->mu: whether the queue has a place (what is being read from
 * the backlog counts as queued). */
static bool has_room(const struct srv_j0cb *C)
{
    return C->count + C->busy + C->loading < C->pending_max;
}

/* Under C->mu: @token waits on disk for a place.  0, or -1 (ENOMEM). */
static int backlog_add(struct srv_j0cb *C, const char *token)
{
    if (C->bl_count == C->bl_cap) {
        unsigned cap = C->bl_cap ? C->bl_cap * 2 : 64;
        char (*more)[SRV_J0_TOKEN_LEN + 1] = malloc(cap * sizeof *more);
        if (!more)
            return -1;
        for (unsigned i = 0; i < C->bl_count; i++)
            memcpy(more[i], C->backlog[(C->bl_head + i) % C->bl_cap], sizeof *more);
        free(C->backlog);
        C->backlog = more;
        C->bl_cap = cap;
        C->bl_head = 0;
    }
    memcpy(C->backlog[(C->bl_head + C->bl_count++) % C->bl_cap], token, sizeof *C->backlog);
    return 0;
}

/* Under C->mu: a file of ours is gone. */
static void unkept(struct srv_j0cb *C)
{
    if (C->kept)
        C->kept--;
}

/* Fill the queue's free places from the backlog, oldest first: each
 * read back (hostile: one that is not a callback's is logged and left;
 * one whose tries were spent before a restart is removed). */
static void refill(struct srv_j0cb *C)
{
    for (;;) {
        char token[SRV_J0_TOKEN_LEN + 1], why[512];
        struct cb_item *it;
        int rc;

        pthread_mutex_lock(&C->mu);
        if (C->stop || !C->bl_count || !has_room(C)) {
            pthread_mutex_unlock(&C->mu);
            return;
        }
        memcpy(token, C->backlog[C->bl_head], sizeof token);
        C->bl_head = (C->bl_head + 1) % C->bl_cap;
        C->bl_count--;
        C->loading++;
        pthread_mutex_unlock(&C->mu);

        if (!(it = calloc(1, sizeof *it)))
            rc = -3;
        else if ((rc = srv_j0_cb_read(C->dir, token, &it->r, why, sizeof why)) == -1)
            srv_log(NULL, "Judge0 callbacks: cannot load %s/%s.json: %s; left as it is",
                    C->dir, token, why);
        else if (rc == -2)
            srv_log(NULL, "Judge0 submission %s: its callback's file is gone from %s: not sent",
                    token, C->dir);
        else if (it->r.tries >= SRV_J0_CB_TRIES) {
            srv_log(NULL, "Judge0 submission %s: its callback's %d tries were made before the "
                    "restart: given up, its file removed", token, SRV_J0_CB_TRIES);
            srv_j0_cb_forget(C->dir, token);
            rc = 1;
        }
        pthread_mutex_lock(&C->mu);
        C->loading--;
        if (rc == 0) {
            it->durable = true;
            enqueue(C, it);
            more_threads(C);
            it = NULL;
        } else if (rc == -3) {
            srv_log(NULL, "Judge0 submission %s: out of memory loading its callback: left "
                    "for the next start", token);
        } else {
            unkept(C);
            C->given_up += rc == 1;
        }
        pthread_mutex_unlock(&C->mu);
        item_free(it);
    }
}

static void *sender(void *arg)
{
    struct srv_j0cb *C = arg;
    CURL *h = curl_easy_init();   /* one a thread: its connections are reused */

    pthread_mutex_lock(&C->mu);
    for (;;) {
        struct cb_item *it = C->head;
        int end;
        if (!it) {
            if (C->stop)
                break;
            C->idle++;
            pthread_cond_wait(&C->work, &C->mu);
            C->idle--;
            continue;
        }
        C->head = it->next;
        if (!C->head)
            C->tail = NULL;
        C->count--;
        C->busy++;
        pthread_mutex_unlock(&C->mu);
        end = given_up(C, it) ? CB_STOPPED : deliver(C, h, it);
        if (end == CB_STOPPED)
            stopped(it);
        else if (it->durable)
            srv_j0_cb_forget(C->dir, it->r.token);   /* answered, or given up */
        pthread_mutex_lock(&C->mu);
        C->busy--;
        C->delivered += end == CB_ANSWERED;
        C->given_up += end == CB_GIVEN_UP;
        if (end != CB_STOPPED && it->durable)
            unkept(C);
        pthread_mutex_unlock(&C->mu);
        item_free(it);
        refill(C);   /* a place is free */
        pthread_mutex_lock(&C->mu);
    }
    pthread_mutex_unlock(&C->mu);
    if (h)
        curl_easy_cleanup(h);
    return NULL;
}

static void more_threads(struct srv_j0cb *C)
{
    if (C->idle <= C->count && C->n_threads < SRV_J0_CB_THREADS &&
        pthread_create(&C->threads[C->n_threads], NULL, sender, C) == 0)
        C->n_threads++;
}

/* srv_j0_cb_load's: a callback kept by the last run waits for a place. */
static int reload(void *ud, const char *token)
{
    struct srv_j0cb *C = ud;
    int rc;

    pthread_mutex_lock(&C->mu);
    if ((rc = backlog_add(C, token)) == 0)
        C->kept++;
    pthread_mutex_unlock(&C->mu);
    return rc;
}

int srv_j0_cb_start(const srv *s, struct srv_j0cb **out)
{
    struct srv_j0cb *C = calloc(1, sizeof *C);

    *out = NULL;
    if (!C)
        return -1;
    pthread_mutex_init(&C->mu, NULL);
    pthread_cond_init(&C->work, NULL);
    pthread_cond_init(&C->halt, NULL);
    C->pending_max = s->conf.judge0_callbacks_pending ? s->conf.judge0_callbacks_pending
                                                      : SRV_J0_CB_PENDING;
    C->kept_max = s->conf.judge0_callbacks_kept ? s->conf.judge0_callbacks_kept
                                                : SRV_J0_CB_KEPT;
    C->timeout_ms = s->conf.judge0_callbacks_timeout_ns
                        ? (long)(s->conf.judge0_callbacks_timeout_ns / 1000000u)
                        : SRV_J0_CB_TIMEOUT_MS;
    if (C->timeout_ms < 1)
        C->timeout_ms = 1;
    /* Here, before any thread: curl_global_init is not thread-safe in
     * every libcurl this builds with. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        srv_j0_cb_stop(C, 0);
        return -1;
    }
    C->global = true;
    if ((C->dir = srv_j0_cb_dir(s)) && srv_j0_cb_load(C->dir, C->kept_max, reload, C)) {
        refill(C);
        pthread_mutex_lock(&C->mu);
        if (C->count && !C->n_threads)
            srv_log(NULL, "Judge0 callbacks: no thread to send them: they wait for the next "
                    "start");
        pthread_mutex_unlock(&C->mu);
    }
    *out = C;
    return 0;
}

int srv_j0_cb_push(struct srv_j0cb *C, const char *token, const char *url, char *body)
{
    struct cb_item *it = calloc(1, sizeof *it);
    bool refused = false;
    int rc = 0;

    if (!it || !(it->r.url = strdup(url))) {
        free(it);
        free(body);
        return -3;
    }
    snprintf(it->r.token, sizeof it->r.token, "%s", token);
    it->r.body = body;
    it->r.created = job_now();
    /* Kept before it is queued: a kill from here on finds it.  The files
     * are bounded: past the bound one is refused, never kept in memory
     * only (it would be lost at a stop). */
    if (C->dir) {
        pthread_mutex_lock(&C->mu);
        if (!(refused = C->kept >= C->kept_max))
            C->kept++;
        pthread_mutex_unlock(&C->mu);
        if (!refused && !(it->durable = srv_j0_cb_save(C->dir, &it->r) == 0)) {
            srv_log(NULL, "Judge0 submission %s: its callback cannot be kept in %s: %s (it "
                    "is not durable)", token, C->dir, strerror(errno));
            pthread_mutex_lock(&C->mu);
            unkept(C);
            pthread_mutex_unlock(&C->mu);
        }
    }
    pthread_mutex_lock(&C->mu);
    if (refused) {
        rc = -4;
        C->refused++;
    } else if (C->stop) {
        rc = -2;
    } else if (!has_room(C)) {
        /* Its file waits for a place (refill); one not kept is dropped. */
        if (!it->durable)
            rc = -1;
        else if (backlog_add(C, token) != 0)
            srv_log(NULL, "Judge0 submission %s: out of memory queueing its callback: it "
                    "is left for the next start", token);
        C->dropped += rc == -1;
    } else {
        more_threads(C);
        if (!C->n_threads) {
            rc = -3;   /* no thread to send it: never a callback that waits forever */
        } else {
            enqueue(C, it);
            it = NULL;
        }
    }
    if (rc && it && it->durable && rc != -2)
        unkept(C);
    pthread_mutex_unlock(&C->mu);
    if (rc == -2 && it->durable) {
        stopped(it);   /* the next start sends it */
        rc = 0;
    } else if (rc == -1) {
        srv_log(NULL, "Judge0 submission %s: its callback was dropped (%u are waiting and "
                "it could not be kept)", token, C->pending_max);
    } else if (rc == -4) {
        srv_log(NULL, "Judge0 submission %s: its callback was refused: %u are kept in %s "
                "([server] judge0_callbacks_kept); its result stays for GET", token,
                C->kept_max, C->dir);
    }
    if (rc && rc != -4 && it && it->durable)
        srv_j0_cb_forget(C->dir, token);
    item_free(it);
    return rc;
}

void srv_j0_cb_counts_get(struct srv_j0cb *C, srv_j0_cb_counts *out)
{
    memset(out, 0, sizeof *out);
    if (!C)
        return;
    pthread_mutex_lock(&C->mu);
    out->queued = C->count + C->busy + C->loading;
    out->kept = C->kept;
    out->on_disk = C->bl_count;
    out->refused = C->refused;
    out->dropped = C->dropped;
    out->given_up = C->given_up;
    out->delivered = C->delivered;
    pthread_mutex_unlock(&C->mu);
}

void srv_j0_cb_stop(struct srv_j0cb *C, uint64_t deadline_ns)
{
    if (!C)
        return;
    pthread_mutex_lock(&C->mu);
    C->stop = true;
    C->deadline_ns = deadline_ns;
    pthread_cond_broadcast(&C->work);
    pthread_cond_broadcast(&C->halt);
    pthread_mutex_unlock(&C->mu);
    for (unsigned i = 0; i < C->n_threads; i++)
        pthread_join(C->threads[i], NULL);
    for (struct cb_item *it = C->head, *next; it; it = next) {
        next = it->next;   /* (none but when no thread could be made) */
        stopped(it);
        item_free(it);
    }
    if (C->bl_count)
        srv_log(NULL, "Judge0 callbacks: %u kept in %s for the next start", C->bl_count,
                C->dir);
    if (C->global)
        curl_global_cleanup();
    free(C->backlog);
    free(C->dir);
    pthread_mutex_destroy(&C->mu);
    pthread_cond_destroy(&C->work);
    pthread_cond_destroy(&C->halt);
    free(C);
}

bool srv_j0_cb_url_ok(const char *url, const char **why)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    bool ok = false;

    *why = "must be an http or https URL";
    if (!u) {
        *why = "could not be checked (out of memory)";
        return false;
    }
    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host && *host &&
        (!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https")))
        ok = true;
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

#else /* !SRV_HAVE_CURL: callback_url is refused at submit time */

int srv_j0_cb_start(const srv *s, struct srv_j0cb **out)
{
    *out = NULL;   /* none: callback_url is refused (srv_j0_cb_url_ok) */
    return 0;
}

int srv_j0_cb_push(struct srv_j0cb *C, const char *token, const char *url, char *body)
{
    free(body);
    return -3;
}

void srv_j0_cb_stop(struct srv_j0cb *C, uint64_t deadline_ns)
{
}

void srv_j0_cb_counts_get(struct srv_j0cb *C, srv_j0_cb_counts *out)
{
    memset(out, 0, sizeof *out);
}

bool srv_j0_cb_url_ok(const char *url, const char **why)
{
    *why = "cannot be applied by this server: it was built without libcurl";
    return false;
}

#endif
