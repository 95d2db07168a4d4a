/* core/cli/info-json.c - providers, templates and pools as JSON
 *
 * One shape for every surface: `polysandbox providers|templates|pools
 * --json` prints these objects and polysandboxd's GET /v1/providers,
 * /v1/templates and /v1/pools answer them.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

const char *cli_state_name(sbx_provider_state s)
{
    switch (s) {
    case SBX_PROVIDER_READY: return "ready";
    case SBX_PROVIDER_UNAVAILABLE: return "unavailable";
    case SBX_PROVIDER_DISABLED: return "disabled";
    default: return "unknown";
    }
}

/* Capability names separated by @sep, or into a JSON array @arr. */
void cli_caps(uint64_t mask, char *buf, size_t size, json_t *arr)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < 64; i++) {
        uint64_t bit = UINT64_C(1) << i;
        const char *name;
        char unknown[24];
        if (!(mask & bit))
            continue;
        name = sbx_capability_name(bit);
        if (name == NULL) {
            snprintf(unknown, sizeof unknown, "bit%d", i);
            name = unknown;
        }
        if (arr != NULL) {
            json_array_append_new(arr, json_string(name));
        } else if (used < size) {
            int w = snprintf(buf + used, size - used, "%s%s",
                             used ? "," : "", name);
            if (w > 0)
                used += (size_t)w;
        }
    }
    if (arr == NULL && buf[0] == '\0')
        snprintf(buf, size, "-");
}

json_t *cli_provider_json(const sbx_provider *p)
{
    const char *v = sbx_provider_version(p), *path = sbx_provider_path(p),
               *why = sbx_provider_reason(p), *d = sbx_provider_description(p);
    json_t *o = json_object(), *cap = json_array();
    char unused[1];

    if (o == NULL || cap == NULL) {
        json_decref(o);
        json_decref(cap);
        return NULL;
    }
    cli_caps(sbx_provider_capabilities(p), unused, sizeof unused, cap);
    /* capabilities first: set_new takes @cap even when it fails */
    if (json_object_set_new(o, "capabilities", cap) ||
        json_object_set_new(o, "name", json_string(sbx_provider_name(p))) ||
        json_object_set_new(o, "state",
                            json_string(cli_state_name(sbx_provider_get_state(p)))) ||
        json_object_set_new(o, "priority",
                            json_integer(sbx_provider_priority(p))) ||
        json_object_set_new(o, "version", v ? json_string(v) : json_null()) ||
        json_object_set_new(o, "description",
                            d ? json_string(d) : json_null()) ||
        json_object_set_new(o, "path", path ? json_string(path) : json_null()) ||
        json_object_set_new(o, "config_file", sbx_provider_config_file(p)
                            ? json_string(sbx_provider_config_file(p)) : json_null()) ||
        json_object_set_new(o, "reason", why ? json_string(why) : json_null()) ||
        json_object_set_new(o, "optional", json_boolean(sbx_provider_is_optional(p))) ||
        json_object_set_new(o, "breaker",
                            json_string(sbx_breaker_state_name(sbx_provider_breaker(p)))) ||
        json_object_set_new(o, "breaker_failures",
                            json_integer(sbx_provider_breaker_failures(p)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *cli_template_json(const sbx_template *t)
{
    const char *ext = sbx_template_extensions(t);
    json_t *o = json_object(), *exts = json_array();

    if (o == NULL || exts == NULL) {
        json_decref(o);
        json_decref(exts);
        return NULL;
    }
    /* the space-separated extensions as an array */
    for (const char *p = ext ? ext : ""; *p;) {
        size_t w = strcspn(p, " ");
        if (w > 0 && json_array_append_new(exts, json_stringn(p, w)) != 0) {
            json_decref(exts);
            json_decref(o);
            return NULL;
        }
        p += w;
        p += strspn(p, " ");
    }
    if (json_object_set_new(o, "name", json_string(sbx_template_name(t))) ||
        json_object_set_new(o, "extensions", exts) ||
        json_object_set_new(o, "compiled", json_boolean(sbx_template_compiled(t))) ||
        json_object_set_new(o, "artifacts", sbx_template_artifacts(t)
                            ? json_string(sbx_template_artifacts(t)) : json_null()) ||
        json_object_set_new(o, "network", json_string(sbx_template_egress(t) ? "egress"
                                                      : "none"))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *cli_pool_json(sbx_ctx *ctx, const char *name, const uint64_t *v,
                         const char *err)
{
    const char *tmpl = sbx_pool_template(ctx, name);
    const char *prov = sbx_pool_provider(ctx, name);
    json_t *o = json_pack("{s:s, s:s?, s:s?}", "name", name, "provider", prov,
                          "template", tmpl);

    for (size_t i = 0; o != NULL && i < SBX_POOL_STAT_COUNT; i++) {
        const char *k = sbx_pool_stat_name((sbx_pool_stat)i);
        json_t *val = i == SBX_POOL_STAT_ACTIVE ? json_boolean(v[i] != 0)
                                                : json_integer((json_int_t)v[i]);
        if (k == NULL || json_object_set_new(o, k, val) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    if (o != NULL && json_object_set_new(o, "last_error", *err ? json_string(err)
                                                               : json_null()) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}
