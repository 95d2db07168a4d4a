/* core/pool/pool-config.c - a warm pool's settings, checked
 *
 * config.c keeps each pool's settings as written (pools.d/NAME.ini, or
 * pool.NAME.KEY overrides), with their file and line; here they are
 * parsed and checked against the context (providers, templates, limit
 * maxima), and every error names the setting's FILE:LINE and key.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "pool-int.h"
#include "error.h"
#include "limit-names.h"
#include "units.h"
#include "conf.h"
#include "config/config-load.h"
#include "context.h"
#include "settings-read.h"

/* ---- configuration ----------------------------------------------------------- */

static int setting_error(const core_setting *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "FILE:LINE: ..." (or "command line: ...") as the config loader words it. */
static int setting_error(const core_setting *s, const char *fmt, ...)
{
    char msg[CORE_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s->line > 0)
        return core_error_set(SBX_E_CONFIG, NULL, "%s:%d: %s", s->file, s->line, msg);
    return core_error_set(SBX_E_CONFIG, NULL, "%s: %s", s->file, msg);
}

static int limit_index(const char *key)
{
    for (int i = 0; i < SBX_LIMIT_COUNT; i++)
        if (!strcmp(core_limit_key((sbx_limit)i), key))
            return i;
    return -1;
}

/* Parse one limit the way [limits] of polysandbox.ini does. */
static int parse_limit_value(int i, const char *s, uint64_t *v, const char **why)
{
    switch ((sbx_limit)i) {
    case SBX_LIMIT_WALL:
    case SBX_LIMIT_CPU:
        return core_parse_duration(s, false, v, why);
    case SBX_LIMIT_PIDS:
    case SBX_LIMIT_NOFILE:
        return core_parse_count(s, false, v, why);
    default:
        return core_parse_size(s, false, v, why);
    }
}

/* Where each value was set, for the checks that need the whole pool. */
typedef struct pool_where {
    const core_setting *provider, *tmpl, *reuse, *ttl, *warm;
    const core_setting *limit[SBX_LIMIT_COUNT];
} pool_where;

static int apply_setting(struct core_pool *pl, const core_setting *s, pool_where *w)
{
    const char *why = NULL;
    uint64_t n;
    char *copy;

    if (!strncmp(s->key, "limits.", 7)) {
        int i = limit_index(s->key + 7);
        if (i < 0)
            return setting_error(s, "unknown key '%s' in [limits] of pool '%s' (known: wall, "
                                 "cpu, memory, pids, nofile, fsize, disk, stdout, stderr)",
                                 s->key + 7, pl->name);
        if (parse_limit_value(i, s->value, &pl->limits[i], &why) != SBX_OK)
            return setting_error(s, "bad value '%s' for %s in [limits] of pool '%s': %s",
                                 s->value, s->key + 7, pl->name, why);
        w->limit[i] = s;
        return SBX_OK;
    }
    if (!strcmp(s->key, "provider") || !strcmp(s->key, "template") ||
        !strcmp(s->key, "reset") || !strcmp(s->key, "warm")) {
        if (!*s->value)
            return setting_error(s, "%s of pool '%s' is empty", s->key, pl->name);
        if (!(copy = strdup(s->value)))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        char **slot = s->key[0] == 'p' ? &pl->provider
                      : s->key[0] == 't' ? &pl->template_name
                      : s->key[0] == 'w' ? &pl->warm : &pl->reset;
        free(*slot);
        *slot = copy;
        if (s->key[0] == 'p')
            w->provider = s;
        else if (s->key[0] == 't')
            w->tmpl = s;
        else if (s->key[0] == 'w')
            w->warm = s;
        return SBX_OK;
    }
    if (!strcmp(s->key, "size") || !strcmp(s->key, "parallel")) {
        bool is_size = s->key[0] == 's';
        uint64_t max = is_size ? MAX_SIZE : MAX_PARALLEL;
        if (core_parse_count(s->value, is_size, &n, &why) != SBX_OK)
            return setting_error(s, "bad value '%s' for %s in [pool] of pool '%s': %s",
                                 s->value, s->key, pl->name, why);
        if (n > max)
            return setting_error(s, "%s = %llu of pool '%s' is above %llu", s->key,
                                 (unsigned long long)n, pl->name, (unsigned long long)max);
        *(is_size ? &pl->size : &pl->parallel) = (size_t)n;
        return SBX_OK;
    }
    if (!strcmp(s->key, "idle_timeout") || !strcmp(s->key, "ttl")) {
        bool idle = s->key[0] == 'i';
        if (core_parse_duration(s->value, idle, idle ? &pl->idle_ns : &pl->ttl_ns, &why))
            return setting_error(s, "bad value '%s' for %s in [pool] of pool '%s': %s",
                                 s->value, s->key, pl->name, why);
        if (!idle)
            w->ttl = s;
        return SBX_OK;
    }
    if (!strcmp(s->key, "replace_idle") || !strcmp(s->key, "reuse")) {
        bool b;
        if (core_parse_bool(s->value, &b, &why) != SBX_OK)
            return setting_error(s, "bad value '%s' for %s in [pool] of pool '%s': %s",
                                 s->value, s->key, pl->name, why);
        if (!strcmp(s->key, "reuse")) {
            pl->reuse = b;
            w->reuse = s;
        } else {
            pl->replace_idle = b;
        }
        return SBX_OK;
    }
    return setting_error(s, "unknown key '%s' in [pool] of pool '%s' (known: " POOL_KEYS ")",
                         s->key, pl->name);
}

/* The checks that need the whole pool and the context's providers. */
static int check_pool(struct core_pool *pl, const core_pool_conf *c, const pool_where *w)
{
    sbx_ctx *ctx = pl->ctx;
    const core_setting none = {NULL, NULL, c->file, 0};
    uint64_t max_wall = ctx->cfg.max_limits[SBX_LIMIT_WALL];
    uint64_t margin = 2 * max_wall + MARGIN_EXTRA_NS;
    const sbx_provider *p;

    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (pl->limits[i] <= ctx->cfg.max_limits[i])
            continue;
        return setting_error(w->limit[i] ? w->limit[i] : &none, "%s of pool '%s' is above max_%s in [limits] of "
                             "polysandbox.ini", core_limit_key((sbx_limit)i), pl->name,
                             core_limit_key((sbx_limit)i));
    }
    if (pl->warm && !pl->template_name)
        return setting_error(w->warm, "pool '%s': warm is code run with the pool's template, "
                             "and the pool has none (template = ...)", pl->name);
    if (pl->reuse && !pl->reset)
        return setting_error(w->reuse ? w->reuse : &none,
                             "pool '%s': reuse = true needs a reset command (reset = ...), "
                             "run in a sandbox before it serves the next run", pl->name);
    if (pl->ttl_ns <= margin) {
        char m[32];
        snprintf(m, sizeof m, "%llus", (unsigned long long)(margin / UINT64_C(1000000000)));
        return setting_error(w->ttl ? w->ttl : &none,
                             "ttl of pool '%s' must be longer than 2 x limits.max_wall + 1m "
                             "(%s), so a pooled sandbox outlives the run it serves",
                             pl->name, m);
    }
    pl->max_age_ns = pl->ttl_ns - margin;
    if (pl->template_name && !sbx_ctx_find_template(ctx, pl->template_name))
        return setting_error(w->tmpl ? w->tmpl : &none, "pool '%s': no template '%s' (see templates.d/)",
                             pl->name, pl->template_name);
    if (!pl->provider) {
        const char *d = sbx_ctx_default_provider(ctx);
        if (d && !(pl->provider = strdup(d)))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    if (!pl->provider) {
        snprintf(pl->last_error, sizeof pl->last_error, "no provider is ready");
        return SBX_OK;
    }
    if (!(p = sbx_ctx_find_provider(ctx, pl->provider)))
        return setting_error(w->provider ? w->provider : &none,
                             "pool '%s': no provider named '%s' (see "
                             "'polysandbox providers')", pl->name, pl->provider);
    if (sbx_provider_get_state(p) != SBX_PROVIDER_READY) {
        /* As for runs: an unavailable provider is not a configuration
         * error; the pool stays empty and every run misses. */
        snprintf(pl->last_error, sizeof pl->last_error, "provider '%s' is not ready: %s",
                 pl->provider, sbx_provider_reason(p) ? sbx_provider_reason(p) : "disabled");
        return SBX_OK;
    }
    if (!(sbx_provider_capabilities(p) & SBX_CAP_CONCURRENT) && pl->size > 0)
        return setting_error(w->provider ? w->provider : &none,
                             "pool '%s': provider '%s' cannot hold several sandboxes at once "
                             "(no 'concurrent' capability), so it cannot be pooled",
                             pl->name, pl->provider);
    pl->active = pl->size > 0;
    return SBX_OK;
}

/* What the workers create with, and the reset they run. */
static int build_opts(struct core_pool *pl)
{
    int rc = SBX_OK;

    if (!(pl->copts = sbx_create_opts_new()))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (pl->provider)
        rc = sbx_create_opts_set_provider(pl->copts, pl->provider);
    if (rc == SBX_OK && pl->template_name)
        rc = sbx_create_opts_set_template(pl->copts, pl->template_name);
    for (int i = 0; rc == SBX_OK && i < SBX_LIMIT_COUNT; i++)
        rc = sbx_create_opts_set_limit(pl->copts, (sbx_limit)i, pl->limits[i]);
    if (rc == SBX_OK)
        rc = sbx_create_opts_add_label(pl->copts, "polysandbox.pool", pl->name);
    if (rc == SBX_OK)
        rc = sbx_create_opts_set_ttl(pl->copts, pl->ttl_ns);
    if (rc == SBX_OK && pl->reset) {
        if (!(pl->reset_opts = sbx_exec_opts_new()))
            rc = SBX_E_NOMEM;
        else
            rc = sbx_exec_opts_set_shell(pl->reset_opts, pl->reset);
    }
    if (rc == SBX_OK && pl->warm) {
        if (!(pl->warm_opts = sbx_exec_opts_new()))
            rc = SBX_E_NOMEM;
        else
            rc = sbx_exec_opts_set_code(pl->warm_opts, pl->template_name, pl->warm,
                                        (size_t)-1);
    }
    if (rc != SBX_OK)
        return core_error_set(rc, NULL, "pool '%s': cannot build its options: %s", pl->name,
                              sbx_strerror(rc));
    return SBX_OK;
}

void core_pool_free(struct core_pool *pl)
{
    if (!pl)
        return;
    free(pl->ready.v);
    free(pl->dirty.v);
    free(pl->doomed.v);
    free(pl->threads);
    sbx_create_opts_free(pl->copts);
    sbx_exec_opts_free(pl->reset_opts);
    sbx_exec_opts_free(pl->warm_opts);
    if (pl->lock_ok)
        pthread_mutex_destroy(&pl->lock);
    if (pl->work_ok)
        pthread_cond_destroy(&pl->work);
    if (pl->ready_ok)
        pthread_cond_destroy(&pl->ready_cv);
    free(pl->name);
    free(pl->provider);
    free(pl->template_name);
    free(pl->reset);
    free(pl->warm);
    free(pl);
}

int core_pool_new(sbx_ctx *ctx, const core_pool_conf *c, struct core_pool **out)
{
    struct core_pool *pl = calloc(1, sizeof *pl);
    pool_where w;
    const char *why;
    pthread_condattr_t ca;
    int rc;

    *out = NULL;
    if (!pl || !(pl->name = strdup(c->name))) {
        free(pl);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    pl->ctx = ctx;
    memset(&w, 0, sizeof w);
    memcpy(pl->limits, ctx->cfg.limits, sizeof pl->limits);
    pl->size = 1;
    pl->parallel = 2;
    pl->replace_idle = true;
    if (core_parse_duration(DEFAULT_IDLE, true, &pl->idle_ns, &why) != SBX_OK ||
        core_parse_duration(DEFAULT_TTL, false, &pl->ttl_ns, &why) != SBX_OK) {
        core_pool_free(pl);
        return core_error_set(SBX_E_INTERNAL, NULL, "built-in pool default: %s", why);
    }
    for (size_t i = 0; i < c->n_settings; i++) {
        if ((rc = apply_setting(pl, &c->settings[i], &w)) != SBX_OK) {
            core_pool_free(pl);
            return rc;
        }
    }
    if ((rc = check_pool(pl, c, &w)) != SBX_OK || (rc = build_opts(pl)) != SBX_OK) {
        core_pool_free(pl);
        return rc;
    }
    if (pthread_mutex_init(&pl->lock, NULL) != 0)
        goto fail;
    pl->lock_ok = true;
    /* Deadlines are on the monotonic clock: a clock change must not make
     * sandboxes expire early or never. */
    if (pthread_condattr_init(&ca) != 0)
        goto fail;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&pl->work, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail;
    }
    pl->work_ok = true;
    if (pthread_cond_init(&pl->ready_cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail;
    }
    pl->ready_ok = true;
    pthread_condattr_destroy(&ca);
    *out = pl;
    return SBX_OK;
fail:
    core_pool_free(pl);
    return core_error_set(SBX_E_INTERNAL, NULL, "pool '%s': cannot initialise a lock",
                          c->name);
}

