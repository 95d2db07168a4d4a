/* tests/lazy/marker.c - a provider that leaves a trace of being loaded
 *
 * For the lazy-loading checks (test-lazy, lazy.sh): when the environment
 * names a file in SBX_TEST_LOAD_LOG, the module appends "open" to it from
 * its constructor (the dynamic linker mapped it) and "init" from its init.
 * With [settings] fail = yes its init fails, saying so.  Otherwise exec
 * prints "marker" and exits 0, whatever the command.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/provider.h>

/* One line per event; O_APPEND keeps lines of racing threads whole. */
static void trace(const char *what)
{
    const char *log = getenv("SBX_TEST_LOAD_LOG");
    size_t n = strlen(what);
    int fd;

    if (!log || !*log)
        return;
    fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (write(fd, what, n) != (ssize_t)n) {
        /* A test log: a short write shows up as a failed check. */
    }
    close(fd);
}

__attribute__((constructor)) static void marker_opened(void)
{
    trace("open\n");
}

static int marker_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    const char *fail = host->config_get(h, "fail");

    trace("init\n");
    if (fail && !strcmp(fail, "yes"))
        return host->set_error(h, SBX_E_INTERNAL, "told to fail by its settings");
    *prov = NULL;
    return SBX_OK;
}

static void marker_fini(void *prov)
{
    (void)prov;
}

static int marker_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                         char id[SBX_ID_MAX])
{
    (void)prov;
    (void)spec;
    *sb = NULL;
    snprintf(id, SBX_ID_MAX, "marker-1");
    return SBX_OK;
}

static int marker_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                       const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    (void)prov;
    (void)sb;
    (void)spec;
    if (sink && sink->write)
        sink->write(sink->ud, SBX_STREAM_STDOUT, "marker\n", 7);
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static int marker_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static const sbx_provider_ops_v1 marker_ops = {
    .init = marker_init,
    .fini = marker_fini,
    .create = marker_create,
    .exec = marker_exec,
    .destroy = marker_destroy,
};

static const char *const marker_keys[] = {"fail", NULL};

SBX_PROVIDER_DEFINE("marker", "1.0", "loader test provider that logs its loading",
                    "MIT", SBX_CAP_CONCURRENT | SBX_CAP_NETWORK_POLICY /* runs nothing */, marker_keys, NULL, &marker_ops);
