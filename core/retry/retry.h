/* core/retry/retry.h - retries with backoff and circuit breakers
 * (core/retry/)
 *
 * The [retry] and [breaker] settings' values (core_resil_conf) are
 * configuration, in conf.h; reading and applying them is here.
 * Included by the files that retry or consult a breaker.
 */
#ifndef SBX_CORE_RETRY_H
#define SBX_CORE_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include <polysandbox/sandbox.h>

#include "conf.h"

/* ---- retries (core/retry/retry.c) ---------------------------------------- */

/* Apply one [retry] or [breaker] key to @c.  SBX_OK; SBX_E_CONFIG with *why
 * (static) on a bad value; SBX_E_NOT_FOUND for an unknown key. */
int core_resil_apply(core_resil_conf *c, const char *section, const char *key,
                     const char *value, const char **why);
/* The known keys of a section, for messages ("attempts, base, ..."). */
const char *core_resil_keys(const char *section);
/* The setting @which for @p (NULL: the context's): the provider's override,
 * else [retry]/[breaker] of polysandbox.ini, else the built-in default. */
uint64_t core_resil_get(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                        int which);

/* Codes worth another try of the same call: SBX_E_NETWORK, SBX_E_SERVER,
 * SBX_E_RATE_LIMITED, SBX_E_BUSY, SBX_E_TIMEOUT. */
bool core_retryable(int code);

/* Clock, sleep and randomness of retries and breakers.  Tests replace them
 * (core_retry_set_hooks) to see every sleep without waiting. */
typedef struct core_retry_hooks {
    uint64_t (*now)(void *ud);          /* monotonic ns */
    void (*sleep)(void *ud, uint64_t ns);
    uint64_t (*random)(void *ud);       /* 64 uniform bits */
    void *ud;
} core_retry_hooks;
/* NULL restores the real ones.  Not for concurrent use with retries. */
void core_retry_set_hooks(const core_retry_hooks *h);
uint64_t core_retry_now(void);

/* The backoff before retry number @n (0 = the first retry): full jitter,
 * uniform in [0, min(cap, base * 2^n)], raised to @retry_after_ns (itself
 * capped by max_retry_after) when the backend asked for a wait. */
uint64_t core_retry_delay(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                          unsigned n, uint64_t retry_after_ns);

/* One operation's retries: begin, then after each failed attempt ask
 * core_retry_again, which sleeps and says true when one more is due. */
typedef struct core_retry {
    const struct sbx_ctx *ctx;
    const struct sbx_provider *p;
    unsigned attempts;          /* made so far */
    uint64_t deadline;          /* core_retry_now() time budget end */
} core_retry;
/* @deadline 0: now + [retry] deadline. */
void core_retry_begin(core_retry *r, const struct sbx_ctx *ctx,
                      const struct sbx_provider *p, uint64_t deadline);
/* After a failed attempt that returned @rc (the thread's error holds its
 * detail): false when @rc is not retryable, the attempts are spent or the
 * wait would pass the deadline (the error then says how many attempts were
 * made); else waits the backoff and returns true. */
bool core_retry_again(core_retry *r, int rc);
/* The deadline of a new operation: now + [retry] deadline. */
uint64_t core_retry_deadline(const struct sbx_ctx *ctx);

/* ---- circuit breakers (core/retry/breaker.c) ----------------------------- */

/* One breaker per provider.  Closed: calls go through; @failures consecutive
 * failed creates open it.  Open: creates skip the provider for open_time,
 * then half-open: @trials creates at once may try; a success closes it, a
 * failure opens it again. */
int core_breakers_init(struct sbx_ctx *ctx);
void core_breakers_free(struct sbx_ctx *ctx);
/* May a create go to @p?  SBX_OK (and *trial when it is a half-open trial)
 * or SBX_E_PROVIDER_UNAVAILABLE with the thread's error saying why. */
int core_breaker_acquire(struct sbx_ctx *ctx, struct sbx_provider *p, bool *trial);
/* The outcome of an acquired call: @rc after its retries; @backend: the
 * provider failed (not the request). */
void core_breaker_record(struct sbx_ctx *ctx, struct sbx_provider *p, bool trial,
                         int rc, bool backend);

#endif
