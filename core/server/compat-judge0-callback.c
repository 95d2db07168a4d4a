/* core/server/compat-judge0-callback.c - Judge0's callback_url: a
 * finished submission PUT to the URL its client gave
 *
 * As Judge0's worker does (app/jobs/isolate_job.rb, call_callback): the
 * body is what GET /submissions/{token}?base64_encoded=true shows with
 * the default fields, sent with PUT and Content-Type application/json,
 * each try bounded by SRV_J0_CB_TIMEOUT_MS, up to SRV_J0_CB_TRIES tries
 * while the transfer fails; any HTTP answer, even an error status, ends
 * it (Judge0 retries only when no answer came).  Unlike Judge0 a failed
 * try waits a little before the next one, so a receiver restarting gets
 * a chance.
 *
 * The PUTs are made by threads of their own (at most SRV_J0_CB_THREADS,
 * made when first needed), never by the network threads nor the runs':
 * a slow receiver holds no run, and one that never answers holds one
 * thread for the tries' timeouts only.  What waits is bounded
 * (SRV_J0_CB_PENDING): past it a callback is dropped, with a log line
 * (the result stays for GET).
 *
 * A callback is durable (compat-judge0-cbfile.c) when the state
 * directory can be used: kept there before it is queued, removed once
 * an answer came or its tries are over.  At the server's stop those are
 * left at once to the next start, which sends them again with tries of
 * their own (a PUT under way is abandoned: its callback may come twice,
 * at least once is what is promised).  One that could not be kept is
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
    char token[SRV_J0_TOKEN_LEN + 1];
    char *url;
    char *body;
    bool durable;                /* kept in the state directory */
};

struct srv_j0cb {
    pthread_mutex_t mu;
    pthread_cond_t work;         /* an item came, or the stop */
    pthread_cond_t halt;         /* the stop (ends a pause between tries) */
    struct cb_item *head, *tail; /* pending, oldest first */
    unsigned count, idle, n_threads;
    pthread_t threads[SRV_J0_CB_THREADS];
    bool stop;
    uint64_t deadline_ns;        /* with stop: give up at it */
    bool global;                 /* curl_global_init done */
    char *dir;                   /* where callbacks are kept (NULL: not durable) */
};

static void item_free(struct cb_item *it)
{
    if (!it)
        return;
    free(it->url);
    free(it->body);
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
    curl_easy_setopt(h, CURLOPT_URL, it->url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, it->body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(it->body));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "polysandboxd/" PACKAGE_VERSION);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)SRV_J0_CB_TIMEOUT_MS);
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

/* Deliver @it: its tries, a pause between them. */
static int deliver(struct srv_j0cb *C, CURL *h, const struct cb_item *it)
{
    CURLcode rc = CURLE_FAILED_INIT;
    long http = 0;

    for (unsigned try = 1; try <= SRV_J0_CB_TRIES; try++) {
        if (h && (rc = put(C, h, it, &http)) == CURLE_OK)
            return CB_ANSWERED;
        if (given_up(C, it))
            return CB_STOPPED;
        if (try == SRV_J0_CB_TRIES)
            break;
        pthread_mutex_lock(&C->mu);
        struct timespec until = job_deadline((uint64_t)try * SRV_J0_CB_PAUSE_MS * 1000000u);
        /* Woken early by the stop: a try more is made at once (bounded
         * by the deadline), none after it. */
        if (!C->stop)
            pthread_cond_timedwait(&C->halt, &C->mu, &until);
        pthread_mutex_unlock(&C->mu);
    }
    srv_log(NULL, "Judge0 submission %s: its callback could not be delivered (%s): given up "
            "after %d tries", it->token, h ? curl_easy_strerror(rc) : "out of memory",
            SRV_J0_CB_TRIES);
    return CB_GIVEN_UP;
}

/* What the stop does to @it, not delivered. */
static void stopped(const struct cb_item *it)
{
    if (it->durable)
        srv_log(NULL, "Judge0 submission %s: its callback is kept for the next start",
                it->token);
    else
        srv_log(NULL, "Judge0 submission %s: its callback was dropped (the server stops)",
                it->token);
}

