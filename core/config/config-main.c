/* core/config/config-main.c - polysandbox.ini's [core], [limits], [retry],
 * [breaker] and pool.* keys, from a file, the environment or the command
 * line, and the limits' built-in defaults and maxima
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "error.h"
#include "strv.h"
#include "units.h"
#include "platform.h"
#include "conf.h"
#include "config/config-load.h"
#include "config/unenforced.h"
#include "limit-names.h"
#include "settings-read.h"

/* ---- limits --------------------------------------------------------------- */

enum limit_kind { LK_DURATION, LK_SIZE, LK_COUNT };

static const struct limit_info {
    enum limit_kind kind;
    const char *def;    /* built-in default, as a user would write it */
    const char *max;    /* built-in maximum */
} limit_info[SBX_LIMIT_COUNT] = {
    [SBX_LIMIT_WALL]   = { LK_DURATION, "10s",  "300s" },
    [SBX_LIMIT_CPU]    = { LK_DURATION, "10s",  "300s" },
    [SBX_LIMIT_MEMORY] = { LK_SIZE,     "512M", "8G" },
    [SBX_LIMIT_PIDS]   = { LK_COUNT,    "128",  "4096" },
    [SBX_LIMIT_NOFILE] = { LK_COUNT,    "256",  "65536" },
    [SBX_LIMIT_FSIZE]  = { LK_SIZE,     "64M",  "1G" },
    [SBX_LIMIT_DISK]   = { LK_SIZE,     "256M", "4G" },
    [SBX_LIMIT_STDOUT] = { LK_SIZE,     "1M",   "64M" },
    [SBX_LIMIT_STDERR] = { LK_SIZE,     "1M",   "64M" },
};

void core_limit_format(sbx_limit which, uint64_t v, char *buf, size_t size)
{
    switch ((unsigned)which < SBX_LIMIT_COUNT ? limit_info[which].kind : LK_COUNT) {
    case LK_DURATION:
        if (v % 1000000000u == 0)
            snprintf(buf, size, "%llu s", (unsigned long long)(v / 1000000000u));
        else
            snprintf(buf, size, "%llu ms", (unsigned long long)(v / 1000000u));
        break;
    case LK_SIZE:
        if (v >= (1u << 20) && v % (1u << 20) == 0)
            snprintf(buf, size, "%llu MiB", (unsigned long long)(v >> 20));
        else if (v >= 1024 && v % 1024 == 0)
            snprintf(buf, size, "%llu KiB", (unsigned long long)(v >> 10));
        else
            snprintf(buf, size, "%llu bytes", (unsigned long long)v);
        break;
    case LK_COUNT:
    default:
        snprintf(buf, size, "%llu", (unsigned long long)v);
        break;
    }
}

static int parse_limit(sbx_limit i, const char *s, uint64_t *v, const char **why)
{
    switch (limit_info[i].kind) {
    case LK_DURATION:
        return core_parse_duration(s, false, v, why);
    case LK_SIZE:
        return core_parse_size(s, false, v, why);
    case LK_COUNT:
    default:
        return core_parse_count(s, false, v, why);
    }
}

#define CORE_KEYS "default_provider, order, fallback, provider_path, state_dir, image_dir, " \
    "image_platform, pools, " \
    "unenforced_limits"
#define LIMIT_KEYS "wall, cpu, memory, pids, nofile, fsize, disk, stdout, " \
    "stderr and max_ of each"

/* A list of provider names, separated by commas and/or blanks. */
static int parse_name_list(loader *ld, const where *w, const char *key,
                           const char *s, char ***out)
{
    char **v = NULL;

    if (core_cfg_split_list(s, ", \t", &v) != SBX_OK)
        return core_cfg_nomem(ld);
    for (size_t i = 0; v && v[i]; i++) {
        if (!core_cfg_valid_name(v[i], NULL)) {
            core_cfg_err(ld, SBX_E_CONFIG, w, "bad provider name '%s' in %s (use "
                         "a-z, 0-9 and _)", v[i], key);
            core_strv_free(v);
            return ld->rc;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(v[i], v[j]) == 0) {
                core_cfg_err(ld, SBX_E_CONFIG, w, "provider '%s' is listed twice in %s",
                             v[i], key);
                core_strv_free(v);
                return ld->rc;
            }
        }
    }
    *out = v;
    return SBX_OK;
}

