/* tests/fuzz/fuzz-files.c - the listing of a sandbox's directory as the
 * sandbox's listing command printed it (core/run/sandbox-files.c)
 *
 * The first byte sizes the cap (1..256 entries); the rest is the
 * output.  Beyond not crashing: at most the cap of entries is passed on,
 * each name is 1..255 bytes with no '/' nor NUL and is neither "." nor
 * "..", and a refusal points inside the output.
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "run/files.h"

struct seen {
    size_t n;
};

static int on_entry(void *ud, const char *name, size_t len, sbx_file_type type, uint64_t size,
                    int64_t mtime)
{
    struct seen *s = ud;

    (void)size;
    if (len == 0 || len > 255 || memchr(name, '/', len) || memchr(name, '\0', len) ||
        (len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
        fz_fail("a name of %zu bytes that breaks the grammar was passed on", len);
    if (type > SBX_FILE_OTHER || mtime < 0)
        fz_fail("type %d, mtime %lld out of range", (int)type, (long long)mtime);
    s->n++;
    return 0;
}

static int one(const uint8_t *data, size_t size)
{
    size_t max = size ? (size_t)data[0] + 1 : 1, bad_at;
    const char *p = size ? (const char *)data + 1 : "";
    size_t len = size ? size - 1 : 0;
    struct seen s = {0};
    bool more, bad;

    if (core_files_parse(p, len, max, on_entry, &s, &more, &bad, &bad_at) != 0)
        fz_fail("no callback stopped the walk, yet it returned non-zero");
    if (s.n > max)
        fz_fail("%zu entries passed on past the cap of %zu", s.n, max);
    if (bad && bad_at > len)
        fz_fail("refused at byte %zu of %zu", bad_at, len);
    if (bad && more)
        fz_fail("both malformed and 'more'");
    return 0;
}

FZ_TARGET(files, NULL, one)
