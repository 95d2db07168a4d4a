/* core/cli/units.c - durations and sizes given on the command line
 *
 * The same grammar as the core's configuration parser (core/units.c),
 * which the command cannot link: a number with an optional unit, exact
 * fractions only ("1.5s", "0.5G"), no signs, overflow-checked, 0
 * rejected (0 never means "unlimited").  Keep the two in step.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

struct unit {
    const char *suffix;
    uint64_t factor;
};

#define NS_PER_S UINT64_C(1000000000)

/* A bare number of a duration is seconds: the first entry. */
static const struct unit duration_units[] = {
    { "", NS_PER_S }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
    { "s", NS_PER_S }, { "m", 60 * NS_PER_S }, { "h", 3600 * NS_PER_S },
    { NULL, 0 }
};

/* Powers of 1024 whatever the spelling (K, KB, KiB), any case. */
static const struct unit size_units[] = {
    { "", 1 }, { "b", 1 },
    { "k", UINT64_C(1) << 10 }, { "kb", UINT64_C(1) << 10 },
    { "kib", UINT64_C(1) << 10 },
    { "m", UINT64_C(1) << 20 }, { "mb", UINT64_C(1) << 20 },
    { "mib", UINT64_C(1) << 20 },
    { "g", UINT64_C(1) << 30 }, { "gb", UINT64_C(1) << 30 },
    { "gib", UINT64_C(1) << 30 },
    { "t", UINT64_C(1) << 40 }, { "tb", UINT64_C(1) << 40 },
    { "tib", UINT64_C(1) << 40 },
    { NULL, 0 }
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool equal_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return false;
    }
    return *a == *b;
}

static bool fail(const char **why, const char *text)
{
    *why = text;
    return false;
}

/* Leading decimal digits at *pp into *v, advancing *pp. */
static bool parse_digits(const char **pp, uint64_t *v, const char **why)
{
    const char *p = *pp;
    uint64_t n = 0;

    if (*p == '\0')
        return fail(why, "is empty");
    if (*p == '-')
        return fail(why, "must not be negative");
    if (!is_digit(*p))
        return fail(why, "is not a number");
    for (; is_digit(*p); p++)
        if (__builtin_mul_overflow(n, 10, &n) ||
            __builtin_add_overflow(n, (uint64_t)(*p - '0'), &n))
            return fail(why, "is too large");
    *pp = p;
    *v = n;
    return true;
}

/* "<digits>[.<digits>]<unit>" times the unit's factor; a fraction must
 * come out as a whole number of the base unit (nothing is rounded). */
static bool parse_scaled(const char *s, const struct unit *units,
                         bool case_fold, uint64_t *out, const char **why,
                         const char *bad_unit, const char *not_whole)
{
    const char *p = s;
    uint64_t whole, frac = 0, frac_scale = 1, factor = 0, v;

    if (!parse_digits(&p, &whole, why))
        return false;
    if (*p == '.') {
        const char *end, *last;
        p++;
        if (!is_digit(*p))
            return fail(why, "has a decimal point without digits after it");
        for (end = p; is_digit(*end); end++)
            ;
        for (last = end; last > p && last[-1] == '0'; last--)
            ;
        if (last - p > 18)
            return fail(why, "has too many decimal places");
        for (; p < last; p++) {
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_scale *= 10;
        }
        p = end;
    }
    for (const struct unit *u = units; u->suffix != NULL; u++) {
        if (case_fold ? equal_nocase(p, u->suffix)
                      : strcmp(p, u->suffix) == 0) {
            factor = u->factor;
            break;
        }
    }
    if (factor == 0)
        return fail(why, bad_unit);
    if (__builtin_mul_overflow(whole, factor, &v))
        return fail(why, "is too large");
    if (frac != 0) {
        uint64_t part;
        if (__builtin_mul_overflow(frac, factor, &part))
            return fail(why, "has too many decimal places");
        if (part % frac_scale != 0)
            return fail(why, not_whole);
        if (__builtin_add_overflow(v, part / frac_scale, &v))
            return fail(why, "is too large");
    }
    if (v == 0)
        return fail(why, "must be greater than 0");
    *out = v;
    return true;
}

bool cli_parse_duration(const char *s, uint64_t *ns, const char **why)
{
    return parse_scaled(s, duration_units, false, ns, why,
                        "has an unknown unit (use ns, us, ms, s, m or h)",
                        "is finer than a nanosecond");
}

bool cli_parse_size(const char *s, uint64_t *bytes, const char **why)
{
    return parse_scaled(s, size_units, true, bytes, why,
                        "has an unknown unit (use K, M, G or T)",
                        "is not a whole number of bytes");
}

bool cli_parse_count(const char *s, uint64_t *n, const char **why)
{
    const char *p = s;

    if (!parse_digits(&p, n, why))
        return false;
    if (*p != '\0')
        return fail(why, "must be a whole number");
    if (*n == 0)
        return fail(why, "must be greater than 0");
    return true;
}

void cli_format_duration(uint64_t ns, char *buf, size_t size)
{
    static const struct {
        const char *unit;
        uint64_t div;
    } units[] = {
        { "h", UINT64_C(3600000000000) }, { "m", UINT64_C(60000000000) },
        { "s", UINT64_C(1000000000) },    { "ms", UINT64_C(1000000) },
        { "us", UINT64_C(1000) },         { "ns", 1 },
    };
    const uint64_t second = UINT64_C(1000000000);

    /* 1.5s rather than 1500ms; whole units otherwise */
    if (ns > second && ns % second != 0) {
        snprintf(buf, size, "%.3gs", (double)ns / 1e9);
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        uint64_t d = units[i].div;
        if (ns >= d && ns % d == 0) {
            snprintf(buf, size, "%llu%s", (unsigned long long)(ns / d),
                     units[i].unit);
            return;
        }
    }
    snprintf(buf, size, "0s");
}

void cli_format_size(uint64_t bytes, char *buf, size_t size)
{
    static const char *const names[] = { "TiB", "GiB", "MiB", "KiB" };

    for (int i = 0; i < 4; i++) {
        uint64_t d = UINT64_C(1) << (10 * (4 - i));
        if (bytes >= d && bytes % d == 0) {
            snprintf(buf, size, "%llu %s", (unsigned long long)(bytes / d),
                     names[i]);
            return;
        }
    }
    snprintf(buf, size, "%llu byte%s", (unsigned long long)bytes,
             bytes == 1 ? "" : "s");
}
