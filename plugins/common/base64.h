/* plugins/common/base64.h - base64 for the network providers
 *
 * Encoding uses the standard alphabet with padding.  Decoding accepts the
 * standard and the URL alphabet (as proto3 JSON readers do), with or
 * without trailing padding; anything else is malformed.
 */
#ifndef SBX_PLUGINS_COMMON_BASE64_H
#define SBX_PLUGINS_COMMON_BASE64_H

#include <stddef.h>

/* @len bytes of @data as a NUL-terminated base64 string (malloc'd; the
 * caller frees), or NULL when out of memory. */
char *pc_b64_encode(const void *data, size_t len);

/* The bytes @s encodes (malloc'd, *len of them; the caller frees), or NULL
 * when @s is malformed or memory runs out. */
unsigned char *pc_b64_decode(const char *s, size_t *len);

#endif
