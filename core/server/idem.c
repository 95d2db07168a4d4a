/* core/server/idem.c - Idempotency-Key: a POST retried with the same key
 * never runs twice
 *
 * The first request with a key (scoped to the caller's token) records it
 * as in flight; a second one meanwhile gets 409; once the first is
 * answered, later ones get its reply again (Idempotent-Replayed: true).
 * A key reused with a different method, path or body is a 422.  A reply
 * that says nothing ran (429, 503, 499) frees the key for a retry.  An
 * SSE run is kept as its final result object.
 *
 * Memory is bounded: at most [server] idempotency_keys entries and
 * idempotency_memory bytes of replies; entries expire after
 * idempotency_ttl, the oldest answered ones go first when full.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>
#include <sodium.h>

#include "server.h"
#include "server-int.h"

#define NBUCKETS 4096
#define KEY_MAX 255
#define FP SRV_IDEM_FP_SIZE
_Static_assert(SRV_IDEM_FP_SIZE == crypto_generichash_BYTES, "the fingerprint's size");

enum { E_IN_FLIGHT, E_DONE };

struct entry {
    char *key;                      /* "TOKEN:KEY" */
    unsigned char fp[FP];           /* method, path and body */
    int state;
    unsigned status;
    char *ctype;
    char *location;                 /* its Location header, or NULL */
    char *body;                     /* NULL when too large to keep */
    size_t len;
    bool dropped_body;
    uint64_t expires;
    struct entry *chain;            /* hash bucket */
    struct entry *older, *newer;    /* by insertion */
};

struct srv_idem {
    pthread_mutex_t lock;
    struct entry *bucket[NBUCKETS];
    struct entry *oldest, *newest;
    size_t n, bytes;
};

/* What a request noted of its reply for its entry. */
struct note {
    unsigned status;
    char *ctype, *body, *location;
    size_t len;
    bool set;
};

int srv_idem_new(srv *s)
{
    struct srv_idem *m = calloc(1, sizeof *m);

    if (!m)
        return -1;
    pthread_mutex_init(&m->lock, NULL);
    s->idem = m;
    return 0;
}

static unsigned hash(const char *k)
{
    unsigned h = 2166136261u;

    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    return h % NBUCKETS;
}

/* Under the lock. */
static void remove_entry(struct srv_idem *m, struct entry *e)
{
    for (struct entry **pp = &m->bucket[hash(e->key)]; *pp; pp = &(*pp)->chain)
        if (*pp == e) {
            *pp = e->chain;
            break;
        }
    if (e->older)
        e->older->newer = e->newer;
    else
        m->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        m->newest = e->older;
    m->n--;
    m->bytes -= e->len;
    free(e->key);
    free(e->ctype);
    free(e->location);
    free(e->body);
    free(e);
}

/* Under the lock: drop expired entries, then the oldest answered ones
 * while over the bounds (in-flight ones are never dropped). */
static void trim(srv *s, uint64_t now, size_t add_bytes)
{
    struct srv_idem *m = s->idem;
    struct entry *e, *next;

    for (e = m->oldest; e; e = next) {
        next = e->newer;
        if (e->state == E_DONE && e->expires <= now)
            remove_entry(m, e);
    }
    for (e = m->oldest; e && (m->n >= s->conf.idempotency_max ||
                              m->bytes + add_bytes > s->conf.idempotency_memory);
         e = next) {
        next = e->newer;
        if (e->state == E_DONE)
            remove_entry(m, e);
    }
}

static struct entry *lookup(struct srv_idem *m, const char *key)
{
    for (struct entry *e = m->bucket[hash(key)]; e; e = e->chain)
        if (!strcmp(e->key, key))
            return e;
    return NULL;
}

void srv_idem_fingerprint(const srv_req *r, unsigned char out[FP])
{
    crypto_generichash_state st;
    unsigned char m = (unsigned char)r->method;

    crypto_generichash_init(&st, NULL, 0, FP);
    crypto_generichash_update(&st, &m, 1);
    crypto_generichash_update(&st, (const unsigned char *)r->path, strlen(r->path) + 1);
    crypto_generichash_update(&st, (const unsigned char *)(r->body ? r->body : ""),
                              r->body_len);
    crypto_generichash_final(&st, out, FP);
}

static bool key_ok(const char *k)
{
    size_t n = strlen(k);

    if (n == 0 || n > KEY_MAX)
        return false;
    for (; *k; k++)
        if (*k < ' ' || *k > '~')
            return false;
    return true;
}

