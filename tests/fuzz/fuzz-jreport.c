/* tests/fuzz/fuzz-jreport.c - the judged tests' runner's report, as the
 * core reads it (core/eval/eval-judge-batch.c; the protocol is in
 * core/eval/eval-judge-proto.h)
 *
 * The first byte picks how many tests were asked (1 to 8) and the output
 * cap (0 to 31 bytes); the rest is the runner's stdout.  Beyond not
 * crashing: the reported tests are a prefix, no output passes the cap by
 * more than a byte, and a clean test's output is within it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "eval/eval-int.h"
#include "fuzz.h"

#define MARKER "0123456789abcdef0123456789abcdef"

static void init(void)
{
}

static int one(const uint8_t *data, size_t size)
{
    size_t n = size ? (size_t)(data[0] & 7) + 1 : 1;
    uint64_t cap = size ? (uint64_t)(data[0] >> 3) : 0;
    core_jr_test *t = calloc(n, sizeof *t);
    bool gap = false;

    if (!t)
        return 0;
    if (core_eval_batch_parse(size ? (const char *)data + 1 : NULL, size ? size - 1 : 0,
                              MARKER, cap, t, n) == SBX_OK) {
        for (size_t i = 0; i < n; i++) {
            if (t[i].reported && gap)
                fz_fail("test %zu reported after one that was not", i);
            gap = gap || !t[i].reported;
            if (t[i].out_len > cap + 1)
                fz_fail("test %zu: %zu bytes of output past the cap %u", i, t[i].out_len,
                        (unsigned)cap);
            if (t[i].clean && (!t[i].reported || t[i].out_len > cap))
                fz_fail("test %zu: clean but not reported, or past the cap", i);
        }
    }
    core_eval_batch_free(t, n);
    return 0;
}

FZ_TARGET(jreport, init, one)
