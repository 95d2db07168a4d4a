/* core/pool/pool.c - warm pools: sandboxes created ahead for sbx_run
 *
 * A pool is configured per key (provider, template, limits) in
 * pools.d/NAME.ini or with pool.NAME.KEY overrides.  Its worker threads
 * (`parallel` of them, so that many creations at once) keep `size`
 * sandboxes ready; sbx_run takes one whose key matches its request (a
 * hit) or creates its own as usual (a miss).  A taken sandbox serves one
 * run and is destroyed in the background, unless reuse = true: then the
 * pool runs the reset command in it and, if that succeeds, makes it ready
 * again.  Ready sandboxes idle longer than idle_timeout, or near the end
 * of their time-to-live, are destroyed (and replaced when replace_idle).
 * With warm = CODE, each new sandbox runs CODE with the pool's template
 * before it is ready, so that no caller pays for its cold first run.
 *
 * The settings are read and checked in core/pool-config.c.
 *
 * Locking: one mutex per pool guards its lists and counters.  Provider
 * calls (create, exec of the reset, destroy) are made without it.
 * Workers sleep on `work` (with a deadline when a sandbox will expire or
 * a failed create is to be retried); takers and sbx_pool_wait sleep on
 * `ready_cv`.  Nothing polls.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <polysandbox/sandbox.h>

#include "pool-int.h"
#include "error.h"
#include "pool/pool.h"
#include "context.h"
#include "clock.h"

/* ---- queues ---------------------------------------------------------------- */

static int q_push(queue *q, entry e)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 8;
        entry *v = realloc(q->v, cap * sizeof *v);
        if (!v)
            return SBX_E_NOMEM;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n++] = e;
    return SBX_OK;
}

static entry q_pop_front(queue *q)
{
    entry e = q->v[0];
    memmove(q->v, q->v + 1, (q->n - 1) * sizeof *q->v);
    q->n--;
    return e;
}

/* ---- the workers ------------------------------------------------------------- */

static uint64_t counted(const struct core_pool *pl)
{
    return pl->ready.n + pl->creating + pl->resetting + pl->dirty.n +
           (pl->reuse ? pl->in_use : 0);
}

static bool wants_more(const struct core_pool *pl)
{
    return pl->active && !pl->stop && !pl->dormant && counted(pl) < pl->size;
}

static bool too_old(const struct core_pool *pl, const entry *e, uint64_t now)
{
    return now - e->born >= pl->max_age_ns;
}

static bool idle_expired(const struct core_pool *pl, const entry *e, uint64_t now)
{
    return (pl->idle_ns && now - e->since >= pl->idle_ns) || too_old(pl, e, now);
}

/* Move ready sandboxes that idled too long (or are near their ttl) to the
 * destroy list.  Returns true when one moved.  Called locked. */
static bool expire_some(struct core_pool *pl, uint64_t now)
{
    bool moved = false;

    for (size_t i = 0; i < pl->ready.n;) {
        if (!idle_expired(pl, &pl->ready.v[i], now)) {
            i++;
            continue;
        }
        entry e = pl->ready.v[i];
        memmove(pl->ready.v + i, pl->ready.v + i + 1, (pl->ready.n - i - 1) * sizeof e);
        pl->ready.n--;
        if (q_push(&pl->doomed, e) != SBX_OK) {
            /* No room to queue it: put it back, try again at the next wake. */
            pl->ready.v[pl->ready.n++] = e;
            break;
        }
        pl->expired++;
        if (!pl->replace_idle)
            pl->dormant = true;
        moved = true;
    }
    return moved;
}

/* The next time something is due, or 0 for none. */
static uint64_t next_deadline(const struct core_pool *pl, uint64_t now)
{
    uint64_t d = 0;

    for (size_t i = 0; i < pl->ready.n; i++) {
        const entry *e = &pl->ready.v[i];
        uint64_t t = e->born + pl->max_age_ns;
        if (pl->idle_ns && e->since + pl->idle_ns < t)
            t = e->since + pl->idle_ns;
        if (!d || t < d)
            d = t;
    }
    if (pl->active && !pl->stop && !pl->dormant && counted(pl) < pl->size &&
        pl->retry_at > now && (!d || pl->retry_at < d))
        d = pl->retry_at;
    return d;
}

