/* core/run/orphans.h - sandboxes the core failed to destroy (core/run/orphans.c)
 */
#ifndef POLYSANDBOX_RUN_ORPHANS_H
#define POLYSANDBOX_RUN_ORPHANS_H

struct sbx_ctx;
struct sbx_provider;

/* Keep @id of @p, whose destroy failed after its retries, to destroy it
 * later: one more try after each later successful destroy on @p, and all
 * of them, with retries, when the context is freed.  Never touches the
 * thread's error. */
void core_orphan_keep(struct sbx_ctx *ctx, struct sbx_provider *p, const char *id);
/* One try at one kept sandbox of @p (a destroy on @p just succeeded). */
void core_orphans_retry_one(struct sbx_ctx *ctx, struct sbx_provider *p);
/* Destroy every kept sandbox, with retries; log those that still fail
 * (their time-to-live reaps them).  Called by sbx_ctx_free. */
void core_orphans_reap(struct sbx_ctx *ctx);

#endif /* POLYSANDBOX_RUN_ORPHANS_H */
