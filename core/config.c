/* core/config.c - polysandbox.ini, providers.d/ and templates.d/ into a
 * core_config
 *
 * Layers, later wins: built-in defaults < the configuration directory <
 * $XDG_CONFIG_HOME/polysandbox < environment < command-line overrides.
 * Every value is checked where it is read, and every error names the file
 * and line (or "environment (VAR)", "command line") it came from.
 *
 * inih does the tokenising.  It is fed through our own line reader: that
 * counts lines (Debian's inih is built without INI_HANDLER_LINENO), turns
 * lines too long for inih's fixed buffer into an error instead of a silent
 * truncation, and strips leading blanks so that an indented line is never
 * glued to the previous value as a continuation.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core-int.h"

#define MAIN_INI "polysandbox.ini"
/* inih reads lines into a fixed 200-byte buffer; a longer "key = value"
 * line reaches it as "key = LONG_VALUE" while the loader keeps the value
 * (a sealed credential is longer than that). */
#define LINE_MAX_CHARS 65536
#define LONG_VALUE "\x01"
#define BUILTIN "(built-in)"
/* Where templates look for their interpreters and compilers. */
#define TEMPLATE_PATH "/usr/local/bin:/usr/bin:/bin"

/* ---- limits --------------------------------------------------------------- */

enum limit_kind { LK_DURATION, LK_SIZE, LK_COUNT };

static const struct limit_info {
    const char *key;
    enum limit_kind kind;
    const char *def;    /* built-in default, as a user would write it */
    const char *max;    /* built-in maximum */
} limit_info[SBX_LIMIT_COUNT] = {
    [SBX_LIMIT_WALL]   = { "wall",   LK_DURATION, "10s",  "300s" },
    [SBX_LIMIT_CPU]    = { "cpu",    LK_DURATION, "10s",  "300s" },
    [SBX_LIMIT_MEMORY] = { "memory", LK_SIZE,     "512M", "8G" },
    [SBX_LIMIT_PIDS]   = { "pids",   LK_COUNT,    "128",  "4096" },
    [SBX_LIMIT_NOFILE] = { "nofile", LK_COUNT,    "256",  "65536" },
    [SBX_LIMIT_FSIZE]  = { "fsize",  LK_SIZE,     "64M",  "1G" },
    [SBX_LIMIT_DISK]   = { "disk",   LK_SIZE,     "256M", "4G" },
    [SBX_LIMIT_STDOUT] = { "stdout", LK_SIZE,     "1M",   "64M" },
    [SBX_LIMIT_STDERR] = { "stderr", LK_SIZE,     "1M",   "64M" },
};

const char *core_limit_key(sbx_limit which)
{
    if ((unsigned)which >= SBX_LIMIT_COUNT)
        return NULL;
    return limit_info[which].key;
}

static int parse_limit(sbx_limit i, const char *s, uint64_t *v, const char **why)
{
    switch (limit_info[i].kind) {
    case LK_DURATION:
        return core_parse_duration(s, false, v, why);
    case LK_SIZE:
        return core_parse_size(s, false, v, why);
    case LK_COUNT:
    default:
        return core_parse_count(s, false, v, why);
    }
}

#define CORE_KEYS "default_provider, order, fallback, provider_path, state_dir, pools"
#define LIMIT_KEYS "wall, cpu, memory, pids, nofile, fsize, disk, stdout, " \
    "stderr and max_ of each"
#define PROVIDER_KEYS "enabled, optional, priority, module"
#define TEMPLATE_KEYS "extensions, source, compile, run, image"
#define POOL_SECTIONS "[pool], [limits]"

/* ---- the loader's state --------------------------------------------------- */

enum file_kind { FK_MAIN, FK_PROVIDER, FK_TEMPLATE, FK_POOL };

/* Where a value came from: a file and line, or "environment (VAR)" or
 * "command line" with line 0. */
typedef struct where {
    const char *name;
    int line;
} where;

struct seen_key {
    char *key;      /* "section\nname" */
    int line;
};

typedef struct loader {
    core_config *cfg;
    int rc;                     /* first error, SBX_OK while none */
    int err_line;               /* its line within the current file, or 0 */
    char msg[CORE_MSG_MAX];

    /* the file being parsed */
    where at;
    enum file_kind kind;
    core_provider_conf *prov;
    core_template_conf *tmpl;
    core_pool_conf *pool;
    struct seen_key *seen;      /* keys of this file, for duplicates */
    size_t n_seen;

    /* where each limit and maximum was last set, and as what text */
    char *lim_where[2][SBX_LIMIT_COUNT];
    char *lim_text[2][SBX_LIMIT_COUNT];

    char **ini_path;            /* [core] provider_path, last writer wins */
    char **env_path;            /* $POLYSANDBOX_PROVIDER_PATH */

    char *line;                 /* read_line's buffer, LINE_MAX_CHARS + 1 */
    char *long_value;           /* the value of the last line too long for inih */
} loader;

