/* core/config/config-values.c - value parsers and setters the configuration's
 * sections share
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "retry/retry.h"
#include "strv.h"
#include "conf.h"
#include "settings-read.h"

char *core_cfg_path_join(const char *dir, const char *name)
{
    char *p;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

bool core_cfg_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Names of providers: [a-z0-9_]+.  Templates may also use '+' and '-'. */
bool core_cfg_valid_name(const char *s, const char *extra)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              (extra && strchr(extra, *s))))
            return false;
    }
    return true;
}

int core_cfg_split_list(const char *s, const char *seps, char ***out)
{
    char **v = NULL;
    const char *p = s;

    while (*p) {
        size_t n = strcspn(p, seps);
        if (n > 0) {
            char *item = strndup(p, n);
            int rc = item ? core_strv_push(&v, item) : SBX_E_NOMEM;
            free(item);
            if (rc != SBX_OK) {
                core_strv_free(v);
                return rc;
            }
        }
        p += n;
        if (*p)
            p++;
    }
    *out = v;
    return SBX_OK;
}

/*
 * A list of absolute directories separated by ':'.  An empty entry would
 * mean the current directory to a shell; here it is refused, as is any
 * relative entry: the current directory is never searched.
 */
int core_cfg_parse_dir_list(loader *ld, const where *w, const char *what, const char *s,
                            char ***out)
{
    char **v = NULL;
    size_t len = strlen(s);

    if (len > 0 && (s[0] == ':' || s[len - 1] == ':' || strstr(s, "::")))
        return core_cfg_err(ld, SBX_E_CONFIG, w, "empty directory in %s '%s' (the "
                            "current directory is never searched)", what, s);
    if (core_cfg_split_list(s, ":", &v) != SBX_OK)
        return core_cfg_nomem(ld);
    for (size_t i = 0; v && v[i]; i++) {
        if (v[i][0] != '/') {
            core_cfg_err(ld, SBX_E_CONFIG, w, "relative directory '%s' in %s (only "
                         "absolute directories are searched)", v[i], what);
            core_strv_free(v);
            return ld->rc;
        }
    }
    *out = v;
    return SBX_OK;
}

int core_cfg_replace_str(loader *ld, char **slot, const char *value)
{
    char *copy = NULL;

    if (value && !(copy = strdup(value)))
        return core_cfg_nomem(ld);
    free(*slot);
    *slot = copy;
    return SBX_OK;
}

int core_cfg_add_setting(loader *ld, core_setting **v, size_t *n, const where *w,
                         const char *key, const char *value)
{
    core_setting *ns = realloc(*v, (*n + 1) * sizeof *ns);

    if (!ns)
        return core_cfg_nomem(ld);
    *v = ns;
    core_setting *s = &ns[*n];
    memset(s, 0, sizeof *s);
    s->key = strdup(key);
    s->value = strdup(value);
    s->file = strdup(w->name);
    s->line = w->line;
    (*n)++;
    if (!s->key || !s->value || !s->file)
        return core_cfg_nomem(ld);
    return SBX_OK;
}

void core_cfg_settings_free(core_setting *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
        free(v[i].file);
    }
    free(v);
}

/* [retry] and [breaker], in polysandbox.ini or a providers.d/ file. */
int core_cfg_apply_resil(loader *ld, const where *w, core_resil_conf *c, const char *section,
                         const char *key, const char *value)
{
    const char *why = NULL;
    int rc = core_resil_apply(c, section, key, value, &why);

    if (rc == SBX_E_NOT_FOUND)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown key '%s' in [%s] (known: %s)", key,
                            section, core_resil_keys(section));
    if (rc != SBX_OK)
        return core_cfg_err(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in [%s]: %s", value,
                            key, section, why);
    return SBX_OK;
}

/* secure_getenv: a set-id program must not take its configuration from
 * whoever runs it.  An empty variable counts as unset. */
const char *core_cfg_getenv(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}
