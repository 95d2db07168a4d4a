/* tests/provider/flaky.c - the "flaky" flavour: a working provider with
 * injected faults (tests/resilience/test-resilience, check.sh)
 *
 * Sandboxes are records in memory.  exec runs nothing: for argv
 * "sample N" it prints "N squared is N*N" and exits 1 when N is a
 * multiple of 3, else 0 (a fixed verdict per sample); for anything else it
 * echoes its arguments.  Faults come from [settings]:
 *
 *   create_fail_first = N     the first N creates fail
 *   create_fail_rate = P      then P% of creates fail at random
 *   create_error = NAME       with this code: server (default), network,
 *                             rate_limited, busy, timeout, auth, inval,
 *                             backend
 *   exec_drop_rate = P        P% of execs deliver half their output, then
 *                             fail with SBX_E_NETWORK (a dropped stream)
 *   exec_drop_first = N       the first N execs drop their stream
 *   exec_not_started_first = N  the first N execs fail with SBX_E_SERVER
 *                             before starting (the outcome's not_started)
 *   list_fail_first = N       the first N lists fail (SBX_E_SERVER)
 *   destroy_fail_first = N    the first N destroys fail (SBX_E_NETWORK)
 *                             and leave the sandbox alive
 *   retry_after_ms = MS       every injected failure says Retry-After MS
 *   health = ok | fail        what the health op answers (default ok)
 *   seed = S                  of the random faults (default 1)
 *
 * It claims the zygote capability and counts the execs whose spec names
 * a zygote (zygote_hints), or, as flaky11, the calls of exec_zygote
 * (exec_zygotes).
 *
 * The test reads counters with flaky_stat(), found by dlsym.  Built three
 * times: as "flaky" and as "flaky2" (TP_NAME), for fallback chains, and
 * as "flaky11", a provider that declares ABI 1.11
 * (-DSBX_PROVIDER_ABI_MINOR=11) and gives an exec's retry hints through
 * host->not_started and host->retry_after; all name their sandboxes
 * "flaky-N".
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testprov.h"

struct fsb {
    struct fsb *next;
    char id[32];
    int alive;
};

struct flaky {
    struct tp *t;
    pthread_mutex_t lock;
    uint64_t rng;
    unsigned long create_fail_first, create_fail_rate, exec_drop_rate;
    unsigned long exec_not_started_first, destroy_fail_first, retry_after_ms;
    unsigned long exec_drop_first, list_fail_first;
    int create_error;
    int healthy;
    struct fsb *all;        /* every sandbox made, alive or not */
    unsigned long next_id;
};

/* Counters over every context of the process (the test makes several). */
static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
#define N_STATS 13
static long stats[N_STATS];
static const char *const stat_names[N_STATS] = {
    "creates", "create_failures", "execs", "exec_failures", "destroys",
    "destroy_failures", "attaches", "health", "live", "retry_after_calls", "lists",
    "zygote_hints", "exec_zygotes",
};
enum { S_CREATES, S_CREATE_FAIL, S_EXECS, S_EXEC_FAIL, S_DESTROYS, S_DESTROY_FAIL,
       S_ATTACHES, S_HEALTH, S_LIVE, S_RETRY_AFTER, S_LISTS, S_ZYGOTE_HINTS,
       S_EXEC_ZYGOTES };

static void bump(int which, long by)
{
    pthread_mutex_lock(&stat_lock);
    stats[which] += by;
    pthread_mutex_unlock(&stat_lock);
}

SBX_PROVIDER_EXPORT long flaky_stat(const char *name);
SBX_PROVIDER_EXPORT long flaky_stat(const char *name)
{
    long v = -1;

    pthread_mutex_lock(&stat_lock);
    for (int i = 0; i < N_STATS; i++)
        if (!strcmp(name, stat_names[i]))
            v = stats[i];
    pthread_mutex_unlock(&stat_lock);
    return v;
}

SBX_PROVIDER_EXPORT void flaky_reset(void);
SBX_PROVIDER_EXPORT void flaky_reset(void)
{
    pthread_mutex_lock(&stat_lock);
    memset(stats, 0, sizeof stats);
    pthread_mutex_unlock(&stat_lock);
}

