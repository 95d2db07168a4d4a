/* core/config/config-pools.c - pools.d/NAME.ini ([pool], [limits]) and the
 * pool.NAME.KEY overrides; the settings are kept as written, for
 * core/pool/pool.c to check
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "conf.h"

#define POOL_SECTIONS "[pool], [limits]"

static int apply_pool(loader *ld, const char *section, const char *key,
                      const char *value)
{
    core_pool_conf *p = &ld->cur->pool;
    char *k;
    int rc;

    if (strcmp(section, "pool") == 0)
        return core_cfg_add_setting(ld, &p->settings, &p->n_settings, &ld->at, key, value);
    if (strcmp(section, "limits") != 0)
        return core_cfg_err(ld, SBX_E_CONFIG, &ld->at, "unknown section [%s] (known: "
                            POOL_SECTIONS ")", section);
    if (asprintf(&k, "limits.%s", key) < 0)
        return core_cfg_nomem(ld);
    rc = core_cfg_add_setting(ld, &p->settings, &p->n_settings, &ld->at, k, value);
    free(k);
    return rc;
}

static void pool_drop(void *e)
{
    core_pool_conf *p = e;

    free(p->name);
    free(p->file);
    core_cfg_settings_free(p->settings, p->n_settings);
    memset(p, 0, sizeof *p);
}

const cfg_kind core_cfg_pools = {
    .sub = "pools.d", .what = "pool", .name_extra = "-", .name_chars = "a-z, 0-9, _ and -",
    .size = sizeof(core_pool_conf), .items_off = offsetof(core_config, pools),
    .n_off = offsetof(core_config, n_pools), .apply = apply_pool, .drop = pool_drop,
};

/* pool.NAME.KEY=VALUE (section "pool", key "NAME.KEY"): a setting of the
 * pool NAME, which need not exist in any file (an embedder's pool). */
int core_cfg_pool_override(loader *ld, const where *w, const char *key, const char *value)
{
    const char *dot = strchr(key, '.');
    core_pool_conf *p;
    char *name;

    if (!dot || dot == key || !dot[1])
        return core_cfg_err(ld, SBX_E_CONFIG, w, "'pool.%s' is not pool.NAME.KEY (e.g. "
                            "pool.python.size=4)", key);
    if (!(name = strndup(key, (size_t)(dot - key))))
        return core_cfg_nomem(ld);
    if (!core_cfg_valid_name(name, "-")) {
        core_cfg_err(ld, SBX_E_CONFIG, w, "bad pool name '%s' (use a-z, 0-9, _ and -)", name);
        free(name);
        return ld->rc;
    }
    if (!(p = core_cfg_find(ld, &core_cfg_pools, name))) {
        cfg_entry e = { .pool = { .name = name } };
        name = NULL;
        if (!(e.pool.file = strdup(w->name)) ||
            core_cfg_store(ld, &core_cfg_pools, &e) != SBX_OK) {
            pool_drop(&e.pool);
            return core_cfg_nomem(ld);
        }
        p = core_cfg_find(ld, &core_cfg_pools, e.pool.name);
    }
    free(name);
    if (strncmp(dot + 1, "limits.", 7) != 0 && strchr(dot + 1, '.'))
        return core_cfg_err(ld, SBX_E_CONFIG, w, "unknown pool key '%s' (pool.NAME.KEY or "
                            "pool.NAME.limits.KEY)", dot + 1);
    return core_cfg_add_setting(ld, &p->settings, &p->n_settings, w, dot + 1, value);
}
