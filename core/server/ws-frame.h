/* core/server/ws-frame.h - WebSocket framing (RFC 6455), server side
 *
 * Bytes from the client go in (srv_ws_in_add), whole messages and
 * control frames come out (srv_ws_next), checked as the RFC says a
 * server must: every frame masked, no reserved bits (no extension is
 * negotiated), known opcodes, control frames short and unfragmented,
 * continuations only inside a fragmented message, text valid UTF-8, a
 * message no larger than the limit.  A violation gives the close code to
 * answer with.  No I/O here (ws.c does it), so the parser can be fuzzed
 * alone (tests/fuzz/fuzz-ws-frame.c).
 */
#ifndef POLYSANDBOX_SERVER_WS_FRAME_H
#define POLYSANDBOX_SERVER_WS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    SRV_WS_CONT = 0x0,
    SRV_WS_TEXT = 0x1,
    SRV_WS_BINARY = 0x2,
    SRV_WS_CLOSE = 0x8,
    SRV_WS_PING = 0x9,
    SRV_WS_PONG = 0xa,
};

/* Close codes (RFC 6455, 7.4.1). */
enum {
    SRV_WS_NORMAL = 1000,
    SRV_WS_GOING_AWAY = 1001,
    SRV_WS_PROTOCOL_ERROR = 1002,
    SRV_WS_BAD_DATA = 1007,
    SRV_WS_POLICY = 1008,
    SRV_WS_TOO_BIG = 1009,
    SRV_WS_INTERNAL = 1011,
};

typedef struct srv_ws_in {
    unsigned char *buf;       /* received, not yet parsed */
    size_t len, cap, off;     /* off: parsed up to here */
    unsigned char *msg;       /* a fragmented message being put together */
    size_t msg_len, msg_cap;
    int msg_opcode;           /* its opcode, 0: none */
    size_t max;               /* largest message (and frame) taken */
} srv_ws_in;

/* Take @len received bytes; -1 on ENOMEM or when more than a message's
 * worth is waiting unparsed. */
int srv_ws_in_add(srv_ws_in *in, const void *data, size_t len);
/* The next message or control frame: 1 with *opcode (TEXT, BINARY,
 * CLOSE, PING, PONG) and its payload (*data, *len: valid until the next
 * call), 0 when more bytes are needed, -1 for a violation (*code: the
 * close code to answer with, *why: what was wrong). */
int srv_ws_next(srv_ws_in *in, int *opcode, const unsigned char **data, size_t *len,
                uint16_t *code, const char **why);
void srv_ws_in_free(srv_ws_in *in);

/* The header of an unmasked server frame with FIN set (2 to 10 bytes);
 * returns its length. */
size_t srv_ws_header(unsigned char hdr[10], int opcode, uint64_t len);
/* True when @p[0..len) is valid UTF-8. */
bool srv_ws_utf8(const unsigned char *p, size_t len);

#endif /* POLYSANDBOX_SERVER_WS_FRAME_H */
