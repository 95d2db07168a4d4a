/* core/config/config-load.h - reading the configuration (core/config/)
 */
#ifndef POLYSANDBOX_CONFIG_CONFIG_LOAD_H
#define POLYSANDBOX_CONFIG_CONFIG_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/sandbox.h>

#include "conf.h"

/* The sections polysandbox.ini keeps for programs built on the library
 * (sbx_ctx_settings), NULL-terminated. */
extern const char *const core_app_sections[];

/*
 * core_config_load:
 * @cfg: (out) zeroed by the caller, filled; free with core_config_free
 *   even on failure.
 * @dir: the configuration directory, or NULL for $POLYSANDBOX_CONFIG_DIR
 *   else SYSCONFDIR/polysandbox (then $XDG_CONFIG_HOME/polysandbox on top
 *   when dir and $POLYSANDBOX_CONFIG_DIR are both unset).
 * @overrides: NULL-terminated "section.key=value" (command line), or NULL.
 *
 * Precedence: built-in defaults < @dir < XDG < environment
 * (POLYSANDBOX_PROVIDER, POLYSANDBOX_PROVIDER_PATH prepended, POLYSANDBOX_TIMEOUT,
 * POLYSANDBOX_MEMORY) < @overrides.  Errors set the thread error with code
 * SBX_E_CONFIG and a message "FILE:LINE: ..." and return SBX_E_CONFIG.
 */
int core_config_load(core_config *cfg, const char *dir, const char *const *overrides);
void core_config_free(core_config *cfg);
/* @v of limit @which as a user reads it ("64 MiB", "10 s", "128"). */
void core_limit_format(sbx_limit which, uint64_t v, char *buf, size_t size);

/* The image template @t names for provider @provider: its image.PROVIDER,
 * else (on a provider that does not run on the host's root) its image;
 * NULL when none.  *@named (may be NULL) tells whether it is the
 * image.PROVIDER, asked of that provider by name, rather than the plain
 * image, a default for the providers that run such images. */
const char *core_template_image(const core_template_conf *t, const char *provider, bool host_root,
                                bool *named);

#endif /* POLYSANDBOX_CONFIG_CONFIG_LOAD_H */
