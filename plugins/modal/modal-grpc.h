/* plugins/modal/modal-grpc.h - gRPC calls over libcurl's HTTP/2
 *
 * Modal speaks gRPC only.  A call is an HTTP/2 POST of one length-prefixed
 * protobuf message (a flag byte, 0 for uncompressed, and a 4-byte
 * big-endian length) to /PACKAGE.SERVICE/METHOD with content-type
 * application/grpc and te: trailers; the answer is a run of such messages
 * and trailers grpc-status, grpc-message (percent-encoded) and, from Modal,
 * grpc-status-details-bin (a base64 RPCStatus whose details may hold an
 * RPCRetryPolicy).  A server that fails a call at once may put those in the
 * answer's headers instead (trailers-only); libcurl hands headers and
 * trailers to the same callback, so both read the same here.
 *
 * Messages are encoded and decoded with protobuf-c (api.pb-c.h,
 * task_command_router.pb-c.h, generated at build time from the trimmed
 * copies of Modal's .proto files in this folder).
 */
#ifndef MODAL_GRPC_H
#define MODAL_GRPC_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "http.h"

/* The largest message taken, as Modal's SDKs allow. */
#define MG_MESSAGE_MAX (100u * 1024 * 1024)

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum {
    MG_OK = 0, MG_CANCELLED = 1, MG_UNKNOWN = 2, MG_INVALID_ARGUMENT = 3,
    MG_DEADLINE_EXCEEDED = 4, MG_NOT_FOUND = 5, MG_ALREADY_EXISTS = 6,
    MG_PERMISSION_DENIED = 7, MG_RESOURCE_EXHAUSTED = 8, MG_FAILED_PRECONDITION = 9,
    MG_ABORTED = 10, MG_OUT_OF_RANGE = 11, MG_UNIMPLEMENTED = 12, MG_INTERNAL = 13,
    MG_UNAVAILABLE = 14, MG_DATA_LOSS = 15, MG_UNAUTHENTICATED = 16,
};

/* What the server said of a call. */
typedef struct mg_status {
    int code;               /* grpc-status; -1 when none arrived */
    char message[256];      /* grpc-message, decoded, printable only */
    long retry_after_ms;    /* RPCRetryPolicy's retry_after_secs; -1: none */
} mg_status;

/* One call.  @headers are extra "name: value" lines (metadata),
 * NULL-terminated; @timeout_ms bounds the whole call and is sent as
 * grpc-timeout. */
typedef struct mg_call {
    const char *path;                 /* "/modal.client.ModalClient/AuthTokenGet" */
    const char *const *headers;
    const ProtobufCMessage *request;
    long timeout_ms;
    /* Server streams: each message's bytes as it arrives (borrowed for the
     * call); return 0 to go on or an sbx_status to stop the call, which
     * mg_call then returns. */
    int (*on_message)(void *ud, const uint8_t *msg, size_t len);
    void *ud;
} mg_call;

/* Makes the call.  For a unary call (no on_message), *reply (may be NULL
 * when the answer is not wanted) gets the one answer decoded with
 * @reply_desc, to be freed with protobuf_c_message_free_unpacked().
 *
 * Returns SBX_OK when grpc-status is 0; when it is not, the sbx_status of
 * the gRPC code (mg_code_status) with st filled; a transport failure
 * (SBX_E_NETWORK, SBX_E_TIMEOUT: st->code stays -1), an answer that is not
 * gRPC (SBX_E_BACKEND), on_message's status, or SBX_E_NOMEM.  err gets a
 * message naming the method, never a header's value. */
int mg_call_do(ph_client *c, const mg_call *call, const ProtobufCMessageDescriptor *reply_desc,
               ProtobufCMessage **reply, mg_status *st, char err[PH_ERR_MAX]);

/* The sbx_status of a gRPC code: UNAVAILABLE, INTERNAL, UNKNOWN
 * SBX_E_SERVER; RESOURCE_EXHAUSTED SBX_E_RATE_LIMITED; CANCELLED
 * SBX_E_NETWORK; ABORTED SBX_E_BUSY; DEADLINE_EXCEEDED SBX_E_TIMEOUT (all
 * retryable); UNAUTHENTICATED, PERMISSION_DENIED SBX_E_AUTH; NOT_FOUND;
 * ALREADY_EXISTS SBX_E_EXISTS; INVALID_ARGUMENT, OUT_OF_RANGE SBX_E_INVAL;
 * UNIMPLEMENTED SBX_E_NOTSUP; the rest SBX_E_BACKEND. */
int mg_code_status(int code);

/* The name of a gRPC code ("UNAVAILABLE"). */
const char *mg_code_name(int code);

/* Decodes the value of grpc-status-details-bin (base64, padded or not):
 * the retry delay of an RPCRetryPolicy detail in ms, or -1. */
long mg_retry_policy_ms(const char *b64);

/* Splits a byte stream into gRPC messages: feed it the body as it comes,
 * it calls @on_message per whole message.  Returns 0, the callback's
 * status, or SBX_E_BACKEND for a compressed or oversized message. */
typedef struct mg_framer {
    uint8_t *buf;
    size_t len, alloc;
    int (*on_message)(void *ud, const uint8_t *msg, size_t len);
    void *ud;
    char why[96];            /* what was wrong, when SBX_E_BACKEND */
} mg_framer;
int mg_framer_feed(mg_framer *f, const void *data, size_t len);
void mg_framer_free(mg_framer *f);

#endif