static void wait_until(pthread_cond_t *cv, pthread_mutex_t *m, uint64_t deadline)
{
    struct timespec ts;

    if (!deadline) {
        pthread_cond_wait(cv, m);
        return;
    }
    ts.tv_sec = (time_t)(deadline / UINT64_C(1000000000));
    ts.tv_nsec = (long)(deadline % UINT64_C(1000000000));
    pthread_cond_timedwait(cv, m, &ts);
}

static void note_error(struct core_pool *pl, const char *what)
{
    const struct sbx_error *e = core_error_tls();
    snprintf(pl->last_error, sizeof pl->last_error, "%s: %s", what,
             e->message[0] ? e->message : sbx_strerror(e->code));
}

/* Queue @e for destruction by a worker, or destroy it here when there is
 * no memory to queue it.  Called locked; may unlock. */
static void doom(struct core_pool *pl, entry e)
{
    int rc;

    if (q_push(&pl->doomed, e) == SBX_OK)
        return;
    pthread_mutex_unlock(&pl->lock);
    rc = sbx_sandbox_destroy(e.sb);
    pthread_mutex_lock(&pl->lock);
    pl->destroyed++;
    pl->destroy_failed += rc != SBX_OK;
}

/* Destroy one doomed sandbox.  Called locked; unlocks around the call. */
static void do_destroy(struct core_pool *pl)
{
    entry e = q_pop_front(&pl->doomed);
    int rc;

    pl->destroying++;
    pthread_mutex_unlock(&pl->lock);
    rc = sbx_sandbox_destroy(e.sb);
    pthread_mutex_lock(&pl->lock);
    pl->destroying--;
    pl->destroyed++;
    if (rc != SBX_OK) {
        pl->destroy_failed++;
        note_error(pl, "destroy");
    }
}

/* Reset one returned sandbox (reuse = true).  Called locked. */
static void do_reset(struct core_pool *pl)
{
    entry e = q_pop_front(&pl->dirty);
    sbx_result *r = NULL;
    bool ok;
    int rc;

    pl->resetting++;
    pthread_mutex_unlock(&pl->lock);
    rc = sbx_sandbox_exec(e.sb, pl->reset_opts, &r);
    ok = rc == SBX_OK && sbx_result_status(r) == SBX_RUN_OK;
    pthread_mutex_lock(&pl->lock);
    pl->resetting--;
    pthread_cond_broadcast(&pl->ready_cv);  /* waiters counted on this one */
    if (!ok) {
        pl->reset_failed++;
        if (rc != SBX_OK)
            note_error(pl, "reset");
        else
            snprintf(pl->last_error, sizeof pl->last_error, "reset: '%s' ended %s (exit %d)",
                     pl->reset, sbx_run_status_name(sbx_result_status(r)),
                     sbx_result_exit_code(r));
    }
    sbx_result_free(r);
    e.since = core_now_ns();
    if (ok && !pl->stop && pl->ready.n < pl->size && !too_old(pl, &e, e.since) &&
        q_push(&pl->ready, e) == SBX_OK) {
        pl->reused++;
        pthread_cond_broadcast(&pl->ready_cv);
        return;
    }
    doom(pl, e);
}

/* Runs the pool's warm code in the new sandbox @sb (warm = ...): its
 * first run, which pays for cold caches (an interpreter's first start, a
 * VM's code not yet translated), before any run waits on it.  A failure
 * destroys @sb and is the create's: SBX_E_BACKEND with the error set.
 * Called unlocked. */
static int warm_up(struct core_pool *pl, sbx_sandbox *sb)
{
    sbx_result *r = NULL;
    int rc = sbx_sandbox_exec(sb, pl->warm_opts, &r);

    if (rc == SBX_OK && sbx_result_status(r) != SBX_RUN_OK)
        rc = core_error_set(SBX_E_BACKEND, NULL, "warm code ended %s (exit %d)",
                            sbx_run_status_name(sbx_result_status(r)),
                            sbx_result_exit_code(r));
    sbx_result_free(r);
    if (rc != SBX_OK) {
        struct sbx_error saved = *core_error_tls();
        (void)sbx_sandbox_destroy(sb);
        *core_error_tls() = saved;
    }
    return rc;
}

