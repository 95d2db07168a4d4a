/* plugins/microvm/mv-proto.c - frames of the guest agent's protocol
 *
 * Written by hand because it is eight bytes of header and four small
 * payloads; tests/fuzz/fuzz-microvm.c feeds it hostile streams.
 */
#include "mv-proto.h"

#include <string.h>

void mv_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void mv_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t mv_get32(const uint8_t *p)
{
    uint32_t v = 0;

    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint64_t mv_get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void mv_hdr_put(uint8_t out[MV_HDR_LEN], uint8_t type, uint32_t len)
{
    out[0] = MV_MAGIC;
    out[1] = MV_PROTO_VERSION;
    out[2] = type;
    out[3] = 0;
    mv_put32(out + 4, len);
}

int mv_hdr_parse(const uint8_t in[MV_HDR_LEN], int from_guest, struct mv_hdr *h,
                 const char **why)
{
    uint8_t t = in[2];

    if (in[0] != MV_MAGIC || in[3] != 0) {
        *why = "not a frame (bad magic)";
        return -1;
    }
    if (in[1] != MV_PROTO_VERSION) {
        *why = "a frame of another protocol version";
        return MV_HDR_VERSION;
    }
    if (from_guest ? !(t == MV_T_HELLO || t == MV_T_STDOUT || t == MV_T_STDERR ||
                       t == MV_T_EXIT || t == MV_T_ERROR || t == MV_T_FILEDATA ||
                       t == MV_T_DONE || t == MV_T_WANT)
                   : !(t == MV_T_FILE || t == MV_T_EXEC || t == MV_T_KILL || t == MV_T_GET ||
                     t == MV_T_SEED || t == MV_T_STDIN || t == MV_T_SIGNAL)) {
        *why = "unknown frame type";
        return -1;
    }
    h->type = t;
    h->len = mv_get32(in + 4);
    if (h->len > MV_MAX_PAYLOAD ||
        ((t == MV_T_STDOUT || t == MV_T_STDERR || t == MV_T_ERROR || t == MV_T_STDIN) &&
         h->len > MV_CHUNK)) {
        *why = "frame longer than allowed";
        return -1;
    }
    if ((t == MV_T_EXIT && h->len != MV_EXIT_LEN) ||
        (t == MV_T_HELLO && h->len != MV_HELLO_LEN) || (t == MV_T_KILL && h->len != 0) ||
        (t == MV_T_DONE && h->len != 0) || (t == MV_T_SEED && h->len != MV_SEED_LEN) ||
        (t == MV_T_ERROR && h->len < 4) || (t == MV_T_WANT && h->len != 0) ||
        (t == MV_T_SIGNAL && h->len != 1) ||
        (t == MV_T_GET && h->len < MV_GET_HEAD_LEN + 2)) {
        *why = "frame of the wrong length for its type";
        return -1;
    }
    return 0;
}

int mv_exit_decode(const uint8_t *p, size_t len, struct mv_exit *e, const char **why)
{
    if (len != MV_EXIT_LEN) {
        *why = "exit frame of the wrong length";
        return -1;
    }
    e->exit_code = (int32_t)mv_get32(p);
    e->signal = (int32_t)mv_get32(p + 4);
    e->flags = mv_get32(p + 8);
    e->cpu_ns = (int64_t)mv_get64(p + 12);
    e->peak_memory_bytes = (int64_t)mv_get64(p + 20);
    if (e->signal < 0 || e->signal > 64 || e->exit_code < 0 || e->exit_code > 255 ||
        (e->flags & ~(uint32_t)63) != 0) {
        *why = "exit frame out of range";
        return -1;
    }
    if (e->cpu_ns < -1)
        e->cpu_ns = -1;
    if (e->peak_memory_bytes < -1)
        e->peak_memory_bytes = -1;
    return 0;
}

void mv_exit_encode(uint8_t out[MV_EXIT_LEN], const struct mv_exit *e)
{
    mv_put32(out, (uint32_t)e->exit_code);
    mv_put32(out + 4, (uint32_t)e->signal);
    mv_put32(out + 8, e->flags);
    mv_put64(out + 12, (uint64_t)e->cpu_ns);
    mv_put64(out + 20, (uint64_t)e->peak_memory_bytes);
}

int mv_hello_decode(const uint8_t *p, size_t len, struct mv_hello *hl, const char **why)
{
    if (len != MV_HELLO_LEN) {
        *why = "hello frame of the wrong length";
        return -1;
    }
    hl->version = mv_get32(p);
    hl->unenforced = mv_get32(p + 4);
    if (hl->version != MV_PROTO_VERSION) {
        *why = "agent speaks another protocol version";
        return -1;
    }
    if (hl->unenforced & ~(uint32_t)0x1ff) {
        *why = "hello names unknown limits";
        return -1;
    }
    return 0;
}

void mv_hello_encode(uint8_t out[MV_HELLO_LEN], const struct mv_hello *hl)
{
    mv_put32(out, hl->version);
    mv_put32(out + 4, hl->unenforced);
}

int mv_seed_decode(const uint8_t *p, size_t len, struct mv_seed *sd, const char **why)
{
    if (len != MV_SEED_LEN) {
        *why = "seed frame of the wrong length";
        return -1;
    }
    memcpy(sd->entropy, p, MV_SEED_BYTES);
    sd->sec = (int64_t)mv_get64(p + MV_SEED_BYTES);
    sd->nsec = (int64_t)mv_get64(p + MV_SEED_BYTES + 8);
    sd->disk_bytes = mv_get64(p + MV_SEED_BYTES + 16);
    if (sd->sec < 0 || sd->sec > ((int64_t)1 << 40) || sd->nsec < 0 || sd->nsec > 999999999) {
        *why = "seed frame out of range";
        return -1;
    }
    return 0;
}

void mv_seed_encode(uint8_t out[MV_SEED_LEN], const struct mv_seed *sd)
{
    memcpy(out, sd->entropy, MV_SEED_BYTES);
    mv_put64(out + MV_SEED_BYTES, (uint64_t)sd->sec);
    mv_put64(out + MV_SEED_BYTES + 8, (uint64_t)sd->nsec);
    mv_put64(out + MV_SEED_BYTES + 16, sd->disk_bytes);
}

int mv_error_decode(const uint8_t *p, size_t len, uint32_t *code, const uint8_t **msg,
                    size_t *msg_len, const char **why)
{
    if (len < 4) {
        *why = "error frame shorter than its code";
        return -1;
    }
    *code = mv_get32(p);
    if (*code > MV_ERR_MAX)
        *code = MV_ERR_OTHER;
    *msg = p + 4;
    *msg_len = len - 4;
    return 0;
}

int mv_path_ok(const char *path)
{
    size_t len = strlen(path);

    if (!len || len > MV_PATH_MAX || path[0] == '/')
        return 0;
    for (const char *c = path; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += n;
        if (*c)
            c++;
    }
    return 1;
}
