/* tests/provider/nostream.c - the "nostream" flavour: a provider that
 * takes stdin whole but cannot stream it (SBX_CAP_STDIN without
 * SBX_CAP_STDIN_STREAM), for tests/cli/exec-stdin-stream.sh: `-i` must
 * read our stdin to its end first on it, never be refused.
 *
 * Each exec writes "got:" and the bytes of its stdin on stdout.  Its one
 * sandbox, "nostream-1", can be opened (attach) by any process.  It runs
 * nothing and isolates nothing.
 *
 * Built again with -DTP_FLOP as "flop": it claims stdin_stream but every
 * create fails, so that a run falls back from it to nostream after the CLI
 * chose to stream.
 */
#include "testprov.h"

int tp_setup(struct tp *t)
{
    (void)t;
    return SBX_OK;
}

void tp_teardown(struct tp *t)
{
    (void)t;
}

#ifdef TP_FLOP
static int flop_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                       char id[SBX_ID_MAX])
{
    struct tp *t = prov;

    (void)spec;
    (void)sb;
    (void)id;
    return t->host->set_error(t->h, SBX_E_BACKEND, "flop never creates a sandbox");
}
#endif

static int ns_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                   const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct tp *t = prov;

    (void)sb;
    /* the core never hands a stream to a provider that does not claim it */
    if (spec->stdin_fd != -1)
        return t->host->set_error(t->h, SBX_E_INTERNAL, "stdin_fd set: %d", spec->stdin_fd);
    if (tp_say(sink, "got:") != 0 ||
        (spec->stdin_len &&
         sink->write(sink->ud, SBX_STREAM_STDOUT, spec->stdin_data, spec->stdin_len) != 0)) {
        out->status = SBX_RUN_OUTPUT_LIMIT;
        return SBX_OK;
    }
    tp_exited(out, 0);
    return SBX_OK;
}

#ifdef TP_FLOP
static const sbx_provider_ops_v1 ops = {
    .init = tp_init, .fini = tp_fini, .create = flop_create, .exec = ns_exec,
    .destroy = tp_destroy, .attach = tp_attach, .release = tp_release,
};
SBX_PROVIDER_DEFINE(TP_NAME, "1.0.0", "a provider whose every create fails", "MIT",
                    SBX_CAP_STDIN | SBX_CAP_STDIN_STREAM | SBX_CAP_PERSISTENT |
                        SBX_CAP_NETWORK_POLICY /* runs nothing */, NULL, NULL, &ops);
#else
static const sbx_provider_ops_v1 ops = {
    .init = tp_init, .fini = tp_fini, .create = tp_create, .exec = ns_exec,
    .destroy = tp_destroy, .attach = tp_attach, .release = tp_release,
};
SBX_PROVIDER_DEFINE(TP_NAME, "1.0.0", "a provider that takes stdin only whole", "MIT",
                    SBX_CAP_STDIN | SBX_CAP_PERSISTENT | SBX_CAP_NETWORK_POLICY
                    /* runs nothing */, NULL, NULL, &ops);
#endif
