/* core/config/config.c - polysandbox.ini, providers.d/, templates.d/ and pools.d/
 * into a core_config
 *
 * Layers, later wins: built-in defaults < the configuration directory <
 * $XDG_CONFIG_HOME/polysandbox < environment < command-line overrides.
 * Every value is checked where it is read, and every error names the file
 * and line (or "environment (VAR)", "command line") it came from.  The
 * parts are in config-*.c (see config-int.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "config-int.h"
#include "error.h"
#include "strv.h"
#include "conf.h"
#include "config/config-load.h"
#include "context.h"

#define MAIN_INI "polysandbox.ini"

/* The drop-in directories, in the order they are read. */
static const cfg_kind *const kinds[] = {
    &core_cfg_providers, &core_cfg_templates, &core_cfg_pools,
};

void core_config_free(core_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->dir);
    core_strv_free(cfg->dirs);
    free(cfg->default_provider);
    core_strv_free(cfg->provider_order);
    core_strv_free(cfg->fallback);
    core_strv_free(cfg->provider_path);
    free(cfg->state_dir);
    free(cfg->image_dir);
    core_strv_free(cfg->private_paths);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        core_cfg_free_all(cfg, kinds[k]);
    core_cfg_settings_free(cfg->app, cfg->n_app);
    core_cfg_settings_free(cfg->registries, cfg->n_registries);
    memset(cfg, 0, sizeof *cfg);
}

static void loader_free(loader *ld)
{
    core_cfg_parse_free(ld);
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < SBX_LIMIT_COUNT; i++) {
            free(ld->lim_where[m][i]);
            free(ld->lim_text[m][i]);
        }
    }
    core_strv_free(ld->ini_path);
    core_strv_free(ld->env_path);
}

/* polysandbox.ini and the drop-in directories of one directory. */
static int load_dir(loader *ld, const char *dir)
{
    char *main_ini = core_cfg_path_join(dir, MAIN_INI);
    int rc;

    if (!main_ini || core_strv_push(&ld->cfg->dirs, dir) != SBX_OK) {
        free(main_ini);
        return core_cfg_nomem(ld);
    }
    rc = core_cfg_parse_file(ld, main_ini, NULL, true);
    free(main_ini);
    for (size_t k = 0; rc == SBX_OK && k < sizeof kinds / sizeof kinds[0]; k++)
        rc = core_cfg_load_dropins(ld, dir, kinds[k]);
    return rc;
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
    return core_cfg_nomem(ld);
}

/* Root keeps state in STATEDIR; anyone else in a directory of their own. */
static int default_state_dir(loader *ld)
{
    const char *rt;

    if (ld->cfg->state_dir)
        return SBX_OK;
    if (geteuid() == 0)
        return core_cfg_replace_str(ld, &ld->cfg->state_dir, STATEDIR);
    rt = core_cfg_getenv("XDG_RUNTIME_DIR");
    if (rt && rt[0] == '/') {
        if (!(ld->cfg->state_dir = core_cfg_path_join(rt, "polysandbox")))
            return core_cfg_nomem(ld);
    } else if (asprintf(&ld->cfg->state_dir, "/tmp/polysandbox-%u",
                        (unsigned)geteuid()) < 0) {
        ld->cfg->state_dir = NULL;
        return core_cfg_nomem(ld);
    }
    return SBX_OK;
}

/* $XDG_CONFIG_HOME/polysandbox, else ~/.config/polysandbox, else none
 * (*out NULL); relative values are invalid by the XDG spec and ignored. */
static int user_dir(loader *ld, char **out)
{
    const char *x = core_cfg_getenv("XDG_CONFIG_HOME");
    const char *home = core_cfg_getenv("HOME");

    *out = NULL;
    if (x && x[0] == '/')
        *out = core_cfg_path_join(x, "polysandbox");
    else if (home && home[0] == '/')
        *out = core_cfg_path_join(home, ".config/polysandbox");
    else
        return SBX_OK;
    return *out ? SBX_OK : core_cfg_nomem(ld);
}

/* An absolute @path into @v, once. */
static int private_push(char ***v, const char *path)
{
    if (!path || path[0] != '/' || core_strv_has(*v, path))
        return SBX_OK;
    return core_strv_push(v, path);
}

/* host->private_paths: the configuration directories (the one in use,
 * the system one, the user's), the state directory (the configured one
 * and the built-in one), every provider directory, as configured (a
 * provider resolves what it needs to). */
static int private_paths(loader *ld)
{
    core_config *cfg = ld->cfg;
    char *xdg = NULL;
    const char *fixed[] = { cfg->dir, SYSCONFDIR, cfg->state_dir, STATEDIR };
    char **v = NULL;

    if (user_dir(ld, &xdg) != SBX_OK)
        return ld->rc;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (private_push(&v, fixed[i]) != SBX_OK)
            goto oom;
    if (private_push(&v, xdg) != SBX_OK)
        goto oom;
    for (size_t i = 0; cfg->provider_path && cfg->provider_path[i]; i++)
        if (private_push(&v, cfg->provider_path[i]) != SBX_OK)
            goto oom;
    free(xdg);
    cfg->private_paths = v;
    return SBX_OK;
oom:
    free(xdg);
    core_strv_free(v);
    return core_cfg_nomem(ld);
}

static int load_all(loader *ld, const char *dir, const char *const *overrides)
{
    core_config *cfg = ld->cfg;
    bool use_xdg = false;

    if (core_cfg_set_defaults(ld) != SBX_OK)
        return ld->rc;
    if (dir && !*dir)
        dir = NULL;     /* "" is "not given", as an empty variable is */
    const char *origin = "the caller";
    if (!dir && (dir = core_cfg_getenv("POLYSANDBOX_CONFIG_DIR")))
        origin = "POLYSANDBOX_CONFIG_DIR";
    if (!dir) {
        dir = SYSCONFDIR;
        use_xdg = true;
    } else {
        /* A directory the user named must exist: a typo would otherwise
         * silently run with the built-in defaults. */
        struct stat st;
        if (stat(dir, &st) != 0)
            return core_cfg_err(ld, SBX_E_CONFIG, NULL,
                                "configuration directory %s (given by %s): %s", dir, origin,
                                strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return core_cfg_err(ld, SBX_E_CONFIG, NULL,
                                "configuration directory %s (given by %s) is not a directory", dir,
                                origin);
    }
    if (core_cfg_replace_str(ld, &cfg->dir, dir) != SBX_OK || load_dir(ld, dir) != SBX_OK)
        return ld->rc;
    if (use_xdg) {
        char *xdg;
        if (user_dir(ld, &xdg) == SBX_OK && xdg && strcmp(xdg, dir) != 0)
            load_dir(ld, xdg);
        free(xdg);
        if (ld->rc != SBX_OK)
            return ld->rc;
    }
    if (core_cfg_apply_env(ld) != SBX_OK)
        return ld->rc;
    for (size_t i = 0; overrides && overrides[i]; i++)
        if (core_cfg_apply_override(ld, overrides[i]) != SBX_OK)
            return ld->rc;

    if (core_cfg_check_limits(ld) != SBX_OK || build_provider_path(ld) != SBX_OK ||
        default_state_dir(ld) != SBX_OK || core_cfg_builtin_local(ld) != SBX_OK ||
        private_paths(ld) != SBX_OK)
        return ld->rc;
    core_cfg_sort(cfg, &core_cfg_providers);
    core_cfg_sort(cfg, &core_cfg_templates);
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
