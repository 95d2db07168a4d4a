/* plugins/e2b/e2b-util.c - base64 (proto3 JSON bytes), clocks, random ids,
 * RFC 3339 times */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "e2b-int.h"

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *e2b_b64_encode(const void *data, size_t len)
{
    const unsigned char *s = data;
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *o++ = b64[v >> 18];
        *o++ = b64[(v >> 12) & 63];
        *o++ = b64[(v >> 6) & 63];
        *o++ = b64[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0);
        *o++ = b64[v >> 18];
        *o++ = b64[(v >> 12) & 63];
        *o++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    /* protojson accepts the URL alphabet on input: so do we. */
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

unsigned char *e2b_b64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return NULL;
    unsigned char *out = malloc(n / 4 * 3 + 3), *o = out;
    if (!out)
        return NULL;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (unsigned char)(acc >> bits);
        }
    }
    *len = (size_t)(o - out);
    return out;
}

uint64_t e2b_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int e2b_random_hex(char *out, size_t nbytes)
{
    unsigned char rnd[32];
    if (nbytes > sizeof rnd)
        nbytes = sizeof rnd;
    size_t got = 0;
    while (got < nbytes) {
        ssize_t n = getrandom(rnd + got, nbytes - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < nbytes; i++)
        snprintf(out + 2 * i, 3, "%02x", rnd[i]);
    return 0;
}

uint64_t e2b_parse_time_ns(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!s)
        return 0;
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return 0;
    uint64_t frac = 0, scale = 1000000000u;
    if (*rest == '.')
        for (rest++; *rest >= '0' && *rest <= '9'; rest++)
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*rest - '0') * scale;
            }
    long off = 0;
    if (*rest == '+' || *rest == '-') {
        int hh = 0, mm = 0;
        if (sscanf(rest + 1, "%2d:%2d", &hh, &mm) != 2)
            return 0;
        off = (hh * 3600L + mm * 60L) * (*rest == '-' ? -1 : 1);
    } else if (*rest != 'Z' && *rest != 'z') {
        return 0;
    }
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || (t - off) < 0)
        return 0;
    return (uint64_t)(t - off) * 1000000000u + frac;
}
