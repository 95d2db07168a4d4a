/* tests/provider/good.c - the "good" flavour: a tiny provider that passes
 * every loader check (tests/loader/test-loader, exports.sh)
 *
 * exec writes its greeting ([settings] greeting, default "good") and a
 * newline to stdout and reports exit 0, whatever the command.  init fails
 * (with a message) if the core did not set the state directory first, so
 * the loader test also proves that ordering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testprov.h"

int tp_setup(struct tp *t)
{
    const char *greeting = t->host->config_get(t->h, "greeting");
    const char *state = t->host->state_dir(t->h);
    char *line;

    if (!state || !strstr(state, "/" TP_NAME))
        return t->host->set_error(t->h, SBX_E_INTERNAL, "state_dir is '%s', expected .../%s",
                                  state ? state : "(null)", TP_NAME);
    if (!(line = malloc(64)))
        return t->host->set_error(t->h, SBX_E_NOMEM, "out of memory");
    snprintf(line, 64, "%.62s\n", greeting ? greeting : TP_NAME);
    t->own = line;
    return SBX_OK;
}

void tp_teardown(struct tp *t)
{
    free(t->own);
}

static int good_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                     const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct tp *t = prov;

    (void)sb;
    (void)spec;
    tp_say(sink, t->own);
    tp_exited(out, 0);
    return SBX_OK;
}

static const sbx_provider_ops_v1 good_ops = {
    .init = tp_init, .fini = tp_fini, .create = tp_create, .exec = good_exec,
    .destroy = tp_destroy,
};

static const char *const good_keys[] = {"greeting", NULL};

SBX_PROVIDER_DEFINE(TP_NAME, "1.2.3", "loader test provider that always succeeds", "MIT",
                    SBX_CAP_NETWORK_POLICY /* runs nothing */, good_keys, NULL, &good_ops);