static int lerr(loader *ld, int code, const where *w, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record the first error; later ones are consequences and are dropped. */
static int lerr(loader *ld, int code, const where *w, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (ld->rc != SBX_OK)
        return ld->rc;
    ld->rc = code;
    ld->err_line = w ? w->line : 0;
    if (!w)
        n = 0;
    else if (w->line > 0)
        n = snprintf(ld->msg, sizeof ld->msg, "%s:%d: ", w->name, w->line);
    else
        n = snprintf(ld->msg, sizeof ld->msg, "%s: ", w->name);
    if (n < 0 || (size_t)n >= sizeof ld->msg)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(ld->msg + n, sizeof ld->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

static int nomem(loader *ld)
{
    return lerr(ld, SBX_E_NOMEM, NULL, "out of memory reading the configuration");
}

/* ---- small helpers -------------------------------------------------------- */

static char *path_join(const char *dir, const char *name)
{
    char *p;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Names of providers: [a-z0-9_]+.  Templates may also use '+' and '-'. */
static bool valid_name(const char *s, const char *extra)
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

static bool valid_env_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/*
 * Split @s at any of @seps into a NULL-terminated list (NULL when empty).
 * Empty items between separators are skipped.
 */
static int split_list(const char *s, const char *seps, char ***out)
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
static int parse_dir_list(loader *ld, const where *w, const char *what,
                          const char *s, char ***out)
{
    char **v = NULL;
    size_t len = strlen(s);

    if (len > 0 && (s[0] == ':' || s[len - 1] == ':' || strstr(s, "::")))
        return lerr(ld, SBX_E_CONFIG, w, "empty directory in %s '%s' (the "
                    "current directory is never searched)", what, s);
    if (split_list(s, ":", &v) != SBX_OK)
        return nomem(ld);
    for (size_t i = 0; v && v[i]; i++) {
        if (v[i][0] != '/') {
            lerr(ld, SBX_E_CONFIG, w, "relative directory '%s' in %s (only "
                 "absolute directories are searched)", v[i], what);
            core_strv_free(v);
            return ld->rc;
        }
    }
    *out = v;
    return SBX_OK;
}

/* A list of provider names, separated by commas and/or blanks. */
static int parse_name_list(loader *ld, const where *w, const char *key,
                           const char *s, char ***out)
{
    char **v = NULL;

    if (split_list(s, ", \t", &v) != SBX_OK)
        return nomem(ld);
    for (size_t i = 0; v && v[i]; i++) {
        if (!valid_name(v[i], NULL)) {
            lerr(ld, SBX_E_CONFIG, w, "bad provider name '%s' in %s (use "
                 "a-z, 0-9 and _)", v[i], key);
            core_strv_free(v);
            return ld->rc;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(v[i], v[j]) == 0) {
                lerr(ld, SBX_E_CONFIG, w, "provider '%s' is listed twice in %s",
                     v[i], key);
                core_strv_free(v);
                return ld->rc;
            }
        }
    }
    *out = v;
    return SBX_OK;
}

static int parse_int(const char *s, int *out, const char **why)
{
    char *end;
    long v;

    if (!*s) {
        *why = "empty value";
        return SBX_E_CONFIG;
    }
    if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'))) {
        *why = "not a number";
        return SBX_E_CONFIG;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end || end == s) {
        *why = "not a whole number";
        return SBX_E_CONFIG;
    }
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
        *why = "out of range";
        return SBX_E_CONFIG;
    }
    *out = (int)v;
    return SBX_OK;
}

/*
 * Split a command line into argv: blanks separate words, '...' is
 * literal, "..." allows \" and \\, a backslash outside quotes escapes the
 * next character.  No variables, globs or other shell syntax.
 */
static int split_argv(const char *s, char ***out, const char **why)
{
    size_t len = strlen(s);
    char *word = malloc(len + 1);
    char **v = NULL;
    const char *p = s;

    *why = NULL;
    if (!word)
        return SBX_E_NOMEM;
    while (*p) {
        size_t n = 0;
        bool in_word = false;

        while (is_blank(*p))
            p++;
        while (*p && !is_blank(*p)) {
            in_word = true;
            if (*p == '\'') {
                const char *q = strchr(p + 1, '\'');
                if (!q) {
                    *why = "unterminated ' quote";
                    goto fail;
                }
                memcpy(word + n, p + 1, (size_t)(q - p - 1));
                n += (size_t)(q - p - 1);
                p = q + 1;
            } else if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                        p++;
                    word[n++] = *p;
                }
                if (*p != '"') {
                    *why = "unterminated \" quote";
                    goto fail;
                }
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    *why = "a backslash at the end";
                    goto fail;
                }
                word[n++] = p[1];
                p += 2;
            } else {
                word[n++] = *p++;
            }
        }
        if (in_word) {
            word[n] = '\0';
            if (core_strv_push(&v, word) != SBX_OK)
                goto fail;
        }
    }
    if (!v) {
        *why = "empty command";
        goto fail;
    }
    free(word);
    *out = v;
    return SBX_OK;
fail:
    free(word);
    core_strv_free(v);
    return *why ? SBX_E_CONFIG : SBX_E_NOMEM;
}

/* ---- freeing ---------------------------------------------------------------- */

static void setting_free(core_setting *s)
{
    free(s->key);
    free(s->value);
    free(s->file);
}

static void provider_conf_free(core_provider_conf *p)
{
    free(p->name);
    free(p->file);
    free(p->module);
    for (size_t i = 0; i < p->n_settings; i++)
        setting_free(&p->settings[i]);
    free(p->settings);
    memset(p, 0, sizeof *p);
}

static void template_conf_free(core_template_conf *t)
{
    free(t->name);
    free(t->file);
    core_strv_free(t->extensions);
    free(t->source);
    core_strv_free(t->compile);
    core_strv_free(t->run);
    free(t->image);
    for (size_t i = 0; i < t->n_env; i++) {
        free((char *)t->env[i].key);
        free((char *)t->env[i].value);
    }
    free(t->env);
    memset(t, 0, sizeof *t);
}

static void pool_conf_free(core_pool_conf *p)
{
    free(p->name);
    free(p->file);
    for (size_t i = 0; i < p->n_settings; i++)
        setting_free(&p->settings[i]);
    free(p->settings);
    memset(p, 0, sizeof *p);
}

void core_config_free(core_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->dir);
    free(cfg->default_provider);
    core_strv_free(cfg->provider_order);
    core_strv_free(cfg->fallback);
    core_strv_free(cfg->provider_path);
    free(cfg->state_dir);
    for (size_t i = 0; i < cfg->n_providers; i++)
        provider_conf_free(&cfg->providers[i]);
    free(cfg->providers);
    for (size_t i = 0; i < cfg->n_templates; i++)
        template_conf_free(&cfg->templates[i]);
    free(cfg->templates);
    for (size_t i = 0; i < cfg->n_pools; i++)
        pool_conf_free(&cfg->pools[i]);
    free(cfg->pools);
    memset(cfg, 0, sizeof *cfg);
}

static void seen_clear(loader *ld)
{
    for (size_t i = 0; i < ld->n_seen; i++)
        free(ld->seen[i].key);
    free(ld->seen);
    ld->seen = NULL;
    ld->n_seen = 0;
}

static void loader_free(loader *ld)
{
    seen_clear(ld);
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
            free(ld->lim_where[m][i]);
            free(ld->lim_text[m][i]);
        }
    }
    core_strv_free(ld->ini_path);
    core_strv_free(ld->env_path);
    free(ld->line);
    free(ld->long_value);
}

/* ---- [core] and [limits]: shared by files, environment, command line -------- */

static int replace_str(loader *ld, char **slot, const char *value)
{
    char *copy = NULL;

    if (value && !(copy = strdup(value)))
        return nomem(ld);
    free(*slot);
    *slot = copy;
    return SBX_OK;
}

