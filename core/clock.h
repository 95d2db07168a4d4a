/* core/clock.h - the core's monotonic clock (core/clock.c)
 *
 * Depends on nothing else of the core, so that a program built from a
 * provider's sources (polysandbox-locald) can lend the same clock.
 */
#ifndef SBX_CORE_CLOCK_H
#define SBX_CORE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t core_now_ns(void);

#endif
