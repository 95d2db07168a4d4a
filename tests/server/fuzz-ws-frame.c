/* tests/server/fuzz-ws-frame.c - libFuzzer target of polysandboxd's
 * WebSocket framing (core/server/ws-frame.c), and its replay
 *
 * The bytes are what a client sends after the handshake, fed in pieces
 * whose sizes come from the input itself.  Beyond not crashing or
 * leaking, the parser keeps its promises: a message is never larger than
 * the limit, its opcode is one the RFC knows, a text message is UTF-8, a
 * refusal names a close code of the RFC and a reason; and a frame the
 * server would write, masked as a client must, parses back to its
 * payload.
 *
 * tests/fuzz (the fuzz targets' harness, h/fuzz) had not landed when
 * this was written, so the target is self-contained: built plainly it is
 * ws-frame-replay (make check: every file of tests/server/ws-corpus, and
 * 20000 inputs derived from them by a fixed pseudo-random mutator, as
 * TAP); `make fuzz-ws-frame` builds it with clang's libFuzzer.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ws-frame.h"

#define MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "ws-frame: broken promise: %s\n", what);
    abort();
}

static void round_trip(const uint8_t *data, size_t size)
{
    unsigned char hdr[10], *frame = malloc(size + 14 + 1);
    size_t hl = srv_ws_header(hdr, SRV_WS_BINARY, size);
    srv_ws_in in = { .max = size + 1 };
    const unsigned char *out;
    size_t len;
    uint16_t code;
    const char *why;
    int op;

    if (!frame)
        return;
    memcpy(frame, hdr, hl);
    frame[1] |= 0x80;   /* masked, as a client's */
    memcpy(frame + hl, "\x11\x22\x33\x44", 4);
    for (size_t i = 0; i < size; i++)
        frame[hl + 4 + i] = data[i] ^ frame[hl + (i & 3)];
    if (srv_ws_in_add(&in, frame, hl + 4 + size) != 0 ||
        srv_ws_next(&in, &op, &out, &len, &code, &why) != 1 || op != SRV_WS_BINARY ||
        len != size || (size && memcmp(out, data, size) != 0))
        fail("a frame as the server writes it does not parse back");
    srv_ws_in_free(&in);
    free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    srv_ws_in in = { .max = MAX };
    size_t off = 0, step = size ? (size_t)(data[0] % 17) + 1 : 1;

    while (off < size) {
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
            if (len > MAX)
                fail("a message larger than the limit");
            if (op != SRV_WS_TEXT && op != SRV_WS_BINARY && op != SRV_WS_CLOSE &&
                op != SRV_WS_PING && op != SRV_WS_PONG)
                fail("an opcode the RFC does not know");
            if (op == SRV_WS_TEXT && !srv_ws_utf8(msg, len))
                fail("a text message that is not UTF-8");
            if (op >= SRV_WS_CLOSE && len > 125)
                fail("a control frame over 125 bytes");
        }
        if (rc < 0) {
            if (!why || !*why || (code != SRV_WS_PROTOCOL_ERROR && code != SRV_WS_BAD_DATA &&
                                  code != SRV_WS_TOO_BIG && code != SRV_WS_INTERNAL))
                fail("a refusal without a reason or a close code");
            break;
        }
    }
    srv_ws_in_free(&in);
    round_trip(data, size < 70000 ? size : 70000);
    return 0;
}

#ifndef SRV_FUZZING
static size_t n_seeds;
static unsigned char *seeds[256];
static size_t seed_len[256];

static int load(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return -1;
    while ((e = readdir(d)) && n_seeds < 256) {
        char path[4400];
        FILE *f;
        long n;
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%.4000s/%.255s", dir, e->d_name) >= (int)sizeof path ||
            !(f = fopen(path, "rb")))
            continue;
        if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (seeds[n_seeds] = malloc((size_t)n + 1)) &&
            fread(seeds[n_seeds], 1, (size_t)n, f) == (size_t)n)
            seed_len[n_seeds++] = (size_t)n;
        fclose(f);
    }
    closedir(d);
    return 0;
}

int main(int argc, char **argv)
{
    const char *top = getenv("top_srcdir");
    char def[4096];
    const char *dir = argv[1];

    snprintf(def, sizeof def, "%s/tests/server/ws-corpus", top ? top : ".");
    if (argc < 2)
        dir = def;
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    unsigned char buf[8192];

    if (load(dir) != 0 || n_seeds == 0) {
        printf("1..0 # SKIP no corpus in %s\n", dir);
        return 77;
    }
    printf("1..2\n");
    for (size_t i = 0; i < n_seeds; i++)
        LLVMFuzzerTestOneInput(seeds[i], seed_len[i]);
    printf("ok 1 - %zu corpus files of the WebSocket framing parse within its promises\n",
           n_seeds);
    /* A fixed mutator: flip, insert, cut, splice bytes of the seeds. */
    for (int it = 0; it < 20000; it++) {
        size_t s = (size_t)(x % n_seeds), len = seed_len[s] < sizeof buf ? seed_len[s]
                                                                        : sizeof buf;
        memcpy(buf, seeds[s], len);
        for (int k = 0; k < 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = len ? (size_t)(x >> 8) % len : 0;
            switch (x % 4) {
            case 0: if (len) buf[at] ^= (unsigned char)(x >> 32); break;
            case 1: if (len < sizeof buf) { memmove(buf + at + 1, buf + at, len - at); buf[at] = (unsigned char)(x >> 24); len++; } break;
            case 2: if (len) len = at; break;
            case 3: if (len && len * 2 <= sizeof buf) { memcpy(buf + len, buf, len); len *= 2; } break;
            }
        }
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("ok 2 - 20000 mutated inputs parse within its promises\n");
    for (size_t i = 0; i < n_seeds; i++)
        free(seeds[i]);
    return 0;
}
#endif