static int apply_core(loader *ld, const where *w, const char *key,
                      const char *value)
{
    core_config *cfg = ld->cfg;
    char **list = NULL;

    if (strcmp(key, "default_provider") == 0) {
        if (*value && !valid_name(value, NULL))
            return lerr(ld, SBX_E_CONFIG, w, "bad provider name '%s' for "
                        "default_provider (use a-z, 0-9 and _)", value);
        return replace_str(ld, &cfg->default_provider, *value ? value : NULL);
    }
    if (strcmp(key, "order") == 0 || strcmp(key, "fallback") == 0) {
        if (parse_name_list(ld, w, key, value, &list) != SBX_OK)
            return ld->rc;
        char ***slot = key[0] == 'o' ? &cfg->provider_order : &cfg->fallback;
        core_strv_free(*slot);
        *slot = list;
        return SBX_OK;
    }
    if (strcmp(key, "provider_path") == 0) {
        if (parse_dir_list(ld, w, "provider_path", value, &list) != SBX_OK)
            return ld->rc;
        core_strv_free(ld->ini_path);
        ld->ini_path = list;
        return SBX_OK;
    }
    if (strcmp(key, "state_dir") == 0) {
        if (value[0] != '/')
            return lerr(ld, SBX_E_CONFIG, w, "state_dir '%s' must be an "
                        "absolute directory", value);
        return replace_str(ld, &cfg->state_dir, value);
    }
    if (strcmp(key, "pools") == 0) {
        bool on;
        const char *why = NULL;
        if (core_parse_bool(value, &on, &why) != SBX_OK)
            return lerr(ld, SBX_E_CONFIG, w, "bad value '%s' for pools in [core]: %s",
                        value, why);
        cfg->pools_off = !on;
        return SBX_OK;
    }
    return lerr(ld, SBX_E_CONFIG, w, "unknown key '%s' in [core] (known: "
                CORE_KEYS ")", key);
}

static int apply_limit(loader *ld, const where *w, const char *key,
                       const char *value)
{
    const char *name = key;
    const char *why = NULL;
    int m = 0;
    uint64_t v;
    char *wh, *text;

    if (strncmp(key, "max_", 4) == 0) {
        m = 1;
        name += 4;
    }
    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (strcmp(name, limit_info[i].key) != 0)
            continue;
        if (parse_limit((sbx_limit)i, value, &v, &why) != SBX_OK)
            return lerr(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in "
                        "[limits]: %s", value, key, why);
        (m ? ld->cfg->max_limits : ld->cfg->limits)[i] = v;
        if (w->line > 0) {
            if (asprintf(&wh, "%s:%d", w->name, w->line) < 0)
                return nomem(ld);
        } else if (!(wh = strdup(w->name))) {
            return nomem(ld);
        }
        if (!(text = strdup(value))) {
            free(wh);
            return nomem(ld);
        }
        free(ld->lim_where[m][i]);
        free(ld->lim_text[m][i]);
        ld->lim_where[m][i] = wh;
        ld->lim_text[m][i] = text;
        return SBX_OK;
    }
    return lerr(ld, SBX_E_CONFIG, w, "unknown key '%s' in [limits] (known: "
                LIMIT_KEYS ")", key);
}

/* [retry] and [breaker], in polysandbox.ini or a providers.d/ file. */
static int apply_resil(loader *ld, const where *w, core_resil_conf *c,
                       const char *section, const char *key, const char *value)
{
    const char *why = NULL;
    int rc = core_resil_apply(c, section, key, value, &why);

    if (rc == SBX_E_NOT_FOUND)
        return lerr(ld, SBX_E_CONFIG, w, "unknown key '%s' in [%s] (known: %s)", key,
                    section, core_resil_keys(section));
    if (rc != SBX_OK)
        return lerr(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in [%s]: %s", value,
                    key, section, why);
    return SBX_OK;
}
static int apply_pool_override(loader *ld, const where *w, const char *key,
                               const char *value);

static int apply_provider_override(loader *ld, const where *w, const char *key,
                                   const char *value);

static int apply_main(loader *ld, const where *w, const char *section,
                      const char *key, const char *value)
{
    if (strcmp(section, "retry") == 0 || strcmp(section, "breaker") == 0)
        return apply_resil(ld, w, &ld->cfg->resil, section, key, value);
    if (strcmp(section, "core") == 0)
        return apply_core(ld, w, key, value);
    if (strcmp(section, "limits") == 0)
        return apply_limit(ld, w, key, value);
    if (strcmp(section, "pool") == 0)
        return apply_pool_override(ld, w, key, value);
    if (strcmp(section, "provider") == 0 && w->line == 0)
        return apply_provider_override(ld, w, key, value);
    return lerr(ld, SBX_E_CONFIG, w, "unknown section [%s] (known: [core], "
                "[limits], [retry], [breaker])", section);
}

/* ---- providers.d/NAME.ini ------------------------------------------------------ */

static int apply_provider(loader *ld, const char *section, const char *key,
                          const char *value)
{
    core_provider_conf *p = ld->prov;
    const where *w = &ld->at;
    const char *why = NULL;

    if (strcmp(section, "settings") == 0) {
        core_setting *ns = realloc(p->settings, (p->n_settings + 1) * sizeof *ns);
        if (!ns)
            return nomem(ld);
        p->settings = ns;
        core_setting *s = &ns[p->n_settings];
        memset(s, 0, sizeof *s);
        s->key = strdup(key);
        s->value = strdup(value);
        s->file = strdup(w->name);
        s->line = w->line;
        p->n_settings++;
        if (!s->key || !s->value || !s->file)
            return nomem(ld);
        return SBX_OK;
    }
    if (strcmp(section, "retry") == 0 || strcmp(section, "breaker") == 0)
        return apply_resil(ld, w, &p->resil, section, key, value);
    if (strcmp(section, "provider") != 0)
        return lerr(ld, SBX_E_CONFIG, w, "unknown section [%s] (known: "
                    "[provider], [settings], [retry], [breaker])", section);

    if (strcmp(key, "enabled") == 0 || strcmp(key, "optional") == 0) {
        bool b;
        if (core_parse_bool(value, &b, &why) != SBX_OK)
            return lerr(ld, SBX_E_CONFIG, w, "bad value '%s' for %s in "
                        "[provider]: %s", value, key, why);
        *(key[0] == 'e' ? &p->enabled : &p->optional) = b;
        return SBX_OK;
    }
    if (strcmp(key, "priority") == 0) {
        if (parse_int(value, &p->priority, &why) != SBX_OK)
            return lerr(ld, SBX_E_CONFIG, w, "bad value '%s' for priority in "
                        "[provider]: %s", value, why);
        return SBX_OK;
    }
    if (strcmp(key, "module") == 0) {
        if (value[0] != '/')
            return lerr(ld, SBX_E_CONFIG, w, "module '%s' must be an absolute "
                        "path", value);
        return replace_str(ld, &p->module, value);
    }
    return lerr(ld, SBX_E_CONFIG, w, "unknown key '%s' in [provider] (known: "
                PROVIDER_KEYS ")", key);
}

/* ---- templates.d/NAME.ini ------------------------------------------------------ */

