/* core/run/files.h - the sandbox's file listing (core/run/sandbox-files.c)
 */
#ifndef POLYSANDBOX_RUN_FILES_H
#define POLYSANDBOX_RUN_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include <polysandbox/sandbox.h>

/* Parse the listing script's output (hostile: the sandbox's bytes),
 * calling @cb per entry, at most @max.  Returns 0 or @cb's non-zero
 * return; *bad (with the offset *bad_at) when the bytes break the
 * grammar, *more when the script said there were more than @max. */
int core_files_parse(const char *buf, size_t len, size_t max, sbx_file_cb cb, void *ud, bool *more,
                     bool *bad, size_t *bad_at);

#endif /* POLYSANDBOX_RUN_FILES_H */
