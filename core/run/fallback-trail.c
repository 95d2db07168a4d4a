/* core/run/fallback-trail.c - the providers a create left behind on its way
 * down a fallback chain, kept per thread for the caller of that create.
 *
 * A sandbox made on the second provider of the [core] fallback chain
 * cost a failed create on the first, inside one sbx_run.  The
 * evaluation engine counts each attempt on the provider that spent it
 * (core/eval/eval-attempt.c), so it reads this trail after each of its runs.
 * Per thread, like the last error: the run and its reader are one
 * thread, and nothing is allocated on the way. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "run/trail.h"

static _Thread_local struct {
    core_trail_step steps[CORE_TRAIL_MAX];
    size_t n;
} trail;

void core_trail_reset(void)
{
    trail.n = 0;
}

void core_trail_add(const char *provider, uint64_t ns, const char *msg)
{
    core_trail_step *s;

    if (trail.n >= CORE_TRAIL_MAX)
        return;     /* a longer chain: its later steps go unlisted */
    s = &trail.steps[trail.n++];
    snprintf(s->provider, sizeof s->provider, "%s", provider ? provider : "");
    snprintf(s->message, sizeof s->message, "%s", msg ? msg : "");
    s->ns = ns;
}

size_t core_trail_count(void)
{
    return trail.n;
}

const core_trail_step *core_trail_get(size_t i)
{
    return i < trail.n ? &trail.steps[i] : NULL;
}

/* ---- the public view (sandbox.h) ---------------------------------------- */

size_t sbx_fallback_count(void)
{
    return core_trail_count();
}

bool sbx_fallback_step(size_t i, const char **provider, const char **message, uint64_t *ns)
{
    const core_trail_step *s = core_trail_get(i);

    if (!s)
        return false;
    if (provider)
        *provider = s->provider;
    if (message)
        *message = s->message;
    if (ns)
        *ns = s->ns;
    return true;
}

void sbx_fallback_reset(void)
{
    core_trail_reset();
}