static int apply_template(loader *ld, const char *section, const char *key,
                          const char *value)
{
    core_template_conf *t = ld->tmpl;
    const where *w = &ld->at;
    const char *why = NULL;
    char **list = NULL;

    if (strcmp(section, "env") == 0) {
        if (!valid_env_name(key))
            return lerr(ld, SBX_E_CONFIG, w, "bad environment variable name "
                        "'%s' in [env]", key);
        sbx_kv_v1 *ne = realloc(t->env, (t->n_env + 1) * sizeof *ne);
        if (!ne)
            return nomem(ld);
        t->env = ne;
        ne[t->n_env].key = strdup(key);
        ne[t->n_env].value = strdup(value);
        t->n_env++;
        if (!ne[t->n_env - 1].key || !ne[t->n_env - 1].value)
            return nomem(ld);
        return SBX_OK;
    }
    if (strcmp(section, "template") != 0)
        return lerr(ld, SBX_E_CONFIG, w, "unknown section [%s] (known: "
                    "[template], [env])", section);

    if (strcmp(key, "extensions") == 0) {
        if (split_list(value, ", \t", &list) != SBX_OK)
            return nomem(ld);
        if (!list)
            return lerr(ld, SBX_E_CONFIG, w, "extensions is empty");
        for (size_t i = 0; list[i]; i++) {
            if (list[i][0] != '.' || !list[i][1] || strchr(list[i], '/')) {
                lerr(ld, SBX_E_CONFIG, w, "bad extension '%s' (each starts "
                     "with a dot, like .py)", list[i]);
                core_strv_free(list);
                return ld->rc;
            }
        }
        core_strv_free(t->extensions);
        t->extensions = list;
        return SBX_OK;
    }
    if (strcmp(key, "source") == 0) {
        if (!*value || strchr(value, '/') || strcmp(value, ".") == 0 ||
            strcmp(value, "..") == 0)
            return lerr(ld, SBX_E_CONFIG, w, "bad source '%s' (a plain file "
                        "name, like main.py)", value);
        return replace_str(ld, &t->source, value);
    }
    if (strcmp(key, "compile") == 0 || strcmp(key, "run") == 0) {
        int rc = split_argv(value, &list, &why);
        if (rc == SBX_E_NOMEM)
            return nomem(ld);
        if (rc != SBX_OK)
            return lerr(ld, SBX_E_CONFIG, w, "bad %s command '%s': %s", key,
                        value, why);
        char ***slot = key[0] == 'c' ? &t->compile : &t->run;
        core_strv_free(*slot);
        *slot = list;
        return SBX_OK;
    }
    if (strcmp(key, "image") == 0) {
        if (!*value)
            return lerr(ld, SBX_E_CONFIG, w, "image is empty");
        return replace_str(ld, &t->image, value);
    }
    return lerr(ld, SBX_E_CONFIG, w, "unknown key '%s' in [template] (known: "
                TEMPLATE_KEYS ")", key);
}

static bool is_exec_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* A command with a slash and no leading one (./main) is made by the
 * compile step inside the sandbox, so it is not looked up on the host. */
static bool command_found(const char *cmd)
{
    char path[PATH_MAX];

    if (strchr(cmd, '/'))
        return cmd[0] != '/' || is_exec_file(cmd);

    for (const char *p = TEMPLATE_PATH; *p;) {
        size_t n = strcspn(p, ":");
        int len = snprintf(path, sizeof path, "%.*s/%s", (int)n, p, cmd);
        if (len > 0 && (size_t)len < sizeof path && is_exec_file(path))
            return true;
        p += n;
        if (*p)
            p++;
    }
    return false;
}

/* Checks that need the whole file, and the defaults that depend on it. */
static int finish_template(loader *ld)
{
    core_template_conf *t = ld->tmpl;
    const where w = { ld->at.name, 0 };

    if (!t->run)
        return lerr(ld, SBX_E_CONFIG, &w, "[template] has no run command");
    if (!t->extensions)
        return lerr(ld, SBX_E_CONFIG, &w, "[template] has no extensions");
    if (!t->source && asprintf(&t->source, "main%s", t->extensions[0]) < 0) {
        t->source = NULL;
        return nomem(ld);
    }
    t->available = command_found(t->run[0]) &&
                   (!t->compile || command_found(t->compile[0]));
    return SBX_OK;
}

/* ---- pools.d/NAME.ini ---------------------------------------------------------- */

/* Append KEY = VALUE (as written, with where) to @p; core/pool.c checks it. */
static int pool_add_setting(loader *ld, core_pool_conf *p, const where *w,
                            const char *key, const char *value)
{
    core_setting *ns = realloc(p->settings, (p->n_settings + 1) * sizeof *ns);

    if (!ns)
        return nomem(ld);
    p->settings = ns;
    core_setting *s = &ns[p->n_settings];
    memset(s, 0, sizeof *s);
    s->key = strdup(key);
    s->value = strdup(value);
    s->file = strdup(w->name);
    s->line = w->line;
    p->n_settings++;
    if (!s->key || !s->value || !s->file)
        return nomem(ld);
    return SBX_OK;
}

static int apply_pool(loader *ld, const char *section, const char *key,
                      const char *value)
{
    char *k;
    int rc;

    if (strcmp(section, "pool") == 0)
        return pool_add_setting(ld, ld->pool, &ld->at, key, value);
    if (strcmp(section, "limits") != 0)
        return lerr(ld, SBX_E_CONFIG, &ld->at, "unknown section [%s] (known: "
                    POOL_SECTIONS ")", section);
    if (asprintf(&k, "limits.%s", key) < 0)
        return nomem(ld);
    rc = pool_add_setting(ld, ld->pool, &ld->at, k, value);
    free(k);
    return rc;
}

static core_pool_conf *find_pool(core_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_pools; i++)
        if (strcmp(cfg->pools[i].name, name) == 0)
            return &cfg->pools[i];
    return NULL;
}

/* Store @p (taking its contents), replacing a same-named one as a whole. */
static int store_pool(loader *ld, core_pool_conf *p)
{
    core_config *cfg = ld->cfg;
    core_pool_conf *old = find_pool(cfg, p->name);

    if (old) {
        pool_conf_free(old);
        *old = *p;
        return SBX_OK;
    }
    core_pool_conf *np = realloc(cfg->pools, (cfg->n_pools + 1) * sizeof *np);
    if (!np)
        return nomem(ld);
    cfg->pools = np;
    np[cfg->n_pools++] = *p;
    return SBX_OK;
}

/* pool.NAME.KEY=VALUE (section "pool", key "NAME.KEY"): a setting of the
 * pool NAME, which need not exist in any file (an embedder's pool). */
