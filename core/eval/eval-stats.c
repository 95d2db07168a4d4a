/* core/eval/eval-stats.c - pass@k, percentiles and bootstrap intervals */
#include "config.h"

#include <stdlib.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"

double sbx_eval_pass_at_k(uint64_t n, uint64_t c, uint64_t k)
{
    double prod = 1.0;

    if (k == 0 || k > n || c > n)
        return -1.0;
    /* Every k-subset holds a pass when fewer than k samples failed. */
    if (n - c < k)
        return 1.0;
    /* C(n-c, k) / C(n, k) = prod_{i=n-c+1..n} (1 - k/i): no huge
     * binomials, no cancellation. */
    for (uint64_t i = n - c + 1; i <= n; i++)
        prod *= 1.0 - (double)k / (double)i;
    return 1.0 - prod;
}

uint64_t core_eval_percentile(const uint64_t *sorted, size_t n, double pct)
{
    size_t rank;

    if (n == 0 || !(pct > 0.0))
        return 0;
    if (pct >= 100.0)
        return sorted[n - 1];
    /* nearest rank: the smallest value with at least pct% at or below it */
    rank = (size_t)(pct / 100.0 * (double)n);
    if ((double)rank < pct / 100.0 * (double)n)
        rank++;
    return sorted[rank ? rank - 1 : 0];
}

/* splitmix64: a fixed, documented generator, so that the same results
 * give the same interval on every machine and every run. */
static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int core_eval_bootstrap(const double *per_task, size_t n, double *lo, double *hi)
{
    double *means;

    if (n == 0)
        return SBX_E_INVAL;
    if (!(means = malloc(CORE_EVAL_BOOTSTRAP_ROUNDS * sizeof *means)))
        return SBX_E_NOMEM;
    uint64_t state = CORE_EVAL_BOOTSTRAP_SEED;
    for (size_t b = 0; b < CORE_EVAL_BOOTSTRAP_ROUNDS; b++) {
        double total = 0.0;
        for (size_t i = 0; i < n; i++)
            total += per_task[next_u64(&state) % n];
        means[b] = total / (double)n;
    }
    qsort(means, CORE_EVAL_BOOTSTRAP_ROUNDS, sizeof *means, cmp_double);
    /* the 2.5th and 97.5th percentiles of the resampled means */
    *lo = means[(size_t)(0.025 * CORE_EVAL_BOOTSTRAP_ROUNDS)];
    *hi = means[(size_t)(0.975 * CORE_EVAL_BOOTSTRAP_ROUNDS) - 1];
    free(means);
    return SBX_OK;
}