static int apply_core(loader *ld, const where *w, const char *key,
                      const char *value)
{
    core_config *cfg = ld->cfg;
    char **list = NULL;

    if (strcmp(key, "default_provider") == 0) {
        if (*value && !core_cfg_valid_name(value, NULL))
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad provider name '%s' for "
                                "default_provider (use a-z, 0-9 and _)", value);
        return core_cfg_replace_str(ld, &cfg->default_provider, *value ? value : NULL);
    }
    if (strcmp(key, "order") == 0 || strcmp(key, "fallback") == 0) {
        if (parse_name_list(ld, w, key, value, &list) != SBX_OK)
            return ld->rc;
        char ***slot = key[0] == 'o' ? &cfg->provider_order : &cfg->fallback;
        core_strv_free(*slot);
        *slot = list;
        return SBX_OK;
    }
    if (strcmp(key, "provider_path") == 0) {
        if (core_cfg_parse_dir_list(ld, w, "provider_path", value, &list) != SBX_OK)
            return ld->rc;
        core_strv_free(ld->ini_path);
        ld->ini_path = list;
        return SBX_OK;
    }
    if (strcmp(key, "state_dir") == 0) {
        if (value[0] != '/')
            return core_cfg_err(ld, SBX_E_CONFIG, w, "state_dir '%s' must be an "
                                "absolute directory", value);
        return core_cfg_replace_str(ld, &cfg->state_dir, value);
    }
    if (strcmp(key, "image_dir") == 0) {
        if (value[0] != '/')
            return core_cfg_err(ld, SBX_E_CONFIG, w, "image_dir '%s' must be an "
                                "absolute directory", value);
        return core_cfg_replace_str(ld, &cfg->image_dir, value);
    }
    if (strcmp(key, "image_platform") == 0) {
        const char *why = NULL;
        if (!core_platform_parse(value, &cfg->image_platform, &why))
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for image_platform in "
                                "[core]: %s", value, why);
        cfg->image_platform_set = true;
        return SBX_OK;
    }
    if (strcmp(key, "pools") == 0) {
        bool on;
        const char *why = NULL;
        if (core_parse_bool(value, &on, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for pools in [core]: %s",
                                value, why);
        cfg->pools_off = !on;
        return SBX_OK;
    }
    if (strcmp(key, "unenforced_limits") == 0) {
        const char *why = NULL;
        if (core_unenforced_parse(value, &cfg->unenforced_ok, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for unenforced_limits in "
                                "[core]: %s", value, why);
        return SBX_OK;
    }
    return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [core] (known: "
                        CORE_KEYS ")", key);
}

static int apply_limit(loader *ld, const where *w, const char *key,
                       const char *value)
{
    const char *name = key;
    const char *why = NULL;
    int m = 0;
    uint64_t v;
    char *wh, *text;

    if (strncmp(key, "max_", 4) == 0) {
        m = 1;
        name += 4;
    }
    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (strcmp(name, core_limit_key((sbx_limit)i)) != 0)
            continue;
        if (parse_limit((sbx_limit)i, value, &v, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in "
                                "[limits]: %s", value, key, why);
        (m ? ld->cfg->max_limits : ld->cfg->limits)[i] = v;
        if (w->line > 0) {
            if (asprintf(&wh, "%s:%d", w->name, w->line) < 0)
                return core_cfg_nomem(ld);
        } else if (!(wh = strdup(w->name))) {
            return core_cfg_nomem(ld);
        }
        if (!(text = strdup(value))) {
            free(wh);
            return core_cfg_nomem(ld);
        }
        free(ld->lim_where[m][i]);
        free(ld->lim_text[m][i]);
        ld->lim_where[m][i] = wh;
        ld->lim_text[m][i] = text;
        return SBX_OK;
    }
    return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [limits] (known: "
                        LIMIT_KEYS ")", key);
}

#define EVAL_KEYS "max_input, max_line, max_records"

/* [eval]: the caps on what a dataset or samples file may hold. */
static int apply_eval(loader *ld, const where *w, const char *key, const char *value)
{
    core_eval_caps *c = &ld->cfg->eval_caps;
    const char *why = NULL;
    int rc;

    if (strcmp(key, "max_input") == 0)
        rc = core_parse_size(value, false, &c->input, &why);
    else if (strcmp(key, "max_line") == 0)
        rc = core_parse_size(value, false, &c->line, &why);
    else if (strcmp(key, "max_records") == 0)
        rc = core_parse_count(value, false, &c->records, &why);
    else
        return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [eval] (known: "
                            EVAL_KEYS ")", key);
    if (rc != SBX_OK)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in [eval]: %s",
                            value, key, why);
    return SBX_OK;
}