static int apply_pool_override(loader *ld, const where *w, const char *key,
                               const char *value)
{
    const char *dot = strchr(key, '.');
    core_pool_conf *p;
    char *name;
    int rc = SBX_OK;

    if (!dot || dot == key || !dot[1])
        return lerr(ld, SBX_E_CONFIG, w, "'pool.%s' is not pool.NAME.KEY (e.g. "
                    "pool.python.size=4)", key);
    if (!(name = strndup(key, (size_t)(dot - key))))
        return nomem(ld);
    if (!valid_name(name, "-")) {
        lerr(ld, SBX_E_CONFIG, w, "bad pool name '%s' (use a-z, 0-9, _ and -)", name);
        free(name);
        return ld->rc;
    }
    if (!(p = find_pool(ld->cfg, name))) {
        core_pool_conf np = { 0 };
        np.name = name;
        name = NULL;
        if (!(np.file = strdup(w->name)) || store_pool(ld, &np) != SBX_OK) {
            pool_conf_free(&np);
            return nomem(ld);
        }
        p = find_pool(ld->cfg, np.name);
    }
    free(name);
    if (strncmp(dot + 1, "limits.", 7) != 0 && strchr(dot + 1, '.'))
        return lerr(ld, SBX_E_CONFIG, w, "unknown pool key '%s' (pool.NAME.KEY or "
                    "pool.NAME.limits.KEY)", dot + 1);
    rc = pool_add_setting(ld, p, w, dot + 1, value);
    return rc;
}

/* ---- provider.NAME.KEY=VALUE overrides ----------------------------------------- */

static int builtin_local(loader *ld);
static core_provider_conf *find_provider(core_config *cfg, const char *name);

/* provider.NAME.KEY=VALUE (section "provider", key "NAME.KEY"; overrides
 * only): KEY of the [settings] of the configured provider NAME, replacing
 * the file's value, so one command can point a provider elsewhere (e.g.
 * polysandbox compare running docker with two images). */
static int apply_provider_override(loader *ld, const where *w, const char *key,
                                   const char *value)
{
    const char *dot = strchr(key, '.');
    core_provider_conf *p;
    core_setting *s = NULL;
    char *name, *k, *v, *f;

    if (!dot || dot == key || !dot[1] || strchr(dot + 1, '.'))
        return lerr(ld, SBX_E_CONFIG, w, "'provider.%s' is not provider.NAME.KEY (e.g. "
                    "provider.docker.image=python:3.12-slim)", key);
    if (!(name = strndup(key, (size_t)(dot - key))))
        return nomem(ld);
    /* the built-in local provider may have no file yet */
    if (!strcmp(name, "local") && builtin_local(ld) != SBX_OK) {
        free(name);
        return ld->rc;
    }
    p = find_provider(ld->cfg, name);
    if (!p) {
        lerr(ld, SBX_E_CONFIG, w, "provider.%s: no provider '%s' is configured (providers.d/"
             "%s.ini)", key, name, name);
        free(name);
        return ld->rc;
    }
    free(name);
    for (size_t i = 0; i < p->n_settings; i++)
        if (!strcmp(p->settings[i].key, dot + 1))
            s = &p->settings[i];
    if (!s) {
        core_setting *ns = realloc(p->settings, (p->n_settings + 1) * sizeof *ns);
        if (!ns)
            return nomem(ld);
        p->settings = ns;
        s = &ns[p->n_settings++];
        memset(s, 0, sizeof *s);
    }
    k = strdup(dot + 1);
    v = strdup(value);
    f = strdup(w->name);
    if (!k || !v || !f) {
        free(k);
        free(v);
        free(f);
        if (!s->key) {
            /* the new slot stays empty: drop it */
            p->n_settings--;
        }
        return nomem(ld);
    }
    free(s->key);
    free(s->value);
    free(s->file);
    s->key = k;
    s->value = v;
    s->file = f;
    s->line = w->line;
    return SBX_OK;
}

/* ---- reading one ini file ------------------------------------------------------ */

static int note_key(loader *ld, const char *section, const char *key)
{
    char *k;

    if (asprintf(&k, "%s\n%s", section, key) < 0)
        return nomem(ld);
    for (size_t i = 0; i < ld->n_seen; i++) {
        if (strcmp(ld->seen[i].key, k) == 0) {
            free(k);
            return lerr(ld, SBX_E_CONFIG, &ld->at, "duplicate key '%s' in [%s] "
                        "(first set at line %d)", key, section, ld->seen[i].line);
        }
    }
    struct seen_key *ns = realloc(ld->seen, (ld->n_seen + 1) * sizeof *ns);
    if (!ns) {
        free(k);
        return nomem(ld);
    }
    ld->seen = ns;
    ns[ld->n_seen].key = k;
    ns[ld->n_seen].line = ld->at.line;
    ld->n_seen++;
    return SBX_OK;
}

/* inih's callback: nonzero means go on. */
static int on_value(void *user, const char *section, const char *key,
                    const char *value)
{
    loader *ld = user;
    int rc;

    if (ld->rc != SBX_OK)
        return 0;
    if (strcmp(value, LONG_VALUE) == 0 && ld->long_value)
        value = ld->long_value;
    if (!*section)
        return !lerr(ld, SBX_E_CONFIG, &ld->at, "'%s' is outside any [section]", key);
    if (!*key)
        return !lerr(ld, SBX_E_CONFIG, &ld->at, "empty key in [%s]", section);
    if (note_key(ld, section, key) != SBX_OK)
        return 0;
    switch (ld->kind) {
    case FK_MAIN:
        rc = apply_main(ld, &ld->at, section, key, value);
        break;
    case FK_PROVIDER:
        rc = apply_provider(ld, section, key, value);
        break;
    case FK_POOL:
        rc = apply_pool(ld, section, key, value);
        break;
    case FK_TEMPLATE:
    default:
        rc = apply_template(ld, section, key, value);
        break;
    }
    return rc == SBX_OK;
}

struct line_reader {
    loader *ld;
    FILE *f;
};

static void read_error(loader *ld, FILE *f)
{
    where w = { ld->at.name, 0 };
    int e = errno;

    if (ferror(f))
        lerr(ld, SBX_E_CONFIG, &w, "read error: %s", strerror(e ? e : EIO));
}

/*
 * Hand inih a line longer than its buffer: a comment as an empty comment;
 * "key = value" as "key = LONG_VALUE", the value (trimmed, inline comment
 * cut as inih would) kept in ld->long_value for on_value.  @line has @len
 * characters, leading blanks already gone.
 */
static char *long_line(loader *ld, const char *line, size_t len, char *str, int num)
{
    const char *eq, *v, *end = line + len;
    size_t klen;

    if (line[0] == ';' || line[0] == '#') {
        memcpy(str, ";\n", 3);
        return str;
    }
    eq = memchr(line, '=', len);
    if (!eq || line[0] == '[') {
        lerr(ld, SBX_E_CONFIG, &ld->at, "line too long (at most %d characters, "
             "or %d for a key = value line)", num - 2, LINE_MAX_CHARS);
        return NULL;
    }
    klen = (size_t)(eq - line);
    while (klen > 0 && is_blank(line[klen - 1]))
        klen--;
    if (klen + sizeof(" = " LONG_VALUE "\n") > (size_t)num) {
        lerr(ld, SBX_E_CONFIG, &ld->at, "key too long");
        return NULL;
    }
    for (v = eq + 1; v < end && is_blank(*v); v++)
        ;
    for (const char *c = v; c < end; c++)
        if (*c == ';' && c > v && is_blank(c[-1])) {
            end = c;
            break;
        }
    while (end > v && is_blank(end[-1]))
        end--;
    free(ld->long_value);
    if (!(ld->long_value = strndup(v, (size_t)(end - v)))) {
        nomem(ld);
        return NULL;
    }
    memcpy(str, line, klen);
    memcpy(str + klen, " = " LONG_VALUE "\n", sizeof(" = " LONG_VALUE "\n"));
    return str;
}

