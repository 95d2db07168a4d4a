/* core/units.c - durations, sizes, counts and booleans as written in config
 * and on the command line
 *
 * Every parser here is strict: one number, an optional unit, nothing else.
 * Arithmetic is overflow-checked and a fraction must come out as a whole
 * number of the base unit, so a value is either exact or rejected; nothing
 * is silently rounded, clamped or wrapped.  One grammar, worded two ways:
 * the configuration's reasons follow "KEY = 'VALUE': ", the public
 * sbx_parse_* ones (the command line's, the server's) follow the value
 * itself ("'5x' has an unknown unit").
 */
#include "config.h"

#include <string.h>

#include <polysandbox/sandbox.h>

#include "units.h"

struct unit {
    const char *suffix;
    uint64_t factor;
};

#define NS_PER_S UINT64_C(1000000000)

/* A bare number of a duration is seconds: the first entry. */
static const struct unit duration_units[] = {
    { "", NS_PER_S },
    { "ns", 1 },
    { "us", 1000 },
    { "ms", 1000000 },
    { "s", NS_PER_S },
    { "m", 60 * NS_PER_S },
    { "h", 3600 * NS_PER_S },
    { NULL, 0 }
};

/* Sizes are powers of 1024 whatever the spelling (K, KB, KiB), compared
 * case-insensitively: "512m" is what docker users type. */
static const struct unit size_units[] = {
    { "", 1 },
    { "b", 1 },
    { "k", UINT64_C(1) << 10 }, { "kb", UINT64_C(1) << 10 }, { "kib", UINT64_C(1) << 10 },
    { "m", UINT64_C(1) << 20 }, { "mb", UINT64_C(1) << 20 }, { "mib", UINT64_C(1) << 20 },
    { "g", UINT64_C(1) << 30 }, { "gb", UINT64_C(1) << 30 }, { "gib", UINT64_C(1) << 30 },
    { "t", UINT64_C(1) << 40 }, { "tb", UINT64_C(1) << 40 }, { "tib", UINT64_C(1) << 40 },
    { NULL, 0 }
};

/* Why a value is refused, in one caller's words. */
struct wording {
    const char *empty, *negative, *nan, *too_large, *no_fraction, *many_places, *zero,
        *count_not_whole, *duration_unit, *duration_finer, *size_unit, *size_finer;
};

static const struct wording config_words = {
    .empty = "empty value",
    .negative = "negative values are not allowed",
    .nan = "not a number",
    .too_large = "value too large",
    .no_fraction = "a decimal point must be followed by digits",
    .many_places = "too many decimal places",
    .zero = "must be greater than zero",
    .count_not_whole = "not a whole number (no units or decimals)",
    .duration_unit = "unknown unit (use ns, us, ms, s, m or h; a bare number is seconds)",
    .duration_finer = "finer than a nanosecond",
    .size_unit = "unknown unit (use K, M, G or T, powers of 1024; a bare number is bytes)",
    .size_finer = "not a whole number of bytes",
};

static const struct wording value_words = {
    .empty = "is empty",
    .negative = "must not be negative",
    .nan = "is not a number",
    .too_large = "is too large",
    .no_fraction = "has a decimal point without digits after it",
    .many_places = "has too many decimal places",
    .zero = "must be greater than 0",
    .count_not_whole = "must be a whole number",
    .duration_unit = "has an unknown unit (use ns, us, ms, s, m or h)",
    .duration_finer = "is finer than a nanosecond",
    .size_unit = "has an unknown unit (use K, M, G or T)",
    .size_finer = "is not a whole number of bytes",
};

static int fail(const char **why, const char *text)
{
    if (why)
        *why = text;
    return SBX_E_CONFIG;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool equal_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (ascii_lower(*a) != ascii_lower(*b))
            return false;
    return *a == *b;
}

/* The leading sign, emptiness and first-character checks shared by all
 * numeric parsers. */
static int check_start(const char *s, const struct wording *w, const char **why)
{
    if (!s || !*s)
        return fail(why, w->empty);
    if (*s == '-')
        return fail(why, w->negative);
    if (!is_digit(*s))
        return fail(why, w->nan);
    return SBX_OK;
}

