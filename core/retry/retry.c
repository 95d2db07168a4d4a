/* core/retry/retry.c - [retry]/[breaker] settings, retryable codes, backoff with
 * full jitter, Retry-After, and the hooks tests use to see every sleep
 *
 * A retry waits uniform(0, min(cap, base * 2^n)) before try n+2 ("full
 * jitter": concurrent clients spread out instead of retrying in step), or
 * longer when the backend said Retry-After, and never past the operation's
 * deadline.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "units.h"
#include "conf.h"
#include "context.h"
#include "retry/retry.h"
#include "clock.h"
#include "provider-int.h"

/* ---- settings ------------------------------------------------------------- */

enum rs_kind { RS_COUNT, RS_DURATION };

static const struct rs_info {
    const char *section;
    const char *key;
    enum rs_kind kind;
    bool allow_zero;
    uint64_t def;
} rs_info[CORE_RS_COUNT] = {
    /* 8 tries: with 30% transient faults one operation in ~15000 fails. */
    [CORE_RS_ATTEMPTS] = { "retry", "attempts", RS_COUNT, false, 8 },
    [CORE_RS_BASE] = { "retry", "base", RS_DURATION, false, UINT64_C(100000000) },
    [CORE_RS_CAP] = { "retry", "cap", RS_DURATION, false, UINT64_C(5000000000) },
    [CORE_RS_RETRY_AFTER_MAX] = { "retry", "max_retry_after", RS_DURATION, true,
                                  UINT64_C(30000000000) },
    [CORE_RS_DEADLINE] = { "retry", "deadline", RS_DURATION, false,
                           UINT64_C(60000000000) },
    [CORE_RS_FAILURES] = { "breaker", "failures", RS_COUNT, false, 5 },
    [CORE_RS_OPEN_TIME] = { "breaker", "open_time", RS_DURATION, false,
                            UINT64_C(30000000000) },
    [CORE_RS_TRIALS] = { "breaker", "trials", RS_COUNT, false, 1 },
};

/* Upper bounds keep the arithmetic far from overflow and typos visible. */
#define RS_MAX_COUNT 1000
#define RS_MAX_DURATION (UINT64_C(86400) * UINT64_C(1000000000))

int core_resil_apply(core_resil_conf *c, const char *section, const char *key,
                     const char *value, const char **why)
{
    for (int i = 0; i < CORE_RS_COUNT; i++) {
        const struct rs_info *r = &rs_info[i];
        uint64_t v;
        int rc;

        if (strcmp(r->section, section) || strcmp(r->key, key))
            continue;
        if (r->kind == RS_COUNT)
            rc = core_parse_count(value, r->allow_zero, &v, why);
        else
            rc = core_parse_duration(value, r->allow_zero, &v, why);
        if (rc != SBX_OK)
            return SBX_E_CONFIG;
        if (v > (r->kind == RS_COUNT ? (uint64_t)RS_MAX_COUNT : RS_MAX_DURATION)) {
            *why = r->kind == RS_COUNT ? "above the maximum of 1000"
                                       : "above the maximum of 24h";
            return SBX_E_CONFIG;
        }
        c->v[i] = v;
        c->set[i] = true;
        return SBX_OK;
    }
    return SBX_E_NOT_FOUND;
}

const char *core_resil_keys(const char *section)
{
    return strcmp(section, "retry") == 0
               ? "attempts, base, cap, max_retry_after, deadline"
               : "failures, open_time, trials";
}

uint64_t core_resil_get(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                        int which)
{
    if (which < 0 || which >= CORE_RS_COUNT)
        return 0;
    if (p && p->conf && p->conf->resil.set[which])
        return p->conf->resil.v[which];
    if (ctx && ctx->cfg.resil.set[which])
        return ctx->cfg.resil.v[which];
    return rs_info[which].def;
}

bool core_retryable(int code)
{
    switch (code) {
    case SBX_E_NETWORK:      /* transport: refused, reset, dropped stream */
    case SBX_E_SERVER:       /* 5xx */
    case SBX_E_RATE_LIMITED: /* 429 */
    case SBX_E_BUSY:         /* backend resources exhausted for now */
    case SBX_E_TIMEOUT:      /* a backend call (not the code) was too slow */
        return true;
    default:                 /* auth, bad requests, config, limits, ...: never */
        return false;
    }
}