/* Create one sandbox for the pool.  Called locked. */
static void do_create(struct core_pool *pl)
{
    sbx_sandbox *sb = NULL;
    uint64_t t0 = core_now_ns(), t1;
    int rc;

    pl->creating++;
    pthread_mutex_unlock(&pl->lock);
    rc = sbx_sandbox_create(pl->ctx, pl->copts, &sb);
    if (rc == SBX_OK && pl->warm_opts)
        rc = warm_up(pl, sb);
    t1 = core_now_ns();
    pthread_mutex_lock(&pl->lock);
    pl->creating--;
    if (rc == SBX_OK) {
        entry e = {sb, t1, t1};
        pl->created++;
        pl->create_ns_sum += t1 - t0;
        pl->backoff_ns = 0;
        pl->retry_at = 0;
        if (q_push(&pl->ready, e) != SBX_OK)
            doom(pl, e);
    } else {
        /* Back off, so a broken backend is not hammered. */
        pl->failures++;
        note_error(pl, "create");
        pl->backoff_ns = pl->backoff_ns ? pl->backoff_ns * 2 : BACKOFF_MIN_NS;
        if (pl->backoff_ns > BACKOFF_MAX_NS)
            pl->backoff_ns = BACKOFF_MAX_NS;
        pl->retry_at = t1 + pl->backoff_ns;
    }
    pthread_cond_broadcast(&pl->ready_cv);
}

static void *worker(void *arg)
{
    struct core_pool *pl = arg;

    pthread_mutex_lock(&pl->lock);
    for (;;) {
        uint64_t now = core_now_ns();

        if (pl->doomed.n) {
            do_destroy(pl);
            continue;
        }
        if (pl->dirty.n) {
            if (pl->stop) {
                doom(pl, q_pop_front(&pl->dirty));
                continue;
            }
            do_reset(pl);
            continue;
        }
        if (pl->stop)
            break;
        if (expire_some(pl, now))
            continue;
        if (wants_more(pl) && now >= pl->retry_at) {
            do_create(pl);
            continue;
        }
        wait_until(&pl->work, &pl->lock, next_deadline(pl, now));
    }
    pthread_mutex_unlock(&pl->lock);
    return NULL;
}

/* ---- the context's pools --------------------------------------------------------- */

static void pools_free(struct core_pools *ps)
{
    if (!ps)
        return;
    for (size_t i = 0; i < ps->n; i++)
        core_pool_free(ps->v[i]);
    free(ps->v);
    free(ps);
}

static void pool_stop(struct core_pool *pl)
{
    pthread_mutex_lock(&pl->lock);
    pl->stop = true;
    while (pl->ready.n) {
        entry e = q_pop_front(&pl->ready);
        if (q_push(&pl->doomed, e) != SBX_OK) {
            pl->ready.v[pl->ready.n++] = e;
            break;
        }
    }
    pthread_cond_broadcast(&pl->work);
    pthread_cond_broadcast(&pl->ready_cv);
    pthread_mutex_unlock(&pl->lock);
    for (size_t i = 0; i < pl->n_threads; i++)
        pthread_join(pl->threads[i], NULL);
    pl->n_threads = 0;
    /* Whatever no worker took (none started, or no memory to queue). */
    queue *qs[] = {&pl->doomed, &pl->dirty, &pl->ready};
    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < qs[k]->n; i++) {
            if (sbx_sandbox_destroy(qs[k]->v[i].sb) != SBX_OK)
                pl->destroy_failed++;
            pl->destroyed++;
        }
        qs[k]->n = 0;
    }
}

void core_pools_stop(sbx_ctx *ctx)
{
    struct core_pools *ps = ctx->pools;

    if (!ps)
        return;
    for (size_t i = 0; i < ps->n; i++)
        pool_stop(ps->v[i]);
    pools_free(ps);
    ctx->pools = NULL;
}

