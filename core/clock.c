/* core/clock.c - the core's monotonic clock
 *
 * One clock for deadlines, timings and what the host table lends
 * providers (host->clock_ns), in a file of its own so that whatever
 * needs the time depends on nothing else of the core.
 */
#include "config.h"

#include <time.h>

#include "clock.h"

uint64_t core_now_ns(void)
{
    struct timespec ts;

    /* CLOCK_MONOTONIC cannot fail with a valid pointer on Linux. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}
