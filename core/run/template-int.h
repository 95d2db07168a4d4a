/* core/run/template-int.h - a template's words and environment for a run
 * (core/run/source-name.c, template-cache.c)
 */
#ifndef POLYSANDBOX_RUN_TEMPLATE_INT_H
#define POLYSANDBOX_RUN_TEMPLATE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "conf.h"

struct sbx_provider;

/* The template words @compile (may be NULL) and @run for code written
 * under @name instead of the template's source @src (source-name.c).
 * SBX_OK with new vectors (transfer full), SBX_E_NOTSUP when the template
 * keeps its own name (nothing to free), SBX_E_NOMEM. */
int core_source_rename(const char *src, char *const *compile, char *const *run, const char *name,
                       char ***compile_out, char ***run_out);

/* Whether the build cache @tc's GOENV names was warmed by another go
 * than the host's (its stamp, DIR/version, against `go env GOVERSION`):
 * then @why (optional) says so and how to rebuild it
 * (core/run/template-cache.c). */
bool core_template_cache_stale(const core_template_conf *tc, char *why, size_t why_size);
/* Add @t's environment to @env (a core_kvlist), with GOENV=off in place
 * of a stale cache's on a provider @p that runs the host's go; says so
 * on stderr once per process.  SBX_E_NOMEM (not set). */
struct core_kvlist;
int core_template_env_add(const struct sbx_provider *p, const core_template_conf *t,
                          struct core_kvlist *env);

#endif /* POLYSANDBOX_RUN_TEMPLATE_INT_H */
