/* tests/provider/marker.c - the "marker" flavour: a provider that leaves a
 * trace of being loaded
 *
 * For the lazy-loading checks (tests/lazy/test-lazy, lazy.sh): when the
 * environment names a file in SBX_TEST_LOAD_LOG, the module appends
 * "open" to it from its constructor (the dynamic linker mapped it) and
 * "init" from its init.  With [settings] fail = yes its init fails, saying
 * so.  Otherwise exec prints "marker" and exits 0, whatever the command.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testprov.h"

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

int tp_setup(struct tp *t)
{
    trace("init\n");
    if (tp_setting_yes(t, "fail", 0))
        return t->host->set_error(t->h, SBX_E_INTERNAL, "told to fail by its settings");
    return SBX_OK;
}

void tp_teardown(struct tp *t)
{
    (void)t;
}

static int marker_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                       const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    (void)prov;
    (void)sb;
    (void)spec;
    tp_say(sink, TP_NAME "\n");
    tp_exited(out, 0);
    return SBX_OK;
}

static const sbx_provider_ops_v1 marker_ops = {
    .init = tp_init, .fini = tp_fini, .create = tp_create, .exec = marker_exec,
    .destroy = tp_destroy,
};

static const char *const marker_keys[] = {"fail", NULL};

SBX_PROVIDER_DEFINE(TP_NAME, "1.0", "loader test provider that logs its loading", "MIT",
                    SBX_CAP_CONCURRENT | SBX_CAP_NETWORK_POLICY /* runs nothing */,
                    marker_keys, NULL, &marker_ops);
