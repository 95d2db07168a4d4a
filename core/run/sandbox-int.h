/* core/run/sandbox-int.h - providers and sandboxes for the core's entry points
 * (core/run/context.c, sandbox.c)
 */
#ifndef POLYSANDBOX_RUN_SANDBOX_INT_H
#define POLYSANDBOX_RUN_SANDBOX_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <polysandbox/sandbox.h>

#include "conf.h"

struct sbx_ctx;

/* The ready provider @name, loaded now if it was not yet (see
 * core_provider_ensure), or NULL with the thread error set
 * (SBX_E_NOT_FOUND or SBX_E_PROVIDER_UNAVAILABLE). */
struct sbx_provider *core_provider_get(const struct sbx_ctx *ctx, const char *name);

/* The ready provider @provider, or the default one when NULL; NULL with
 * the thread error set. */
struct sbx_provider *core_provider_or_default(sbx_ctx *ctx, const char *provider);
/* Report a failure of @op on @p, filling in a message when the provider
 * left none; returns @rc (SBX_E_INTERNAL for SBX_OK). */
int core_provider_failed(const struct sbx_provider *p, const char *op, int rc);
/* One try at destroying the sandbox @id of @p whose handle is gone:
 * attach, then destroy.  SBX_OK when it is destroyed or was gone. */
int core_destroy_by_id(struct sbx_provider *p, const char *id);
/* For sbx_run (core/api/run.c), which joins sandboxes and pools: */
/* The template @name, or NULL with the thread error naming the known ones. */
const core_template_conf *core_find_template(const sbx_ctx *ctx, const char *name);
/* Create a sandbox for @o (provider chosen, fallback chain, retries and
 * breakers) by @deadline; *backend_failed tells a failure of the backend
 * from one of the request. */
int core_sandbox_create(sbx_ctx *ctx, const sbx_create_opts *o, uint64_t deadline,
                        sbx_sandbox **out, bool *backend_failed);
/* Run @o in @sb into the result @r (its status, output and timings). */
int core_sandbox_exec(sbx_sandbox *sb, const sbx_exec_opts *o, sbx_result *r);
/* The result of a run or exec its caller cancelled: not a verdict. */
void core_result_set_cancelled(sbx_result *r);

#endif /* POLYSANDBOX_RUN_SANDBOX_INT_H */
