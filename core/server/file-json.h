/* core/server/file-json.h - one directory entry as JSON (file-json.c) */
#ifndef POLYSANDBOX_SRV_FILE_JSON_H
#define POLYSANDBOX_SRV_FILE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <polysandbox/sandbox.h>

/* The entry object of GET /v1/sandboxes/{id}/files (and polysandbox
 * files --json), from an sbx_file_cb's arguments: {"name", "type",
 * "size", "mtime"}, plus "name_base64" (the name's bytes) when the name
 * is not UTF-8, "name" then showing each bad byte as U+FFFD.  New
 * reference; NULL on ENOMEM. */
json_t *srv_file_json(const char *name, size_t len, sbx_file_type type, uint64_t size,
                      int64_t mtime);

#endif
