/* plugins/local/daemon/host.c - the host table of polysandbox-locald
 *
 * The local provider's sources run in the daemon with no core: this is
 * the host they are given.  Its settings are what the client passed with
 * --set (read from the same file, with the core's own reader), its
 * private paths those of --hide; the path rule and the clock are the
 * core's (core/path-check.c, core/clock.c), built in.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "locald.h"
#include <polysandbox/sandbox.h>

#include "clock.h"
#include "path-check.h"
#include "settings-read.h"


struct sbx_host_handle lcl_d_hh;

void lcl_d_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    if (!h->verbose && level > SBX_LOG_WARNING)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "polysandbox-locald[%ld]: ", (long)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int h_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "polysandbox-locald[%ld]: error: ", (long)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    (void)h;
    return code;
}

static const char *h_config_get(sbx_host_handle *h, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < h->n_sets; i++)
        if (!strncmp(h->sets[i], key, kl) && h->sets[i][kl] == '=')
            return h->sets[i] + kl + 1;
    return NULL;
}

static int h_secret_get(sbx_host_handle *h, const char *key, const char **out, size_t *len)
{
    (void)h;
    (void)key;
    *out = NULL;
    *len = 0;
    return SBX_E_NOT_FOUND;
}

static void h_secret_release(sbx_host_handle *h, const char *v)
{
    (void)h;
    (void)v;
}

static const char *h_state_dir(sbx_host_handle *h)
{
    return h->state_dir;
}

static void h_retry_after(sbx_host_handle *h, uint64_t ms)
{
    (void)h;
    (void)ms;
}

static void h_not_started(sbx_host_handle *h)
{
    (void)h;
}

static const char *const *h_private_paths(sbx_host_handle *h)
{
    return h->hide;
}

/* The provider's [settings] as the core reads them (core/host-settings.c,
 * built into the daemon with units.c and error.c): the values the client
 * passed with --set, which it read from the same file. */
static const core_setting *h_lookup(void *ud, const char *key)
{
    static _Thread_local core_setting s;
    const char *v = h_config_get(ud, key);

    s = (core_setting){ .key = (char *)key, .value = (char *)v, .file = "--set", .line = 0 };
    return v ? &s : NULL;
}

static int h_settings_read(sbx_host_handle *h, const sbx_setting_v1 *table, size_t entry_size,
                           void *base)
{
    const sbx_provider_v1 *d = &sandbox_provider_v1;
    int rc = core_settings_read(d->name, d->config_keys, d->secret_keys, h_lookup, h, table,
                                entry_size, base);

    return rc == SBX_OK ? SBX_OK
                        : h_set_error(h, rc, "%s", sbx_error_message(sbx_ctx_last_error(NULL)));
}

/* The core's own rule and clock, built into the daemon (core/path-check.c,
 * core/clock.c depend on nothing else of the core). */
static int h_path_check(sbx_host_handle *h, const char *path)
{
    char msg[1024];
    int rc = core_path_check(path, msg, sizeof msg);
    return rc == SBX_OK ? SBX_OK : h_set_error(h, rc, "%s", msg);
}

static uint64_t h_clock_ns(sbx_host_handle *h)
{
    (void)h;
    return core_now_ns();
}

const sbx_host_v1 lcl_d_host = {
    .struct_size = sizeof(sbx_host_v1),
    .abi_major = SBX_ABI_MAJOR,
    .abi_minor = SBX_ABI_MINOR,
    .log = lcl_d_log,
    .set_error = h_set_error,
    .config_get = h_config_get,
    .secret_get = h_secret_get,
    .secret_release = h_secret_release,
    .alloc = malloc,
    .free = free,
    .state_dir = h_state_dir,
    .retry_after = h_retry_after,
    .not_started = h_not_started,
    .private_paths = h_private_paths,
    .settings_read = h_settings_read,
    .path_check = h_path_check,
    .clock_ns = h_clock_ns,
};
