/* plugins/common/rfc3339.h - RFC 3339 timestamps of the network providers'
 * APIs ("2025-01-02T03:04:05.123456789Z", "...+02:00")
 */
#ifndef SBX_PLUGINS_COMMON_RFC3339_H
#define SBX_PLUGINS_COMMON_RFC3339_H

#include <stdint.h>

/* Nanoseconds since the Unix epoch of the RFC 3339 date-time @s: date,
 * 'T' (or 't' or ' '), time, optional fraction (digits past the ninth are
 * ignored), then 'Z' or a UTC offset +hh:mm / -hh:mm, which is applied.
 * Returns 0 for NULL, anything malformed or out of range (a 31st of
 * February, an offset past 23:59, trailing bytes), and times before 1970. */
uint64_t pc_rfc3339_ns(const char *s);

#endif
