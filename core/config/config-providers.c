/* core/config/config-providers.c - providers.d/NAME.ini: [provider], [settings],
 * [retry] and [breaker]; the built-in entry of the local provider;
 * provider.NAME.KEY=VALUE overrides
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "units.h"
#include "conf.h"
#include "config/unenforced.h"
#include "settings-read.h"

#define PROVIDER_KEYS "enabled, optional, priority, module, unenforced_limits, " \
    "price_per_second, price_per_sandbox, currency"

static int parse_int(const char *s, int *out, const char **why)
{
    char *end;
    long v;

    if (!*s) {
        *why = "empty value";
        return SBX_E_CONFIG;
    }
    if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'))) {
        *why = "not a number";
        return SBX_E_CONFIG;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end || end == s) {
        *why = "not a whole number";
        return SBX_E_CONFIG;
    }
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
        *why = "out of range";
        return SBX_E_CONFIG;
    }
    *out = (int)v;
    return SBX_OK;
}

/* A price: a plain decimal number, not negative (strtod alone would also
 * take hex, exponents, inf and nan). */
static int parse_price(const char *s, double *out, const char **why)
{
    size_t digits = 0, dots = 0;

    for (const char *c = s; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits++;
        else if (*c == '.')
            dots++;
        else {
            *why = *c == '-' ? "negative" : "not a plain decimal number (e.g. 0.000014)";
            return SBX_E_CONFIG;
        }
    }
    if (digits == 0 || dots > 1 || digits > 30) {
        *why = "not a plain decimal number (e.g. 0.000014)";
        return SBX_E_CONFIG;
    }
    *out = strtod(s, NULL);
    return SBX_OK;
}

/* @key of a price table into @p: 1 when it is no price key, else SBX_OK
 * or SBX_E_CONFIG with *why. */
static int apply_price(core_provider_conf *p, const char *key, const char *value,
                       const char **why)
{
    int rc;

    if (!strcmp(key, "currency")) {
        size_t n = strlen(value);
        for (size_t i = 0; i < n; i++)
            if (!((value[i] >= 'A' && value[i] <= 'Z') || (value[i] >= 'a' && value[i] <= 'z'))) {
                n = 0;
                break;
            }
        if (n == 0 || n >= sizeof p->price.currency) {
            *why = "not a currency code of 1 to 15 letters (e.g. USD)";
            return SBX_E_CONFIG;
        }
        memcpy(p->price.currency, value, n + 1);
        return SBX_OK;
    }
    if (strcmp(key, "price_per_second") && strcmp(key, "price_per_sandbox"))
        return 1;
    rc = parse_price(value, !strcmp(key, "price_per_second") ? &p->price.per_second
                                                             : &p->price.per_sandbox, why);
    if (rc == SBX_OK)
        p->price.set = true;
    return rc;
}

