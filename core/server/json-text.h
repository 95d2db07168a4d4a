/* core/server/json-text.h - bytes that may not be UTF-8 as JSON text
 * (json-text.c) */
#ifndef POLYSANDBOX_SRV_JSON_TEXT_H
#define POLYSANDBOX_SRV_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

/* A JSON string of @len bytes that may not be UTF-8: the bytes as they
 * are when valid, else with each invalid byte replaced by U+FFFD (JSON
 * strings are UTF-8; clients expect text).  NULL data: "".  NULL on
 * ENOMEM. */
json_t *srv_json_text(const char *data, size_t len);

#endif
