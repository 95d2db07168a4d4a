/* core/server/b64.c - bytes to and from base64 in JSON fields
 *
 * Requests carry files and stdin as base64 and replies carry bytes that
 * are not UTF-8 so; one place does the sizing, the libsodium call and the
 * check that the whole text was read.  Depends on jansson and libsodium
 * only: the command compiles it too (file-json.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <sodium.h>

#include "b64.h"

int srv_b64_decode(const char *text, size_t len, const char *ignore, unsigned char **out,
                   size_t *out_len)
{
    /* every 4 characters give at most 3 bytes; ignored ones give none */
    size_t cap = len / 4 * 3 + 3;
    unsigned char *buf = malloc(cap);
    const char *end = NULL;

    if (!buf)
        return ENOMEM;
    /* sodium stops at the first character it cannot take: check the end */
    if (sodium_base642bin(buf, cap, text, len, ignore, out_len, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        end != text + len) {
        free(buf);
        return EINVAL;
    }
    *out = buf;
    return 0;
}

char *srv_b64_encode(const void *data, size_t len)
{
    size_t n = sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
    char *s = malloc(n);

    if (s)
        sodium_bin2base64(s, n, data, len, sodium_base64_VARIANT_ORIGINAL);
    return s;
}

json_t *srv_b64_json(const void *data, size_t len)
{
    char *s = srv_b64_encode(data, len);
    json_t *j = s ? json_string(s) : NULL;

    free(s);
    return j;
}
