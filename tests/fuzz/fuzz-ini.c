/* tests/fuzz/fuzz-ini.c - the configuration reader (core/config*.c over
 * inih) on one file of any kind, or on command-line overrides
 *
 * The first byte chooses what the rest is: polysandbox.ini, a file of
 * providers.d/, templates.d/ or pools.d/, or "section.key=value"
 * overrides one a line.  It goes through core_config_load, the entry
 * point every surface uses, on a directory of the harness.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "config/config-load.h"
#include "limit-names.h"
#include "fuzz.h"

static const char *const files[] = {
    "polysandbox.ini", "providers.d/fz.ini", "templates.d/fz.ini", "pools.d/fz.ini",
};
#define N_FILES (sizeof files / sizeof files[0])

static char *dir;

static void init(void)
{
    dir = fz_path("config");
    /* Every kind's directory exists, each input puts one file in. */
    fz_write("config/providers.d/.keep", "", 0);
    fz_write("config/templates.d/.keep", "", 0);
    fz_write("config/pools.d/.keep", "", 0);
}

static void check_loaded(const core_config *cfg)
{
    for (int i = 0; i < SBX_LIMIT_COUNT; i++)
        if (cfg->max_limits[i] && cfg->limits[i] > cfg->max_limits[i])
            fz_fail("limit %s = %llu is above its maximum %llu after a successful load",
                    core_limit_key((sbx_limit)i), (unsigned long long)cfg->limits[i],
                    (unsigned long long)cfg->max_limits[i]);
}

static int one(const uint8_t *data, size_t size)
{
    core_config cfg;
    unsigned which = size ? data[0] : 0;
    const uint8_t *text = size ? data + 1 : data;
    size_t len = size ? size - 1 : 0;
    char **overrides = NULL, *lines = NULL;
    char rel[64];
    int rc;

    if (!dir)
        init();
    for (size_t i = 0; i < N_FILES; i++) {
        char *full;
        if (asprintf(&full, "%s/%s", dir, files[i]) < 0)
            abort();
        unlink(full);
        free(full);
    }
    which %= N_FILES + 1;
    if (which < N_FILES) {
        snprintf(rel, sizeof rel, "config/%s", files[which]);
        fz_write(rel, text, len);
    } else {
        /* One override a line (a NUL byte ends a line early). */
        size_t n = 0, k = 0;
        lines = fz_strndup(text, len);
        for (size_t i = 0; i < len; i++)
            n += lines[i] == '\n';
        overrides = fz_xmalloc((n + 2) * sizeof *overrides);
        for (char *save = NULL, *l = strtok_r(lines, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save))
            overrides[k++] = l;
        overrides[k] = NULL;
    }
    memset(&cfg, 0, sizeof cfg);
    rc = core_config_load(&cfg, dir, (const char *const *)overrides);
    if (rc == SBX_OK)
        check_loaded(&cfg);
    else if (!core_error_tls()->message[0])
        fz_fail("core_config_load failed (%d) without a message", rc);
    core_config_free(&cfg);
    core_error_clear();
    free(lines);
    free(overrides);
    return 0;
}

FZ_TARGET(ini, init, one)
