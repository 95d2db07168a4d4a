/* core/loader/host.c - the host table lent to providers (sbx_host_v1) */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "config/unenforced.h"
#include "context.h"
#include "secrets/secrets.h"
#include "clock.h"
#include "path-check.h"
#include "settings-read.h"
#include "loader/loader.h"
#include "provider-int.h"

static const char *handle_name(const sbx_host_handle *h)
{
    return (h && h->prov && h->prov->name) ? h->prov->name : "?";
}

/* Log threshold from POLYSANDBOX_LOG (error, warning, info, debug). */
static int log_threshold(void)
{
    const char *v = secure_getenv("POLYSANDBOX_LOG");
    if (!v || !*v)
        return SBX_LOG_WARNING;
    if (!strcmp(v, "error"))
        return SBX_LOG_ERROR;
    if (!strcmp(v, "info"))
        return SBX_LOG_INFO;
    if (!strcmp(v, "debug"))
        return SBX_LOG_DEBUG;
    return SBX_LOG_WARNING;
}

static void host_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char line[CORE_MSG_MAX];
    va_list ap;

    if (level > log_threshold())
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (level < 0 || level > SBX_LOG_DEBUG)
        level = SBX_LOG_DEBUG;
    /* One fprintf per line so concurrent threads do not interleave. */
    fprintf(stderr, "polysandbox: %s: %s: %s\n", handle_name(h), names[level], line);
}

static int host_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    core_error_vset(code, handle_name(h), fmt, ap);
    va_end(ap);
    return code;
}

const core_setting *core_host_setting(const sbx_host_handle *h, const char *key)
{
    const core_provider_conf *c;

    if (!h || !h->prov || !key)
        return NULL;
    c = h->prov->conf;
    if (!c)
        return NULL;
    for (size_t i = 0; i < c->n_settings; i++)
        if (!strcmp(c->settings[i].key, key))
            return &c->settings[i];
    return NULL;
}

static const char *host_config_get(sbx_host_handle *h, const char *key)
{
    const core_setting *s = core_host_setting(h, key);
    return s ? s->value : NULL;
}

static int host_secret_get(sbx_host_handle *h, const char *key,
                           const char **out, size_t *len)
{
    const core_setting *s = core_host_setting(h, key);

    if (!s)
        return core_error_set(SBX_E_NOT_FOUND, handle_name(h),
                              "credential '%s' is not set in providers.d/%s.ini",
                              key, handle_name(h));
    return core_secret_open(h->ctx, s, out, len);
}

static void host_secret_release(sbx_host_handle *h, const char *value)
{
    (void)h;
    core_secret_release(value);
}

static void *host_alloc(size_t size)
{
    return malloc(size ? size : 1);
}

static void host_free(void *p)
{
    free(p);
}

static const char *host_state_dir(sbx_host_handle *h)
{
    return (h && h->prov) ? h->prov->state_dir : NULL;
}

/* Both describe the error of the op now failing on this thread (the core
 * clears them with the error before each op). */
static void host_retry_after(sbx_host_handle *h, uint64_t ms)
{
    (void)h;
    core_error_tls()->retry_after_ns =
        ms > UINT64_MAX / 1000000u ? UINT64_MAX : ms * 1000000u;
}

static void host_not_started(sbx_host_handle *h)
{
    (void)h;
    core_error_tls()->not_started = true;
}

static const char *const *host_private_paths(sbx_host_handle *h)
{
    static const char *const none[] = { NULL };
    return h && h->ctx && h->ctx->cfg.private_paths
               ? (const char *const *)h->ctx->cfg.private_paths : none;
}

static const core_setting *handle_lookup(void *ud, const char *key)
{
    return core_host_setting(ud, key);
}

/* The provider's [settings] through core_settings_read (host-settings.c),
 * which knows no context, so that polysandbox-locald builds it in too. */
static int host_settings_read(sbx_host_handle *h, const sbx_setting_v1 *table,
                              size_t entry_size, void *base)
{
    if (!h || !h->prov)
        return core_error_set(SBX_E_INVAL, NULL, "settings_read: NULL handle");
    return core_settings_read(h->prov->name, h->prov->desc.config_keys,
                              h->prov->desc.secret_keys, handle_lookup, h, table, entry_size,
                              base);
}

static int host_path_check(sbx_host_handle *h, const char *path)
{
    char msg[CORE_MSG_MAX];
    int rc = core_path_check(path, msg, sizeof msg);

    return rc == SBX_OK ? SBX_OK : core_error_set(rc, handle_name(h), "%s", msg);
}

static uint64_t host_clock_ns(sbx_host_handle *h)
{
    (void)h;
    return core_now_ns();
}

static const sbx_host_v1 host_table = {
    .struct_size = sizeof(sbx_host_v1),
    .abi_major = SBX_ABI_MAJOR,
    .abi_minor = SBX_ABI_MINOR,
    .log = host_log,
    .set_error = host_set_error,
    .config_get = host_config_get,
    .secret_get = host_secret_get,
    .secret_release = host_secret_release,
    .alloc = host_alloc,
    .free = host_free,
    .state_dir = host_state_dir,
    .retry_after = host_retry_after,
    .not_started = host_not_started,
    .limits_unenforced = core_host_limits_unenforced,
    .private_paths = host_private_paths,
    .settings_read = host_settings_read,
    .path_check = host_path_check,
    .clock_ns = host_clock_ns,
};

const sbx_host_v1 *core_host_table(void)
{
    return &host_table;
}
