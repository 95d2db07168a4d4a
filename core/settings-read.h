/* core/settings-read.h - a provider's typed [settings], for any host
 *
 * host->settings_read's reader (core/host-settings.c) for the core's host,
 * a test's and polysandbox-locald's.  It depends on units.c and error.c
 * only, so a program built from a provider's sources can build it in.
 */
#ifndef SBX_CORE_SETTINGS_READ_H
#define SBX_CORE_SETTINGS_READ_H

#include <stddef.h>

#include <polysandbox/provider.h>

/* One setting as written, with where it came from (for error messages). */
typedef struct core_setting {
    char *key;
    char *value;
    char *file;     /* path of the file, or "environment", "command line" */
    int line;       /* 0 when not from a file */
} core_setting;

/* @lookup gives a key's setting or NULL.  Errors are set with
 * core_error_set (the thread's error, sbx_ctx_last_error(NULL)), naming
 * @provider. */
typedef const core_setting *(*core_settings_lookup)(void *ud, const char *key);
int core_settings_read(const char *provider, const char *const *config_keys,
                       const char *const *secret_keys, core_settings_lookup lookup, void *ud,
                       const sbx_setting_v1 *table, size_t entry_size, void *base);

#endif
