/* plugins/microvm/mv-proto.h - the guest agent's framed protocol
 *
 * One byte stream over a virtio-serial port (a unix socket on the host).
 * Every frame: an 8-byte header, then `len` bytes of payload:
 *
 *     'S'  version  type  0  len (uint32, little-endian)
 *
 * Host to guest: FILE, GET, EXEC, KILL, SEED, STDIN, SIGNAL.  Guest to
 * host: HELLO (when the agent is up, and again as SEED's answer), DONE (a
 * FILE placed), FILEDATA (a GET's bytes), STDOUT, STDERR, WANT, EXIT (once
 * per EXEC), ERROR.  Every FILE is answered by
 * DONE or ERROR, every GET by FILEDATA or ERROR.  Numbers in payloads are
 * little-endian.  The host treats every guest byte as hostile: a frame of
 * the wrong version, an unknown type, a length over MV_MAX_PAYLOAD or a
 * payload of the wrong size ends the sandbox.
 *
 * Version 2 added GET, FILEDATA and DONE and the code in ERROR.  Version
 * 3 added SEED, the first frame a VM restored from a snapshot gets (its
 * randomness, clock and disk size are the snapshot's until then).
 * Version 4 added streamed stdin (EXEC's MV_EXEC_STDIN_STREAM: the agent
 * asks for each chunk with WANT, the host answers each WANT with one
 * STDIN, an empty one for the end), SIGNAL, and EXEC's flags.  Each
 * side refuses the other's frames of another version: an agent of an
 * older image is refused at its HELLO, by name (mv_hdr_parse says
 * MV_HDR_VERSION), before any command is sent to it.
 *
 * Shared by the provider and the agent (built statically, without the
 * user's CFLAGS), so it depends on the C library only.
 */
#ifndef POLYSANDBOX_MV_PROTO_H
#define POLYSANDBOX_MV_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define MV_PROTO_VERSION 4
#define MV_HDR_LEN 8
#define MV_MAGIC 'S'
/* The largest payload either side accepts (an EXEC carries its stdin). */
#define MV_MAX_PAYLOAD (4u << 20)
/* The agent's output frames are at most this long. */
#define MV_CHUNK 65536u
/* The name of the agent's virtio-serial port. */
#define MV_PORT_NAME "org.polysandbox.agent"
/* The agent's vsock port, where the VMM's channel is vsock (Firecracker:
 * the kernel command line says sbx.vsock=PORT). */
#define MV_VSOCK_PORT 52u

enum mv_type {
    MV_T_HELLO = 1,  /* guest: u32 version, u32 limits it cannot enforce (SBX_LIMIT_BIT_*) */
    MV_T_FILE = 2,   /* host: u32 mode, path NUL, data; answered DONE or ERROR */
    MV_T_EXEC = 3,   /* host: struct mv_exec_head, then strings, then stdin */
    MV_T_KILL = 4,   /* host: empty; kills the running command's processes */
    MV_T_STDOUT = 5, /* guest: output bytes */
    MV_T_STDERR = 6,
    MV_T_EXIT = 7,   /* guest: MV_EXIT_LEN bytes, see mv_exit */
    MV_T_ERROR = 8,  /* guest: u32 MV_ERR_*, then a message (text, not trusted) */
    MV_T_GET = 9,    /* host: u64 max bytes, path NUL; answered FILEDATA or ERROR */
    MV_T_FILEDATA = 10, /* guest: the whole file, at most the GET's max */
    MV_T_DONE = 11,  /* guest: empty; the FILE was placed */
    MV_T_SEED = 12,  /* host: MV_SEED_LEN bytes, see mv_seed; answered HELLO */
    MV_T_WANT = 13,  /* guest: empty; a streamed exec's next chunk of stdin, please */
    MV_T_STDIN = 14, /* host: at most MV_CHUNK bytes of stdin, one per WANT; empty: its end */
    MV_T_SIGNAL = 15, /* host: one byte, a signal for the command's process group */
};

/* What an ERROR is about (its first four bytes). */
enum mv_err {
    MV_ERR_OTHER = 0,    /* the request failed otherwise (I/O, malformed) */
    MV_ERR_NOENT = 1,    /* no such file */
    MV_ERR_PATH = 2,     /* unsafe path: absolute, "..", through a link */
    MV_ERR_NOTFILE = 3,  /* not a regular file */
    MV_ERR_TOOBIG = 4,   /* larger than the GET's max */
};
#define MV_ERR_MAX MV_ERR_TOOBIG
/* A GET's payload before its path. */
#define MV_GET_HEAD_LEN 8
/* The longest path a FILE or GET names. */
#define MV_PATH_MAX 4095

