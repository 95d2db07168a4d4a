/* tests/fuzz/fuzz-etag.c - a client's If-None-Match against the page's
 * entity tags (core/server/etag.c)
 *
 * The input is the header, read as an If-None-Match and as an
 * Accept-Encoding (srv_accepts_gzip).  Beyond not crashing: a match is
 * only ever claimed for "*" or a header that holds the tag itself, and a
 * header that is exactly the tag, or W/ and the tag, always matches;
 * gzip is only accepted from a header that names it or "*", and always
 * from "gzip" alone or Chrome's list.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "server-int.h"

static int one(const uint8_t *data, size_t size)
{
    static const char tag[] = "\"0123456789abcdef0123456789abcdef\"";
    char *header = fz_strndup(data, size);
    bool m = srv_etag_match(header, tag);

    if (m && !strchr(header, '*') && !strstr(header, tag))
        fz_fail("a match claimed for a header without the tag: %s", header);
    if (!m && (!strcmp(header, tag) || (!strncmp(header, "W/", 2) && !strcmp(header + 2, tag))))
        fz_fail("the tag itself did not match: %s", header);
    /* the same bytes as an Accept-Encoding */
    bool gz = srv_accepts_gzip(header);
    if (gz && !strchr(header, '*') && !strcasestr(header, "gzip"))
        fz_fail("gzip accepted from a header that names neither gzip nor *: %s", header);
    if (!gz && (!strcasecmp(header, "gzip") || !strcmp(header, "gzip, deflate, br, zstd")))
        fz_fail("a plain gzip was not accepted: %s", header);
    free(header);
    return 0;
}

FZ_TARGET(etag, NULL, one)