static void *sender(void *arg)
{
    struct srv_j0cb *C = arg;
    CURL *h = curl_easy_init();   /* one a thread: its connections are reused */

    pthread_mutex_lock(&C->mu);
    for (;;) {
        struct cb_item *it = C->head;
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
        pthread_mutex_unlock(&C->mu);
        if (given_up(C, it) || deliver(C, h, it) == CB_STOPPED)
            stopped(it);
        else if (it->durable)
            srv_j0_cb_forget(C->dir, it->token);   /* answered, or given up */
        item_free(it);
        pthread_mutex_lock(&C->mu);
    }
    pthread_mutex_unlock(&C->mu);
    if (h)
        curl_easy_cleanup(h);
    return NULL;
}

/* Under C->mu: a sending thread more, when there are fewer than the
 * callbacks waiting (and than SRV_J0_CB_THREADS). */
static void more_threads(struct srv_j0cb *C)
{
    if (C->idle <= C->count && C->n_threads < SRV_J0_CB_THREADS &&
        pthread_create(&C->threads[C->n_threads], NULL, sender, C) == 0)
        C->n_threads++;
}

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

static struct cb_item *item_new(const char *token, const char *url, char *body)
{
    struct cb_item *it = calloc(1, sizeof *it);

    if (!it || !(it->url = strdup(url))) {
        free(it);
        free(body);
        return NULL;
    }
    snprintf(it->token, sizeof it->token, "%s", token);
    it->body = body;
    return it;
}

/* srv_j0_cb_load's: a callback kept by the last run. */
static int reload(void *ud, const char *token, const char *url, char *body)
{
    struct srv_j0cb *C = ud;
    struct cb_item *it = item_new(token, url, body);

    if (!it)
        return -1;
    it->durable = true;
    pthread_mutex_lock(&C->mu);
    enqueue(C, it);
    pthread_mutex_unlock(&C->mu);
    return 0;
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
    /* Here, before any thread: curl_global_init is not thread-safe in
     * every libcurl this builds with. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        srv_j0_cb_stop(C, 0);
        return -1;
    }
    C->global = true;
    if ((C->dir = srv_j0_cb_dir(s)) && srv_j0_cb_load(C->dir, SRV_J0_CB_PENDING, reload, C)) {
        pthread_mutex_lock(&C->mu);
        for (unsigned i = 0; i < SRV_J0_CB_THREADS; i++)
            more_threads(C);
        if (!C->n_threads)
            srv_log(NULL, "Judge0 callbacks: no thread to send them: they wait for the next "
                    "start");
        pthread_mutex_unlock(&C->mu);
    }
    *out = C;
    return 0;
}

int srv_j0_cb_push(struct srv_j0cb *C, const char *token, const char *url, char *body)
{
    struct cb_item *it = item_new(token, url, body);
    int rc = 0;

    if (!it)
        return -3;
    /* Kept before it is queued: a kill from here on finds it. */
    if (C->dir && !(it->durable = srv_j0_cb_save(C->dir, token, url, it->body) == 0))
        srv_log(NULL, "Judge0 submission %s: its callback cannot be kept in %s: %s (it is "
                "not durable)", token, C->dir, strerror(errno));
    pthread_mutex_lock(&C->mu);
    if (C->stop)
        rc = -2;
    else if (C->count >= SRV_J0_CB_PENDING)
        rc = -1;
    else
        more_threads(C);
    if (rc == 0 && !C->n_threads) {
        rc = -3;   /* no thread to send it: never a callback that waits forever */
    } else if (rc == 0) {
        enqueue(C, it);
        it = NULL;
    }
    pthread_mutex_unlock(&C->mu);
    if (rc == -2 && it->durable) {
        stopped(it);   /* the next start sends it */
        rc = 0;
    } else if (rc == -1) {
        srv_log(NULL, "Judge0 submission %s: its callback was dropped (%d are waiting)",
                token, SRV_J0_CB_PENDING);
    }
    if (rc && it->durable)
        srv_j0_cb_forget(C->dir, token);
    item_free(it);
    return rc;
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
    if (C->global)
        curl_global_cleanup();
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

bool srv_j0_cb_url_ok(const char *url, const char **why)
{
    *why = "cannot be applied by this server: it was built without libcurl";
    return false;
}

#endif
