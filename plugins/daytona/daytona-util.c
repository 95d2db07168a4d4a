/* plugins/daytona/daytona-util.c - URLs, base64, time and id checks for
 * the daytona provider (its strings and path checks are shwrap's) */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "daytona-int.h"

void dt_buf_addurl(dt_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            dt_buf_add(b, s, 1);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            dt_buf_add(b, e, 3);
        }
    }
}

char *dt_base64(const void *data, size_t len)
{
    size_t n = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
    char *out = malloc(n);
    if (!out)
        return NULL;
    sodium_bin2base64(out, n, data, len, sodium_base64_VARIANT_ORIGINAL);
    return out;
}

int dt_unbase64(const char *s, size_t n, unsigned char **out, size_t *outlen)
{
    size_t cap = n / 4 * 3 + 3;
    unsigned char *buf = malloc(cap ? cap : 1);
    const char *end = NULL;

    *out = NULL;
    *outlen = 0;
    if (!buf)
        return -1;
    if (n > 0 && (sodium_base642bin(buf, cap, s, n, " \r\n\t", outlen, &end,
                                    sodium_base64_VARIANT_ORIGINAL) != 0 ||
                  end != s + n)) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

uint64_t dt_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool dt_id_ok(const char *id)
{
    size_t n = 0;
    if (!id || !*id)
        return false;
    for (; id[n]; n++)
        if (!((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= 'A' && id[n] <= 'Z') ||
              (id[n] >= '0' && id[n] <= '9') || id[n] == '.' || id[n] == '_' || id[n] == '-'))
            return false;
    return n < SBX_ID_MAX;
}
