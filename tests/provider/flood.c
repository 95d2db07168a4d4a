/* tests/provider/flood.c - the "flood" flavour: a hostile provider for
 * tests/limits/caps.sh that ignores the output caps and the sink's
 * request to stop
 *
 * Each exec writes `bytes` (a setting, default 1048576) bytes of 'o' on
 * stdout and of 'e' on stderr, 4 KiB at a time, never looking at
 * spec->stdout_cap / stderr_cap nor at what sink->write returns, and then
 * says the command exited 0 with nothing truncated.  The core alone must
 * hold the caps (sdk/include/polysandbox/provider.h, sbx_output_sink_v1).
 */
#include <stdlib.h>
#include <string.h>

#include "testprov.h"

int tp_setup(struct tp *t)
{
    unsigned long *bytes = malloc(sizeof *bytes);
    int rc;

    if (!bytes)
        return t->host->set_error(t->h, SBX_E_NOMEM, "out of memory");
    *bytes = 1048576;
    t->own = bytes;
    rc = tp_setting_num(t, "bytes", 0, 1UL << 40, bytes);
    return rc;
}

void tp_teardown(struct tp *t)
{
    free(t->own);
}

static int flood_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    const struct tp *t = prov;
    size_t bytes = *(const unsigned long *)t->own;
    char o[4096], e[4096];

    (void)sb;
    (void)spec;
    memset(o, 'o', sizeof o);
    memset(e, 'e', sizeof e);
    for (size_t done = 0; done < bytes; done += sizeof o) {
        size_t n = bytes - done < sizeof o ? bytes - done : sizeof o;
        /* What write returns is ignored on purpose. */
        (void)sink->write(sink->ud, SBX_STREAM_STDOUT, o, n);
        (void)sink->write(sink->ud, SBX_STREAM_STDERR, e, n);
    }
    tp_exited(out, 0);
    return SBX_OK;
}

static const char *const flood_keys[] = {"bytes", NULL};

static const sbx_provider_ops_v1 flood_ops = {
    .init = tp_init, .fini = tp_fini, .create = tp_create, .exec = flood_exec,
    .destroy = tp_destroy,
};
SBX_PROVIDER_DEFINE(TP_NAME, "1.0.0", "a provider that ignores the output caps", "MIT",
                    SBX_CAP_NETWORK_POLICY /* runs nothing */, flood_keys, NULL, &flood_ops);
