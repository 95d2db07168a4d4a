/* plugins/common/settings.c - reading a provider's [settings] keys */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

const char *pc_setting(const sbx_host_v1 *host, sbx_host_handle *h, const char *key)
{
    const char *v = host->config_get(h, key);
    return v && *v ? v : NULL;
}

int pc_setting_dup(const sbx_host_v1 *host, sbx_host_handle *h, const char *key,
                   const char *def, char **out)
{
    const char *v = pc_setting(host, h, key);

    *out = NULL;
    if (!v && !def)
        return SBX_OK;
    if (!(*out = strdup(v ? v : def)))
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

int pc_setting_bool(const sbx_host_v1 *host, sbx_host_handle *h, const char *ini,
                    const char *key, bool def, bool *out)
{
    const char *v = pc_setting(host, h, key);

    *out = def;
    if (!v)
        return SBX_OK;
    if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
        *out = false;
    else
        return host->set_error(h, SBX_E_CONFIG, "%s: %s = '%s': use true or false", ini, key,
                               v);
    return SBX_OK;
}

int pc_setting_duration_ms(const sbx_host_v1 *host, sbx_host_handle *h, const char *ini,
                           const char *key, uint64_t def_ms, uint64_t min_ms,
                           uint64_t max_ms, uint64_t *out)
{
    const char *v = pc_setting(host, h, key);
    unsigned long long x;
    uint64_t mul = 1000;
    char *end;

    *out = def_ms;
    if (!v)
        return SBX_OK;
    errno = 0;
    x = strtoull(v, &end, 10);
    if (!strcmp(end, "ms"))
        mul = 1;
    else if (!strcmp(end, "s") || !*end)
        mul = 1000;
    else if (!strcmp(end, "m"))
        mul = 60000;
    else if (!strcmp(end, "h"))
        mul = 3600000;
    else
        end = NULL;
    /* strtoull takes "-1" as a huge number: a sign is refused outright. */
    if (errno || !end || end == v || *v == '-' || x > max_ms / mul || x * mul < min_ms ||
        x * mul > max_ms)
        return host->set_error(h, SBX_E_CONFIG, "%s: %s = '%s' is not a duration from %llu ms "
                               "to %llu s (e.g. 300, 30s, 5m)", ini, key, v,
                               (unsigned long long)min_ms, (unsigned long long)(max_ms / 1000));
    *out = x * mul;
    return SBX_OK;
}