static const struct {
    const char *name;
    int code;
} codes[] = {
    {"server", SBX_E_SERVER}, {"network", SBX_E_NETWORK},
    {"rate_limited", SBX_E_RATE_LIMITED}, {"busy", SBX_E_BUSY},
    {"timeout", SBX_E_TIMEOUT}, {"auth", SBX_E_AUTH}, {"inval", SBX_E_INVAL},
    {"backend", SBX_E_BACKEND},
};

/* The numeric settings: where each goes (SIZE_MAX: the seed) and its
 * largest value. */
static const struct {
    const char *key;
    unsigned long max;
    size_t off;
} nums[] = {
    {"create_fail_first", 1000000, offsetof(struct flaky, create_fail_first)},
    {"create_fail_rate", 100, offsetof(struct flaky, create_fail_rate)},
    {"exec_drop_rate", 100, offsetof(struct flaky, exec_drop_rate)},
    {"exec_drop_first", 1000000, offsetof(struct flaky, exec_drop_first)},
    {"exec_not_started_first", 1000000, offsetof(struct flaky, exec_not_started_first)},
    {"destroy_fail_first", 1000000, offsetof(struct flaky, destroy_fail_first)},
    {"list_fail_first", 1000000, offsetof(struct flaky, list_fail_first)},
    {"retry_after_ms", 3600000, offsetof(struct flaky, retry_after_ms)},
    {"seed", 1000000000, SIZE_MAX},
};

int tp_setup(struct tp *t)
{
    const sbx_host_v1 *host = t->host;
    struct flaky *f;
    const char *err, *health;
    unsigned long seed = 1;
    int rc = SBX_OK;

    if (host->struct_size < sizeof *host || host->abi_minor < 1)
        return host->set_error(t->h, SBX_E_INTERNAL, "flaky needs host ABI 1.1");
    if (!(f = calloc(1, sizeof *f)))
        return host->set_error(t->h, SBX_E_NOMEM, "out of memory");
    if (pthread_mutex_init(&f->lock, NULL) != 0) {
        free(f);
        return host->set_error(t->h, SBX_E_INTERNAL, "mutex");
    }
    f->t = t;
    f->create_error = SBX_E_SERVER;
    f->healthy = 1;
    t->own = f;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0] && rc == SBX_OK; i++)
        rc = tp_setting_num(t, nums[i].key, 0, nums[i].max,
                            nums[i].off == SIZE_MAX ? &seed
                                                    : (unsigned long *)((char *)f + nums[i].off));
    if (rc == SBX_OK && (err = host->config_get(t->h, "create_error"))) {
        rc = host->set_error(t->h, SBX_E_CONFIG, "bad create_error '%s'", err);
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
            if (!strcmp(err, codes[i].name)) {
                f->create_error = codes[i].code;
                rc = SBX_OK;
            }
    }
    if (rc == SBX_OK && (health = host->config_get(t->h, "health")))
        f->healthy = strcmp(health, "fail") != 0;
    f->rng = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    return rc;
}

