/* core/server/json-text.c - bytes that may not be UTF-8 as JSON text
 *
 * Names, paths and messages from a sandbox or a request are shown as
 * text by the server's replies and by `polysandbox files --json` alike,
 * so both compile this one file.  Depends on jansson and utf8.c only.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-text.h"
#include "utf8.h"

json_t *srv_json_text(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    char *buf;
    size_t n = 0;
    json_t *j;

    if (!data)
        return json_string("");
    if ((j = json_stringn(data, len)))
        return j; /* valid UTF-8 (NULs included) */
    if (len > (SIZE_MAX - 1) / 3 || !(buf = malloc(len * 3 + 1)))
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t k = srv_utf8_seq(p + i, len - i);
        if (k) {
            memcpy(buf + n, p + i, k);
            n += k;
            i += k;
        } else {
            memcpy(buf + n, "\xef\xbf\xbd", 3);
            n += 3;
            i++;
        }
    }
    j = json_stringn(buf, n);
    free(buf);
    return j;
}
