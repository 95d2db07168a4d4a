/* tests/cli/nostream.c - a provider that takes stdin whole but cannot
 * stream it (SBX_CAP_STDIN without SBX_CAP_STDIN_STREAM), for
 * tests/cli/exec-stdin-stream.sh: `-i` must read our stdin to its end
 * first on it, never be refused.
 *
 * Each exec writes "got:" and the bytes of its stdin on stdout.  Its one
 * sandbox, "nostream-1", can be opened (attach) by any process.  It runs
 * nothing and isolates nothing.
 *
 * Built again with -DNOSTREAM_FLOP as "flop": it claims stdin_stream but
 * every create fails, so that a run falls back from it to nostream after
 * the CLI chose to stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>

struct nostream {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
};

static int ns_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct nostream *n = calloc(1, sizeof *n);

    if (!n)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    n->host = host;
    n->h = h;
    *prov = n;
    return SBX_OK;
}

static void ns_fini(void *prov)
{
    free(prov);
}

static int ns_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                     char id[SBX_ID_MAX])
{
    (void)spec;
#ifdef NOSTREAM_FLOP
    struct nostream *n = prov;
    (void)sb;
    (void)id;
    return n->host->set_error(n->h, SBX_E_BACKEND, "flop never creates a sandbox");
#endif
    *sb = prov;
    snprintf(id, SBX_ID_MAX, "nostream-1");
    return SBX_OK;
}

static int ns_attach(void *prov, const char *id, void **sb)
{
    struct nostream *n = prov;

    if (strcmp(id, "nostream-1"))
        return n->host->set_error(n->h, SBX_E_NOT_FOUND, "no sandbox '%s'", id);
    *sb = prov;
    return SBX_OK;
}

static void ns_release(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
}

static int ns_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                   const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct nostream *n = prov;

    (void)sb;
    /* the core never hands a stream to a provider that does not claim it */
    if (spec->stdin_fd != -1)
        return n->host->set_error(n->h, SBX_E_INTERNAL, "stdin_fd set: %d", spec->stdin_fd);
    if (sink->write(sink->ud, SBX_STREAM_STDOUT, "got:", 4) != 0 ||
        (spec->stdin_len &&
         sink->write(sink->ud, SBX_STREAM_STDOUT, spec->stdin_data, spec->stdin_len) != 0)) {
        out->status = SBX_RUN_OUTPUT_LIMIT;
        return SBX_OK;
    }
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static int ns_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static const sbx_provider_ops_v1 ops = {
    .init = ns_init, .fini = ns_fini, .create = ns_create, .exec = ns_exec,
    .destroy = ns_destroy, .attach = ns_attach, .release = ns_release,
};
#ifdef NOSTREAM_FLOP
SBX_PROVIDER_DEFINE("flop", "1.0.0", "a provider whose every create fails", "MIT",
                    SBX_CAP_STDIN | SBX_CAP_STDIN_STREAM | SBX_CAP_PERSISTENT |
                        SBX_CAP_NETWORK_POLICY /* runs nothing */, NULL, NULL, &ops);
#else
SBX_PROVIDER_DEFINE("nostream", "1.0.0", "a provider that takes stdin only whole", "MIT",
                    SBX_CAP_STDIN | SBX_CAP_PERSISTENT | SBX_CAP_NETWORK_POLICY
                    /* runs nothing */, NULL, NULL, &ops);
#endif
