/* plugins/e2b/e2b-util.c - the monotonic clock */
#include "config.h"

#include <time.h>

#include "e2b-int.h"

uint64_t e2b_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
