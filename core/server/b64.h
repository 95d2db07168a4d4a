/* core/server/b64.h - bytes to and from base64 in JSON fields (b64.c)
 *
 * The original alphabet, padded (sodium_base64_VARIANT_ORIGINAL), as
 * every route and `polysandbox files --json` use it.
 */
#ifndef POLYSANDBOX_SRV_B64_H
#define POLYSANDBOX_SRV_B64_H

#include <stddef.h>

#include <jansson.h>

/* Decode the @len bytes of @text, skipping the characters of @ignore
 * (NULL: none), into a new buffer *@out (the caller frees it) of *@out_len
 * bytes.  0; EINVAL when @text is not wholly base64, ENOMEM; *@out is
 * set only on success.  Each caller names the bad field in its own
 * dialect. */
int srv_b64_decode(const char *text, size_t len, const char *ignore, unsigned char **out,
                   size_t *out_len);

/* @len bytes of @data as a NUL-terminated base64 string (the caller
 * frees it); NULL on ENOMEM. */
char *srv_b64_encode(const void *data, size_t len);

/* The same as a new JSON string; NULL on ENOMEM. */
json_t *srv_b64_json(const void *data, size_t len);

#endif
