/* plugins/modal/modal-grpc.c - gRPC calls over libcurl's HTTP/2 (see
 * modal-grpc.h) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <polysandbox/common.h>

#include "api.pb-c.h"
#include "base64.h"
#include "modal-grpc.h"

#define MG_UNARY_MAX (64u * 1024 * 1024)

static const char *const code_names[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
};

const char *mg_code_name(int code)
{
    if (code >= 0 && (size_t)code < sizeof code_names / sizeof code_names[0])
        return code_names[code];
    return "UNKNOWN_CODE";
}

int mg_code_status(int code)
{
    switch (code) {
    case MG_OK: return SBX_OK;
    case MG_CANCELLED: return SBX_E_NETWORK;
    case MG_UNKNOWN: case MG_INTERNAL: case MG_UNAVAILABLE: return SBX_E_SERVER;
    case MG_INVALID_ARGUMENT: case MG_OUT_OF_RANGE: return SBX_E_INVAL;
    case MG_DEADLINE_EXCEEDED: return SBX_E_TIMEOUT;
    case MG_NOT_FOUND: return SBX_E_NOT_FOUND;
    case MG_ALREADY_EXISTS: return SBX_E_EXISTS;
    case MG_PERMISSION_DENIED: case MG_UNAUTHENTICATED: return SBX_E_AUTH;
    case MG_RESOURCE_EXHAUSTED: return SBX_E_RATE_LIMITED;
    case MG_ABORTED: return SBX_E_BUSY;
    case MG_UNIMPLEMENTED: return SBX_E_NOTSUP;
    default: return SBX_E_BACKEND;
    }
}

/* ---- framing ---- */

int mg_framer_feed(mg_framer *f, const void *data, size_t len)
{
    if (f->len + len > f->alloc) {
        size_t n = f->alloc ? f->alloc : 16384;
        while (n < f->len + len)
            n *= 2;
        uint8_t *nb = realloc(f->buf, n);
        if (!nb)
            return SBX_E_NOMEM;
        f->buf = nb;
        f->alloc = n;
    }
    memcpy(f->buf + f->len, data, len);
    f->len += len;
    size_t off = 0;
    int rc = 0;
    while (!rc && f->len - off >= 5) {
        const uint8_t *h = f->buf + off;
        uint32_t n = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
        if (h[0] != 0) {
            snprintf(f->why, sizeof f->why, "a message has flags 0x%02x (compressed: none was "
                     "asked for)", h[0]);
            rc = SBX_E_BACKEND;
            break;
        }
        if (n > MG_MESSAGE_MAX) {
            snprintf(f->why, sizeof f->why, "a message of %u bytes is over the %u-byte limit",
                     n, MG_MESSAGE_MAX);
            rc = SBX_E_BACKEND;
            break;
        }
        if (f->len - off - 5 < n)
            break;
        rc = f->on_message(f->ud, h + 5, n);
        off += 5 + (size_t)n;
    }
    memmove(f->buf, f->buf + off, f->len - off);
    f->len -= off;
    return rc;
}

void mg_framer_free(mg_framer *f)
{
    free(f->buf);
    f->buf = NULL;
    f->len = f->alloc = 0;
}

/* ---- trailers ---- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* grpc-message is percent-encoded UTF-8: decode it, keeping printable
 * ASCII only (a service's words go into error messages). */
static void decode_message(const char *v, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; v[i] && o + 1 < cap; i++) {
        int c = (unsigned char)v[i];
        if (c == '%' && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
            c = hexval(v[i + 1]) << 4 | hexval(v[i + 2]);
            i += 2;
        }
        out[o++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
    }
    out[o] = '\0';
}

long mg_retry_policy_ms(const char *b64)
{
    size_t n = 0;
    unsigned char *raw = b64 ? pc_b64_decode(b64, &n) : NULL;
    if (!raw)
        return -1;
    long ms = -1;
    Modal__Client__RPCStatus *st = modal__client__rpcstatus__unpack(NULL, n, raw);
    free(raw);
    if (!st)
        return -1;
    static const char want[] = "/modal.client.RPCRetryPolicy";
    for (size_t i = 0; i < st->n_details && ms < 0; i++) {
        const Modal__Client__Any *d = st->details[i];
        size_t tl = d->type_url ? strlen(d->type_url) : 0;
        if (tl < sizeof want - 1 || strcmp(d->type_url + tl - (sizeof want - 1), want))
            continue;
        Modal__Client__RPCRetryPolicy *p =
            modal__client__rpcretry_policy__unpack(NULL, d->value.len, d->value.data);
        if (p && p->retry_after_secs >= 0 && p->retry_after_secs < 86400)
            ms = (long)(p->retry_after_secs * 1000.0f + 0.5f);
        if (p)
            modal__client__rpcretry_policy__free_unpacked(p, NULL);
    }
    modal__client__rpcstatus__free_unpacked(st, NULL);
    return ms;
}

/* ---- calls ---- */

struct unary {
    uint8_t *msg;
    size_t len;
    int count;
};

static int keep_unary(void *ud, const uint8_t *msg, size_t len)
{
    struct unary *u = ud;
    if (++u->count > 1)
        return 0; /* a unary answer has one message: the extra is ignored */
    if (!(u->msg = malloc(len ? len : 1)))
        return SBX_E_NOMEM;
    memcpy(u->msg, msg, len);
    u->len = len;
    return 0;
}

static int feed_framer(void *ud, const void *buf, size_t len)
{
    return mg_framer_feed(ud, buf, len);
}