/* ---- hooks ----------------------------------------------------------------- */

static uint64_t real_now(void *ud)
{
    (void)ud;
    return core_now_ns();
}

static void real_sleep(void *ud, uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

    (void)ud;
    /* EINTR: sleep the rest; anything else cannot happen with valid ts. */
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* xorshift64*, one state per thread, seeded from the kernel. */
static uint64_t real_random(void *ud)
{
    static _Thread_local uint64_t state;

    (void)ud;
    while (state == 0) {
        if (getrandom(&state, sizeof state, GRND_NONBLOCK) != (ssize_t)sizeof state)
            state = core_now_ns() ^ (uint64_t)(uintptr_t)&state;
    }
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * UINT64_C(2685821657736338717);
}

static const core_retry_hooks real_hooks = { real_now, real_sleep, real_random, NULL };
static core_retry_hooks hooks = { real_now, real_sleep, real_random, NULL };
static pthread_rwlock_t hooks_lock = PTHREAD_RWLOCK_INITIALIZER;

void core_retry_set_hooks(const core_retry_hooks *h)
{
    pthread_rwlock_wrlock(&hooks_lock);
    hooks = h ? *h : real_hooks;
    pthread_rwlock_unlock(&hooks_lock);
}

static core_retry_hooks get_hooks(void)
{
    core_retry_hooks h;

    pthread_rwlock_rdlock(&hooks_lock);
    h = hooks;
    pthread_rwlock_unlock(&hooks_lock);
    return h;
}

uint64_t core_retry_now(void)
{
    core_retry_hooks h = get_hooks();
    return h.now(h.ud);
}

/* ---- backoff ---------------------------------------------------------------- */

uint64_t core_retry_delay(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                          unsigned n, uint64_t retry_after_ns)
{
    core_retry_hooks h = get_hooks();
    uint64_t base = core_resil_get(ctx, p, CORE_RS_BASE);
    uint64_t cap = core_resil_get(ctx, p, CORE_RS_CAP);
    uint64_t ra_max = core_resil_get(ctx, p, CORE_RS_RETRY_AFTER_MAX);
    uint64_t ceil = base, d;

    /* base * 2^n without overflow: both are at most a day. */
    for (unsigned i = 0; i < n && ceil < cap; i++)
        ceil *= 2;
    if (ceil > cap)
        ceil = cap;
    d = ceil == UINT64_MAX ? h.random(h.ud) : h.random(h.ud) % (ceil + 1);
    if (retry_after_ns > ra_max)
        retry_after_ns = ra_max;
    return d > retry_after_ns ? d : retry_after_ns;
}

uint64_t core_retry_deadline(const struct sbx_ctx *ctx)
{
    return core_retry_now() + core_resil_get(ctx, NULL, CORE_RS_DEADLINE);
}

void core_retry_begin(core_retry *r, const struct sbx_ctx *ctx,
                      const struct sbx_provider *p, uint64_t deadline)
{
    r->ctx = ctx;
    r->p = p;
    r->attempts = 1;
    r->deadline = deadline ? deadline
                           : core_retry_now() + core_resil_get(ctx, p, CORE_RS_DEADLINE);
}

/* Say in the error how hard we tried, once. */
static void note_attempts(const core_retry *r, const char *why)
{
    struct sbx_error *e = core_error_tls();
    size_t len = strlen(e->message);

    if (r->attempts > 1 && len < sizeof e->message)
        snprintf(e->message + len, sizeof e->message - len, " (%u attempts%s)",
                 r->attempts, why);
}

bool core_retry_again(core_retry *r, int rc)
{
    core_retry_hooks h = get_hooks();
    uint64_t max = core_resil_get(r->ctx, r->p, CORE_RS_ATTEMPTS);
    uint64_t delay, now;

    if (!core_retryable(rc)) {
        note_attempts(r, "");
        return false;
    }
    if (r->attempts >= max) {
        note_attempts(r, "");
        return false;
    }
    delay = core_retry_delay(r->ctx, r->p, r->attempts - 1,
                             core_error_tls()->retry_after_ns);
    now = h.now(h.ud);
    if (now >= r->deadline || delay > r->deadline - now) {
        note_attempts(r, ", retry deadline reached");
        return false;
    }
    h.sleep(h.ud, delay);
    r->attempts++;
    return true;
}