const char *const core_app_sections[] = { "server", NULL };

/* SECTION.KEY into @v: the last one set wins. */
static int put_setting(loader *ld, const where *w, core_setting **v, size_t *n,
                       const char *section, const char *key, const char *value)
{
    char *full;
    int rc = SBX_OK;

    if (asprintf(&full, "%s.%s", section, key) < 0)
        return core_cfg_nomem(ld);
    for (size_t i = 0; i < *n; i++) {
        core_setting *s = &(*v)[i];
        if (strcmp(s->key, full) != 0)
            continue;
        free(full);
        if (core_cfg_replace_str(ld, &s->value, value) != SBX_OK ||
            core_cfg_replace_str(ld, &s->file, w->name) != SBX_OK)
            return ld->rc;
        s->line = w->line;
        return SBX_OK;
    }
    rc = core_cfg_add_setting(ld, v, n, w, full, value);
    free(full);
    return rc;
}

/* A key of an application section: kept as it is; the program that reads
 * the section checks it. */
static int apply_app(loader *ld, const where *w, const char *section, const char *key,
                     const char *value)
{
    return put_setting(ld, w, &ld->cfg->app, &ld->cfg->n_app, section, key, value);
}

/* [registry HOST]: username and password (a credential reference, opened
 * only when the registry asks) for image pull from HOST, as a reference
 * writes it (127.0.0.1:5000, docker.io).  Kept as "HOST.KEY". */
static int apply_registry(loader *ld, const where *w, const char *host, const char *key,
                          const char *value)
{
    if (!*host || strpbrk(host, " \t/@") || strlen(host) > 255)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "[registry %s]: not a registry's host "
                            "(write [registry HOST[:PORT]] as an image reference names it, "
                            "e.g. [registry docker.io])", host);
    if (strcmp(key, "username") != 0 && strcmp(key, "password") != 0)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [registry %s] (known: "
                            "username, password)", key, host);
    if (!*value)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "empty %s in [registry %s]", key, host);
    if (strcmp(key, "username") == 0 && strchr(value, ':'))
        return core_cfg_err(ld, SBX_E_CONFIG, w, "username in [registry %s] holds ':', which "
                            "Basic authentication cannot carry", host);
    return put_setting(ld, w, &ld->cfg->registries, &ld->cfg->n_registries, host, key, value);
}

int core_cfg_apply_main(loader *ld, const where *w, const char *section, const char *key,
                        const char *value)
{
    for (size_t i = 0; core_app_sections[i]; i++)
        if (strcmp(section, core_app_sections[i]) == 0)
            return apply_app(ld, w, section, key, value);
    if (strcmp(section, "retry") == 0 || strcmp(section, "breaker") == 0)
        return core_cfg_apply_resil(ld, w, &ld->cfg->resil, section, key, value);
    if (strcmp(section, "core") == 0)
        return apply_core(ld, w, key, value);
    if (strcmp(section, "limits") == 0)
        return apply_limit(ld, w, key, value);
    if (strcmp(section, "eval") == 0)
        return apply_eval(ld, w, key, value);
    if (strcmp(section, "pool") == 0)
        return core_cfg_pool_override(ld, w, key, value);
    if (strcmp(section, "provider") == 0 && w->line == 0)
        return core_cfg_provider_override(ld, w, key, value);
    if (strncmp(section, "registry ", 9) == 0)
        return apply_registry(ld, w, section + 9, key, value);
    return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown section [%s] (known: [core], "
                        "[limits], [eval], [retry], [breaker], [server], [registry HOST])",
                        section);
}

int core_cfg_apply_env(loader *ld)
{
    static const struct {
        const char *var, *section, *key;
    } map[] = {
        { "POLYSANDBOX_PROVIDER", "core", "default_provider" },
        { "POLYSANDBOX_STATE_DIR", "core", "state_dir" },
        { "POLYSANDBOX_IMAGE_DIR", "core", "image_dir" },
        { "POLYSANDBOX_TIMEOUT", "limits", "wall" },
        { "POLYSANDBOX_MEMORY", "limits", "memory" },
    };
    char name[64];
    const char *v;

    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (!(v = core_cfg_getenv(map[i].var)))
            continue;
        snprintf(name, sizeof name, "environment (%s)", map[i].var);
        where w = { name, 0 };
        if (core_cfg_apply_main(ld, &w, map[i].section, map[i].key, v) != SBX_OK)
            return ld->rc;
    }
    if ((v = core_cfg_getenv("POLYSANDBOX_PROVIDER_PATH"))) {
        where w = { "environment (POLYSANDBOX_PROVIDER_PATH)", 0 };
        return core_cfg_parse_dir_list(ld, &w, "POLYSANDBOX_PROVIDER_PATH", v, &ld->env_path);
    }
    return SBX_OK;
}

