/* core/server/utf8.c - the length of one UTF-8 sequence
 *
 * Shared by the WebSocket text frames (ws-frame.c), the server's JSON
 * text (json-text.c) and, through that, the polysandbox command: one
 * decoder, fuzzed with ws-frame.c.  No dependency but libc.
 */
#include "config.h"

#include "utf8.h"

size_t srv_utf8_seq(const unsigned char *p, size_t n)
{
    size_t len;
    unsigned cp;

    if (n == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        len = 2, cp = p[0] & 0x1f;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        len = 3, cp = p[0] & 0x0f;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        len = 4, cp = p[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}
