/* tests/fuzz/fuzz-docker.c - what the docker provider reads from the
 * daemon: the tar of GET /containers/ID/archive (plugins/docker/
 * engine/tar.c) and the multiplexed output of an exec, with the helper's
 * report behind its mark (plugins/docker/engine/stream.c)
 *
 * The first byte chooses:
 *   0  the rest is an archive: dk_tar_extract_one under a limit taken
 *      from the next byte; what it gives is at most that long;
 *   1  the rest is a file: made into a tar by dk_tar_file and read back
 *      whole by dk_tar_extract_one;
 *   2  the rest describes frames (stream, length, payload; a chunking of
 *      the wire; maybe the helper's report at the end): every stdout and
 *      stderr byte comes out once, in order, the report never, and the
 *      report reads back as written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "engine/engine.h"
#include "fuzz.h"

#define NONCE "c0ffee0123456789"
#define MARK "\036SBX" NONCE ":"

static void extract(const uint8_t *data, size_t size)
{
    size_t max = size ? (size_t)data[0] * 97 : 0;
    void *out = NULL;
    size_t len = 0;
    char err[256] = "";
    int rc = dk_tar_extract_one(size ? data + 1 : data, size ? size - 1 : 0, max, malloc, free,
                                &out, &len, err, sizeof err);

    if (rc == SBX_OK) {
        if (len > max)
            fz_fail("%zu bytes extracted under a limit of %zu", len, max);
        if (((char *)out)[len] != '\0')
            fz_fail("the extracted file is not NUL-terminated");
        free(out);
    } else if (!err[0]) {
        fz_fail("extraction failed (%d) without a message", rc);
    }
}

static void round_trip(const uint8_t *data, size_t size)
{
    const uint8_t *nl = size ? memchr(data, '\n', size) : NULL;
    size_t plen = nl ? (size_t)(nl - data) : 0;
    char *name = fz_strndup(data, plen);
    const uint8_t *body = nl ? nl + 1 : data;
    size_t blen = nl ? size - plen - 1 : size;
    void *tar = NULL, *back = NULL;
    size_t tar_len = 0, back_len = 0;
    char err[256] = "";

    /* One entry: a name without '/' (parents would come first). */
    for (char *c = name; *c; c++)
        if (*c == '/')
            *c = '_';
    if (!name[0] || strlen(name) != plen) {
        free(name);
        name = strdup("f");
    }
    if (dk_tar_file(name, body, blen, 0640, &tar, &tar_len, err, sizeof err) != SBX_OK) {
        free(name);
        return;     /* libarchive refused the name: nothing to read back */
    }
    if (dk_tar_extract_one(tar, tar_len, blen, malloc, free, &back, &back_len, err,
                           sizeof err) != SBX_OK)
        fz_fail("a tar of '%s' (%zu bytes) does not read back: %s", name, blen, err);
    if (back_len != blen || (blen && memcmp(back, body, blen)))
        fz_fail("a tar of '%s' read back %zu bytes of %zu, not the same", name, back_len, blen);
    free(back);
    free(tar);
    free(name);
}

/* ---- the attach stream ---- */

struct sink {
    uint8_t *p[3];
    size_t len[3];
};

static void add(uint8_t **p, size_t *len, const void *buf, size_t n)
{
    uint8_t *np = realloc(*p, *len + n + 1);
    if (!np)
        abort();
    memcpy(np + *len, buf, n);
    *p = np;
    *len += n;
}

static int out(void *ud, int stream, const void *buf, size_t len)
{
    struct sink *s = ud;
    if (stream != 1 && stream != 2)
        fz_fail("output on stream %d", stream);
    add(&s->p[stream], &s->len[stream], buf, len);
    return 0;
}

static void demux(const uint8_t *data, size_t size)
{
    struct sink want = { { 0 }, { 0 } }, got = { { 0 }, { 0 } };
    uint8_t *wire = NULL;
    size_t wire_len = 0, i = 0;
    int report = size && (data[0] & 1);
    unsigned value = size > 1 ? data[1] : 0;
    struct dk_demux d;
    struct dk_report rep;

    i = 2;
    /* Frames: a type byte (0-3), a length byte, that many payload bytes. */
    while (i + 2 <= size) {
        unsigned type = data[i] % 4, n = data[i + 1];
        uint8_t hdr[8] = { (uint8_t)type, 0, 0, 0, 0, 0, 0, (uint8_t)n };
        int stream = type == 2 || type == 3 ? 2 : 1;
        if (i + 2 + n > size)
            n = (unsigned)(size - i - 2);
        hdr[7] = (uint8_t)n;
        add(&wire, &wire_len, hdr, 8);
        add(&wire, &wire_len, data + i + 2, n);
        add(&want.p[stream], &want.len[stream], data + i + 2, n);
        i += 2 + n;
    }
    if (report) {
        char line[128];
        int n = snprintf(line, sizeof line, MARK "x=%u cpu=%u rss=%u\n", value, value * 7,
                         value * 11);
        uint8_t hdr[8] = { 2, 0, 0, 0, 0, 0, 0, (uint8_t)n };
        add(&wire, &wire_len, hdr, 8);
        add(&wire, &wire_len, line, (size_t)n);
    }
    /* The sandbox never sees the nonce: it cannot write the mark. */
    if (want.len[2] && memmem(want.p[2], want.len[2], MARK, sizeof MARK - 1))
        goto out;
    dk_demux_init(&d, NONCE, out, &got);
    /* Fed in pieces whose sizes follow the payload bytes. */
    for (size_t off = 0, k = 0; off < wire_len; k++) {
        size_t piece = 1 + (size > 2 ? data[2 + k % (size - 2)] : 7);
        if (piece > wire_len - off)
            piece = wire_len - off;
        if (dk_demux_feed(&d, wire + off, piece) != 0)
            fz_fail("well-formed frames refused at byte %zu", off);
        off += piece;
    }
    if (dk_demux_finish(&d, &rep) != !!report)
        fz_fail("the report was %s", report ? "lost" : "found where there was none");
    if (report && (strcmp(rep.status, "x") || rep.value != (int)value ||
                   rep.cpu_ns != (int64_t)value * 7 || rep.rss != (int64_t)value * 11))
        fz_fail("the report read back as %s=%d cpu=%lld rss=%lld", rep.status, rep.value,
                (long long)rep.cpu_ns, (long long)rep.rss);
    for (int s = 1; s <= 2; s++)
        if (got.len[s] != want.len[s] || (want.len[s] && memcmp(got.p[s], want.p[s], want.len[s])))
            fz_fail("stream %d: %zu bytes out for %zu in, or not the same", s, got.len[s],
                    want.len[s]);
out:
    for (int s = 0; s < 3; s++) {
        free(want.p[s]);
        free(got.p[s]);
    }
    free(wire);
}

static int one(const uint8_t *data, size_t size)
{
    unsigned which = size ? data[0] % 3 : 0;
    const uint8_t *rest = size ? data + 1 : data;
    size_t n = size ? size - 1 : 0;

    if (which == 0)
        extract(rest, n);
    else if (which == 1)
        round_trip(rest, n);
    else
        demux(rest, n);
    return 0;
}

FZ_TARGET(docker, NULL, one)
