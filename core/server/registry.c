/* core/server/registry.c - the sandboxes the server knows by id
 *
 * A sandbox handle serves one thread at a time (the library's rule), so
 * each id the server touches gets an entry with a lock that serialises
 * its uses (execs, files, destroy) and its open handle, kept between
 * requests so a second exec costs no attach.  Entries of sandboxes this
 * server created are marked ours: at exit they are destroyed (unless
 * [server] keep_sandboxes), the others only closed.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "server-int.h"

struct srv_box {
    char *id, *provider;
    pthread_mutex_t lock;      /* held while the sandbox is in use */
    sbx_sandbox *sb;           /* the open handle, or NULL (under lock) */
    bool ours;
    bool gone;                 /* destroyed (under lock) */
    sbx_cancel *busy;          /* the exec holding the lock, (registry lock) */
    int refs;                  /* (registry lock) */
    struct srv_box *next;
};

struct srv_registry {
    pthread_mutex_t lock;
    struct srv_box *head;
    size_t n;
};

int srv_registry_new(srv *s)
{
    struct srv_registry *g = calloc(1, sizeof *g);

    if (!g)
        return -1;
    pthread_mutex_init(&g->lock, NULL);
    s->registry = g;
    return 0;
}

static void box_free(struct srv_box *b)
{
    pthread_mutex_destroy(&b->lock);
    free(b->id);
    free(b->provider);
    free(b);
}

/* Under the registry lock. */
static void unlink_box(struct srv_registry *g, struct srv_box *b)
{
    for (struct srv_box **pp = &g->head; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            g->n--;
            return;
        }
}

struct srv_box *srv_box_get(srv *s, const char *provider, const char *id)
{
    struct srv_registry *g = s->registry;
    struct srv_box *b;

    pthread_mutex_lock(&g->lock);
    for (b = g->head; b; b = b->next)
        if (!strcmp(b->id, id) && (!provider || !strcmp(b->provider, provider)))
            break;
    if (!b && provider && (b = calloc(1, sizeof *b))) {
        b->id = strdup(id);
        b->provider = strdup(provider);
        pthread_mutex_init(&b->lock, NULL);
        if (!b->id || !b->provider) {
            box_free(b);
            b = NULL;
        } else {
            b->next = g->head;
            g->head = b;
            g->n++;
        }
    }
    if (b)
        b->refs++;
    pthread_mutex_unlock(&g->lock);
    return b;
}

/* Drop a reference; an entry nobody uses and that holds nothing (a
 * foreign sandbox with no handle, or one destroyed) leaves the list. */
void srv_box_put(srv *s, struct srv_box *b)
{
    struct srv_registry *g = s->registry;
    bool drop;

    pthread_mutex_lock(&g->lock);
    drop = --b->refs == 0 && (b->gone || (!b->ours && !b->sb));
    if (drop)
        unlink_box(g, b);
    pthread_mutex_unlock(&g->lock);
    if (drop)
        box_free(b);
}

int srv_box_lock(struct srv_box *b)
{
    pthread_mutex_lock(&b->lock);
    if (b->gone) {
        pthread_mutex_unlock(&b->lock);
        return -1;
    }
    return 0;
}

void srv_box_unlock(struct srv_box *b)
{
    pthread_mutex_unlock(&b->lock);
}

const char *srv_box_provider(const struct srv_box *b) { return b->provider; }
const char *srv_box_id(const struct srv_box *b) { return b->id; }

int srv_box_handle(srv *s, struct srv_box *b, sbx_sandbox **sb)
{
    int rc = SBX_OK;

    if (!b->sb)
        rc = sbx_sandbox_open(s->ctx, b->provider, b->id, &b->sb);
    if (rc == SBX_E_NOT_FOUND)
        b->gone = true;   /* destroyed behind our back */
    *sb = b->sb;
    return rc;
}

struct srv_box *srv_box_track(srv *s, sbx_sandbox *sb, bool ours, srv_req *r)
{
    struct srv_box *b = srv_box_get(s, sbx_sandbox_provider(sb), sbx_sandbox_id(sb));

    if (!b) {
        sbx_sandbox_destroy(sb);
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return NULL;
    }
    srv_box_lock(b);
    srv_box_adopt(b, sb, ours);
    srv_box_unlock(b);
    return b;
}

void srv_box_busy(srv *s, struct srv_box *b, sbx_cancel *c)
{
    pthread_mutex_lock(&s->registry->lock);
    b->busy = c;
    pthread_mutex_unlock(&s->registry->lock);
}

void srv_box_interrupt(srv *s, struct srv_box *b)
{
    pthread_mutex_lock(&s->registry->lock);
    sbx_cancel_fire(b->busy);
    pthread_mutex_unlock(&s->registry->lock);
}

/* The handle failed in a way that may have left it stale: reopen next time. */
void srv_box_drop_handle(struct srv_box *b)
{
    sbx_sandbox_close(b->sb);
    b->sb = NULL;
}

void srv_box_adopt(struct srv_box *b, sbx_sandbox *sb, bool ours)
{
    if (b->sb && b->sb != sb)
        sbx_sandbox_close(b->sb);
    b->sb = sb;
    b->ours = b->ours || ours;
}

int srv_box_destroy(srv *s, struct srv_box *b)
{
    sbx_sandbox *sb = NULL;
    int rc = srv_box_handle(s, b, &sb);

    if (rc == SBX_OK) {
        b->sb = NULL;
        rc = sbx_sandbox_destroy(sb);
    }
    if (rc == SBX_OK || rc == SBX_E_NOT_FOUND)
        b->gone = true;
    return rc;
}

size_t srv_registry_count(srv *s)
{
    size_t n;

    pthread_mutex_lock(&s->registry->lock);
    n = s->registry->n;
    pthread_mutex_unlock(&s->registry->lock);
    return n;
}

void srv_registry_free(srv *s)
{
    struct srv_registry *g = s->registry;
    struct srv_box *b, *next;
    size_t destroyed = 0, failed = 0, kept = 0;

    if (!g)
        return;
    for (b = g->head; b; b = next) {
        next = b->next;
        if (b->ours && !s->conf.keep_sandboxes && !b->gone) {
            int rc = srv_box_destroy(s, b);
            if (rc == SBX_OK)
                destroyed++;
            else if (rc != SBX_E_NOT_FOUND) {
                failed++;
                srv_log(NULL, "cannot destroy sandbox %s (%s): %s", b->id, b->provider,
                        sbx_error_message(sbx_ctx_last_error(s->ctx)));
            }
        } else {
            kept += b->ours && !b->gone;
            sbx_sandbox_close(b->sb);
        }
        box_free(b);
    }
    if (destroyed || failed || kept)
        srv_log(NULL, "sandboxes made by this server: %zu destroyed, %zu failed, %zu kept",
                destroyed, failed, kept);
    pthread_mutex_destroy(&g->lock);
    free(g);
    s->registry = NULL;
}