int mg_call_do(ph_client *c, const mg_call *call, const ProtobufCMessageDescriptor *reply_desc,
               ProtobufCMessage **reply, mg_status *st, char err[PH_ERR_MAX])
{
    static const char *const keep[] = {"grpc-status", "grpc-message", "grpc-status-details-bin",
                                       "content-type", NULL};
    st->code = -1;
    st->message[0] = '\0';
    st->retry_after_ms = -1;
    if (reply)
        *reply = NULL;

    size_t n = protobuf_c_message_get_packed_size(call->request);
    uint8_t *body = malloc(n + 5);
    if (!body) {
        snprintf(err, PH_ERR_MAX, "%s: out of memory", call->path);
        return SBX_E_NOMEM;
    }
    body[0] = 0;
    body[1] = (uint8_t)(n >> 24);
    body[2] = (uint8_t)(n >> 16);
    body[3] = (uint8_t)(n >> 8);
    body[4] = (uint8_t)n;
    protobuf_c_message_pack(call->request, body + 5);

    /* The metadata lines, then ours. */
    size_t nh = 0;
    while (call->headers && call->headers[nh])
        nh++;
    const char **hdrs = calloc(nh + 4, sizeof *hdrs);
    char tmo[48];
    if (!hdrs) {
        free(body);
        snprintf(err, PH_ERR_MAX, "%s: out of memory", call->path);
        return SBX_E_NOMEM;
    }
    for (size_t i = 0; i < nh; i++)
        hdrs[i] = call->headers[i];
    hdrs[nh++] = "te: trailers";
    hdrs[nh++] = "user-agent: polysandbox-modal/" PACKAGE_VERSION " (libcurl)";
    if (call->timeout_ms > 0) {
        /* grpc-timeout takes at most 8 digits. */
        long t = call->timeout_ms > 99999999L ? 99999999L : call->timeout_ms;
        snprintf(tmo, sizeof tmo, "grpc-timeout: %ldm", t);
        hdrs[nh++] = tmo;
    }

    struct unary u = {0};
    mg_framer fr = {.on_message = call->on_message ? call->on_message : keep_unary,
                    .ud = call->on_message ? call->ud : &u};
    ph_request rq = {
        .method = "POST", .path = call->path, .headers = hdrs, .body = body, .body_len = n + 5,
        .content_type = "application/grpc", .timeout_ms = call->timeout_ms,
        .on_data = feed_framer, .ud = &fr, .max_body = 64 * 1024, .keep_headers = keep,
    };
    ph_response resp;
    int rc = ph_do(c, &rq, &resp, err);
    free(body);
    free(hdrs);
    if (rc == SBX_E_BACKEND && fr.why[0])
        snprintf(err, PH_ERR_MAX, "%s: %s", call->path, fr.why);
    if (rc != SBX_OK)
        goto out;
    const char *gs = ph_response_header(&resp, "grpc-status");
    const char *ct = ph_response_header(&resp, "content-type");
    if (!gs) {
        if (resp.status != 200) {
            rc = ph_status_code(resp.status);
            if (rc == SBX_OK)
                rc = SBX_E_BACKEND;
            snprintf(err, PH_ERR_MAX, "%s: HTTP %ld without a gRPC status (not a gRPC "
                     "server, or a proxy before it failed)", call->path, resp.status);
        } else if (ct && strncasecmp(ct, "application/grpc", 16)) {
            rc = SBX_E_BACKEND;
            snprintf(err, PH_ERR_MAX, "%s: the answer is %s, not gRPC", call->path, ct);
        } else {
            /* The stream ended without trailers: cut on the way. */
            rc = SBX_E_NETWORK;
            snprintf(err, PH_ERR_MAX, "%s: the answer ended without its gRPC status (the "
                     "stream was cut)", call->path);
        }
        goto out;
    }
    char *end;
    long code = strtol(gs, &end, 10);
    if (end == gs || *end || code < 0 || code > 255) {
        rc = SBX_E_BACKEND;
        snprintf(err, PH_ERR_MAX, "%s: grpc-status '%.20s' is not a status code", call->path, gs);
        goto out;
    }
    st->code = (int)code;
    const char *gm = ph_response_header(&resp, "grpc-message");
    if (gm)
        decode_message(gm, st->message, sizeof st->message);
    st->retry_after_ms = mg_retry_policy_ms(ph_response_header(&resp, "grpc-status-details-bin"));
    if (code != MG_OK) {
        rc = mg_code_status((int)code);
        snprintf(err, PH_ERR_MAX, "%s: %s%s%s", call->path, mg_code_name((int)code),
                 st->message[0] ? ": " : "", st->message);
        goto out;
    }
    if (!call->on_message && (fr.len || (reply && u.count == 0))) {
        rc = SBX_E_BACKEND;
        snprintf(err, PH_ERR_MAX, "%s: %s", call->path,
                 fr.len ? "the answer ends inside a message" : "the answer holds no message");
        goto out;
    }
    if (!call->on_message && reply) {
        if (u.len > MG_UNARY_MAX ||
            !(*reply = protobuf_c_message_unpack(reply_desc, NULL, u.len, u.msg))) {
            rc = SBX_E_BACKEND;
            snprintf(err, PH_ERR_MAX, "%s: the answer is not a %s", call->path,
                     reply_desc->name);
        }
    }
out:
    free(u.msg);
    mg_framer_free(&fr);
    ph_response_clear(&resp);
    return rc;
}
