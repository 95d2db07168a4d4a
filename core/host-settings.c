/* core/host-settings.c - host->settings_read: a provider's typed [settings]
 *
 * Providers declare what each key is; the core reads it with the grammar
 * of its own settings (core/units.c), so that "30s" or "64M" mean the same
 * in every providers.d/NAME.ini, and an error names the file and line the
 * value came from, which only the core knows.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "units.h"
#include "settings-read.h"

#define VALUE_SHOWN 200 /* characters of a bad value quoted in an error */

typedef union {
    int64_t i;
    uint64_t u;
} number;

/* What one read knows of its provider. */
typedef struct {
    const char *name;
    const char *const *config_keys, *const *secret_keys;
    core_settings_lookup lookup;
    void *ud;
} reader;

static bool listed(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

/* "-12" or "40": core_parse_count's grammar with a sign. */
static int parse_int(const char *s, int64_t *out, const char **why)
{
    bool neg = s && *s == '-';
    uint64_t v;
    int rc = core_parse_count(neg ? s + 1 : s, true, &v, why);

    if (rc != SBX_OK)
        return rc;
    if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
        *why = "value too large";
        return SBX_E_CONFIG;
    }
    *out = !neg ? (int64_t)v : v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    return SBX_OK;
}

static bool is_number(int type)
{
    return type == SBX_SETTING_INT || type == SBX_SETTING_DURATION ||
           type == SBX_SETTING_SIZE;
}

static int parse_number(int type, const char *s, number *out, const char **why)
{
    if (type == SBX_SETTING_INT)
        return parse_int(s, &out->i, why);
    if (type == SBX_SETTING_DURATION)
        return core_parse_duration(s, true, &out->u, why);
    return core_parse_size(s, true, &out->u, why);
}

static int compare(int type, number a, number b)
{
    if (type == SBX_SETTING_INT)
        return a.i < b.i ? -1 : a.i > b.i;
    return a.u < b.u ? -1 : a.u > b.u;
}

/* What is wrong with @e's bounds or choices, whatever the value, or NULL. */
static const char *table_defect(const sbx_setting_v1 *e)
{
    const char *why;
    number n;

    if (is_number(e->type) && ((e->min && parse_number(e->type, e->min, &n, &why)) ||
                               (e->max && parse_number(e->type, e->max, &n, &why))))
        return "a bound does not parse";
    if (e->type == SBX_SETTING_ENUM && (!e->choices || !e->choices[0]))
        return "an enum without choices";
    return NULL;
}

/* NULL when @text parses as @e's type, within its bounds and passes its
 * check; else why not (in @buf or static).  The table has no defect. */
static const char *judge(const sbx_setting_v1 *e, const char *text, number *n, int *idx,
                         char *buf, size_t len)
{
    const char *why = NULL;
    number lo = { 0 }, hi = { 0 };

    if (is_number(e->type)) {
        (void)(e->min && parse_number(e->type, e->min, &lo, &why));
        (void)(e->max && parse_number(e->type, e->max, &hi, &why));
        if (parse_number(e->type, text, n, &why) != SBX_OK)
            return why;
        if ((e->min && compare(e->type, *n, lo) < 0) || (e->max && compare(e->type, *n, hi) > 0)) {
            if (e->min && e->max)
                snprintf(buf, len, "must be from %s to %s", e->min, e->max);
            else
                snprintf(buf, len, "must be at %s %s", e->min ? "least" : "most",
                         e->min ? e->min : e->max);
            return buf;
        }
    } else if (e->type == SBX_SETTING_BOOL) {
        bool b;
        if (core_parse_bool(text, &b, &why) != SBX_OK)
            return why;
        n->i = b;
    } else if (e->type == SBX_SETTING_ENUM) {
        size_t at = 0;
        *idx = -1;
        for (int i = 0; e->choices[i]; i++)
            if (!strcmp(e->choices[i], text))
                *idx = i;
        if (*idx >= 0)
            return e->check ? e->check(text) : NULL;
        for (int i = 0; e->choices[i] && at < len; i++)
            at += (size_t)snprintf(buf + at, len - at, "%s%s",
                                   !i ? "use " : e->choices[i + 1] ? ", " : " or ",
                                   e->choices[i]);
        return buf;
    }
    return e->check ? e->check(text) : NULL;
}

