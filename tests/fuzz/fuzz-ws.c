/* tests/fuzz/fuzz-ws.c - polysandboxd's WebSocket framing (Piston's
 * /api/v2/connect and the native exec/ws read their clients' frames with
 * core/server/ws-frame.c): the bytes a client sends after the handshake,
 * fed in pieces, within the promises tests/server/ws-frame-check.c checks
 * (the size limit, known opcodes, UTF-8 text, refusals with a close code
 * and a reason, the server's own frames parsing back).
 */
#include "config.h"

#include "../server/ws-frame-check.h"
#include "fuzz.h"

static int one(const uint8_t *data, size_t size)
{
    const char *broken = ws_frame_check(data, size);

    if (broken)
        fz_fail("ws: %s", broken);
    return 0;
}

FZ_TARGET(ws, NULL, one)
