/* core/run/trail.h - the fallback trail (core/run/fallback-trail.c)
 */
#ifndef POLYSANDBOX_RUN_TRAIL_H
#define POLYSANDBOX_RUN_TRAIL_H

#include <stddef.h>
#include <stdint.h>

/* The fallback trail (core/run/fallback-trail.c): each provider a create of
 * this thread failed on before it moved down the chain, with the time
 * spent there and why.  sandbox_create adds a step for each provider
 * that has a next; a reader resets it before its create. */
#define CORE_TRAIL_MAX 8
typedef struct core_trail_step {
    char provider[64];
    char message[256];
    uint64_t ns;
} core_trail_step;
void core_trail_reset(void);
void core_trail_add(const char *provider, uint64_t ns, const char *msg);
size_t core_trail_count(void);
const core_trail_step *core_trail_get(size_t i);

#endif /* POLYSANDBOX_RUN_TRAIL_H */
