/* tests/provider/probe.c - the "probe" flavour: a provider that borrows
 * its credential (tests/secrets/cli.sh, tty.sh)
 *
 * exec opens [settings] api_key with the host's secret_get and writes to
 * stdout "len=N b2=HEX dumpable=D": the length, the BLAKE2b-256 of the
 * value (compare with `b2sum -l 256`) and PR_GET_DUMPABLE while it holds
 * it -- never the value.  The command word chooses more:
 *
 *   hold FILE   create FILE once the value is held, then wait (up to a
 *               minute) until FILE is removed before giving it back, so a
 *               test can look at every process meanwhile;
 *   abort       abort() while holding the value (core dump test).
 *
 * A failing secret_get fails the exec with the core's error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "testprov.h"

int tp_setup(struct tp *t)
{
    if (sodium_init() < 0)
        return t->host->set_error(t->h, SBX_E_INTERNAL, "libsodium failed to initialise");
    return SBX_OK;
}

void tp_teardown(struct tp *t)
{
    (void)t;
}

static void wait_gone(const char *path)
{
    struct timespec ts = {0, 10 * 1000 * 1000};

    for (int i = 0; i < 6000 && access(path, F_OK) == 0; i++)
        nanosleep(&ts, NULL);
}

static int probe_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct tp *t = prov;
    unsigned char hash[32];
    char hex[65], line[160];
    const char *value = NULL;
    const char *cmd = spec->argv && spec->argv[0] ? spec->argv[0] : "";
    size_t len = 0;
    int rc;

    (void)sb;
    rc = t->host->secret_get(t->h, "api_key", &value, &len);
    if (rc != SBX_OK)
        return rc;
    if (!strcmp(cmd, "abort"))
        abort();
    if (!strcmp(cmd, "hold") && spec->argv[1]) {
        int fd = open(spec->argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
        wait_gone(spec->argv[1]);
    }
    crypto_generichash(hash, sizeof hash, (const unsigned char *)value, len, NULL, 0);
    sodium_bin2hex(hex, sizeof hex, hash, sizeof hash);
    snprintf(line, sizeof line, "len=%zu b2=%s dumpable=%d\n", len, hex,
             prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    t->host->secret_release(t->h, value);
    tp_say(sink, line);
    tp_exited(out, 0);
    return SBX_OK;
}

static const sbx_provider_ops_v1 probe_ops = {
    .init = tp_init, .fini = tp_fini, .create = tp_create, .exec = probe_exec,
    .destroy = tp_destroy,
};

static const char *const probe_keys[] = {"note", NULL};
static const char *const probe_secrets[] = {"api_key", "spare_key", NULL};

SBX_PROVIDER_DEFINE(TP_NAME, "1.0", "sealed credential test provider", "MIT",
                    SBX_CAP_NETWORK_POLICY /* runs nothing */, probe_keys, probe_secrets,
                    &probe_ops);
