/* core/server/ws-frame.c - WebSocket framing (RFC 6455), server side
 *
 * Why by hand: libmicrohttpd 0.9.75 as Debian ships it gives the
 * connection upgrade (the socket, after our 101) but not its WebSocket
 * helper library (no microhttpd_ws.h); libwebsockets 4.1 is installed but
 * wants to own the listening socket and its event loop, so it would mean
 * a second port or handing it sockets through its foreign-loop adoption,
 * with its own threads, for the two routes that need it.  Framing is
 * small and fully specified; this file is the only parser of it, has no
 * I/O, and is fuzzed (tests/fuzz/fuzz-ws-frame.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "ws-frame.h"

static int grow(unsigned char **buf, size_t *cap, size_t need)
{
    size_t c = *cap ? *cap : 1024;
    unsigned char *b;

    if (need <= *cap)
        return 0;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (!(b = realloc(*buf, c)))
        return -1;
    *buf = b;
    *cap = c;
    return 0;
}

int srv_ws_in_add(srv_ws_in *in, const void *data, size_t len)
{
    /* What was parsed goes first. */
    if (in->off) {
        memmove(in->buf, in->buf + in->off, in->len - in->off);
        in->len -= in->off;
        in->off = 0;
    }
    /* A frame is at most max plus its 14-byte header; a client that sends
     * more ahead of our reading waits (the caller reads no more). */
    if (in->len + len > in->max + 14 + 65536)
        return -1;
    if (grow(&in->buf, &in->cap, in->len + len) != 0)
        return -1;
    memcpy(in->buf + in->len, data, len);
    in->len += len;
    return 0;
}

bool srv_ws_utf8(const unsigned char *p, size_t len)
{
    for (size_t i = 0, n; i < len; i += n)
        if (!(n = srv_utf8_seq(p + i, len - i)))
            return false;
    return true;
}

static int bad(uint16_t *code, const char **why, uint16_t c, const char *w)
{
    *code = c;
    *why = w;
    return -1;
}

int srv_ws_next(srv_ws_in *in, int *opcode, const unsigned char **data, size_t *len,
                uint16_t *code, const char **why)
{
    for (;;) {
        unsigned char *p = in->buf + in->off;
        size_t avail = in->len - in->off, hl = 2;
        uint64_t n;
        bool fin;
        int op;

        if (avail < 2)
            return 0;
        fin = p[0] & 0x80;
        op = p[0] & 0x0f;
        if (p[0] & 0x70)
            return bad(code, why, SRV_WS_PROTOCOL_ERROR, "reserved bits set (no extension "
                       "was agreed)");
        if (!(p[1] & 0x80))
            return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a client frame that is not masked");
        if (op != SRV_WS_CONT && op != SRV_WS_TEXT && op != SRV_WS_BINARY &&
            op != SRV_WS_CLOSE && op != SRV_WS_PING && op != SRV_WS_PONG)
            return bad(code, why, SRV_WS_PROTOCOL_ERROR, "an unknown opcode");
        n = p[1] & 0x7f;
        if (n == 126) {
            if (avail < 4)
                return 0;
            n = (uint64_t)p[2] << 8 | p[3];
            if (n < 126)
                return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a length not in its shortest form");
            hl = 4;
        } else if (n == 127) {
            if (avail < 10)
                return 0;
            n = 0;
            for (int i = 2; i < 10; i++)
                n = n << 8 | p[i];
            if (n >> 63)
                return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a length with its top bit set");
            if (n < 65536)
                return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a length not in its shortest form");
            hl = 10;
        }
        if (op >= SRV_WS_CLOSE && (!fin || n > 125))
            return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a control frame fragmented or longer "
                       "than 125 bytes");
        if (n > in->max || (op == SRV_WS_CONT && n > in->max - in->msg_len))
            return bad(code, why, SRV_WS_TOO_BIG, "a message larger than the server takes");
        if (avail - hl < 4 || avail - hl - 4 < n)
            return 0;
        {
            unsigned char *mask = p + hl, *pl = p + hl + 4;
            for (uint64_t i = 0; i < n; i++)
                pl[i] ^= mask[i & 3];
            in->off += hl + 4 + (size_t)n;
            if (op >= SRV_WS_CLOSE) {
                if (op == SRV_WS_CLOSE && n == 1)
                    return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a close frame of one byte");
                *opcode = op;
                *data = pl;
                *len = (size_t)n;
                return 1;
            }
            if (op == SRV_WS_CONT && !in->msg_opcode)
                return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a continuation with no message "
                           "to continue");
            if (op != SRV_WS_CONT && in->msg_opcode)
                return bad(code, why, SRV_WS_PROTOCOL_ERROR, "a new message inside a "
                           "fragmented one");
            if (op != SRV_WS_CONT && fin) {
                if (op == SRV_WS_TEXT && !srv_ws_utf8(pl, (size_t)n))
                    return bad(code, why, SRV_WS_BAD_DATA, "a text message that is not UTF-8");
                *opcode = op;
                *data = pl;
                *len = (size_t)n;
                return 1;
            }
            if (op != SRV_WS_CONT)
                in->msg_opcode = op;
            if (grow(&in->msg, &in->msg_cap, in->msg_len + (size_t)n) != 0)
                return bad(code, why, SRV_WS_INTERNAL, "out of memory");
            if (n)
                memcpy(in->msg + in->msg_len, pl, (size_t)n);
            in->msg_len += (size_t)n;
            if (!fin)
                continue;
            *opcode = in->msg_opcode;
            *data = in->msg;
            *len = in->msg_len;
            in->msg_opcode = 0;
            in->msg_len = 0;
            if (*opcode == SRV_WS_TEXT && !srv_ws_utf8(*data, *len))
                return bad(code, why, SRV_WS_BAD_DATA, "a text message that is not UTF-8");
            return 1;
        }
    }
}

void srv_ws_in_free(srv_ws_in *in)
{
    free(in->buf);
    free(in->msg);
    memset(in, 0, sizeof *in);
}

size_t srv_ws_header(unsigned char hdr[10], int opcode, uint64_t len)
{
    hdr[0] = (unsigned char)(0x80 | (opcode & 0x0f));
    if (len < 126) {
        hdr[1] = (unsigned char)len;
        return 2;
    }
    if (len < 65536) {
        hdr[1] = 126;
        hdr[2] = (unsigned char)(len >> 8);
        hdr[3] = (unsigned char)len;
        return 4;
    }
    hdr[1] = 127;
    for (int i = 0; i < 8; i++)
        hdr[2 + i] = (unsigned char)(len >> (56 - 8 * i));
    return 10;
}
