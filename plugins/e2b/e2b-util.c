/* plugins/e2b/e2b-util.c - clocks, random ids, RFC 3339 times */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "e2b-int.h"

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