/* Digits at *pp into *out, advancing *pp.  At least one digit is there. */
static int parse_digits(const char **pp, uint64_t *out, const struct wording *w,
                        const char **why)
{
    const char *p = *pp;
    uint64_t v = 0;

    for (; is_digit(*p); p++) {
        if (__builtin_mul_overflow(v, 10, &v) ||
            __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
            return fail(why, w->too_large);
    }
    *pp = p;
    *out = v;
    return SBX_OK;
}

/*
 * "<digits>[.<digits>]<unit>" times the unit's factor.  @bad_unit and
 * @not_whole are the messages for an unknown suffix and for a fraction
 * that is not a whole number of the base unit.
 */
static int parse_scaled(const char *s, const struct unit *units,
                        bool case_fold, bool allow_zero, uint64_t *out,
                        const struct wording *w, const char **why,
                        const char *bad_unit, const char *not_whole)
{
    const char *p = s;
    uint64_t whole, frac = 0, frac_scale = 1, factor = 0, v;
    int rc;

    rc = check_start(s, w, why);
    if (rc != SBX_OK)
        return rc;
    rc = parse_digits(&p, &whole, w, why);
    if (rc != SBX_OK)
        return rc;

    if (*p == '.') {
        p++;
        if (!is_digit(*p))
            return fail(why, w->no_fraction);
        /* Trailing zeros add nothing; the rest must fit in 18 digits. */
        const char *end = p;
        while (is_digit(*end))
            end++;
        const char *last = end;
        while (last > p && last[-1] == '0')
            last--;
        if (last - p > 18)
            return fail(why, w->many_places);
        for (; p < last; p++) {
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_scale *= 10;
        }
        p = end;
    }

    for (const struct unit *u = units; u->suffix; u++) {
        if (case_fold ? equal_nocase(p, u->suffix) : strcmp(p, u->suffix) == 0) {
            factor = u->factor;
            break;
        }
    }
    if (!factor)
        return fail(why, bad_unit);

    if (__builtin_mul_overflow(whole, factor, &v))
        return fail(why, w->too_large);
    if (frac) {
        uint64_t part;
        if (__builtin_mul_overflow(frac, factor, &part))
            return fail(why, w->many_places);
        if (part % frac_scale != 0)
            return fail(why, not_whole);
        if (__builtin_add_overflow(v, part / frac_scale, &v))
            return fail(why, w->too_large);
    }
    if (v == 0 && !allow_zero)
        return fail(why, w->zero);
    *out = v;
    return SBX_OK;
}

static int duration(const char *s, bool allow_zero, uint64_t *ns, const struct wording *w,
                    const char **why)
{
    return parse_scaled(s, duration_units, false, allow_zero, ns, w, why, w->duration_unit,
                        w->duration_finer);
}

static int size(const char *s, bool allow_zero, uint64_t *bytes, const struct wording *w,
                const char **why)
{
    return parse_scaled(s, size_units, true, allow_zero, bytes, w, why, w->size_unit,
                        w->size_finer);
}

static int count(const char *s, bool allow_zero, uint64_t *n, const struct wording *w,
                 const char **why)
{
    const char *p = s;
    uint64_t v;
    int rc;

    rc = check_start(s, w, why);
    if (rc != SBX_OK)
        return rc;
    rc = parse_digits(&p, &v, w, why);
    if (rc != SBX_OK)
        return rc;
    if (*p)
        return fail(why, w->count_not_whole);
    if (v == 0 && !allow_zero)
        return fail(why, w->zero);
    *n = v;
    return SBX_OK;
}

int core_parse_duration(const char *s, bool allow_zero, uint64_t *ns, const char **why)
{
    return duration(s, allow_zero, ns, &config_words, why);
}

int core_parse_size(const char *s, bool allow_zero, uint64_t *bytes, const char **why)
{
    return size(s, allow_zero, bytes, &config_words, why);
}

int core_parse_count(const char *s, bool allow_zero, uint64_t *n, const char **why)
{
    return count(s, allow_zero, n, &config_words, why);
}

int sbx_parse_duration(const char *s, uint64_t *ns, const char **why)
{
    return duration(s, false, ns, &value_words, why);
}

int sbx_parse_size(const char *s, uint64_t *bytes, const char **why)
{
    return size(s, false, bytes, &value_words, why);
}

int sbx_parse_count(const char *s, uint64_t *n, const char **why)
{
    return count(s, false, n, &value_words, why);
}

int core_parse_bool(const char *s, bool *out, const char **why)
{
    static const char *const yes[] = { "true", "yes", "on", "1", NULL };
    static const char *const no[] = { "false", "no", "off", "0", NULL };

    if (!s || !*s)
        return fail(why, "empty value");
    for (size_t i = 0; yes[i]; i++) {
        if (equal_nocase(s, yes[i])) {
            *out = true;
            return SBX_OK;
        }
        if (equal_nocase(s, no[i])) {
            *out = false;
            return SBX_OK;
        }
    }
    return fail(why, "not a boolean (use true/false, yes/no, on/off or 1/0)");
}
