/* core/path-check.h - host->path_check's rule (core/path-check.c)
 *
 * Depends on nothing else of the core, so that a program built from a
 * provider's sources (polysandbox-locald) can lend the same rule.
 */
#ifndef SBX_CORE_PATH_CHECK_H
#define SBX_CORE_PATH_CHECK_H

#include <stddef.h>

/* SBX_OK, or SBX_E_PATH with the reason, naming @path, in @msg. */
int core_path_check(const char *path, char *msg, size_t size);

#endif
