/* core/loader/loader-int.h - what discover.c and open.c share (core/loader/) */
#ifndef SBX_CORE_LOADER_INT_H
#define SBX_CORE_LOADER_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct sbx_provider;

/* "DIR/FILE" (one slash), malloc'd; NULL when out of memory. */
char *core_loader_join_path(const char *dir, const char *file);
/* Free the @n entries of @v and @v. */
void core_loader_free_list(struct sbx_provider *v, size_t n);
/* An optional provider that failed: not listed, not found. */
bool core_loader_hidden(const struct sbx_provider *p);
/*
 * Record why @p is unavailable: "PATH: <message>" (or "CONF: ..." when
 * there is no module path).  Returns SBX_OK, or SBX_E_NOMEM when the
 * message could not be allocated (the state is recorded all the same).
 */
int core_loader_reject(struct sbx_provider *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
