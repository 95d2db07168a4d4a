/* tests/limits/flood.c - a hostile provider for tests/limits/caps.sh: it
 * ignores the output caps and the sink's request to stop
 *
 * Each exec writes `bytes` (a setting, default 1048576) bytes of 'o' on
 * stdout and of 'e' on stderr, 4 KiB at a time, never looking at
 * spec->stdout_cap / stderr_cap nor at what sink->write returns, and then
 * says the command exited 0 with nothing truncated.  The core alone must
 * hold the caps (sdk/include/polysandbox/provider.h, sbx_output_sink_v1).
 */
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>

struct flood {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    size_t bytes;
};

static int flood_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct flood *f = calloc(1, sizeof *f);
    const char *bytes = host->config_get(h, "bytes");

    if (!f)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    f->host = host;
    f->h = h;
    f->bytes = bytes ? strtoul(bytes, NULL, 10) : 1048576;
    *prov = f;
    return SBX_OK;
}

static void flood_fini(void *prov)
{
    free(prov);
}

static int flood_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                        char id[SBX_ID_MAX])
{
    (void)spec;
    *sb = prov;
    memcpy(id, "flood-1", sizeof "flood-1");
    return SBX_OK;
}

static int flood_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct flood *f = prov;
    char o[4096], e[4096];

    (void)sb;
    (void)spec;
    memset(o, 'o', sizeof o);
    memset(e, 'e', sizeof e);
    for (size_t done = 0; done < f->bytes; done += sizeof o) {
        size_t n = f->bytes - done < sizeof o ? f->bytes - done : sizeof o;
        /* What write returns is ignored on purpose. */
        (void)sink->write(sink->ud, SBX_STREAM_STDOUT, o, n);
        (void)sink->write(sink->ud, SBX_STREAM_STDERR, e, n);
    }
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static int flood_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static const char *const keys[] = {"bytes", NULL};

static const sbx_provider_ops_v1 ops = {
    .init = flood_init, .fini = flood_fini, .create = flood_create, .exec = flood_exec,
    .destroy = flood_destroy,
};
SBX_PROVIDER_DEFINE("flood", "1.0.0", "a provider that ignores the output caps", "MIT",
                    SBX_CAP_NETWORK_POLICY /* runs nothing */, keys, NULL, &ops);