void tp_teardown(struct tp *t)
{
    struct flaky *f = t->own;

    if (!f)
        return;
    while (f->all) {
        struct fsb *n = f->all->next;
        free(f->all);
        f->all = n;
    }
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* Percent chance, under the lock. */
static int roll(struct flaky *f, unsigned long pct)
{
    int hit;

    if (pct == 0)
        return 0;
    pthread_mutex_lock(&f->lock);
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    hit = (f->rng * UINT64_C(2685821657736338717)) % 100 < pct;
    pthread_mutex_unlock(&f->lock);
    return hit;
}

/* Take one from a "first N" budget. */
static int take(struct flaky *f, unsigned long *budget)
{
    int hit;

    pthread_mutex_lock(&f->lock);
    hit = *budget > 0;
    if (hit)
        (*budget)--;
    pthread_mutex_unlock(&f->lock);
    return hit;
}

/* An injected failure of any op but exec: the Retry-After goes through
 * host->retry_after. */
static int fail(struct flaky *f, int code, const char *what)
{
    if (f->retry_after_ms) {
        f->t->host->retry_after(f->t->h, f->retry_after_ms);
        bump(S_RETRY_AFTER, 1);
    }
    return f->t->host->set_error(f->t->h, code, "flaky: injected %s", what);
}

/* An injected failure of exec: its hints go in @out (ABI 1.12), or, built
 * as a 1.11 provider (flaky11), through host->not_started and
 * host->retry_after, the way before. */
static int exec_fail(struct flaky *f, sbx_exec_outcome_v1 *out, int code, int not_started,
                     const char *what)
{
#if SBX_PROVIDER_ABI_MINOR >= 12
    if (SBX_OUTCOME_HAS(out, retry_after_ms)) {
        out->not_started = not_started;
        out->retry_after_ms = f->retry_after_ms;
        if (f->retry_after_ms)
            bump(S_RETRY_AFTER, 1);
        return f->t->host->set_error(f->t->h, code, "flaky: injected %s", what);
    }
#else
    (void)out;
#endif
    if (not_started)
        f->t->host->not_started(f->t->h);
    return fail(f, code, what);
}

static int flaky_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                        char id[SBX_ID_MAX])
{
    struct flaky *f = ((struct tp *)prov)->own;
    struct fsb *s;

    (void)spec;
    bump(S_CREATES, 1);
    if (take(f, &f->create_fail_first) || roll(f, f->create_fail_rate)) {
        bump(S_CREATE_FAIL, 1);
        return fail(f, f->create_error, "create failure");
    }
    if (!(s = calloc(1, sizeof *s)))
        return f->t->host->set_error(f->t->h, SBX_E_NOMEM, "out of memory");
    pthread_mutex_lock(&f->lock);
    snprintf(s->id, sizeof s->id, "flaky-%lu", ++f->next_id);
    s->alive = 1;
    s->next = f->all;
    f->all = s;
    pthread_mutex_unlock(&f->lock);
    bump(S_LIVE, 1);
    snprintf(id, SBX_ID_MAX, "%s", s->id);
    *sb = s;
    return SBX_OK;
}

static int flaky_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct flaky *f = ((struct tp *)prov)->own;
    char line[256];
    int n, code = 0;

    (void)sb;
    bump(S_EXECS, 1);
#if SBX_PROVIDER_ABI_MINOR >= 12
    if (spec->struct_size >= offsetof(sbx_exec_spec_v1, zygote) + sizeof spec->zygote &&
        spec->zygote)
        bump(S_ZYGOTE_HINTS, 1);
#endif
    if (take(f, &f->exec_not_started_first)) {
        bump(S_EXEC_FAIL, 1);
        return exec_fail(f, out, SBX_E_SERVER, 1, "exec failure before the command started");
    }
    if (spec->argv[0] && !strcmp(spec->argv[0], "sample") && spec->argv[1]) {
        long v = strtol(spec->argv[1], NULL, 10);
        n = snprintf(line, sizeof line, "%ld squared is %ld\n", v, v * v);
        code = v % 3 == 0 ? 1 : 0;
    } else {
        n = snprintf(line, sizeof line, "%s\n", spec->argv[1] ? spec->argv[1] : "");
    }
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    if (take(f, &f->exec_drop_first) || roll(f, f->exec_drop_rate)) {
        bump(S_EXEC_FAIL, 1);
        sink->write(sink->ud, SBX_STREAM_STDOUT, line, (size_t)n / 2);
        return exec_fail(f, out, SBX_E_NETWORK, 0, "dropped stream");
    }
    sink->write(sink->ud, SBX_STREAM_STDOUT, line, (size_t)n);
    out->status = code ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
    out->exit_code = code;
    return SBX_OK;
}

