/* core/server/native-run.c - POST /v1/run: one run, create + exec +
 * destroy (sbx_run), answered with the object sbx_result_to_json gives
 * (what `polysandbox run --json` prints), or streamed as server-sent
 * events (stdout, stderr, then result or error) when the client accepts
 * text/event-stream
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "server.h"

/* Output as it is produced, to the client's stream.  A client that went
 * away stops the command. */
static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    srv_req *r = ud;

    return srv_sse_output(r, stream, buf, len) != 0 || srv_req_gone(r);
}

void srv_run_result(srv_req *r, const srv_opts *o, int rc, sbx_result *res, uint64_t t0)
{
    char *text;

    if (rc != SBX_OK) {
        if (r->stream) {
            const sbx_error *e = sbx_ctx_last_error(r->s->ctx);
            const char *code;
            unsigned status = srv_status_of(rc, 422, &code);
            json_t *j = srv_error_json(code, sbx_error_provider(e), sbx_error_message(e));
            char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
            json_decref(j);
            if (t) {
                srv_idem_note(r, status, "application/json", t, strlen(t));
                srv_sse_event_text(r, "error", t);
                free(t);
            }
        } else {
            srv_error_lib(r, rc, 422);
        }
        return;
    }
    srv_metrics_run(r->s, sbx_result_provider(res), o->template_name ? o->template_name
                    : o->language, sbx_run_status_name(sbx_result_status(res)),
                    srv_now_ns() - t0);
    if (!(text = sbx_result_to_json(res))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return;
    }
    if (r->stream) {
        srv_idem_note(r, 200, "application/json", text, strlen(text));
        srv_sse_event_text(r, "result", text);
        free(text);
    } else {
        srv_reply(r, 200, "application/json", text, strlen(text));
    }
}

void srv_run(srv_req *r)
{
    json_t *j = srv_req_json(r);
    sbx_result *res = NULL;
    uint64_t t0 = srv_now_ns();
    srv_opts o;
    int rc;

    if (!j || srv_opts_from_json(r, j, SRV_OPT_CREATE | SRV_OPT_EXEC, NULL, &o) != 0)
        return;
    if (srv_req_wants_sse(r)) {
        if (srv_sse_begin(r) != 0)
            goto out;
        sbx_exec_opts_set_output_cb(o.exec, on_output, r);
    }
    rc = sbx_run(r->s->ctx, o.create, o.exec, &res);
    srv_run_result(r, &o, rc, res, t0);
out:
    sbx_result_free(res);
    srv_opts_free(&o);
}

static const srv_route routes[] = {
    { SRV_POST, "/v1/run", srv_run, SRV_R_WORKER },
};

int srv_routes_run(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
