/* plugins/docker/init/proto.h - the exec server's wire format
 *
 * Shared by the provider (exec/attach.c) and the helper's server mode
 * (init/serve.c).  The provider writes frames to the container's
 * stdin through an attach connection; the server writes frames to the
 * container's stdout, which Docker hands to every attached client inside
 * its own 8-byte stdout frames.
 *
 * A frame: 2 magic bytes, a type byte, a zero byte, the exec id (64-bit),
 * the payload's length (32-bit, at most SRV_FRAME_MAX), big-endian, then
 * the payload.
 *
 * Provider to server:
 *   'R' run: NUL-terminated strings, the wrapper's options (-t MS, -c S,
 *       -f B, -n N, -d DIR, -e K=V..., -s), "--", the command and its
 *       arguments.  The id is chosen (at random) by the provider.
 *   'D' stdin data, 'E' end of stdin, 'K' kill the exec now.
 *   'S' signals for the command's process group: a byte each, among
 *       those sbx_signal_deliverable accepts (others are dropped, on both sides
 *       of the server); held by the supervisor until the command runs.
 *   'P' the provider still waits for the exec: a request with "-l MS"
 *       is killed when no 'P' (or other frame of its id) came for MS
 *       milliseconds, so an exec whose provider went away (its process
 *       died, its connection broke) does not run on to its time limit.
 *   'Y' sync (id SRV_SYNC_ID, empty): sent first on every connection.
 *       A server that lost the framing (two writers mixed their bytes)
 *       discards input until the next sync frame.
 *   'Q' probe (a random id, empty): answered at once by 'q'.
 * A new connection sends 'Y' and 'Q', and discards the server's output
 * until the exact 16 bytes of the 'q' answer: a client may join the
 * output stream in the middle of a frame of someone else's exec.  No
 * answer within a second means the server may be inside a frame whose
 * writer died half-way (a provider killed while sending a large stdin):
 * SRV_FRAME_MAX + 2 * SRV_HDR zero bytes then end any such frame (and put
 * the server in sync-search: zeros are no magic), and 'Y' 'Q' again.
 * Server to provider:
 *   '1' / '2' the command's stdout / stderr.
 *   'X' the report: "STATUS cpu=NS rss=BYTES\n" (init/init.c).
 *   'L' the exec is lost (not started, or its supervisor was killed):
 *       a message.
 *   'Z' (id 0) a protocol error: a message.
 *   'q' the answer to a probe.
 */
#ifndef DOCKER_PROTO_H
#define DOCKER_PROTO_H

#define SRV_MAGIC0 0x53
#define SRV_MAGIC1 0xd8
#define SRV_HDR 16
#define SRV_FRAME_MAX (1u << 20)
/* The lease the provider asks for, and how often it renews it. */
#define SRV_LEASE_MS 5000
#define SRV_PING_MS 1000
#define SRV_PROBE_MS 1000          /* before the filler */
#define SRV_PROBE_MAX_MS 10000     /* after it */
#define SRV_SYNC_ID 0x53594e432d535258ull /* "SYNC-SRX" */

#include <signal.h>
#include <stdint.h>

/* sbx_signal_deliverable: the signals an 'S' frame (or the wrapper's 'S'
 * control frame) may carry.  Every other byte is hostile and dropped,
 * SIGKILL and SIGSTOP among them.  Header-only, so the static helper
 * includes it too (its build rule has -I sdk/include). */
#include <polysandbox/common.h>

/* The 16-byte header of a server frame: magic, type, exec id, length (all
 * big-endian); shared by the server (init/serve.c) and the provider
 * (exec/attach.c). */
static inline void srv_put_hdr(unsigned char *h, char type, uint64_t id, uint32_t len)
{
    h[0] = SRV_MAGIC0;
    h[1] = SRV_MAGIC1;
    h[2] = (unsigned char)type;
    h[3] = 0;
    for (int i = 0; i < 8; i++)
        h[4 + i] = (unsigned char)(id >> (56 - 8 * i));
    h[12] = (unsigned char)(len >> 24);
    h[13] = (unsigned char)(len >> 16);
    h[14] = (unsigned char)(len >> 8);
    h[15] = (unsigned char)len;
}

/* The 5-byte header of a wrapper frame (type, big-endian length), as the
 * wrapper's stdin and the server's control channel carry them. */
static inline void wrap_put_hdr(unsigned char *f, char type, uint32_t len)
{
    f[0] = (unsigned char)type;
    f[1] = (unsigned char)(len >> 24);
    f[2] = (unsigned char)(len >> 16);
    f[3] = (unsigned char)(len >> 8);
    f[4] = (unsigned char)len;
}

#endif /* DOCKER_PROTO_H */
