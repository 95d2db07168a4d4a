/* core/server/etag.c - If-None-Match against an entity tag (RFC 9110
 * §13.1.2), for the page's files (native-web.c)
 *
 * The header is a client's: "*" or a comma-separated list of entity
 * tags, each "opaque" or W/"opaque", with optional white space around the
 * commas.  If-None-Match compares weakly, so W/ is ignored.  A list that
 * breaks the grammar matches nothing: the file is then sent in full,
 * which is never wrong.  Fuzzed by tests/fuzz/fuzz-etag.c.
 */
#include "config.h"

#include <string.h>

#include "server-int.h"

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

bool srv_etag_match(const char *header, const char *etag)
{
    size_t elen = strlen(etag);
    const char *p = header;

    if (!header)
        return false;
    for (;;) {
        p = skip_ows(p);
        while (*p == ',')
            p = skip_ows(p + 1);
        if (!*p)
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
        p = skip_ows(end);
        if (*p && *p != ',')
            return false;
    }
}
