/* plugins/common/settings.h - reading a provider's [settings] keys
 *
 * One grammar for the keys the network providers share, so that
 * "30s" or "yes" mean the same in every providers.d/NAME.ini.  @ini names
 * the file in errors ("providers.d/e2b.ini").  Errors are set on the
 * handle (host->set_error) and returned: SBX_E_CONFIG for a bad value,
 * SBX_E_NOMEM.  A key set to the empty string counts as unset.
 */
#ifndef PC_SETTINGS_H
#define PC_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include <polysandbox/provider.h>

/* The value of @key (transfer none, the core's), or NULL when unset. */
const char *pc_setting(const sbx_host_v1 *host, sbx_host_handle *h, const char *key);

/* A copy of @key's value, else of @def (may be NULL: *out NULL). */
int pc_setting_dup(const sbx_host_v1 *host, sbx_host_handle *h, const char *key,
                   const char *def, char **out);

/* true/yes/1 or false/no/0; @def when unset. */
int pc_setting_bool(const sbx_host_v1 *host, sbx_host_handle *h, const char *ini,
                    const char *key, bool def, bool *out);

/* "300" (seconds), "300s", "5m", "1h" or "1500ms" into milliseconds,
 * within [@min_ms, @max_ms]; @def_ms when unset. */
int pc_setting_duration_ms(const sbx_host_v1 *host, sbx_host_handle *h, const char *ini,
                           const char *key, uint64_t def_ms, uint64_t min_ms,
                           uint64_t max_ms, uint64_t *out);

#endif
