/* core/loader/validate.h - the loader's checks of a provider's descriptor
 * (core/loader/validate.c)
 *
 * Pure functions over a descriptor already in memory: no module, no
 * context, no global state.  Each check returns SBX_OK when it could run
 * (its verdict in @v) or SBX_E_NOMEM when a message could not be
 * allocated (v->code then still says whether the check failed).  The
 * order of provider.h is the caller's: header (which also copies),
 * strings, ops, settings; the first failed verdict is the reason.
 */
#ifndef SBX_CORE_LOADER_VALIDATE_H
#define SBX_CORE_LOADER_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include <polysandbox/provider.h>

#include "settings-read.h"

/* Names end up in sbx_error.provider (64 bytes with its NUL). */
#define CORE_PROVIDER_NAME_MAX 63

/* One check's outcome.  @message is malloc'd (the caller frees it), NULL
 * when @code is SBX_OK.  @located: the message starts with the file (and
 * line) it is about, a [settings] entry; otherwise the caller prefixes the
 * module's path. */
typedef struct core_verdict {
    int code;           /* SBX_OK, an SBX_E_LOAD_* code or SBX_E_CONFIG */
    char *message;
    bool located;
} core_verdict;

/* A provider name: 1 to CORE_PROVIDER_NAME_MAX characters of [a-z0-9_]. */
bool core_provider_name_valid(const char *s, size_t len);

/* Steps 3 to 5 on the exported descriptor @sym: magic, ABI, sizes, then
 * the copies into @desc and @ops (zeroed first; missing tail slots of an
 * older minor stay NULL), ops not NULL, reserved zero.  Reads only
 * min(struct_size, ours) bytes of @sym. */
int core_validate_header(const void *sym, sbx_provider_v1 *desc, sbx_provider_ops_v1 *ops,
                         core_verdict *v);
/* Steps 6 and 7: the strings set and not empty, the name's characters,
 * the name against the module's file name (@path) and against the name
 * it is configured as (@name, from @conf_file, which may be NULL). */
int core_validate_strings(const sbx_provider_v1 *d, const char *path, const char *name,
                          const char *conf_file, core_verdict *v);
/* Steps 8 and 9: the mandatory ops, then each capability against its ops
 * and the ABI minor that brought it. */
int core_validate_ops(const sbx_provider_v1 *d, const sbx_provider_ops_v1 *o,
                      core_verdict *v);
/* Step 10: each of the @n_settings [settings] entries of provider @name is
 * a key @d declares (config_keys, secret_keys or the core's own), and a
 * sealed value is given only to a credential. */
int core_validate_settings(const sbx_provider_v1 *d, const char *name,
                           const core_setting *settings, size_t n_settings, core_verdict *v);

#endif