/* Trimmed copy of [s, s+n). */
static char *strip_dup(const char *s, size_t n)
{
    while (n > 0 && core_cfg_is_blank(*s)) {
        s++;
        n--;
    }
    while (n > 0 && core_cfg_is_blank(s[n - 1]))
        n--;
    return strndup(s, n);
}

int core_cfg_apply_override(loader *ld, const char *o)
{
    where w = { "command line", 0 };
    const char *eq = strchr(o, '=');
    const char *dot;
    char *section = NULL, *key = NULL, *value = NULL;
    int rc;

    dot = eq ? memchr(o, '.', (size_t)(eq - o)) : NULL;
    if (!eq || !dot)
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "'%s' is not section.key=value "
                            "(e.g. limits.memory=1G)", o);
    if ((size_t)(dot - o) == 8 && strncmp(o, "registry", 8) == 0) {
        /* registry.HOST.KEY: a host has dots (127.0.0.1:5000, ghcr.io)
         * and a key never does, so the key is what follows the last dot
         * and the section [registry HOST]. */
        const char *last = dot;
        for (const char *p = dot + 1; p < eq; p++)
            if (*p == '.')
                last = p;
        if (last == dot || last == dot + 1 || last + 1 == eq)
            return core_cfg_err(ld, SBX_E_CONFIG, &w, "'%s' is not registry.HOST.KEY=value "
                                "(e.g. registry.127.0.0.1:5000.password=env:PW)", o);
        char *host = strip_dup(dot + 1, (size_t)(last - dot - 1));
        if (host && asprintf(&section, "registry %s", host) < 0)
            section = NULL;
        free(host);
        dot = last;
    } else {
        section = strip_dup(o, (size_t)(dot - o));
    }
    key = strip_dup(dot + 1, (size_t)(eq - dot - 1));
    value = strip_dup(eq + 1, strlen(eq + 1));
    if (!section || !key || !value)
        rc = core_cfg_nomem(ld);
    else
        rc = core_cfg_apply_main(ld, &w, section, key, value);
    free(section);
    free(key);
    free(value);
    return rc;
}

int core_cfg_set_defaults(loader *ld)
{
    const char *why = NULL;

    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (parse_limit((sbx_limit)i, limit_info[i].def, &ld->cfg->limits[i], &why) ||
            parse_limit((sbx_limit)i, limit_info[i].max, &ld->cfg->max_limits[i], &why))
            return core_cfg_err(ld, SBX_E_INTERNAL, NULL, "built-in limit %s: %s",
                                core_limit_key((sbx_limit)i), why);
    }
    if (core_parse_size(CORE_EVAL_MAX_INPUT, false, &ld->cfg->eval_caps.input, &why) ||
        core_parse_size(CORE_EVAL_MAX_LINE, false, &ld->cfg->eval_caps.line, &why) ||
        core_parse_count(CORE_EVAL_MAX_RECORDS, false, &ld->cfg->eval_caps.records, &why))
        return core_cfg_err(ld, SBX_E_INTERNAL, NULL, "built-in [eval] cap: %s", why);
    return SBX_OK;
}

int core_cfg_check_limits(loader *ld)
{
    const core_config *cfg = ld->cfg;
    char mwhere[CORE_MSG_MAX / 2];

    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (cfg->limits[i] <= cfg->max_limits[i])
            continue;
        const char *key = core_limit_key((sbx_limit)i);
        const char *dw = ld->lim_where[0][i], *mw = ld->lim_where[1][i];
        const char *dt = dw ? ld->lim_text[0][i] : limit_info[i].def;
        const char *mt = mw ? ld->lim_text[1][i] : limit_info[i].max;
        /* Lead with where the default was set, else where the maximum was. */
        where w = { dw ? dw : mw ? mw : BUILTIN, 0 };

        if (!mw)
            snprintf(mwhere, sizeof mwhere, " (built-in maximum)");
        else if (dw)
            snprintf(mwhere, sizeof mwhere, " (set at %s)", mw);
        else
            mwhere[0] = '\0';
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "%s = %s%s is above max_%s = %s%s",
                            key, dt, dw ? "" : " (built-in default)", key, mt, mwhere);
    }
    return SBX_OK;
}
