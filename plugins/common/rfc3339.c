/* plugins/common/rfc3339.c - RFC 3339 timestamps (see rfc3339.h) */
#include "config.h"

#include <string.h>
#include <time.h>

#include "rfc3339.h"

/* @n decimal digits at *s into *out, advancing *s; -1 when not digits. */
static int digits(const char **s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        char c = (*s)[i];

        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

/* The character @c at *s, advancing past it; -1 when another. */
static int expect(const char **s, char c)
{
    if (**s != c)
        return -1;
    (*s)++;
    return 0;
}

uint64_t pc_rfc3339_ns(const char *s)
{
    int year, mon, day, hh, mi, ss, oh = 0, om = 0;
    uint64_t frac = 0, scale = 1000000000u;
    long off = 0;
    struct tm tm, back;
    time_t t;

    if (!s || digits(&s, 4, &year) || expect(&s, '-') || digits(&s, 2, &mon) || expect(&s, '-') ||
        digits(&s, 2, &day))
        return 0;
    if (*s != 'T' && *s != 't' && *s != ' ')
        return 0;
    s++;
    if (digits(&s, 2, &hh) || expect(&s, ':') || digits(&s, 2, &mi) || expect(&s, ':') ||
        digits(&s, 2, &ss))
        return 0;
    if (*s == '.') {
        if (s[1] < '0' || s[1] > '9')
            return 0;
        for (s++; *s >= '0' && *s <= '9'; s++)
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*s - '0') * scale;
            }
    }
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        int sign = *s++ == '-' ? -1 : 1;

        if (digits(&s, 2, &oh) || expect(&s, ':') || digits(&s, 2, &om) || oh > 23 || om > 59)
            return 0;
        off = sign * (oh * 3600L + om * 60L);
    } else {
        return 0;
    }
    /* 60: a leap second, counted as the next minute's first. */
    if (*s || mon < 1 || mon > 12 || day < 1 || day > 31 || hh > 23 || mi > 59 || ss > 60)
        return 0;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = hh;
    tm.tm_min = mi;
    tm.tm_sec = 0;
    t = timegm(&tm);
    /* timegm carries a 31st of February into March: refuse such a date. */
    if (t == (time_t)-1 || !gmtime_r(&t, &back) || back.tm_mday != day)
        return 0;
    t += ss - off;
    if (t < 0)
        return 0;
    return (uint64_t)t * 1000000000u + frac;
}
