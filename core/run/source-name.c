/* core/run/source-name.c - a template's commands for code under another name
 *
 * sbx_exec_opts_set_source_name writes the code under the caller's name
 * (a script's own, or a private one for a snippet) instead of the
 * template's source.  The template's words follow when they name the
 * source the plain ways (main.py, main, ./main); a template that names it
 * any other way keeps its own name, since a half-renamed command would
 * run or compile the wrong file, and so does a source not called main.*
 * (a name the language may demand, as Java's Main.java).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "strv.h"
#include "run/template-int.h"

/* @w renamed into a new string, "" when it stays as it is, NULL when it
 * names the old stem some other way (or out of memory: *nomem). */
static char *rename_word(const char *w, const char *src, const char *name,
                         const char *stem, size_t n_stem, const char *new_stem,
                         bool *nomem)
{
    char *s = NULL;

    if (!strcmp(w, src))
        s = strdup(name);
    else if (!strncmp(w, stem, n_stem) && w[n_stem] == '\0')
        s = strdup(new_stem);
    else if (!strncmp(w, "./", 2) && !strncmp(w + 2, stem, n_stem) && w[2 + n_stem] == '\0') {
        size_t n = strlen(new_stem) + 3;
        if ((s = malloc(n)))
            memcpy(s, "./", 2), memcpy(s + 2, new_stem, n - 2);
    } else if (!strstr(w, stem)) {
        s = strdup(w);
    } else {
        return NULL;
    }
    *nomem = s == NULL;
    return s;
}

/* A copy of @words with the source renamed, or NULL (*nomem on ENOMEM). */
static char **rename_words(char *const *words, const char *src, const char *name,
                           const char *stem, size_t n_stem, const char *new_stem, bool *nomem)
{
    size_t n = core_strv_len(words);
    char **v = calloc(n + 1, sizeof *v);

    if (!v) {
        *nomem = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = rename_word(words[i], src, name, stem, n_stem, new_stem, nomem))) {
            core_strv_free(v);
            return NULL;
        }
    return v;
}

int core_source_rename(const char *src, char *const *compile, char *const *run,
                       const char *name, char ***compile_out, char ***run_out)
{
    const char *ext = strrchr(src, '.');
    size_t n_ext = ext ? strlen(ext) : 0, n_name = strlen(name);
    char *stem = NULL, *new_stem = NULL;
    bool nomem = false;

    *compile_out = *run_out = NULL;
    /* no extension to cut a stem at, or a name of another kind: keep.
     * Only a source called main.* is a mere default: another name may be
     * what the language demands (Java's Main.java for class Main). */
    if (!ext || ext == src || (size_t)(ext - src) != 4 || strncmp(src, "main", 4) ||
        n_name <= n_ext || strcmp(name + n_name - n_ext, ext))
        return SBX_E_NOTSUP;
    if (!(stem = strndup(src, (size_t)(ext - src))) ||
        !(new_stem = strndup(name, n_name - n_ext))) {
        free(stem);
        return SBX_E_NOMEM;
    }
    if (compile)
        *compile_out = rename_words(compile, src, name, stem, strlen(stem), new_stem, &nomem);
    if (!nomem && (!compile || *compile_out))
        *run_out = rename_words(run, src, name, stem, strlen(stem), new_stem, &nomem);
    free(stem);
    free(new_stem);
    if (*run_out)
        return SBX_OK;
    core_strv_free(*compile_out);
    *compile_out = NULL;
    return nomem ? SBX_E_NOMEM : SBX_E_NOTSUP;
}
