/* tests/loader/good.c - a tiny provider that passes every check
 *
 * exec writes its greeting ([settings] greeting, default "good") and a
 * newline to stdout and reports exit 0, whatever the command.  init fails
 * (with a message) if the core did not set the state directory first, so
 * the loader test also proves that ordering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>

struct good {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    char greeting[64];
};

static int good_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    const char *greeting = host->config_get(h, "greeting");
    const char *state = host->state_dir(h);
    struct good *g;

    if (!state || !strstr(state, "/good"))
        return host->set_error(h, SBX_E_INTERNAL,
                               "state_dir is '%s', expected .../good",
                               state ? state : "(null)");
    g = calloc(1, sizeof *g);
    if (!g)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    g->host = host;
    g->h = h;
    snprintf(g->greeting, sizeof g->greeting, "%s", greeting ? greeting : "good");
    *prov = g;
    return SBX_OK;
}

static void good_fini(void *prov)
{
    free(prov);
}

static int good_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                       char id[SBX_ID_MAX])
{
    (void)spec;
    *sb = prov;
    snprintf(id, SBX_ID_MAX, "good-1");
    return SBX_OK;
}

static int good_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                     const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct good *g = prov;
    char line[80];
    int n = snprintf(line, sizeof line, "%s\n", g->greeting);

    (void)sb;
    (void)spec;
    if (n > 0 && sink && sink->write)
        sink->write(sink->ud, SBX_STREAM_STDOUT, line, (size_t)n);
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static int good_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static const sbx_provider_ops_v1 good_ops = {
    .init = good_init,
    .fini = good_fini,
    .create = good_create,
    .exec = good_exec,
    .destroy = good_destroy,
};

static const char *const good_keys[] = {"greeting", NULL};

SBX_PROVIDER_DEFINE("good", "1.2.3", "loader test provider that always succeeds",
                    "MIT", SBX_CAP_NETWORK_POLICY /* runs nothing */, good_keys, NULL,
                    &good_ops);
