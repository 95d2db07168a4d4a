/* plugins/docker/docker-settings.c - providers.d/docker.ini: the table
 * the core reads it with (host->settings_read), the checks of its values,
 * and what the provider keeps of them
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker-int.h"
#include "setting-checks.h"

static const char *check_socket(const char *v)
{
    return strncmp(v, "unix://", 7) && strncmp(v, "http://", 7) && strncmp(v, "https://", 8) &&
                   strncmp(v, "tcp://", 6)
               ? "use unix:///path, tcp://host:port, http://... or https://..." : NULL;
}

static const char *check_runtime(const char *v)
{
    return pc_plain_name(v, "._-") ? NULL : "not a runtime name";
}

/* A fraction of CPUs, which no integer type holds. */
static const char *check_cpus(const char *v)
{
    char *end;
    errno = 0;
    double c = strtod(v, &end);
    return errno || *end || end == v || !(c >= 0.01 && c <= 1024)
               ? "a number of CPUs from 0.01 to 1024" : NULL;
}

/* What settings_read fills; copied into struct dk_prov. */
struct dk_conf {
    const char *socket, *ca_file, *cert_file, *key_file, *image, *runtime, *aliases, *cpus,
        *unenforced;
    int network, exec_mode, readonly_rootfs;
    struct dk_pull_conf pull;
};

static const char *const networks[] = {"none", "allow-host", NULL};
static const char *const exec_modes[] = {"attach", "api", NULL};
/* In the order of DK_PULL_MISSING, _ALWAYS, _NEVER. */
static const char *const pull_policies[] = {"missing", "always", "never", NULL};

#define DC(field) offsetof(struct dk_conf, field)
static const sbx_setting_v1 dk_settings[] = {
    {.key = "socket", .type = SBX_SETTING_STRING, .def = "unix:///var/run/docker.sock",
     .check = check_socket, .offset = DC(socket)},
    {.key = "ca_file", .type = SBX_SETTING_STRING, .offset = DC(ca_file)},
    {.key = "cert_file", .type = SBX_SETTING_STRING, .offset = DC(cert_file)},
    {.key = "key_file", .type = SBX_SETTING_STRING, .offset = DC(key_file)},
    {.key = "image", .type = SBX_SETTING_STRING, .offset = DC(image)},
    {.key = "runtime", .type = SBX_SETTING_STRING, .check = check_runtime,
     .offset = DC(runtime)},
    {.key = "image_aliases", .type = SBX_SETTING_STRING, .offset = DC(aliases)},
    {.key = "cpus", .type = SBX_SETTING_STRING, .def = "1", .check = check_cpus,
     .offset = DC(cpus)},
    {.key = "network", .type = SBX_SETTING_ENUM, .def = "none", .choices = networks,
     .offset = DC(network)},
    {.key = "exec_mode", .type = SBX_SETTING_ENUM, .def = "attach", .choices = exec_modes,
     .offset = DC(exec_mode)},
    /* The core reads and checks it: here only whether it is "allow". */
    {.key = "unenforced_limits", .type = SBX_SETTING_STRING, .offset = DC(unenforced)},
    {.key = "readonly_rootfs", .type = SBX_SETTING_BOOL, .def = "true",
     .offset = DC(readonly_rootfs)},
    /* Pulls (engine/pull.c). */
    {.key = "pull", .type = SBX_SETTING_ENUM, .def = "missing", .choices = pull_policies,
     .offset = DC(pull.policy)},
    {.key = "pull_timeout", .type = SBX_SETTING_DURATION, .def = "300s", .min = "1s",
     .max = "24h", .offset = DC(pull.timeout_ns)},
    {.key = "registry_auth_host", .type = SBX_SETTING_STRING, .check = dk_check_registry_host,
     .offset = DC(pull.auth_host)},
    /* Only whether it is set: the value is opened for each pull, so
     * loading the provider never needs the secret key. */
    {.key = "registry_auth", .type = SBX_SETTING_SECRET, .offset = DC(pull.auth)},
    {.key = NULL},
};
#undef DC

static int dup_to(struct dk_prov *p, const char *v, char **out)
{
    if (v && !(*out = strdup(v)))
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

int dk_read_settings(struct dk_prov *p, ph_client_conf *cc, struct dk_pull_conf *pull)
{
    struct dk_conf c = {0};
    int ret;

    if (!SBX_HOST_HAS(p->eng.host, settings_read))
        return dk_err(&p->eng, SBX_E_INTERNAL, "docker: the core lends no settings_read (ABI 1.9)");
    if ((ret = p->eng.host->settings_read(p->eng.h, dk_settings, sizeof dk_settings[0], &c)))
        return ret;
    if (!strncmp(c.socket, "tcp://", 6)) {
        /* Docker's own spelling: TLS when client certificates are given. */
        const char *scheme = c.cert_file ? "https://" : "http://";
        if (!(p->eng.socket = malloc(strlen(c.socket) + 3)))
            return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
        sprintf(p->eng.socket, "%s%s", scheme, c.socket + 6);
    } else if ((ret = dup_to(p, c.socket, &p->eng.socket))) {
        return ret;
    }
    cc->base_url = p->eng.socket;
    cc->ca_file = c.ca_file;
    cc->cert_file = c.cert_file;
    cc->key_file = c.key_file;
    if (!!cc->cert_file != !!cc->key_file)
        return dk_err(&p->eng, SBX_E_CONFIG, "providers.d/docker.ini: cert_file and key_file go "
                      "together (TLS client certificate and its key)");
    if ((ret = dup_to(p, c.image, &p->image)) || (ret = dup_to(p, c.runtime, &p->runtime)) ||
        (ret = dup_to(p, c.aliases, &p->aliases)))
        return ret;
    p->nano_cpus = (int64_t)(strtod(c.cpus, NULL) * 1e9);
    p->allow_host_net = c.network == 1;
    p->exec_attach = c.exec_mode == 0;
    /* For a core before ABI 1.5, which does not decide, "allow" is ours
     * to honour. */
    p->allow_unenforced = c.unenforced && !strcmp(c.unenforced, "allow");
    p->readonly_rootfs = c.readonly_rootfs;
    *pull = c.pull;
    return SBX_OK;
}
