/* tests/server/ws-frame-check.h - the WebSocket framing's promises */
#ifndef POLYSANDBOX_TESTS_WS_FRAME_CHECK_H
#define POLYSANDBOX_TESTS_WS_FRAME_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "ws-frame.h"

/* The message limit the check parses with. */
#define WS_FRAME_CHECK_MAX 4096

/* Feed @data to the framing parser as a client's bytes: NULL, or the
 * promise it broke (a static string). */
const char *ws_frame_check(const uint8_t *data, size_t size);

#endif
