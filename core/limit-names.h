/* core/limit-names.h - the limits' names: one table for the ini keys, the
 * messages and the JSON of unenforced limits
 */
#ifndef POLYSANDBOX_CORE_LIMIT_NAMES_H
#define POLYSANDBOX_CORE_LIMIT_NAMES_H

#include <stdint.h>

#include <polysandbox/sandbox.h>

struct json_t;

/* Names of the [limits] keys, indexed by sbx_limit ("wall", "cpu", ...);
 * NULL out of range. */
const char *core_limit_key(sbx_limit which);

/* The names of the limits of @bits (SBX_LIMIT_BIT_* bits: sbx_unenforced_name)
 * as a JSON array: a new reference, or NULL on ENOMEM. */
struct json_t *core_limit_names_json(uint64_t bits);

#endif