#if SBX_PROVIDER_ABI_MINOR < 12
/* The zygote before ABI 1.12: its own op, which runs nothing either. */
static int flaky_exec_zygote(void *prov, void *sb, const char *const *zygote,
                             const sbx_exec_spec_v1 *spec, const sbx_output_sink_v1 *sink,
                             sbx_exec_outcome_v1 *out)
{
    (void)zygote;
    bump(S_EXEC_ZYGOTES, 1);
    return flaky_exec(prov, sb, spec, sink, out);
}
#endif

static int flaky_destroy(void *prov, void *sb)
{
    struct flaky *f = ((struct tp *)prov)->own;
    struct fsb *s = sb;

    /* The handle is the record itself: nothing to free but the sandbox. */
    bump(S_DESTROYS, 1);
    if (take(f, &f->destroy_fail_first)) {
        bump(S_DESTROY_FAIL, 1);
        return fail(f, SBX_E_NETWORK, "destroy failure");
    }
    pthread_mutex_lock(&f->lock);
    if (s->alive) {
        s->alive = 0;
        bump(S_LIVE, -1);
    }
    pthread_mutex_unlock(&f->lock);
    return SBX_OK;
}

static int flaky_attach(void *prov, const char *id, void **sb)
{
    struct flaky *f = ((struct tp *)prov)->own;
    struct fsb *s;

    bump(S_ATTACHES, 1);
    pthread_mutex_lock(&f->lock);
    for (s = f->all; s && !(s->alive && !strcmp(s->id, id)); s = s->next)
        ;
    pthread_mutex_unlock(&f->lock);
    if (!s)
        return f->t->host->set_error(f->t->h, SBX_E_NOT_FOUND, "flaky: no sandbox '%s'", id);
    *sb = s;
    return SBX_OK;
}

static void flaky_release(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
}

static int flaky_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter,
                      sbx_list_cb_v1 cb, void *ud)
{
    struct flaky *f = ((struct tp *)prov)->own;
    char ids[64][32];
    size_t n = 0;
    int rc = SBX_OK;

    (void)filter;
    (void)n_filter;
    bump(S_LISTS, 1);
    if (take(f, &f->list_fail_first))
        return fail(f, SBX_E_SERVER, "list failure");
    /* Copy the ids out: the callback must not run under our lock. */
    pthread_mutex_lock(&f->lock);
    for (struct fsb *s = f->all; s && n < 64; s = s->next)
        if (s->alive)
            snprintf(ids[n++], sizeof ids[0], "%s", s->id);
    pthread_mutex_unlock(&f->lock);
    for (size_t i = 0; i < n && rc == SBX_OK; i++)
        rc = cb(ud, ids[i], NULL, 0, 0);
    return rc;
}

static int flaky_health(void *prov)
{
    struct flaky *f = ((struct tp *)prov)->own;

    bump(S_HEALTH, 1);
    if (!f->healthy)
        return f->t->host->set_error(f->t->h, SBX_E_NETWORK, "flaky: backend unreachable "
                                  "(injected by health = fail)");
    return SBX_OK;
}

static const sbx_provider_ops_v1 flaky_ops = {
    .init = tp_init,
    .fini = tp_fini,
    .create = flaky_create,
    .exec = flaky_exec,
    .destroy = flaky_destroy,
    .attach = flaky_attach,
    .release = flaky_release,
    .list = flaky_list,
    .health = flaky_health,
#if SBX_PROVIDER_ABI_MINOR < 12
    .exec_zygote = flaky_exec_zygote,
#endif
};

static const char *const flaky_keys[] = {
    "create_fail_first", "create_fail_rate", "create_error", "exec_drop_rate",
    "exec_drop_first", "list_fail_first",
    "exec_not_started_first", "destroy_fail_first", "retry_after_ms", "health",
    "seed", NULL,
};

SBX_PROVIDER_DEFINE(TP_NAME, "1.0", "test provider with injected faults", "MIT",
                    SBX_CAP_PERSISTENT | SBX_CAP_CONCURRENT | SBX_CAP_LIST |
                        SBX_CAP_ZYGOTE | SBX_CAP_NETWORK_POLICY /* runs nothing */,
                    flaky_keys, NULL, &flaky_ops);