static void store(const sbx_setting_v1 *e, void *base, const char *text, number n, int idx)
{
    char *at = (char *)base + e->offset;
    int flag = (int)n.i;

    switch (e->type) {
    case SBX_SETTING_STRING:
        memcpy(at, &text, sizeof text);
        break;
    case SBX_SETTING_BOOL:
        memcpy(at, &flag, sizeof flag);
        break;
    case SBX_SETTING_ENUM:
        memcpy(at, &idx, sizeof idx);
        break;
    case SBX_SETTING_INT:
        memcpy(at, &n.i, sizeof n.i);
        break;
    default: /* DURATION, SIZE */
        memcpy(at, &n.u, sizeof n.u);
        break;
    }
}

/* One entry: the table's defects first, then the value. */
static int read_one(const reader *r, const sbx_setting_v1 *e, void *base)
{
    const core_setting *s = r->lookup(r->ud, e->key);
    bool from_default = !(s && *s->value);
    const char *text = from_default ? e->def : s->value;
    const char *why;
    char where[CORE_MSG_MAX], buf[CORE_MSG_MAX];
    number n = { 0 };
    int idx = 0;

    if (e->type < SBX_SETTING_STRING || e->type > SBX_SETTING_ENUM)
        return core_error_set(SBX_E_INVAL, r->name, "settings table: key '%s' has "
                              "unknown type %d", e->key, e->type);
    if (e->type == SBX_SETTING_SECRET ? !listed(r->secret_keys, e->key)
                                      : (listed(r->secret_keys, e->key) ||
                                         !listed(r->config_keys, e->key)))
        return core_error_set(SBX_E_INVAL, r->name, "settings table: key '%s' is not "
                              "among the provider's %s", e->key,
                              e->type == SBX_SETTING_SECRET ? "secret_keys"
                                                            : "config_keys (credentials excluded)");
    if ((why = table_defect(e)))
        return core_error_set(SBX_E_INVAL, r->name, "settings table: key '%s': %s",
                              e->key, why);
    if (e->type == SBX_SETTING_SECRET) {
        int set = s && *s->value;
        memcpy((char *)base + e->offset, &set, sizeof set);
        return SBX_OK;
    }
    if (!text)
        return SBX_OK;
    why = judge(e, text, &n, &idx, buf, sizeof buf);
    if (why && from_default)
        return core_error_set(SBX_E_INVAL, r->name, "settings table: key '%s': the "
                              "default '%s': %s", e->key, e->def, why);
    if (why) {
        if (s->line > 0)
            snprintf(where, sizeof where, "%s:%d", s->file, s->line);
        else
            snprintf(where, sizeof where, "%s", s->file);
        return core_error_set(SBX_E_CONFIG, r->name, "%s: %s = '%.*s': %s", where,
                              e->key, VALUE_SHOWN, text, why);
    }
    store(e, base, text, n, idx);
    return SBX_OK;
}

int core_settings_read(const char *provider, const char *const *config_keys,
                       const char *const *secret_keys, core_settings_lookup lookup, void *ud,
                       const sbx_setting_v1 *table, size_t entry_size, void *base)
{
    const reader r = { provider ? provider : "?", config_keys, secret_keys, lookup, ud };

    if (!table || !base || !lookup)
        return core_error_set(SBX_E_INVAL, r.name, "settings_read: NULL argument");
    if (entry_size < offsetof(sbx_setting_v1, offset) + sizeof table->offset)
        return core_error_set(SBX_E_INVAL, r.name, "settings_read: entry_size %zu is "
                              "smaller than ABI 1.9's sbx_setting_v1", entry_size);
    for (const char *p = (const char *)table;; p += entry_size) {
        sbx_setting_v1 e;
        int rc;

        /* A newer provider's entries may be larger: read the part we know. */
        memcpy(&e, p, sizeof e);
        if (!e.key)
            return SBX_OK;
        if ((rc = read_one(&r, &e, base)) != SBX_OK)
            return rc;
    }
}
