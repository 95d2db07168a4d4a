/* core/config/settings.c - sbx_ctx_settings: the sections of polysandbox.ini kept
 * for programs built on the library ([server] for polysandboxd) */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core-int.h"

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
