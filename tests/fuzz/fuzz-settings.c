/* tests/fuzz/fuzz-settings.c - a provider's [settings] value read through
 * host->settings_read (core/host-settings.c), as every type
 *
 * Beyond not crashing: a value is stored exactly when the grammar of
 * core/units.c accepts it within the entry's bounds (and then as that
 * grammar reads it); a refused value is SBX_E_CONFIG, never the table's
 * SBX_E_INVAL, with a message that starts with the file, the line and the
 * key; a credential's value is never in a message.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "units.h"
#include "fuzz.h"
#include "settings-read.h"

struct vals {
    const char *s;
    int secret, b, e;
    int64_t i;
    uint64_t d, z;
};

static const char *const choices[] = {"auto", "fast", "slow", NULL};
static const char *const keys[] = {"s", "b", "i", "d", "z", "e", NULL};
static const char *const secrets[] = {"k", NULL};

static const sbx_setting_v1 table[] = {
    {.key = "s", .type = SBX_SETTING_STRING, .offset = offsetof(struct vals, s)},
    {.key = "k", .type = SBX_SETTING_SECRET, .offset = offsetof(struct vals, secret)},
    {.key = "b", .type = SBX_SETTING_BOOL, .offset = offsetof(struct vals, b)},
    {.key = "i", .type = SBX_SETTING_INT, .min = "-5", .max = "40",
     .offset = offsetof(struct vals, i)},
    {.key = "d", .type = SBX_SETTING_DURATION, .min = "1ms", .max = "1h",
     .offset = offsetof(struct vals, d)},
    {.key = "z", .type = SBX_SETTING_SIZE, .max = "1G", .offset = offsetof(struct vals, z)},
    {.key = "e", .type = SBX_SETTING_ENUM, .choices = choices,
     .offset = offsetof(struct vals, e)},
    {.key = NULL},
};

static core_setting one_setting;

static const core_setting *lookup(void *ud, const char *key)
{
    (void)ud;
    return strcmp(key, one_setting.key) ? NULL : &one_setting;
}

/* @key set to @v alone: what settings_read made of it. */
static void check(const char *key, char *v)
{
    struct vals x = {0};
    char want[64];
    const char *msg, *why = NULL;
    uint64_t u = 0;
    int rc;

    one_setting = (core_setting){ .key = (char *)key, .value = v, .file = "fuzz.ini",
                                  .line = 3 };
    rc = core_settings_read("fuzz", keys, secrets, lookup, NULL, table, sizeof table[0], &x);
    msg = sbx_error_message(sbx_ctx_last_error(NULL));
    if (rc == SBX_E_INVAL)
        fz_fail("%s = '%s': the table was blamed: %s", key, v, msg);
    snprintf(want, sizeof want, "fuzz.ini:3: %s = '", key);
    if (rc != SBX_OK && (rc != SBX_E_CONFIG || strncmp(msg, want, strlen(want))))
        fz_fail("%s = '%s': %d without the file, line and key: %s", key, v, rc, msg);
    if (!strcmp(key, "k") && (rc != SBX_OK || x.secret != (*v != '\0')))
        fz_fail("a credential set to '%s' read as %d (rc %d)", v, x.secret, rc);
    if (!strcmp(key, "d") && rc == SBX_OK && *v &&
        (core_parse_duration(v, true, &u, &why) || u != x.d || u < 1000000 ||
         u > UINT64_C(3600000000000)))
        fz_fail("duration '%s' stored as %llu", v, (unsigned long long)x.d);
    if (!strcmp(key, "z") && rc == SBX_OK && *v &&
        (core_parse_size(v, true, &u, &why) || u != x.z || u > (UINT64_C(1) << 30)))
        fz_fail("size '%s' stored as %llu", v, (unsigned long long)x.z);
    if (!strcmp(key, "i") && rc == SBX_OK && (x.i < -5 || x.i > 40))
        fz_fail("int '%s' stored as %lld, out of its bounds", v, (long long)x.i);
    if (!strcmp(key, "e") && rc == SBX_OK && *v && strcmp(choices[x.e], v))
        fz_fail("enum '%s' stored as %d", v, x.e);
    if (!strcmp(key, "s") && rc == SBX_OK && *v && x.s != v)
        fz_fail("string '%s' not lent as it is", v);
}

static int one(const uint8_t *data, size_t size)
{
    static const char *const all[] = {"s", "k", "b", "i", "d", "z", "e"};
    char *v = fz_strndup(data, size);

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        check(all[i], v);
    free(v);
    return 0;
}

FZ_TARGET(settings, NULL, one)
