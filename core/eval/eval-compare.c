/* core/eval/eval-compare.c - is a judged program's output the expected one?
 *
 * The output is hostile bytes (any length up to the output cap, NULs,
 * no final newline); nothing here allocates, and every scan is linear. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval-int.h"

static const char *const cmp_names[] = {
    [CORE_EVAL_CMP_LINES] = "lines",
    [CORE_EVAL_CMP_EXACT] = "exact",
    [CORE_EVAL_CMP_NUMERIC] = "numeric",
};

int core_eval_cmp_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof cmp_names / sizeof cmp_names[0]; i++)
        if (!strcmp(cmp_names[i], name))
            return (int)i;
    return -1;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A view of part of a buffer. */
typedef struct span {
    const char *p;
    size_t len;
} span;

/* The next token of @s (whitespace, newlines too when @nl, skipped);
 * false at the end.  @s is advanced past it. */
static bool next_token(span *s, bool nl, span *tok)
{
    while (s->len && (is_space(*s->p) || (nl && *s->p == '\n'))) {
        s->p++;
        s->len--;
    }
    if (!s->len || *s->p == '\n')
        return false;
    tok->p = s->p;
    while (s->len && !is_space(*s->p) && *s->p != '\n') {
        s->p++;
        s->len--;
    }
    tok->len = (size_t)(s->p - tok->p);
    return true;
}

/* The next line of @s without its '\n'; false at the end. */
static bool next_line(span *s, span *line)
{
    const char *nl;

    if (!s->len)
        return false;
    line->p = s->p;
    nl = memchr(s->p, '\n', s->len);
    line->len = nl ? (size_t)(nl - s->p) : s->len;
    s->p += line->len + (nl != NULL);
    s->len -= line->len + (nl != NULL);
    return true;
}

static bool blank(span l)
{
    for (size_t i = 0; i < l.len; i++)
        if (!is_space(l.p[i]))
            return false;
    return true;
}

/* Whether only blank lines are left in @s. */
static bool rest_blank(span s)
{
    span l;

    while (next_line(&s, &l))
        if (!blank(l))
            return false;
    return true;
}

static bool same_tokens(span a, span b)
{
    span x, y;

    for (;;) {
        bool hx = next_token(&a, false, &x), hy = next_token(&b, false, &y);
        if (hx != hy)
            return false;
        if (!hx)
            return true;
        if (x.len != y.len || memcmp(x.p, y.p, x.len) != 0)
            return false;
    }
}

static bool same_lines(span want, span got)
{
    span a, b;

    for (;;) {
        bool ha = next_line(&want, &a), hb = next_line(&got, &b);
        if (!ha || !hb)
            return (ha ? blank(a) && rest_blank(want) : true) &&
                   (hb ? blank(b) && rest_blank(got) : true);
        if (!same_tokens(a, b))
            return false;
    }
}

/* A decimal number, [+-]digits[.digits][(e|E)[+-]digits] (or .digits):
 * no hex, inf or nan, which strtod would also take. */
static bool number(span t, double *v)
{
    char buf[128];
    size_t i = 0, digits = 0;

    if (t.len == 0 || t.len >= sizeof buf)
        return false;
    if (t.p[i] == '+' || t.p[i] == '-')
        i++;
    for (; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++)
        digits++;
    if (i < t.len && t.p[i] == '.')
        for (i++; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++)
            digits++;
    if (!digits)
        return false;
    if (i < t.len && (t.p[i] == 'e' || t.p[i] == 'E')) {
        size_t e = 0;
        i++;
        if (i < t.len && (t.p[i] == '+' || t.p[i] == '-'))
            i++;
        for (; i < t.len && t.p[i] >= '0' && t.p[i] <= '9'; i++)
            e++;
        if (!e)
            return false;
    }
    if (i != t.len)
        return false;
    memcpy(buf, t.p, t.len);
    buf[t.len] = '\0';
    *v = strtod(buf, NULL);
    return true;
}

static bool close_enough(double want, double got, double tol)
{
    double d;

    if (want == got)
        return true;
    if (!isfinite(want) || !isfinite(got))
        return false;
    d = fabs(want - got);
    return d <= tol || d <= tol * fabs(want);
}

static bool same_numbers(span want, span got, double tol)
{
    span x, y;

    for (;;) {
        double a, b;
        bool hx = next_token(&want, true, &x), hy = next_token(&got, true, &y);
        if (hx != hy)
            return false;
        if (!hx)
            return true;
        if (number(x, &a) && number(y, &b)) {
            if (!close_enough(a, b, tol))
                return false;
        } else if (x.len != y.len || memcmp(x.p, y.p, x.len) != 0) {
            return false;
        }
    }
}

bool core_eval_compare(core_eval_cmp cmp, double tol, const char *want, size_t wlen,
                       const char *got, size_t glen)
{
    span w = { want ? want : "", want ? wlen : 0 }, g = { got ? got : "", got ? glen : 0 };

    switch (cmp) {
    case CORE_EVAL_CMP_EXACT:
        return w.len == g.len && memcmp(w.p, g.p, w.len) == 0;
    case CORE_EVAL_CMP_NUMERIC:
        return same_numbers(w, g, tol);
    case CORE_EVAL_CMP_LINES:
    default:
        return same_lines(w, g);
    }
}