/*
 * inih's fgets-like reader, giving it exactly one whole line per call,
 * without its leading blanks and line end.  A line longer than
 * LINE_MAX_CHARS is an error found before reading on, so a huge file costs
 * no memory.  After an error it ends the file (NULL), so inih stops there.
 */
static char *read_line(char *str, int num, void *stream)
{
    struct line_reader *r = stream;
    loader *ld = r->ld;
    size_t len = 0;
    bool leading = true;
    int c;

    if (ld->rc != SBX_OK || num < 3)
        return NULL;
    if (!ld->line && !(ld->line = malloc(LINE_MAX_CHARS + 1))) {
        nomem(ld);
        return NULL;
    }
    errno = 0;
    c = getc(r->f);
    if (c == EOF) {
        read_error(ld, r->f);
        return NULL;
    }
    ld->at.line++;
    for (; c != EOF && c != '\n'; c = getc(r->f)) {
        if (c == '\r') {
            int next = getc(r->f);
            if (next == '\n' || next == EOF) {
                c = next;
                break;
            }
            ungetc(next, r->f);
        }
        if (c == '\0' || c == LONG_VALUE[0]) {
            lerr(ld, SBX_E_CONFIG, &ld->at, "line contains a %s byte",
                 c ? "control (0x01)" : "NUL");
            return NULL;
        }
        if (leading && is_blank((char)c))
            continue;
        leading = false;
        if (len >= LINE_MAX_CHARS) {
            lerr(ld, SBX_E_CONFIG, &ld->at, "line too long (at most %d characters)",
                 LINE_MAX_CHARS);
            return NULL;
        }
        ld->line[len++] = (char)c;
    }
    if (c == EOF && ferror(r->f)) {
        read_error(ld, r->f);
        return NULL;
    }
    /* Room is left for '\n' and '\0'. */
    if (len > (size_t)num - 2)
        return long_line(ld, ld->line, len, str, num);
    memcpy(str, ld->line, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    return str;
}

/*
 * Parse @path as @kind.  A missing file is fine when @missing_ok; a file
 * that exists but cannot be read is an error.
 */
static int parse_file(loader *ld, const char *path, enum file_kind kind,
                      bool missing_ok)
{
    struct line_reader r = { ld, NULL };
    struct stat st;
    int fd, res;
    where w = { path, 0 };

    /* O_NONBLOCK: never hang opening a FIFO that was left in the way. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT && missing_ok)
            return SBX_OK;
        return lerr(ld, SBX_E_CONFIG, &w, "cannot open: %s", strerror(errno));
    }
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return lerr(ld, SBX_E_CONFIG, &w, "cannot stat: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return lerr(ld, SBX_E_CONFIG, &w, "not a regular file");
    }
    r.f = fdopen(fd, "r");
    if (!r.f) {
        close(fd);
        return nomem(ld);
    }

    ld->at.name = path;
    ld->at.line = 0;
    ld->kind = kind;
    seen_clear(ld);
    res = ini_parse_stream(read_line, &r, on_value, ld);
    fclose(r.f);

    /* inih reports the first line it disliked; our reader feeds it one line
     * per call, so its count is ours.  A syntax error before the first
     * error we recorded wins. */
    if (res == -2)
        return nomem(ld);
    if (res > 0 && (ld->rc == SBX_OK ||
                    (ld->rc == SBX_E_CONFIG && ld->err_line > res))) {
        w.line = res;
        ld->rc = SBX_OK;
        lerr(ld, SBX_E_CONFIG, &w, "syntax error (expected [section] or "
             "key = value)");
    }
    seen_clear(ld);
    return ld->rc;
}

/* ---- the .d directories -------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.ini files of @dir, sorted; a missing directory has none. */
static int list_ini(loader *ld, const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    where w = { dir, 0 };

    *out = NULL;
    if (!d) {
        if (errno == ENOENT)
            return SBX_OK;
        return lerr(ld, SBX_E_CONFIG, &w, "cannot open directory: %s",
                    strerror(errno));
    }
    for (;;) {
        errno = 0;
        e = readdir(d);
        if (!e)
            break;
        size_t n = strlen(e->d_name);
        /* Hidden files and editor leftovers (x.ini~, x.ini.swp) are not ours. */
        if (e->d_name[0] == '.' || n <= 4 || strcmp(e->d_name + n - 4, ".ini") != 0)
            continue;
        if (core_strv_push(&names, e->d_name) != SBX_OK) {
            closedir(d);
            core_strv_free(names);
            return nomem(ld);
        }
    }
    if (errno != 0) {
        int err = errno;
        closedir(d);
        core_strv_free(names);
        return lerr(ld, SBX_E_CONFIG, &w, "cannot read directory: %s",
                    strerror(err));
    }
    closedir(d);
    if (names)
        qsort(names, core_strv_len(names), sizeof *names, by_name);
    *out = names;
    return SBX_OK;
}

static core_provider_conf *find_provider(core_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_providers; i++)
        if (strcmp(cfg->providers[i].name, name) == 0)
            return &cfg->providers[i];
    return NULL;
}

static core_template_conf *find_template(core_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_templates; i++)
        if (strcmp(cfg->templates[i].name, name) == 0)
            return &cfg->templates[i];
    return NULL;
}

/* Store @p (taking its contents), replacing a same-named one: a later
 * directory's file replaces an earlier one's as a whole. */
static int store_provider(loader *ld, core_provider_conf *p)
{
    core_config *cfg = ld->cfg;
    core_provider_conf *old = find_provider(cfg, p->name);

    if (old) {
        provider_conf_free(old);
        *old = *p;
        return SBX_OK;
    }
    core_provider_conf *np = realloc(cfg->providers,
                                     (cfg->n_providers + 1) * sizeof *np);
    if (!np)
        return nomem(ld);
    cfg->providers = np;
    np[cfg->n_providers++] = *p;
    return SBX_OK;
}

static int store_template(loader *ld, core_template_conf *t)
{
    core_config *cfg = ld->cfg;
    core_template_conf *old = find_template(cfg, t->name);

    if (old) {
        template_conf_free(old);
        *old = *t;
        return SBX_OK;
    }
    core_template_conf *nt = realloc(cfg->templates,
                                     (cfg->n_templates + 1) * sizeof *nt);
    if (!nt)
        return nomem(ld);
    cfg->templates = nt;
    nt[cfg->n_templates++] = *t;
    return SBX_OK;
}

