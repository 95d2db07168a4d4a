/* core/config/config-dropins.c - the NAME.ini files of providers.d/, templates.d/
 * and pools.d/: listed in name order, each read into an entry of its kind,
 * one entry kept per name (a later directory's file replaces an earlier
 * one's as a whole)
 *
 * The kinds' arrays differ only in their element type, so one piece of
 * code keeps them all: it reaches a kind's array through the offsets the
 * kind gives (every element starts with its char *name).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "strv.h"
#include "conf.h"

/* Strings, or entries by their name (their first member). */
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
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "cannot open directory: %s",
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
            return core_cfg_nomem(ld);
        }
    }
    if (errno != 0) {
        int err = errno;
        closedir(d);
        core_strv_free(names);
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "cannot read directory: %s",
                            strerror(err));
    }
    closedir(d);
    if (names)
        qsort(names, core_strv_len(names), sizeof *names, by_name);
    *out = names;
    return SBX_OK;
}

/* The array of @kind in @cfg and its count. */
static void *items_of(core_config *cfg, const cfg_kind *kind, size_t **n)
{
    void *items;

    *n = (size_t *)(void *)((char *)cfg + kind->n_off);
    memcpy(&items, (char *)cfg + kind->items_off, sizeof items);
    return items;
}

static void set_items(core_config *cfg, const cfg_kind *kind, void *items)
{
    memcpy((char *)cfg + kind->items_off, &items, sizeof items);
}

void *core_cfg_find(loader *ld, const cfg_kind *kind, const char *name)
{
    size_t *n;
    char *items = items_of(ld->cfg, kind, &n);

    for (size_t i = 0; i < *n; i++) {
        char *e = items + i * kind->size;

        if (strcmp(*(char **)e, name) == 0)
            return e;
    }
    return NULL;
}

int core_cfg_store(loader *ld, const cfg_kind *kind, cfg_entry *e)
{
    void *old = core_cfg_find(ld, kind, e->head.name);
    size_t *n;
    char *items = items_of(ld->cfg, kind, &n);

    if (old) {
        kind->drop(old);
        memcpy(old, e, kind->size);
        return SBX_OK;
    }
    char *grown = realloc(items, (*n + 1) * kind->size);
    if (!grown)
        return core_cfg_nomem(ld); /* the old array stays in ld->cfg */
    items = grown;
    memcpy(items + *n * kind->size, e, kind->size);
    (*n)++;
    set_items(ld->cfg, kind, items);
    return SBX_OK;
}

void core_cfg_sort(core_config *cfg, const cfg_kind *kind)
{
    size_t *n;
    void *items = items_of(cfg, kind, &n);

    if (*n > 1)
        qsort(items, *n, kind->size, by_name);
}

void core_cfg_free_all(core_config *cfg, const cfg_kind *kind)
{
    size_t *n;
    char *items = items_of(cfg, kind, &n);

    for (size_t i = 0; i < *n; i++)
        kind->drop(items + i * kind->size);
    free(items);
    set_items(cfg, kind, NULL);
    *n = 0;
}

/* One NAME.ini of @kind, read into a new entry and kept. */
static int load_one(loader *ld, const char *path, const char *name, const cfg_kind *kind)
{
    where w = { path, 0 };
    cfg_entry e;
    int rc;

    if (!core_cfg_valid_name(name, kind->name_extra))
        return core_cfg_err(ld, SBX_E_CONFIG, &w, "bad %s name '%s' (the file name must be "
                            "NAME.ini with NAME of %s)", kind->what, name, kind->name_chars);
    memset(&e, 0, sizeof e);
    if (kind->init)
        kind->init(&e);
    if (!(e.head.name = strdup(name)) || !(e.head.file = strdup(path))) {
        kind->drop(&e);
        return core_cfg_nomem(ld);
    }
    ld->cur = &e;
    rc = core_cfg_parse_file(ld, path, kind, false);
    if (rc == SBX_OK && kind->finish)
        rc = kind->finish(ld);
    ld->cur = NULL;
    if (rc == SBX_OK)
        rc = core_cfg_store(ld, kind, &e);
    if (rc != SBX_OK)
        kind->drop(&e);
    return rc;
}

int core_cfg_load_dropins(loader *ld, const char *confdir, const cfg_kind *kind)
{
    char *dir = core_cfg_path_join(confdir, kind->sub);
    char **names = NULL;
    int rc;

    if (!dir)
        return core_cfg_nomem(ld);
    rc = list_ini(ld, dir, &names);
    for (size_t i = 0; rc == SBX_OK && names && names[i]; i++) {
        char *path = core_cfg_path_join(dir, names[i]);
        if (!path) {
            rc = core_cfg_nomem(ld);
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
