/* core/loader/loader.h - loading providers and their host table
 * (core/loader/discover.c, open.c, host.c)
 */
#ifndef POLYSANDBOX_LOADER_LOADER_H
#define POLYSANDBOX_LOADER_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "settings-read.h"

struct sbx_ctx;
struct sbx_provider;

/*
 * core_loader_discover:
 * Find provider modules in cfg->provider_path, build ctx->providers
 * (sorted by [core] order, priority, then name) and judge what needs no
 * module: disabled, enabled without a module, a relative module path.
 * Opens nothing: enabled modules are loaded by core_provider_ensure the
 * first time they are needed.  The array never moves afterwards.  Only
 * allocation failure is returned as an error.
 */
int core_loader_discover(struct sbx_ctx *ctx);
/*
 * core_provider_ensure:
 * Load, validate and init @p unless that was done already (once per
 * context, under ctx->load_lock, so threads may race for it).  Afterwards
 * p->state, reason, reason_code, hidden, desc and ops are final: a failure
 * is remembered with its reason and never retried.  Keeps the calling
 * thread's error as it was.  NULL is fine.
 */
void core_provider_ensure(const struct sbx_provider *p);
/*
 * core_provider_credential_keys:
 * @p's credential keys (its descriptor's secret_keys), NULL-terminated,
 * owned by @p; NULL when its module cannot be read.  A provider that is
 * not ready has its module opened and validated to read them, then closed
 * again, never initialised (once per context, under ctx->load_lock).
 */
const char *const *core_provider_credential_keys(const struct sbx_provider *p);
/* fini every ready provider (reverse order of init); free the array.
 * Modules stay mapped. */
void core_loader_unload_all(struct sbx_ctx *ctx);

const sbx_host_v1 *core_host_table(void);
/* The [settings] entry of @key lent to @h's provider, or NULL (host.c). */
const core_setting *core_host_setting(const sbx_host_handle *h, const char *key);
/* core_settings_read: settings-read.h */

/* Secrets, the host key pair and sealed values: core/secrets/secrets.h.
 * Retries and circuit breakers: core/retry/retry.h. */

#endif /* POLYSANDBOX_LOADER_LOADER_H */