static int load_one(loader *ld, const char *path, const char *name,
                    enum file_kind kind)
{
    where w = { path, 0 };
    int rc;

    if (kind == FK_PROVIDER) {
        core_provider_conf p = { .enabled = true };
        if (!valid_name(name, NULL))
            return lerr(ld, SBX_E_CONFIG, &w, "bad provider name '%s' (the "
                        "file name must be NAME.ini with NAME of a-z, 0-9 "
                        "and _)", name);
        if (!(p.name = strdup(name)) || !(p.file = strdup(path))) {
            provider_conf_free(&p);
            return nomem(ld);
        }
        ld->prov = &p;
        rc = parse_file(ld, path, FK_PROVIDER, false);
        ld->prov = NULL;
        if (rc == SBX_OK)
            rc = store_provider(ld, &p);
        if (rc != SBX_OK)
            provider_conf_free(&p);
        return rc;
    }

    if (kind == FK_POOL) {
        core_pool_conf p = { 0 };
        if (!valid_name(name, "-"))
            return lerr(ld, SBX_E_CONFIG, &w, "bad pool name '%s' (the file name "
                        "must be NAME.ini with NAME of a-z, 0-9, _ and -)", name);
        if (!(p.name = strdup(name)) || !(p.file = strdup(path))) {
            pool_conf_free(&p);
            return nomem(ld);
        }
        ld->pool = &p;
        rc = parse_file(ld, path, FK_POOL, false);
        ld->pool = NULL;
        if (rc == SBX_OK)
            rc = store_pool(ld, &p);
        if (rc != SBX_OK)
            pool_conf_free(&p);
        return rc;
    }

    core_template_conf t = { 0 };
    if (!valid_name(name, "+-"))
        return lerr(ld, SBX_E_CONFIG, &w, "bad template name '%s' (the file "
                    "name must be NAME.ini with NAME of a-z, 0-9, _, + and -)",
                    name);
    if (!(t.name = strdup(name)) || !(t.file = strdup(path))) {
        template_conf_free(&t);
        return nomem(ld);
    }
    ld->tmpl = &t;
    rc = parse_file(ld, path, FK_TEMPLATE, false);
    if (rc == SBX_OK)
        rc = finish_template(ld);
    ld->tmpl = NULL;
    if (rc == SBX_OK)
        rc = store_template(ld, &t);
    if (rc != SBX_OK)
        template_conf_free(&t);
    return rc;
}

static int load_dropins(loader *ld, const char *confdir, const char *sub,
                        enum file_kind kind)
{
    char *dir = path_join(confdir, sub);
    char **names = NULL;
    int rc;

    if (!dir)
        return nomem(ld);
    rc = list_ini(ld, dir, &names);
    for (size_t i = 0; rc == SBX_OK && names && names[i]; i++) {
        char *path = path_join(dir, names[i]);
        if (!path) {
            rc = nomem(ld);
            break;
        }
        names[i][strlen(names[i]) - 4] = '\0';
        rc = load_one(ld, path, names[i], kind);
        free(path);
    }
    core_strv_free(names);
    free(dir);
    return rc;
}

/* polysandbox.ini, providers.d/ and templates.d/ of one directory. */
static int load_dir(loader *ld, const char *dir)
{
    char *main_ini = path_join(dir, MAIN_INI);
    int rc;

    if (!main_ini)
        return nomem(ld);
    rc = parse_file(ld, main_ini, FK_MAIN, true);
    free(main_ini);
    if (rc == SBX_OK)
        rc = load_dropins(ld, dir, "providers.d", FK_PROVIDER);
    if (rc == SBX_OK)
        rc = load_dropins(ld, dir, "templates.d", FK_TEMPLATE);
    if (rc == SBX_OK)
        rc = load_dropins(ld, dir, "pools.d", FK_POOL);
    return rc;
}

/* ---- environment and command line ---------------------------------------------- */

/* secure_getenv: a set-id program must not take its configuration from
 * whoever runs it.  An empty variable counts as unset. */
static const char *getenv_set(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

static int apply_env(loader *ld)
{
    static const struct {
        const char *var, *section, *key;
    } map[] = {
        { "POLYSANDBOX_PROVIDER", "core", "default_provider" },
        { "POLYSANDBOX_STATE_DIR", "core", "state_dir" },
        { "POLYSANDBOX_TIMEOUT", "limits", "wall" },
        { "POLYSANDBOX_MEMORY", "limits", "memory" },
    };
    char name[64];
    const char *v;

    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (!(v = getenv_set(map[i].var)))
            continue;
        snprintf(name, sizeof name, "environment (%s)", map[i].var);
        where w = { name, 0 };
        if (apply_main(ld, &w, map[i].section, map[i].key, v) != SBX_OK)
            return ld->rc;
    }
    if ((v = getenv_set("POLYSANDBOX_PROVIDER_PATH"))) {
        where w = { "environment (POLYSANDBOX_PROVIDER_PATH)", 0 };
        return parse_dir_list(ld, &w, "POLYSANDBOX_PROVIDER_PATH", v, &ld->env_path);
    }
    return SBX_OK;
}

/* Trimmed copy of [s, s+n). */
static char *strip_dup(const char *s, size_t n)
{
    while (n > 0 && is_blank(*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_blank(s[n - 1]))
        n--;
    return strndup(s, n);
}

static int apply_override(loader *ld, const char *o)
{
    where w = { "command line", 0 };
    const char *eq = strchr(o, '=');
    const char *dot;
    char *section = NULL, *key = NULL, *value = NULL;
    int rc;

    dot = eq ? memchr(o, '.', (size_t)(eq - o)) : NULL;
    if (!eq || !dot)
        return lerr(ld, SBX_E_CONFIG, &w, "'%s' is not section.key=value "
                    "(e.g. limits.memory=1G)", o);
    section = strip_dup(o, (size_t)(dot - o));
    key = strip_dup(dot + 1, (size_t)(eq - dot - 1));
    value = strip_dup(eq + 1, strlen(eq + 1));
    if (!section || !key || !value)
        rc = nomem(ld);
    else
        rc = apply_main(ld, &w, section, key, value);
    free(section);
    free(key);
    free(value);
    return rc;
}

/* ---- putting it together -------------------------------------------------------- */

static int set_defaults(loader *ld)
{
    const char *why = NULL;

    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (parse_limit((sbx_limit)i, limit_info[i].def, &ld->cfg->limits[i], &why) ||
            parse_limit((sbx_limit)i, limit_info[i].max, &ld->cfg->max_limits[i], &why))
            return lerr(ld, SBX_E_INTERNAL, NULL, "built-in limit %s: %s",
                        limit_info[i].key, why);
    }
    return SBX_OK;
}