static int start_threads(struct core_pool *pl)
{
    size_t n = pl->parallel ? pl->parallel : 1;

    if (!pl->active)
        return SBX_OK;
    if (!(pl->threads = calloc(n, sizeof *pl->threads)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int e = pthread_create(&pl->threads[i], NULL, worker, pl);
        if (e != 0) {
            if (pl->n_threads > 0)
                break;  /* fewer at once is still a pool */
            return core_error_set(SBX_E_INTERNAL, NULL, "pool '%s': cannot start a thread: %s",
                                  pl->name, strerror(e));
        }
        pl->n_threads++;
    }
    return SBX_OK;
}

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Two pools of one key would leave the second unused: refuse it. */
static int check_keys(const sbx_ctx *ctx, const struct core_pools *ps)
{
    for (size_t j = 1; j < ps->n; j++) {
        const struct core_pool *b = ps->v[j];
        for (size_t i = 0; i < j; i++) {
            const struct core_pool *a = ps->v[i];
            if (str_eq(a->provider, b->provider) && str_eq(a->template_name, b->template_name) &&
                !memcmp(a->limits, b->limits, sizeof a->limits))
                return core_error_set(SBX_E_CONFIG, NULL,
                                      "%s: pools '%s' and '%s' (%s) have the same key "
                                      "(provider, template and limits): runs would only "
                                      "ever use '%s'", ctx->cfg.pools[j].file, a->name,
                                      b->name, ctx->cfg.pools[i].file, a->name);
        }
    }
    return SBX_OK;
}

int core_pools_start(sbx_ctx *ctx)
{
    struct core_pools *ps;
    int rc = SBX_OK;

    if (ctx->cfg.n_pools == 0)
        return SBX_OK;
    if (!(ps = calloc(1, sizeof *ps)) || !(ps->v = calloc(ctx->cfg.n_pools, sizeof *ps->v))) {
        free(ps);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    /* Check every pool before starting any, so a bad one starts none. */
    for (size_t i = 0; i < ctx->cfg.n_pools && rc == SBX_OK; i++) {
        rc = core_pool_new(ctx, &ctx->cfg.pools[i], &ps->v[i]);
        if (rc == SBX_OK)
            ps->n++;
    }
    if (rc == SBX_OK)
        rc = check_keys(ctx, ps);
    if (rc != SBX_OK) {
        pools_free(ps);
        return rc;
    }
    ctx->pools = ps;
    if (ctx->cfg.pools_off) {
        for (size_t i = 0; i < ps->n; i++) {
            ps->v[i]->active = false;
            snprintf(ps->v[i]->last_error, sizeof ps->v[i]->last_error,
                     "pools are off ([core] pools = false)");
        }
        return SBX_OK;
    }
    for (size_t i = 0; i < ps->n && rc == SBX_OK; i++)
        rc = start_threads(ps->v[i]);
    return rc;
}

/* ---- sbx_run's side ---------------------------------------------------------------- */

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Would a sandbox created with @o be one of @pl's?  Anything the pool does
 * not set (image, network, persistence, ttl, env, labels) must be unset. */
static bool key_matches(const struct core_pool *pl, const sbx_ctx *ctx,
                        const sbx_create_opts *o)
{
    const char *prov = (o && o->provider) ? o->provider : sbx_ctx_default_provider(ctx);

    if (!same_str(prov, pl->provider) || !same_str(o ? o->template_name : NULL,
                                                   pl->template_name))
        return false;
    if (o && (o->image || o->network == SBX_NET_HOST || o->persistent || o->ttl_ns ||
              o->env.n || o->labels.n))
        return false;
    /* The pool's sandboxes have their template's network: a request that
     * narrows it (or asks egress of a template without) is not theirs. */
    if (o && o->network_set) {
        const sbx_template *t = sbx_ctx_find_template(ctx, pl->template_name);
        if ((o->network == SBX_NET_EGRESS) != (t && sbx_template_egress(t)))
            return false;
    }
    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        uint64_t v = (o && o->limits[i]) ? o->limits[i] : ctx->cfg.limits[i];
        if (v != pl->limits[i])
            return false;
    }
    return true;
}

sbx_sandbox *core_pool_take(sbx_ctx *ctx, const sbx_create_opts *copts, core_pool_lease **lease)
{
    struct core_pools *ps = ctx->pools;
    struct core_pool *pl = NULL;
    core_pool_lease *l;
    uint64_t t0 = core_now_ns();

    *lease = NULL;
    for (size_t i = 0; ps && i < ps->n && !pl; i++)
        if (key_matches(ps->v[i], ctx, copts))
            pl = ps->v[i];
    if (!pl)
        return NULL;
    if (!(l = malloc(sizeof *l)))
        return NULL;    /* the run goes on without the pool */
    pthread_mutex_lock(&pl->lock);
    if (pl->dormant) {
        pl->dormant = false;
        pthread_cond_signal(&pl->work);
    }
    for (;;) {
        uint64_t now = core_now_ns();
        while (pl->ready.n && idle_expired(pl, &pl->ready.v[0], now)) {
            /* let a worker destroy it; never hand out a stale one */
            if (!expire_some(pl, now))
                break;
            pthread_cond_signal(&pl->work);
        }
        if (pl->ready.n && !idle_expired(pl, &pl->ready.v[0], now)) {
            l->pl = pl;
            l->e = q_pop_front(&pl->ready);
            pl->in_use++;
            pl->hits++;
            uint64_t w = core_now_ns() - t0;
            pl->waits[(pl->hits - 1) % WAIT_SAMPLES] = w;
            pl->wait_ns_sum += w;
            pthread_cond_signal(&pl->work);     /* refill */
            pthread_mutex_unlock(&pl->lock);
            *lease = l;
            return l->e.sb;
        }
        /* A creation under way that no other run waits for is as quick as
         * our own would be, and already started: wait for it. */
        if (pl->stop || pl->creating + pl->resetting <= pl->waiters)
            break;
        pl->waiters++;
        pthread_cond_wait(&pl->ready_cv, &pl->lock);
        pl->waiters--;
    }
    pl->misses++;
    pthread_cond_signal(&pl->work);
    pthread_mutex_unlock(&pl->lock);
    free(l);
    return NULL;
}

void core_pool_release(core_pool_lease *l, bool healthy)
{
    struct core_pool *pl = l->pl;
    entry e = l->e;
    bool now_destroy = false;
    int rc;

    free(l);
    pthread_mutex_lock(&pl->lock);
    pl->in_use--;
    if (pl->reuse && healthy && !pl->stop && !too_old(pl, &e, core_now_ns()) &&
        q_push(&pl->dirty, e) == SBX_OK) {
        /* reset by a worker */
    } else if (pl->stop || pl->n_threads == 0 || pl->doomed.n >= 4 * pl->parallel + pl->size ||
               q_push(&pl->doomed, e) != SBX_OK) {
        /* No worker, or destroys are piling up: do it here. */
        now_destroy = true;
    }
    pthread_cond_signal(&pl->work);
    pthread_mutex_unlock(&pl->lock);
    if (now_destroy) {
        rc = sbx_sandbox_destroy(e.sb);
        pthread_mutex_lock(&pl->lock);
        pl->destroyed++;
        pl->destroy_failed += rc != SBX_OK;
        pthread_mutex_unlock(&pl->lock);
    }
}

const char *core_pool_lease_name(const core_pool_lease *l)
{
    return l->pl->name;
}

/* ---- public: statistics ------------------------------------------------------------- */

static struct core_pool *find_pool(const sbx_ctx *ctx, const char *name)
{
    struct core_pools *ps = ctx ? ctx->pools : NULL;

    for (size_t i = 0; ps && name && i < ps->n; i++)
        if (!strcmp(ps->v[i]->name, name))
            return ps->v[i];
    core_error_set(SBX_E_NOT_FOUND, NULL, "no pool named '%s' (see pools.d/)",
                   name ? name : "(null)");
    return NULL;
}

size_t sbx_ctx_pool_count(const sbx_ctx *ctx)
{
    return (ctx && ctx->pools) ? ctx->pools->n : 0;
}

const char *sbx_ctx_pool_name(const sbx_ctx *ctx, size_t i)
{
    if (!ctx || !ctx->pools || i >= ctx->pools->n)
        return NULL;
    return ctx->pools->v[i]->name;
}

const char *sbx_pool_provider(const sbx_ctx *ctx, const char *pool)
{
    struct core_pool *pl = find_pool(ctx, pool);
    return pl ? pl->provider : NULL;
}

const char *sbx_pool_template(const sbx_ctx *ctx, const char *pool)
{
    struct core_pool *pl = find_pool(ctx, pool);
    return pl ? pl->template_name : NULL;
}

const char *sbx_pool_stat_name(sbx_pool_stat s)
{
    static const char *const names[SBX_POOL_STAT_COUNT] = {
        "size", "ready", "creating", "in_use", "hits", "misses", "created", "destroyed",
        "failures", "expired", "reused", "reset_failures", "destroy_failures",
        "wait_mean_ns", "wait_median_ns", "create_mean_ns", "active",
    };
    return (unsigned)s < SBX_POOL_STAT_COUNT ? names[s] : NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int sbx_pool_stats(sbx_ctx *ctx, const char *pool, uint64_t *out, size_t n)
{
    uint64_t v[SBX_POOL_STAT_COUNT], sorted[WAIT_SAMPLES];
    struct core_pool *pl;
    size_t ns;

    core_error_clear();
    if (!ctx || !pool || (!out && n))
        return core_error_set(SBX_E_INVAL, NULL, "sbx_pool_stats: NULL argument");
    if (!(pl = find_pool(ctx, pool)))
        return SBX_E_NOT_FOUND;
    pthread_mutex_lock(&pl->lock);
    ns = pl->hits < WAIT_SAMPLES ? (size_t)pl->hits : WAIT_SAMPLES;
    memcpy(sorted, pl->waits, ns * sizeof *sorted);
    v[SBX_POOL_STAT_SIZE] = pl->size;
    v[SBX_POOL_STAT_READY] = pl->ready.n;
    v[SBX_POOL_STAT_CREATING] = pl->creating + pl->resetting + pl->dirty.n;
    v[SBX_POOL_STAT_IN_USE] = pl->in_use;
    v[SBX_POOL_STAT_HITS] = pl->hits;
    v[SBX_POOL_STAT_MISSES] = pl->misses;
    v[SBX_POOL_STAT_CREATED] = pl->created;
    v[SBX_POOL_STAT_DESTROYED] = pl->destroyed;
    v[SBX_POOL_STAT_FAILURES] = pl->failures;
    v[SBX_POOL_STAT_EXPIRED] = pl->expired;
    v[SBX_POOL_STAT_REUSED] = pl->reused;
    v[SBX_POOL_STAT_RESET_FAILURES] = pl->reset_failed;
    v[SBX_POOL_STAT_DESTROY_FAILURES] = pl->destroy_failed;
    v[SBX_POOL_STAT_WAIT_MEAN_NS] = pl->hits ? pl->wait_ns_sum / pl->hits : 0;
    v[SBX_POOL_STAT_CREATE_MEAN_NS] = pl->created ? pl->create_ns_sum / pl->created : 0;
    v[SBX_POOL_STAT_ACTIVE] = pl->active;
    pthread_mutex_unlock(&pl->lock);
    qsort(sorted, ns, sizeof *sorted, cmp_u64);
    v[SBX_POOL_STAT_WAIT_MEDIAN_NS] = ns ? sorted[ns / 2] : 0;
    for (size_t i = 0; i < n; i++)
        out[i] = i < SBX_POOL_STAT_COUNT ? v[i] : 0;
    return SBX_OK;
}

int sbx_pool_last_error(sbx_ctx *ctx, const char *pool, char *buf, size_t size)
{
    struct core_pool *pl;

    core_error_clear();
    if (!ctx || !pool || !buf || !size)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_pool_last_error: NULL argument");
    if (!(pl = find_pool(ctx, pool)))
        return SBX_E_NOT_FOUND;
    pthread_mutex_lock(&pl->lock);
    snprintf(buf, size, "%s", pl->last_error);
    pthread_mutex_unlock(&pl->lock);
    return SBX_OK;
}

/* Wait until @pl holds its size ready, or @deadline passes. */
static int wait_one(struct core_pool *pl, uint64_t deadline)
{
    int rc = SBX_OK;

    if (!pl->active)
        return core_error_set(SBX_E_PROVIDER_UNAVAILABLE, NULL, "pool '%s' is not running: %s",
                              pl->name, pl->last_error[0] ? pl->last_error : "size = 0");
    pthread_mutex_lock(&pl->lock);
    while (pl->ready.n < pl->size && !pl->stop) {
        if (core_now_ns() >= deadline) {
            rc = core_error_set(SBX_E_TIMEOUT, NULL, "pool '%s': %zu of %zu ready in time%s%s",
                                pl->name, pl->ready.n, pl->size,
                                pl->last_error[0] ? "; last error: " : "", pl->last_error);
            break;
        }
        wait_until(&pl->ready_cv, &pl->lock, deadline);
    }
    pthread_mutex_unlock(&pl->lock);
    return rc;
}

int sbx_pool_wait(sbx_ctx *ctx, const char *pool, uint64_t timeout_ns)
{
    uint64_t deadline;
    struct core_pool *pl;
    int rc = SBX_OK;

    core_error_clear();
    if (!ctx)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_pool_wait: NULL context");
    deadline = core_now_ns() + timeout_ns;
    if (pool) {
        if (!(pl = find_pool(ctx, pool)))
            return SBX_E_NOT_FOUND;
        return wait_one(pl, deadline);
    }
    for (size_t i = 0; ctx->pools && i < ctx->pools->n && rc == SBX_OK; i++)
        if (ctx->pools->v[i]->active)
            rc = wait_one(ctx->pools->v[i], deadline);
    return rc;
}
