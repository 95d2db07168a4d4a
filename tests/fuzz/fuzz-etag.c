/* tests/fuzz/fuzz-etag.c - a client's If-None-Match against the page's
 * entity tags (core/server/etag.c)
 *
 * The input is the header.  Beyond not crashing: a match is only ever
 * claimed for "*" or a header that holds the tag itself, and a header
 * that is exactly the tag, or W/ and the tag, always matches.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "server-int.h"
#include "fuzz.h"

static int one(const uint8_t *data, size_t size)
{
    static const char tag[] = "\"0123456789abcdef0123456789abcdef\"";
    char *header = fz_strndup(data, size);
    bool m = srv_etag_match(header, tag);

    if (m && !strchr(header, '*') && !strstr(header, tag))
        fz_fail("a match claimed for a header without the tag: %s", header);
    if (!m && (!strcmp(header, tag) || (!strncmp(header, "W/", 2) && !strcmp(header + 2, tag))))
        fz_fail("the tag itself did not match: %s", header);
    free(header);
    return 0;
}

FZ_TARGET(etag, NULL, one)