static int check_limits(loader *ld)
{
    const core_config *cfg = ld->cfg;
    char mwhere[CORE_MSG_MAX / 2];

    for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
        if (cfg->limits[i] <= cfg->max_limits[i])
            continue;
        const char *key = limit_info[i].key;
        const char *dw = ld->lim_where[0][i], *mw = ld->lim_where[1][i];
        const char *dt = dw ? ld->lim_text[0][i] : limit_info[i].def;
        const char *mt = mw ? ld->lim_text[1][i] : limit_info[i].max;
        /* Lead with where the default was set, else where the maximum was. */
        where w = { dw ? dw : mw ? mw : BUILTIN, 0 };

        if (!mw)
            snprintf(mwhere, sizeof mwhere, " (built-in maximum)");
        else if (dw)
            snprintf(mwhere, sizeof mwhere, " (set at %s)", mw);
        else
            mwhere[0] = '\0';
        return lerr(ld, SBX_E_CONFIG, &w, "%s = %s%s is above max_%s = %s%s",
                    key, dt, dw ? "" : " (built-in default)", key, mt, mwhere);
    }
    return SBX_OK;
}

/* env path, then [core] provider_path, then the built-in PROVIDERDIR. */
static int build_provider_path(loader *ld)
{
    char **v = NULL;
    char **parts[] = { ld->env_path, ld->ini_path };

    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; parts[k] && parts[k][i]; i++) {
            if (!core_strv_has(v, parts[k][i]) && core_strv_push(&v, parts[k][i]) != SBX_OK)
                goto oom;
        }
    }
    if (!core_strv_has(v, PROVIDERDIR) && core_strv_push(&v, PROVIDERDIR) != SBX_OK)
        goto oom;
    ld->cfg->provider_path = v;
    return SBX_OK;
oom:
    core_strv_free(v);
    return nomem(ld);
}

/* Root keeps state in STATEDIR; anyone else in a directory of their own. */
static int default_state_dir(loader *ld)
{
    const char *rt;

    if (ld->cfg->state_dir)
        return SBX_OK;
    if (geteuid() == 0)
        return replace_str(ld, &ld->cfg->state_dir, STATEDIR);
    rt = getenv_set("XDG_RUNTIME_DIR");
    if (rt && rt[0] == '/') {
        if (!(ld->cfg->state_dir = path_join(rt, "polysandbox")))
            return nomem(ld);
    } else if (asprintf(&ld->cfg->state_dir, "/tmp/polysandbox-%u",
                        (unsigned)geteuid()) < 0) {
        ld->cfg->state_dir = NULL;
        return nomem(ld);
    }
    return SBX_OK;
}

/* With no local.ini anywhere, the embedded local provider needs none. */
static int builtin_local(loader *ld)
{
    core_provider_conf p = { .enabled = true, .priority = 100 };

    if (find_provider(ld->cfg, "local"))
        return SBX_OK;
    if (!(p.name = strdup("local")) || !(p.file = strdup(BUILTIN))) {
        provider_conf_free(&p);
        return nomem(ld);
    }
    if (store_provider(ld, &p) != SBX_OK) {
        provider_conf_free(&p);
        return ld->rc;
    }
    return SBX_OK;
}

static int provider_by_name(const void *a, const void *b)
{
    return strcmp(((const core_provider_conf *)a)->name,
                  ((const core_provider_conf *)b)->name);
}

static int template_by_name(const void *a, const void *b)
{
    return strcmp(((const core_template_conf *)a)->name,
                  ((const core_template_conf *)b)->name);
}

/* $XDG_CONFIG_HOME/polysandbox, else ~/.config/polysandbox, else none
 * (*out NULL); relative values are invalid by the XDG spec and ignored. */
static int user_dir(loader *ld, char **out)
{
    const char *x = getenv_set("XDG_CONFIG_HOME");
    const char *home = getenv_set("HOME");

    *out = NULL;
    if (x && x[0] == '/')
        *out = path_join(x, "polysandbox");
    else if (home && home[0] == '/')
        *out = path_join(home, ".config/polysandbox");
    else
        return SBX_OK;
    return *out ? SBX_OK : nomem(ld);
}

static int load_all(loader *ld, const char *dir, const char *const *overrides)
{
    core_config *cfg = ld->cfg;
    bool use_xdg = false;

    if (set_defaults(ld) != SBX_OK)
        return ld->rc;
    if (dir && !*dir)
        dir = NULL;     /* "" is "not given", as an empty variable is */
    const char *origin = "the caller";
    if (!dir && (dir = getenv_set("POLYSANDBOX_CONFIG_DIR")))
        origin = "POLYSANDBOX_CONFIG_DIR";
    if (!dir) {
        dir = SYSCONFDIR;
        use_xdg = true;
    } else {
        /* A directory the user named must exist: a typo would otherwise
         * silently run with the built-in defaults. */
        struct stat st;
        if (stat(dir, &st) != 0)
            return lerr(ld, SBX_E_CONFIG, NULL, "configuration directory %s (given by %s): %s",
                        dir, origin, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return lerr(ld, SBX_E_CONFIG, NULL,
                        "configuration directory %s (given by %s) is not a directory", dir,
                        origin);
    }
    if (replace_str(ld, &cfg->dir, dir) != SBX_OK || load_dir(ld, dir) != SBX_OK)
        return ld->rc;
    if (use_xdg) {
        char *xdg;
        if (user_dir(ld, &xdg) == SBX_OK && xdg && strcmp(xdg, dir) != 0)
            load_dir(ld, xdg);
        free(xdg);
        if (ld->rc != SBX_OK)
            return ld->rc;
    }
    if (apply_env(ld) != SBX_OK)
        return ld->rc;
    for (size_t i = 0; overrides && overrides[i]; i++)
        if (apply_override(ld, overrides[i]) != SBX_OK)
            return ld->rc;

    if (check_limits(ld) != SBX_OK || build_provider_path(ld) != SBX_OK ||
        default_state_dir(ld) != SBX_OK || builtin_local(ld) != SBX_OK)
        return ld->rc;
    if (cfg->n_providers > 1)
        qsort(cfg->providers, cfg->n_providers, sizeof *cfg->providers,
              provider_by_name);
    if (cfg->n_templates > 1)
        qsort(cfg->templates, cfg->n_templates, sizeof *cfg->templates,
              template_by_name);
    return SBX_OK;
}

int core_config_load(core_config *cfg, const char *dir,
                     const char *const *overrides)
{
    loader ld;
    int rc;

    memset(&ld, 0, sizeof ld);
    ld.cfg = cfg;
    rc = load_all(&ld, dir, overrides);
    loader_free(&ld);
    if (rc != SBX_OK)
        return core_error_set(rc, NULL, "%s", ld.msg);
    return SBX_OK;
}
