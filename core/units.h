/* core/units.h - the one grammar of durations, sizes, counts and booleans
 * (core/units.c)
 */
#ifndef POLYSANDBOX_UNITS_H
#define POLYSANDBOX_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* Parse "500ms", "10s", "2m", "1h", "250us", "100ns"; a bare number is
 * seconds.  Overflow-safe.  0 and negative values are rejected when
 * @allow_zero is false.  On error returns SBX_E_CONFIG and *why (static
 * text) says what is wrong.  */
int core_parse_duration(const char *s, bool allow_zero, uint64_t *ns, const char **why);
/* Parse "512", "64K", "512M", "1G", "1T" (powers of 1024; "KiB", "MB"
 * style suffixes accepted too).  Same rules as core_parse_duration. */
int core_parse_size(const char *s, bool allow_zero, uint64_t *bytes, const char **why);
/* Parse a plain count ("128"). */
int core_parse_count(const char *s, bool allow_zero, uint64_t *n, const char **why);
/* Parse true/false/yes/no/on/off/1/0. */
int core_parse_bool(const char *s, bool *out, const char **why);

#endif /* POLYSANDBOX_UNITS_H */
