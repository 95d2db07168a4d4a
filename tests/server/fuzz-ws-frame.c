/* tests/server/fuzz-ws-frame.c - replay of the WebSocket framing's checks
 * (ws-frame-check.c), and the same as a standalone libFuzzer program
 *
 * The fuzz harness runs them as its target "ws" (tests/fuzz/fuzz-ws.c,
 * seeds in tests/fuzz/corpus/ws).  Built plainly this is ws-frame-replay
 * (make check: every seed, and 20000 inputs derived from them by a fixed
 * pseudo-random mutator, as TAP); `make fuzz-ws-frame` builds it with
 * clang's libFuzzer alone.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ws-frame-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *broken = ws_frame_check(data, size);

    if (broken) {
        fprintf(stderr, "ws-frame: broken promise: %s\n", broken);
        abort();
    }
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

    snprintf(def, sizeof def, "%s/tests/fuzz/corpus/ws", top ? top : ".");
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
            case 1:
                if (len < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = (unsigned char)(x >> 24);
                    len++;
                }
                break;
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
