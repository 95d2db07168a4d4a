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

/* An array of one object per item (NULL on ENOMEM); @item may skip one
 * by returning NULL with *skip set. */
static json_t *array_of(srv_req *r, size_t n, json_t *(*item)(srv_req *, size_t, bool *))
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < n; i++) {
        bool skip = false;
        json_t *o = item(r, i, &skip);
        if (skip)
            continue;
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

static void reply_array(srv_req *r, const char *key, json_t *arr, const char *def)
{
    if (!arr) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    srv_reply_json(r, 200, json_pack("{s:o, s:s*}", key, arr, "default", def));
}

static json_t *provider_item(srv_req *r, size_t i, bool *skip)
{
    (void)skip;
    return cli_provider_json(sbx_ctx_provider(r->s->ctx, i));
}

static json_t *template_item(srv_req *r, size_t i, bool *skip)
{
    (void)skip;
    return cli_template_json(sbx_ctx_template(r->s->ctx, i));
}

static json_t *pool_item(srv_req *r, size_t i, bool *skip)
{
    sbx_ctx *ctx = r->s->ctx;
    const char *name = sbx_ctx_pool_name(ctx, i);
    uint64_t v[SBX_POOL_STAT_COUNT];
    char err[512];

    if (sbx_pool_stats(ctx, name, v, SBX_POOL_STAT_COUNT) != SBX_OK) {
        *skip = true;
        return NULL;
    }
    if (sbx_pool_last_error(ctx, name, err, sizeof err) != SBX_OK)
        err[0] = '\0';
    return cli_pool_json(ctx, name, v, err);
}

static void providers(srv_req *r)
{
    reply_array(r, "providers", array_of(r, sbx_ctx_provider_count(r->s->ctx), provider_item),
                sbx_ctx_default_provider(r->s->ctx));
}

static void templates(srv_req *r)
{
    reply_array(r, "templates", array_of(r, sbx_ctx_template_count(r->s->ctx), template_item),
                NULL);
}

static void pools(srv_req *r)
{
    reply_array(r, "pools", array_of(r, sbx_ctx_pool_count(r->s->ctx), pool_item), NULL);
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