static int apply_provider(loader *ld, const char *section, const char *key,
                          const char *value)
{
    core_provider_conf *p = &ld->cur->provider;
    const where *w = &ld->at;
    const char *why = NULL;

    /* [settings] unenforced_limits: the docker provider's own key before
     * the core decided for every provider; read as [provider]'s (and
     * still lent to the provider) unless [provider] says it. */
    if (strcmp(section, "settings") == 0 && strcmp(key, "unenforced_limits") == 0 &&
        p->unenforced_from < 2) {
        if (core_unenforced_parse(value, &p->unenforced_ok, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for unenforced_limits in "
                                "[settings]: %s", value, why);
        p->unenforced_from = 1;
    }
    if (strcmp(section, "settings") == 0)
        return core_cfg_add_setting(ld, &p->settings, &p->n_settings, w, key, value);
    if (strcmp(section, "retry") == 0 || strcmp(section, "breaker") == 0)
        return core_cfg_apply_resil(ld, w, &p->resil, section, key, value);
    if (strcmp(section, "provider") != 0)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown section [%s] (known: "
                            "[provider], [settings], [retry], [breaker])", section);

    if (strcmp(key, "enabled") == 0 || strcmp(key, "optional") == 0) {
        bool b;
        if (core_parse_bool(value, &b, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in "
                                "[provider]: %s", value, key, why);
        *(key[0] == 'e' ? &p->enabled : &p->optional) = b;
        return SBX_OK;
    }
    if (strcmp(key, "priority") == 0) {
        if (parse_int(value, &p->priority, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for priority in "
                                "[provider]: %s", value, why);
        return SBX_OK;
    }
    if (strcmp(key, "unenforced_limits") == 0) {
        if (core_unenforced_parse(value, &p->unenforced_ok, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for unenforced_limits in "
                                "[provider]: %s", value, why);
        p->unenforced_from = 2;
        return SBX_OK;
    }
    switch (apply_price(p, key, value, &why)) {
    case SBX_OK:
        return SBX_OK;
    case 1:
        break;
    default:
        return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in [provider]: %s",
                            value, key, why);
    }
    if (strcmp(key, "module") == 0) {
        if (value[0] != '/')
            return core_cfg_err(ld, SBX_E_CONFIG, w, "module '%s' must be an absolute "
                                "path", value);
        return core_cfg_replace_str(ld, &p->module, value);
    }
    return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [provider] (known: "
                        PROVIDER_KEYS ")", key);
}

static void provider_init(cfg_entry *e)
{
    e->provider.enabled = true;
}

static void provider_drop(void *e)
{
    core_provider_conf *p = e;

    free(p->name);
    free(p->file);
    free(p->module);
    core_cfg_settings_free(p->settings, p->n_settings);
    memset(p, 0, sizeof *p);
}

const cfg_kind core_cfg_providers = {
    .sub = "providers.d", .what = "provider", .name_chars = "a-z, 0-9 and _",
    .size = sizeof(core_provider_conf), .items_off = offsetof(core_config, providers),
    .n_off = offsetof(core_config, n_providers),
    .init = provider_init, .apply = apply_provider, .drop = provider_drop,
};

int core_cfg_builtin_local(loader *ld)
{
    cfg_entry e = { .provider = { .enabled = true, .priority = 100 } };

    if (core_cfg_find(ld, &core_cfg_providers, "local"))
        return SBX_OK;
    if (!(e.provider.name = strdup("local")) || !(e.provider.file = strdup(BUILTIN))) {
        provider_drop(&e.provider);
        return core_cfg_nomem(ld);
    }
    if (core_cfg_store(ld, &core_cfg_providers, &e) != SBX_OK) {
        provider_drop(&e.provider);
        return ld->rc;
    }
    return SBX_OK;
}

/* provider.NAME.KEY=VALUE: KEY of the [settings] of the configured provider
 * NAME, replacing the file's value in place, so one command can point a
 * provider elsewhere (e.g. polysandbox compare running docker with two
 * images). */
int core_cfg_provider_override(loader *ld, const where *w, const char *key,
                               const char *value)
{
    const char *dot = strchr(key, '.');
    core_provider_conf *p;
    core_setting *s = NULL;
    char *name, *k, *v, *f;
    const char *why = NULL;

    if (!dot || dot == key || !dot[1] || strchr(dot + 1, '.'))
        return core_cfg_err(ld, SBX_E_CONFIG, w, "'provider.%s' is not provider.NAME.KEY "
                            "(e.g. provider.docker.image=python:3.12-slim)", key);
    if (!(name = strndup(key, (size_t)(dot - key))))
        return core_cfg_nomem(ld);
    /* the built-in local provider may have no file */
    if (!strcmp(name, "local") && core_cfg_builtin_local(ld) != SBX_OK) {
        free(name);
        return ld->rc;
    }
    if (!(p = core_cfg_find(ld, &core_cfg_providers, name))) {
        core_cfg_err(ld, SBX_E_CONFIG, w, "provider.%s: no provider '%s' is configured "
                     "(providers.d/%s.ini)", key, name, name);
        free(name);
        return ld->rc;
    }
    free(name);
    /* the core's key (see apply_provider), from the command line: wins */
    if (!strcmp(dot + 1, "unenforced_limits")) {
        if (core_unenforced_parse(value, &p->unenforced_ok, &why) != SBX_OK)
            return core_cfg_err(ld, SBX_E_CONFIG, w, "provider.%s: bad value '%s': %s", key,
                                value, why);
        p->unenforced_from = 2;
    }
    /* the price table: the core's alone, never lent to the provider */
    switch (apply_price(p, dot + 1, value, &why)) {
    case SBX_OK:
        return SBX_OK;
    case 1:
        break;
    default:
        return core_cfg_err(ld, SBX_E_CONFIG, w, "provider.%s: bad value '%s': %s", key, value,
                            why);
    }
    for (size_t i = 0; i < p->n_settings && !s; i++)
        if (!strcmp(p->settings[i].key, dot + 1))
            s = &p->settings[i];
    if (!s)
        return core_cfg_add_setting(ld, &p->settings, &p->n_settings, w, dot + 1, value);
    k = strdup(dot + 1);
    v = strdup(value);
    f = strdup(w->name);
    if (!k || !v || !f) {
        free(k);
        free(v);
        free(f);
        return core_cfg_nomem(ld);
    }
    free(s->key);
    free(s->value);
    free(s->file);
    s->key = k;
    s->value = v;
    s->file = f;
    s->line = w->line;
    return SBX_OK;
}
