/* core/strv.c - NULL-terminated string vectors (argv, lists from ini files) */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "strv.h"

size_t core_strv_len(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

void core_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

char **core_strv_dup(const char *const *v)
{
    size_t n = core_strv_len((char *const *)v);
    char **out;

    if (!v)
        return NULL;
    if (!(out = calloc(n + 1, sizeof *out)))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!(out[i] = strdup(v[i]))) {
            core_strv_free(out);
            return NULL;
        }
    }
    return out;
}

int core_strv_push(char ***v, const char *s)
{
    size_t n = core_strv_len(*v);
    char **nv = realloc(*v, (n + 2) * sizeof *nv);

    if (!nv)
        return SBX_E_NOMEM;
    *v = nv;
    nv[n] = strdup(s);
    nv[n + 1] = NULL;
    return nv[n] ? SBX_OK : SBX_E_NOMEM;
}

bool core_strv_has(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}
