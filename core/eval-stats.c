/* core/eval-stats.c - pass@k and percentiles */
#include "config.h"

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
