/* tests/fuzz/fuzz-microvm.c - what the microvm provider reads from a
 * guest: a stream of agent frames (plugins/microvm/mv-proto.c)
 *
 * The input is the stream.  Each header is checked as the host checks
 * it; a frame it accepts is never longer than allowed, and an EXIT or
 * HELLO it decodes is in range and encodes back to the same bytes.  A
 * frame of another version is refused as such (MV_HDR_VERSION, what
 * names an old agent) and only then; a DONE is empty; an ERROR's code is
 * one this side knows and its text lies within the frame.
 * Parsing stops at the first refused header or a short frame, as the
 * provider does (it then gives the VM up).
 *
 * A WANT (version 4: a streamed stdin's next chunk, asked for) is empty.
 *
 * The same bytes are then read as the agent reads the host's frames
 * (version 3's SEED, version 4's STDIN and SIGNAL above all): a header of
 * a type only the guest sends is refused, a SEED is exactly MV_SEED_LEN
 * bytes, a SIGNAL one byte, a STDIN at most MV_CHUNK, and a SEED it
 * decodes is in range and encodes back to the same bytes.
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "mv-proto.h"

static void to_guest(const uint8_t *data, size_t size)
{
    size_t off = 0;

    while (size - off >= MV_HDR_LEN) {
        struct mv_hdr h;
        const char *why = NULL;

        if (mv_hdr_parse(data + off, 0, &h, &why)) {
            if (!why || !*why)
                fz_fail("a refused header without a reason");
            break;
        }
        if (h.type != MV_T_FILE && h.type != MV_T_EXEC && h.type != MV_T_KILL &&
            h.type != MV_T_GET && h.type != MV_T_SEED && h.type != MV_T_STDIN &&
            h.type != MV_T_SIGNAL)
            fz_fail("a frame of type %u accepted from the host", h.type);
        if (h.type == MV_T_SEED && h.len != MV_SEED_LEN)
            fz_fail("a SEED of %u bytes accepted", h.len);
        if (h.type == MV_T_SIGNAL && h.len != 1)
            fz_fail("a SIGNAL of %u bytes accepted", h.len);
        if (h.type == MV_T_STDIN && h.len > MV_CHUNK)
            fz_fail("a STDIN of %u bytes accepted", h.len);
        off += MV_HDR_LEN;
        if (size - off < h.len)
            break;
        if (h.type == MV_T_SEED) {
            struct mv_seed sd;
            uint8_t back[MV_SEED_LEN];
            if (mv_seed_decode(data + off, h.len, &sd, &why) == 0) {
                if (sd.sec < 0 || sd.nsec < 0 || sd.nsec > 999999999)
                    fz_fail("a seed out of range accepted");
                mv_seed_encode(back, &sd);
                if (memcmp(back, data + off, MV_SEED_LEN) != 0)
                    fz_fail("a seed does not encode back to its bytes");
            } else if (!why || !*why) {
                fz_fail("a refused seed without a reason");
            }
        }
        off += h.len;
    }
}

static int one(const uint8_t *data, size_t size)
{
    size_t off = 0;

    while (size - off >= MV_HDR_LEN) {
        struct mv_hdr h;
        const char *why = NULL;

        int bad = mv_hdr_parse(data + off, 1, &h, &why);
        if (bad) {
            if (!why || !*why)
                fz_fail("a refused header without a reason");
            if ((bad == MV_HDR_VERSION) !=
                (data[off] == MV_MAGIC && data[off + 3] == 0 && data[off + 1] != MV_PROTO_VERSION))
                fz_fail("a header of version %u refused as %d", data[off + 1], bad);
            break;
        }
        if (data[off + 1] != MV_PROTO_VERSION)
            fz_fail("a frame of version %u accepted", data[off + 1]);
        if ((h.type == MV_T_DONE || h.type == MV_T_WANT) && h.len != 0)
            fz_fail("a DONE or WANT of %u bytes accepted", h.len);
        if (h.len > MV_MAX_PAYLOAD)
            fz_fail("a frame of %u bytes accepted", h.len);
        if ((h.type == MV_T_STDOUT || h.type == MV_T_STDERR || h.type == MV_T_ERROR) &&
            h.len > MV_CHUNK)
            fz_fail("an output frame of %u bytes accepted", h.len);
        off += MV_HDR_LEN;
        if (size - off < h.len)
            break;
        const uint8_t *p = data + off;
        if (h.type == MV_T_EXIT) {
            struct mv_exit e;
            uint8_t back[MV_EXIT_LEN];
            if (mv_exit_decode(p, h.len, &e, &why) == 0) {
                if (e.signal < 0 || e.signal > 64 || e.exit_code < 0 || e.exit_code > 255 ||
                    e.cpu_ns < -1 || e.peak_memory_bytes < -1)
                    fz_fail("an exit out of range accepted");
                mv_exit_encode(back, &e);
                if (memcmp(back + 0, p, 12) != 0)
                    fz_fail("an exit does not encode back to its bytes");
            }
        } else if (h.type == MV_T_ERROR) {
            uint32_t code;
            const uint8_t *msg;
            size_t n;
            if (mv_error_decode(p, h.len, &code, &msg, &n, &why) != 0)
                fz_fail("an error frame the header let through was refused: %s", why);
            if (code > MV_ERR_MAX)
                fz_fail("an error code %u passed on", code);
            if (msg != p + 4 || n != h.len - 4u)
                fz_fail("an error's text is not the rest of its frame");
        } else if (h.type == MV_T_HELLO) {
            struct mv_hello hl;
            uint8_t back[MV_HELLO_LEN];
            if (mv_hello_decode(p, h.len, &hl, &why) == 0) {
                if (hl.version != MV_PROTO_VERSION)
                    fz_fail("a hello of version %u accepted", hl.version);
                mv_hello_encode(back, &hl);
                if (memcmp(back, p, MV_HELLO_LEN) != 0)
                    fz_fail("a hello does not encode back to its bytes");
            }
        }
        off += h.len;
    }
    to_guest(data, size);
    return 0;
}

FZ_TARGET(microvm, NULL, one)
