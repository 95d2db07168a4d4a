/* plugins/local/daemon/host.c - the host table of polysandbox-locald
 *
 * The local provider's sources run in the daemon with no core.  Their
 * host is the SDK's standalone test host (core/loader/test-host.c,
 * <polysandbox/provider-test.h>), compiled in as the daemon compiles the
 * core's path rule, clock and settings reader (not linked from
 * libpolysandbox, which would bring libcurl, libsodium, libarchive and
 * the rest into a root process).  It holds the settings the client
 * passed with --set (read with the core's own reader), the state
 * directory, the clock and the path rule.  Two slots are the daemon's
 * own: log (stderr with our pid; debug and info only with --verbose),
 * and private_paths (the client's core's, from --hide, which a test host
 * has none of).  A limit that cannot be enforced is refused, as a host
 * without limits_unenforced refuses it; errors are printed as they come.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/provider-test.h>

#include "locald.h"

struct lcl_d_conf lcl_d_conf;

static sbx_test_host *th;
static sbx_host_v1 table;

static void vsay(int level, const char *fmt, va_list ap)
{
    if (!lcl_d_conf.verbose && level > SBX_LOG_WARNING)
        return;
    fprintf(stderr, "polysandbox-locald[%ld]: ", (long)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void lcl_d_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(level, fmt, ap);
    va_end(ap);
}

static void h_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    va_list ap;
    (void)h;
    va_start(ap, fmt);
    vsay(level, fmt, ap);
    va_end(ap);
}

/* The test host records set_error; we also say it. */
static void on_message(void *ud, bool is_error, int n, const char *text)
{
    (void)ud;
    (void)n;
    if (is_error)
        fprintf(stderr, "polysandbox-locald[%ld]: error: %s\n", (long)getpid(), text);
}

static const char *const *h_private_paths(sbx_host_handle *h)
{
    (void)h;
    return lcl_d_conf.hide;
}

int lcl_d_host_open(const sbx_host_v1 **tab, sbx_host_handle **h)
{
    if (!(th = sbx_test_host_new(&sandbox_provider_v1)) ||
        sbx_test_host_set_state_dir(th, lcl_d_conf.state_dir) != SBX_OK) {
        lcl_d_log(SBX_LOG_ERROR, "out of memory");
        return -1;
    }
    for (int i = 0; i < lcl_d_conf.n_sets; i++) {
        const char *kv = lcl_d_conf.sets[i], *eq = strchr(kv, '=');
        char key[64];
        const char *msg = "";
        int n = snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - kv) : 0, kv);
        if (!eq || n <= 0 || (size_t)n >= sizeof key ||
            sbx_test_host_set(th, key, eq + 1) != SBX_OK) {
            sbx_test_host_error(th, &msg);
            lcl_d_log(SBX_LOG_ERROR, "--set '%s': %s", kv, *msg ? msg : "not a setting");
            return -1;
        }
    }
    sbx_test_host_refuse_unenforced(th, true);
    sbx_test_host_watch(th, on_message, NULL);
    table = *sbx_test_host_table(th);
    table.log = h_log;
    table.private_paths = h_private_paths;
    *tab = &table;
    *h = sbx_test_host_handle(th);
    return 0;
}

const char *lcl_d_host_error(void)
{
    const char *msg = "";
    if (th)
        sbx_test_host_error(th, &msg);
    return msg;
}

void lcl_d_host_close(void)
{
    sbx_test_host_free(th);
    th = NULL;
}
