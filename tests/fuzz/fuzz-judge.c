/* tests/fuzz/fuzz-judge.c - the comparison of a judged program's output
 * with the expected one (core/eval/eval-compare.c)
 *
 * The first byte picks the mode and the tolerance; the rest is the
 * expected output and the program's, separated by FZ_SEPARATOR (the
 * program's is empty when there is none).  Beyond not crashing: every
 * mode finds an output equal to itself, and outputs equal byte for byte
 * are equal in every mode.
 */
#include "config.h"

#include <string.h>

#include "eval/eval-int.h"
#include "fuzz.h"

static void init(void)
{
}

static int one(const uint8_t *data, size_t size)
{
    static const double tols[] = {0, 1e-9, 1e-6, 0.5};
    const char *p = (const char *)data + (size ? 1 : 0), *sep;
    size_t len = size ? size - 1 : 0, wlen, glen;
    core_eval_cmp cmp = (core_eval_cmp)(size ? data[0] % 3 : 0);
    double tol = tols[size ? (data[0] >> 2) % 4 : 0];
    const char *got;
    bool exact;

    sep = memmem(p, len, FZ_SEPARATOR, sizeof FZ_SEPARATOR - 1);
    wlen = sep ? (size_t)(sep - p) : len;
    got = sep ? sep + sizeof FZ_SEPARATOR - 1 : p + len;
    glen = (size_t)(p + len - got);
    if (!core_eval_compare(cmp, tol, p, wlen, p, wlen))
        fz_fail("mode %d: an output is not equal to itself", (int)cmp);
    exact = core_eval_compare(CORE_EVAL_CMP_EXACT, tol, p, wlen, got, glen);
    if (exact && !core_eval_compare(cmp, tol, p, wlen, got, glen))
        fz_fail("mode %d: outputs equal byte for byte are not equal", (int)cmp);
    (void)core_eval_compare(cmp, tol, got, glen, p, wlen);
    return 0;
}

FZ_TARGET(judge, init, one)