/* EXEC payload: MV_EXEC_HEAD_LEN bytes of numbers (u64 timeout_ms,
 * memory, pids, nofile, fsize, cpu_ms; u32 argc, envc, flags), then 1 +
 * argc + envc NUL-terminated strings (cwd, "" for the work directory;
 * argv; "KEY=VALUE"), then the command's stdin (the rest; none with
 * MV_EXEC_STDIN_STREAM). */
#define MV_EXEC_HEAD_LEN (6 * 8 + 3 * 4)
/* EXEC flags: stdin comes in STDIN frames, each asked for by a WANT. */
#define MV_EXEC_STDIN_STREAM 1u

/* EXIT flags. */
#define MV_EXIT_TIMEOUT 1u  /* the agent killed it at its timeout */
#define MV_EXIT_OOM 2u      /* the memory cgroup killed a process */
#define MV_EXIT_CPU 4u      /* SIGXCPU/SIGKILL at the CPU limit */
#define MV_EXIT_KILLED 8u   /* killed at the host's KILL */
#define MV_EXIT_PIDS 16u    /* a fork failed at the pids limit */
#define MV_EXIT_NOEXEC 32u  /* the command could not be executed (126/127) */

#define MV_EXIT_LEN (3 * 4 + 2 * 8)
struct mv_exit {
    int32_t exit_code; /* when signal is 0 */
    int32_t signal;    /* 1..64, or 0 */
    uint32_t flags;    /* MV_EXIT_* */
    int64_t cpu_ns;    /* -1 unknown */
    int64_t peak_memory_bytes; /* -1 unknown */
};

#define MV_HELLO_LEN 8
struct mv_hello {
    uint32_t version;
    uint32_t unenforced; /* SBX_LIMIT_BIT_* the guest cannot apply */
};

/* SEED: what a VM restored from a snapshot must not share with the
 * others restored from it.  MV_SEED_BYTES of entropy the agent mixes
 * into the kernel's pool (and reseeds from), the host's wall clock, the
 * size of /work. */
#define MV_SEED_BYTES 32
#define MV_SEED_LEN (MV_SEED_BYTES + 3 * 8)
struct mv_seed {
    uint8_t entropy[MV_SEED_BYTES];
    int64_t sec;       /* CLOCK_REALTIME, 0 to 2^40 */
    int64_t nsec;      /* 0 to 999999999 */
    uint64_t disk_bytes; /* /work's size (tmpfs size=, 0 unbounded) */
};

/* A parsed header. */
struct mv_hdr {
    uint8_t type;
    uint32_t len;
};

/* Writes a header for @type and @len into @out. */
void mv_hdr_put(uint8_t out[MV_HDR_LEN], uint8_t type, uint32_t len);
/* mv_hdr_parse's refusal of a well-formed frame of another version. */
#define MV_HDR_VERSION (-2)
/* Checks @in as a header of a frame the host may receive (guest = 1) or
 * the guest may receive (guest = 0).  0; MV_HDR_VERSION when it is a
 * frame of another protocol version (in[1]); or -1; each refusal with
 * *why set to a static reason. */
int mv_hdr_parse(const uint8_t in[MV_HDR_LEN], int from_guest, struct mv_hdr *h,
                 const char **why);
/* Decodes an EXIT or HELLO payload: 0, or -1 with *why set. */
int mv_exit_decode(const uint8_t *p, size_t len, struct mv_exit *e, const char **why);
void mv_exit_encode(uint8_t out[MV_EXIT_LEN], const struct mv_exit *e);
/* Decodes a SEED payload: 0, or -1 with *why set (wrong length, out of
 * range). */
int mv_seed_decode(const uint8_t *p, size_t len, struct mv_seed *sd, const char **why);
void mv_seed_encode(uint8_t out[MV_SEED_LEN], const struct mv_seed *sd);
int mv_hello_decode(const uint8_t *p, size_t len, struct mv_hello *hl, const char **why);
void mv_hello_encode(uint8_t out[MV_HELLO_LEN], const struct mv_hello *hl);
/* Decodes an ERROR payload: its code (MV_ERR_OTHER for one this side does
 * not know) and *msg, *msg_len the text after it (not terminated, not
 * trusted).  0, or -1 with *why set (shorter than its code). */
int mv_error_decode(const uint8_t *p, size_t len, uint32_t *code, const uint8_t **msg,
                    size_t *msg_len, const char **why);

/* Whether @path may name a file of the work directory (checked by both
 * ends): 1 to MV_PATH_MAX bytes, relative, no ".", ".." or empty part. */
int mv_path_ok(const char *path);

void mv_put32(uint8_t *p, uint32_t v);
void mv_put64(uint8_t *p, uint64_t v);
uint32_t mv_get32(const uint8_t *p);
uint64_t mv_get64(const uint8_t *p);

#endif
