/* core/config/config-int.h - what the files of the configuration loader share
 *
 * config.c          core_config_load: the layers put together, core_config_free
 * config-parse.c    reading one ini file through inih (long values, lines,
 *                   duplicate keys) and the loader's "FILE:LINE: ..." errors
 * config-values.c   value parsers and setters the sections share
 * config-main.c     polysandbox.ini's [core], [limits], [retry], [breaker] and
 *                   pool.* keys, from a file, the environment or the command line
 * config-dropins.c  the NAME.ini files of the .d directories: listing, loading,
 *                   keeping one entry per name
 * config-providers.c, config-templates.c, config-pools.c
 *                   the sections of providers.d/, templates.d/, pools.d/ files
 *
 * Nothing here is exported from the library (core_ symbols, hidden).
 */
#ifndef POLYSANDBOX_CORE_CONFIG_INT_H
#define POLYSANDBOX_CORE_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "settings-read.h"

#define BUILTIN "(built-in)"

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

/* The entry a drop-in file is read into.  Each member starts with its
 * name and file (a common initial sequence), which head reads. */
typedef union cfg_entry {
    struct {
        char *name;
        char *file;
    } head;
    core_provider_conf provider;
    core_template_conf tmpl;
    core_pool_conf pool;
} cfg_entry;

typedef struct cfg_kind cfg_kind;

typedef struct loader {
    core_config *cfg;
    int rc;                     /* first error, SBX_OK while none */
    int err_line;               /* its line within the current file, or 0 */
    char msg[CORE_MSG_MAX];

    /* the file being parsed */
    where at;
    const cfg_kind *kind;       /* its kind; NULL: polysandbox.ini */
    cfg_entry *cur;             /* the entry a drop-in file fills */
    struct seen_key *seen;      /* keys of this file, for duplicates */
    size_t n_seen;

    /* where each limit and maximum was last set, and as what text */
    char *lim_where[2][SBX_LIMIT_COUNT];
    char *lim_text[2][SBX_LIMIT_COUNT];

    char **ini_path;            /* [core] provider_path, last writer wins */
    char **env_path;            /* $POLYSANDBOX_PROVIDER_PATH */

    char *line;                 /* the line reader's buffer */
    char *long_value;           /* the value of the last line too long for inih */
} loader;

/* A kind of drop-in file (providers.d/, templates.d/, pools.d/). */
struct cfg_kind {
    const char *sub;            /* its directory: "providers.d" */
    const char *what;           /* "provider", as messages say it */
    const char *name_extra;     /* characters NAME may use beyond a-z, 0-9, _ */
    const char *name_chars;     /* all of them, as messages say it */
    size_t size;                /* of one entry */
    /* Where core_config keeps the kind's array (T *) and its count. */
    size_t items_off, n_off;
    void (*init)(cfg_entry *e); /* the defaults of a new entry; NULL: zeros */
    /* One "key = value" of [section] into ld->cur. */
    int (*apply)(loader *ld, const char *section, const char *key, const char *value);
    int (*finish)(loader *ld);  /* checks needing the whole file; NULL: none */
    void (*drop)(void *e);      /* frees an entry's contents */
};

extern const cfg_kind core_cfg_providers;
extern const cfg_kind core_cfg_templates;
extern const cfg_kind core_cfg_pools;

/* ---- config-parse.c ---- */

/* Records the first error (@w: where; NULL for none) and returns its code;
 * later ones are consequences and are dropped. */
int core_cfg_err(loader *ld, int code, const where *w, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int core_cfg_nomem(loader *ld);
/* Parses @path as a file of @kind (NULL: polysandbox.ini).  A missing
 * file is fine when @missing_ok; one that cannot be read is an error. */
int core_cfg_parse_file(loader *ld, const char *path, const cfg_kind *kind, bool missing_ok);
/* Frees the reader's state in @ld. */
void core_cfg_parse_free(loader *ld);

/* ---- config-values.c ---- */

bool core_cfg_is_blank(char c);
char *core_cfg_path_join(const char *dir, const char *name);
/* [a-z0-9_]+, plus the characters of @extra (may be NULL). */
bool core_cfg_valid_name(const char *s, const char *extra);
/* @s split at any of @seps into a NULL-terminated list (NULL when empty);
 * empty items are skipped.  SBX_OK or SBX_E_NOMEM. */
int core_cfg_split_list(const char *s, const char *seps, char ***out);
/* Absolute directories separated by ':' (@what names them in errors). */
int core_cfg_parse_dir_list(loader *ld, const where *w, const char *what, const char *s,
                            char ***out);
/* *slot = a copy of @value (NULL allowed), the old one freed. */
int core_cfg_replace_str(loader *ld, char **slot, const char *value);
/* Appends KEY = VALUE, as written and with where, to *@v of *@n. */
int core_cfg_add_setting(loader *ld, core_setting **v, size_t *n, const where *w,
                         const char *key, const char *value);
void core_cfg_settings_free(core_setting *v, size_t n);
/* One key of [retry] or [breaker] into @c. */
int core_cfg_apply_resil(loader *ld, const where *w, core_resil_conf *c, const char *section,
                         const char *key, const char *value);
/* secure_getenv, with an empty variable as unset. */
const char *core_cfg_getenv(const char *name);

/* ---- config-main.c ---- */

/* One key of polysandbox.ini's [section], from any layer. */
int core_cfg_apply_main(loader *ld, const where *w, const char *section, const char *key,
                        const char *value);
/* $POLYSANDBOX_* over the files. */
int core_cfg_apply_env(loader *ld);
/* One "section.key=value" of the command line. */
int core_cfg_apply_override(loader *ld, const char *o);
/* The built-in limits and maxima. */
int core_cfg_set_defaults(loader *ld);
/* Every limit at most its maximum. */
int core_cfg_check_limits(loader *ld);

/* ---- config-dropins.c ---- */

/* Loads every NAME.ini of @confdir/@kind->sub, in name order. */
int core_cfg_load_dropins(loader *ld, const char *confdir, const cfg_kind *kind);
/* The entry of @kind named @name in ld->cfg, or NULL. */
void *core_cfg_find(loader *ld, const cfg_kind *kind, const char *name);
/* Keeps @e (taking its contents) in ld->cfg, replacing a same-named entry
 * as a whole: a later directory's file replaces an earlier one's.  On
 * failure @e is left to the caller. */
int core_cfg_store(loader *ld, const cfg_kind *kind, cfg_entry *e);
/* Sorts the entries of @kind in @cfg by name. */
void core_cfg_sort(core_config *cfg, const cfg_kind *kind);
/* Frees the entries of @kind in @cfg and their array. */
void core_cfg_free_all(core_config *cfg, const cfg_kind *kind);

/* ---- config-providers.c, config-pools.c ---- */

/* With no local.ini anywhere, the embedded local provider needs none. */
int core_cfg_builtin_local(loader *ld);
/* pool.NAME.KEY=VALUE (section "pool", key "NAME.KEY"). */
int core_cfg_pool_override(loader *ld, const where *w, const char *key, const char *value);
/* provider.NAME.KEY=VALUE (section "provider", key "NAME.KEY"; overrides
 * only): KEY of the configured provider NAME's [settings]. */
int core_cfg_provider_override(loader *ld, const where *w, const char *key,
                               const char *value);

#endif