int srv_idem_begin(srv *s, srv_req *r)
{
    struct srv_idem *m = s->idem;
    unsigned char fp[FP];
    char *key;
    struct entry *e;
    uint64_t now = srv_now_ns();

    if (!r->idem_key || r->method != SRV_POST || !m)
        return 0;
    if (!key_ok(r->idem_key)) {
        srv_error(r, 400, "invalid", NULL, "the Idempotency-Key must have 1 to %d printable "
                  "ASCII characters", KEY_MAX);
        return -1;
    }
    if (asprintf(&key, "%d:%s", r->token, r->idem_key) < 0) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    srv_idem_fingerprint(r, fp);
    pthread_mutex_lock(&m->lock);
    e = lookup(m, key);
    if (e && e->state == E_DONE && e->expires <= now) {
        remove_entry(m, e);
        e = NULL;
    }
    if (e) {
        bool same = sodium_memcmp(e->fp, fp, FP) == 0;
        if (!same) {
            pthread_mutex_unlock(&m->lock);
            srv_error(r, 422, "idempotency_mismatch", NULL, "the Idempotency-Key '%s' was "
                      "used for a different request (method, path or body)", r->idem_key);
        } else if (e->state == E_IN_FLIGHT) {
            pthread_mutex_unlock(&m->lock);
            srv_error(r, 409, "idempotency_in_flight", NULL, "a request with the "
                      "Idempotency-Key '%s' is still running", r->idem_key);
            srv_reply_header(r, "Retry-After", "1");
        } else if (!e->body && e->dropped_body) {
            pthread_mutex_unlock(&m->lock);
            srv_error(r, 409, "idempotency_done", NULL, "the request with the "
                      "Idempotency-Key '%s' ran already; its reply was too large to keep",
                      r->idem_key);
        } else {
            char *copy = malloc(e->len ? e->len : 1);
            unsigned status = e->status;
            char ctype[128], loc[256];
            snprintf(ctype, sizeof ctype, "%s", e->ctype ? e->ctype : "application/json");
            snprintf(loc, sizeof loc, "%s", e->location ? e->location : "");
            if (copy)
                memcpy(copy, e->body, e->len);
            size_t len = e->len;
            pthread_mutex_unlock(&m->lock);
            if (!copy) {
                srv_error(r, 500, "nomem", NULL, "out of memory");
            } else {
                srv_reply(r, status, ctype, copy, len);
                srv_reply_header(r, "Idempotent-Replayed", "true");
                if (loc[0])
                    srv_reply_header(r, "Location", loc);
            }
        }
        free(key);
        return -1;
    }
    trim(s, now, 0);
    if (m->n >= s->conf.idempotency_max || !(e = calloc(1, sizeof *e))) {
        pthread_mutex_unlock(&m->lock);
        free(key);
        srv_error(r, 503, "idempotency_full", NULL, "too many Idempotency-Keys in flight");
        srv_reply_header(r, "Retry-After", "1");
        return -1;
    }
    e->key = key;
    memcpy(e->fp, fp, FP);
    e->state = E_IN_FLIGHT;
    e->chain = m->bucket[hash(key)];
    m->bucket[hash(key)] = e;
    e->older = m->newest;
    if (m->newest)
        m->newest->newer = e;
    else
        m->oldest = e;
    m->newest = e;
    m->n++;
    pthread_mutex_unlock(&m->lock);
    if (!(r->idem_note = calloc(1, sizeof(struct note)))) {
        srv_idem_end(s, r);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    r->idem = e;
    return 0;
}

void srv_idem_note(srv_req *r, unsigned status, const char *ctype, const char *body,
                   size_t len)
{
    struct note *n = r->idem_note;

    if (!n)
        return;
    free(n->ctype);
    free(n->body);
    free(n->location);    /* a new reply: its own headers */
    n->location = NULL;
    n->status = status;
    n->ctype = ctype ? strdup(ctype) : NULL;
    n->body = malloc(len ? len : 1);
    n->len = len;
    n->set = n->body != NULL;
    if (n->body)
        memcpy(n->body, body, len);
}

void srv_idem_note_location(srv_req *r, const char *location)
{
    struct note *n = r->idem_note;

    if (!n)
        return;
    free(n->location);
    n->location = strdup(location);
}

void srv_idem_end(srv *s, srv_req *r)
{
    struct srv_idem *m = s->idem;
    struct note *n = r->idem_note;
    struct entry *e = r->idem;

    if (e) {
        bool nothing_ran = !n || !n->set || n->status == 429 || n->status == 503 ||
                           n->status == 499;
        pthread_mutex_lock(&m->lock);
        if (nothing_ran) {
            remove_entry(m, e);
        } else {
            e->state = E_DONE;
            e->status = n->status;
            e->expires = srv_now_ns() + s->conf.idempotency_ttl_ns;
            trim(s, srv_now_ns(), n->len);
            if (m->bytes + n->len <= s->conf.idempotency_memory) {
                e->ctype = n->ctype;
                e->body = n->body;
                e->location = n->location;
                e->len = n->len;
                m->bytes += n->len;
                n->ctype = n->body = n->location = NULL;
            } else {
                e->dropped_body = true;
            }
        }
        pthread_mutex_unlock(&m->lock);
        r->idem = NULL;
    }
    if (n) {
        free(n->ctype);
        free(n->body);
        free(n->location);
        free(n);
        r->idem_note = NULL;
    }
}

void srv_idem_free(srv *s)
{
    struct srv_idem *m = s->idem;

    if (!m)
        return;
    while (m->oldest)
        remove_entry(m, m->oldest);
    pthread_mutex_destroy(&m->lock);
    free(m);
    s->idem = NULL;
}
