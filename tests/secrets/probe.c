/* tests/secrets/probe.c - a test provider that borrows its credential
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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <polysandbox/provider.h>

struct probe {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
};

static int token;

static int probe_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct probe *p = calloc(1, sizeof *p);

    if (!p)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    if (sodium_init() < 0) {
        free(p);
        return host->set_error(h, SBX_E_INTERNAL, "libsodium failed to initialise");
    }
    p->host = host;
    p->h = h;
    *prov = p;
    return SBX_OK;
}

static void probe_fini(void *prov)
{
    free(prov);
}

static int probe_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                        char id[SBX_ID_MAX])
{
    (void)prov;
    (void)spec;
    *sb = &token;
    strcpy(id, "probe-1");
    return SBX_OK;
}

static int probe_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static void wait_gone(const char *path)
{
    struct timespec ts = { 0, 10 * 1000 * 1000 };

    for (int i = 0; i < 6000 && access(path, F_OK) == 0; i++)
        nanosleep(&ts, NULL);
}

static int probe_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct probe *p = prov;
    unsigned char hash[32];
    char hex[65], line[160];
    const char *value = NULL;
    const char *cmd = spec->argv && spec->argv[0] ? spec->argv[0] : "";
    size_t len = 0;
    int rc, n;

    (void)sb;
    rc = p->host->secret_get(p->h, "api_key", &value, &len);
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
    n = snprintf(line, sizeof line, "len=%zu b2=%s dumpable=%d\n", len, hex,
                 prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    p->host->secret_release(p->h, value);
    sink->write(sink->ud, SBX_STREAM_STDOUT, line, (size_t)n);
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static const sbx_provider_ops_v1 probe_ops = {
    .init = probe_init,
    .fini = probe_fini,
    .create = probe_create,
    .exec = probe_exec,
    .destroy = probe_destroy,
};

static const char *const probe_keys[] = { "note", NULL };
static const char *const probe_secrets[] = { "api_key", "spare_key", NULL };

SBX_PROVIDER_DEFINE("probe", "1.0", "sealed credential test provider", "MIT",
                    SBX_CAP_NETWORK_POLICY /* runs nothing */,
                    probe_keys, probe_secrets, &probe_ops);
