/* core/server/native-info.c - what the server offers: GET /v1/providers,
 * /v1/templates, /v1/pools
 *
 * The objects are those `polysandbox providers|templates|pools --json`
 * print (core/cli/info-json.c).  They run on the network thread: every
 * enabled provider was loaded at start, so nothing here blocks.
 */
#include "config.h"

#include <stdlib.h>

#include "cli.h"
#include "server.h"

static void reply_array(srv_req *r, const char *key, json_t *arr)
{
    if (!arr) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    srv_reply_json(r, 200, json_pack("{s:o}", key, arr));
}

static void providers(srv_req *r)
{
    sbx_ctx *ctx = r->s->ctx;
    const char *def = sbx_ctx_default_provider(ctx);
    size_t n = sbx_ctx_provider_count(ctx);
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < n; i++) {
        json_t *o = cli_provider_json(sbx_ctx_provider(ctx, i));
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (arr) {
        srv_reply_json(r, 200, json_pack("{s:o, s:s?}", "providers", arr, "default", def));
        return;
    }
    reply_array(r, "providers", NULL);
}

static void templates(srv_req *r)
{
    sbx_ctx *ctx = r->s->ctx;
    size_t n = sbx_ctx_template_count(ctx);
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < n; i++) {
        json_t *o = cli_template_json(sbx_ctx_template(ctx, i));
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    reply_array(r, "templates", arr);
}

static void pools(srv_req *r)
{
    sbx_ctx *ctx = r->s->ctx;
    size_t n = sbx_ctx_pool_count(ctx);
    json_t *arr = json_array();
    uint64_t v[SBX_POOL_STAT_COUNT];
    char err[512];

    for (size_t i = 0; arr && i < n; i++) {
        const char *name = sbx_ctx_pool_name(ctx, i);
        json_t *o;
        if (sbx_pool_stats(ctx, name, v, SBX_POOL_STAT_COUNT) != SBX_OK)
            continue;
        if (sbx_pool_last_error(ctx, name, err, sizeof err) != SBX_OK)
            err[0] = '\0';
        o = cli_pool_json(ctx, name, v, err);
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    reply_array(r, "pools", arr);
}

static const srv_route routes[] = {
    { SRV_GET, "/v1/providers", providers, 0 },
    { SRV_GET, "/v1/templates", templates, 0 },
    { SRV_GET, "/v1/pools", pools, 0 },
};

int srv_routes_info(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
