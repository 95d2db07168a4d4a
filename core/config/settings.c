/* core/config/settings.c - the configuration as the public API shows it:
 * sbx_ctx_settings (the sections of polysandbox.ini kept for programs built
 * on the library, [server] for polysandboxd), the [limits] defaults and
 * caps, a provider's price and the [eval] caps */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/eval.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "config/config-load.h"
#include "context.h"
#include "settings-read.h"

int sbx_ctx_settings(const sbx_ctx *ctx, const char *section, sbx_setting_cb cb, void *ud)
{
    char where[CORE_MSG_MAX];
    size_t n;
    bool known = false;

    core_error_clear();
    if (!ctx || !section || !cb)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_ctx_settings: NULL argument");
    for (size_t i = 0; core_app_sections[i]; i++)
        known = known || strcmp(core_app_sections[i], section) == 0;
    if (!known)
        return core_error_set(SBX_E_NOT_FOUND, NULL, "[%s] is not a section kept for "
                              "applications", section);
    n = strlen(section);
    for (size_t i = 0; i < ctx->cfg.n_app; i++) {
        const core_setting *s = &ctx->cfg.app[i];
        int rc;
        if (strncmp(s->key, section, n) != 0 || s->key[n] != '.')
            continue;
        if (s->line > 0)
            snprintf(where, sizeof where, "%s:%d", s->file, s->line);
        else
            snprintf(where, sizeof where, "%s", s->file);
        if ((rc = cb(ud, s->key + n + 1, s->value, where)) != 0)
            return rc;
    }
    return SBX_OK;
}

uint64_t sbx_ctx_limit(const sbx_ctx *ctx, sbx_limit which)
{
    return ctx && (unsigned)which < SBX_LIMIT_COUNT ? ctx->cfg.limits[which] : 0;
}

uint64_t sbx_ctx_limit_max(const sbx_ctx *ctx, sbx_limit which)
{
    return ctx && (unsigned)which < SBX_LIMIT_COUNT ? ctx->cfg.max_limits[which] : 0;
}

bool sbx_ctx_provider_price(const sbx_ctx *ctx, const char *name, double *per_second,
                            double *per_sandbox, const char **currency)
{
    const core_price *p = NULL;

    for (size_t i = 0; ctx && name && i < ctx->cfg.n_providers && !p; i++)
        if (!strcmp(ctx->cfg.providers[i].name, name) && ctx->cfg.providers[i].price.set)
            p = &ctx->cfg.providers[i].price;
    if (!p)
        return false;
    if (per_second)
        *per_second = p->per_second;
    if (per_sandbox)
        *per_sandbox = p->per_sandbox;
    if (currency)
        *currency = p->currency[0] ? p->currency : "USD";
    return true;
}

void sbx_ctx_eval_caps(const sbx_ctx *ctx, uint64_t *input, uint64_t *line, uint64_t *records)
{
    const core_eval_caps none = { 0, 0, 0 };
    const core_eval_caps *c = ctx ? &ctx->cfg.eval_caps : &none;

    if (input)
        *input = c->input;
    if (line)
        *line = c->line;
    if (records)
        *records = c->records;
}
