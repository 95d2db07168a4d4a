/* tests/server/ws-frame-check.c - the promises of polysandboxd's
 * WebSocket framing (core/server/ws-frame.c), checked over any bytes
 *
 * The bytes are what a client sends after the handshake, fed in pieces
 * whose sizes come from the input itself.  Beyond not crashing or
 * leaking, the parser keeps its promises: a message is never larger than
 * the limit, its opcode is one the RFC knows, a text message is UTF-8, a
 * refusal names a close code of the RFC and a reason; and a frame the
 * server would write, masked as a client must, parses back to its
 * payload.  Used by the fuzz harness's target "ws" (tests/fuzz/fuzz-ws.c)
 * and by ws-frame-replay (fuzz-ws-frame.c).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ws-frame-check.h"

static const char *round_trip(const uint8_t *data, size_t size)
{
    unsigned char hdr[10], *frame = malloc(size + 14 + 1);
    size_t hl = srv_ws_header(hdr, SRV_WS_BINARY, size);
    srv_ws_in in = { .max = size + 1 };
    const unsigned char *out;
    size_t len;
    uint16_t code;
    const char *why;
    int op;
    const char *broken = NULL;

    if (!frame)
        return NULL;
    memcpy(frame, hdr, hl);
    frame[1] |= 0x80;   /* masked, as a client's */
    memcpy(frame + hl, "\x11\x22\x33\x44", 4);
    for (size_t i = 0; i < size; i++)
        frame[hl + 4 + i] = data[i] ^ frame[hl + (i & 3)];
    if (srv_ws_in_add(&in, frame, hl + 4 + size) != 0 ||
        srv_ws_next(&in, &op, &out, &len, &code, &why) != 1 || op != SRV_WS_BINARY ||
        len != size || (size && memcmp(out, data, size) != 0))
        broken = "a frame as the server writes it does not parse back";
    srv_ws_in_free(&in);
    free(frame);
    return broken;
}

const char *ws_frame_check(const uint8_t *data, size_t size)
{
    srv_ws_in in = { .max = WS_FRAME_CHECK_MAX };
    const char *broken = NULL;
    size_t off = 0, step = size ? (size_t)(data[0] % 17) + 1 : 1;

    while (off < size && !broken) {
        size_t n = size - off < step ? size - off : step;
        const unsigned char *msg;
        size_t len;
        uint16_t code = 0;
        const char *why = NULL;
        int op = -1, rc;

        if (srv_ws_in_add(&in, data + off, n) != 0)
            break;
        off += n;
        while ((rc = srv_ws_next(&in, &op, &msg, &len, &code, &why)) == 1) {
            if (len > WS_FRAME_CHECK_MAX)
                broken = "a message larger than the limit";
            else if (op != SRV_WS_TEXT && op != SRV_WS_BINARY && op != SRV_WS_CLOSE &&
                     op != SRV_WS_PING && op != SRV_WS_PONG)
                broken = "an opcode the RFC does not know";
            else if (op == SRV_WS_TEXT && !srv_ws_utf8(msg, len))
                broken = "a text message that is not UTF-8";
            else if (op >= SRV_WS_CLOSE && len > 125)
                broken = "a control frame over 125 bytes";
            if (broken)
                break;
        }
        if (rc < 0) {
            if (!why || !*why || (code != SRV_WS_PROTOCOL_ERROR && code != SRV_WS_BAD_DATA &&
                                  code != SRV_WS_TOO_BIG && code != SRV_WS_INTERNAL))
                broken = "a refusal without a reason or a close code";
            break;
        }
    }
    srv_ws_in_free(&in);
    return broken ? broken : round_trip(data, size < 70000 ? size : 70000);
}
