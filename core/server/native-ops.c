/* core/server/native-ops.c - what operators and probes read: /healthz,
 * /readyz, /metrics, /v1/status
 *
 * All of these run on the network thread (never queued), so they answer
 * even when every worker is busy and the queue is full.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "server-int.h"

/* The process is up and serving HTTP. */
static void healthz(srv_req *r)
{
    srv_reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/* Ready to take runs: not shutting down and the default provider ready. */
static void readyz(srv_req *r)
{
    const char *def = sbx_ctx_default_provider(r->s->ctx);

    if (atomic_load(&r->s->stopping)) {
        srv_error(r, 503, "shutting_down", NULL, "the server is shutting down");
        return;
    }
    if (!def) {
        srv_error(r, 503, "provider_unavailable", NULL,
                  "no provider is ready (see GET /v1/providers)");
        return;
    }
    srv_reply_json(r, 200, json_pack("{s:s, s:s}", "status", "ready",
                                     "default_provider", def));
}

static void metrics(srv_req *r)
{
    size_t len;
    char *text = srv_metrics_text(r->s, &len);

    if (!text) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    srv_reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

static void status(srv_req *r)
{
    srv_pool_stats st;

    srv_pool_get_stats(r->s, &st);
    srv_reply_json(r, 200, json_pack(
        "{s:s, s:s, s:b, s:f, s:{s:I, s:I}, s:{s:I, s:I}, s:I, s:{s:I, s:I}, s:I, s:I}",
        "version", sbx_version(), "listen", r->s->address,
        "stopping", atomic_load(&r->s->stopping),
        "uptime_seconds", (double)((srv_now_ns() - r->s->started_ns) / 1000000) / 1e3,
        "workers", "total", (json_int_t)st.workers, "busy", (json_int_t)st.busy,
        "queue", "depth", (json_int_t)st.queued, "capacity", (json_int_t)st.queue_cap,
        "in_flight", (json_int_t)(st.busy + st.queued),
        "rejects", "queue_full", (json_int_t)st.rejected_queue,
        "quota", (json_int_t)st.rejected_quota,
        "admitted", (json_int_t)st.admitted, "completed", (json_int_t)st.completed));
}

/* The document is in the binary (openapi-data.c): what a client reads is
 * what this build answers. */
static void openapi(srv_req *r)
{
    char *copy = malloc(srv_openapi_json_len);

    if (!copy) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    memcpy(copy, srv_openapi_json, srv_openapi_json_len);
    srv_reply(r, 200, "application/json", copy, srv_openapi_json_len);
}

static const srv_route routes[] = {
    { SRV_GET, "/healthz", healthz, SRV_R_OPEN },
    { SRV_GET, "/readyz", readyz, SRV_R_OPEN },
    { SRV_GET, "/metrics", metrics, 0 },
    { SRV_GET, "/v1/status", status, 0 },
    { SRV_GET, "/openapi.json", openapi, 0 },
};

int srv_routes_ops(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
