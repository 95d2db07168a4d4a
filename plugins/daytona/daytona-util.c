/* plugins/daytona/daytona-util.c - strings, shell quoting, URLs, base64
 * and path checks for the daytona provider */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "daytona-int.h"

static bool grow(dt_buf *b, size_t more)
{
    if (b->oom)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *n = realloc(b->p, cap);
    if (!n) {
        b->oom = true;
        return false;
    }
    b->p = n;
    b->cap = cap;
    return true;
}

void dt_buf_add(dt_buf *b, const void *s, size_t n)
{
    if (!grow(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void dt_buf_adds(dt_buf *b, const char *s)
{
    dt_buf_add(b, s, strlen(s));
}

void dt_buf_addf(dt_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];

    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        dt_buf_add(b, small, (size_t)n);
        return;
    }
    if (!grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void dt_buf_addq(dt_buf *b, const char *s)
{
    dt_buf_add(b, "'", 1);
    for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
        dt_buf_add(b, s, (size_t)(q - s));
        dt_buf_add(b, "'\\''", 4);
    }
    dt_buf_adds(b, s);
    dt_buf_add(b, "'", 1);
}

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

void dt_buf_free(dt_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
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

bool dt_path_ok(const char *path)
{
    if (!path || !*path || path[0] == '/')
        return false;
    for (const char *c = path; *c;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!e)
            break;
        c = e + 1;
        if (!*c)
            return false;  /* trailing slash: not a file */
    }
    return true;
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
