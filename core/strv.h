/* core/strv.h - NULL-terminated vectors of owned strings (core/strv.c)
 */
#ifndef POLYSANDBOX_STRV_H
#define POLYSANDBOX_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* NULL-terminated vectors of owned strings.  NULL is an empty vector. */
size_t core_strv_len(char *const *v);
void core_strv_free(char **v);
/* A deep copy (NULL in, NULL out; NULL on ENOMEM for a non-NULL @v). */
char **core_strv_dup(const char *const *v);
/* Append a copy of @s; SBX_E_NOMEM on failure (*v stays valid). */
int core_strv_push(char ***v, const char *s);
bool core_strv_has(char *const *v, const char *s);

#endif /* POLYSANDBOX_STRV_H */
