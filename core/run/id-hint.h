/* core/run/id-hint.h - which provider a sandbox id is on (core/run/id-hint.c)
 */
#ifndef POLYSANDBOX_RUN_ID_HINT_H
#define POLYSANDBOX_RUN_ID_HINT_H

#include <polysandbox/sandbox.h>

struct sbx_ctx;

/* Record that @id was created on @provider (best effort: the thread error
 * is left as it was). */
void core_id_hint_put(const struct sbx_ctx *ctx, const char *provider, const char *id);
/* Forget it: destroyed, or not there any more. */
void core_id_hint_drop(const struct sbx_ctx *ctx, const char *provider, const char *id);

#endif /* POLYSANDBOX_RUN_ID_HINT_H */
