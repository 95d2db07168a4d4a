/* core/server/etag.c - the request headers that choose how the page's
 * files go out (native-web.c): If-None-Match against an entity tag (RFC
 * 9110 §13.1.2) and Accept-Encoding's gzip (§12.5.3)
 *
 * If-None-Match is "*" or a comma-separated list of entity tags, each
 * "opaque" or W/"opaque", with optional white space around the commas;
 * it compares weakly, so W/ is ignored.  Accept-Encoding is a list of
 * codings, each with an optional ";q=" weight.  Both are a client's: a
 * header that breaks the grammar matches nothing, and the file is then
 * sent in full and as it is, which is never wrong.  Fuzzed by
 * tests/fuzz/fuzz-etag.c.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "server-int.h"

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The start of the list's next element at or after @p (empty elements,
 * "a, , b", are allowed by RFC 9110 §5.6.1), or NULL at the end. */
static const char *next_element(const char *p)
{
    p = skip_ows(p);
    while (*p == ',')
        p = skip_ows(p + 1);
    return *p ? p : NULL;
}

/* After an element: at the end or a comma (returned), else NULL. */
static const char *end_element(const char *p)
{
    p = skip_ows(p);
    return !*p || *p == ',' ? p : NULL;
}

bool srv_etag_match(const char *header, const char *etag)
{
    size_t elen = strlen(etag);
    const char *p = header;

    if (!header)
        return false;
    for (;;) {
        if (!(p = next_element(p)))
            return false;
        if (*p == '*')
            return *skip_ows(p + 1) == '\0';
        if (p[0] == 'W' && p[1] == '/')
            p += 2;
        if (*p != '"')
            return false;
        /* etagc: any visible byte but '"', and obs-text */
        const char *end = p + 1;
        while (*end && *end != '"' && (unsigned char)*end > 0x20 && *end != 0x7f)
            end++;
        if (*end != '"')
            return false;
        end++;
        if ((size_t)(end - p) == elen && memcmp(p, etag, elen) == 0)
            return true;
        if (!(p = end_element(end)))
            return false;
    }
}

/* RFC 9110 §5.6.2 tchar */
static bool is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A qvalue at *@pp in thousandths, or -1 when it breaks the grammar:
 * "0" ["." 0*3DIGIT] / "1" ["." 0*3"0"]. */
static int qvalue(const char **pp)
{
    const char *p = *pp;
    int q, scale = 100;

    if (*p != '0' && *p != '1')
        return -1;
    q = (*p++ - '0') * 1000;
    if (*p == '.') {
        p++;
        for (int n = 0; n < 3 && *p >= '0' && *p <= '9'; n++, p++, scale /= 10)
            q += (*p - '0') * scale;
    }
    if (q > 1000)
        return -1;
    *pp = p;
    return q;
}

bool srv_accepts_gzip(const char *header)
{
    int gzip_q = -1, star_q = -1;
    const char *p = header;

    if (!header)
        return false;
    while ((p = next_element(p))) {
        const char *tok = p;
        while (is_tchar(*p))
            p++;
        size_t len = (size_t)(p - tok);
        int q = 1000;
        if (len == 0)
            return false;
        p = skip_ows(p);
        if (*p == ';') {
            p = skip_ows(p + 1);
            if ((*p != 'q' && *p != 'Q') || p[1] != '=')
                return false;
            p += 2;
            if ((q = qvalue(&p)) < 0)
                return false;
        }
        if (!(p = end_element(p)))
            return false;
        if ((len == 4 && !strncasecmp(tok, "gzip", 4)) ||
            (len == 6 && !strncasecmp(tok, "x-gzip", 6)))
            gzip_q = q;
        else if (len == 1 && *tok == '*')
            star_q = q;
    }
    return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}
