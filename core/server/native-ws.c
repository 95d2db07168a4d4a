/* core/server/native-ws.c - GET /v1/sandboxes/{id}/exec/ws: an exec in a
 * sandbox over a WebSocket, its output streamed and the client able to
 * signal it
 *
 *   client: {"type":"init", <the body of POST .../exec>, "stdin_stream":bool}
 *           {"type":"stdin","data":...,"encoding":"utf-8"|"base64"}
 *           {"type":"stdin_close"}
 *           {"type":"signal","signal":"SIGTERM"}
 *   server: {"type":"start","sandbox_id","provider"}
 *           {"type":"stdout"|"stderr","data","encoding":"utf-8"|"base64"}
 *           {"type":"exit","result":<the result object>,"signal":name?}
 *           {"type":"error","error":{code,message,provider}}
 *   close:  1000 when the exec ended, 1008 after an error message
 *
 * Messages are JSON text, like Piston's.  The sandbox is looked up (404
 * in the error shape) before the upgrade.  stdin is the init's
 * "stdin"/"stdin_base64", whole, unless the init says "stdin_stream":
 * true: then the init's stdin comes first and each stdin message as it
 * comes, the command seeing the end at stdin_close.  That needs a
 * provider that streams stdin (SBX_CAP_STDIN_STREAM: local, docker);
 * elsewhere such an init is refused (not_supported), never run without
 * its input.  A stdin message in a session that does not stream is
 * answered not_supported and the session closes.  A signal that ends a program (SIGKILL, SIGTERM, SIGINT,
 * SIGQUIT, SIGHUP) kills the command and everything it started; others
 * cannot be delivered (an error message, the command goes on).  The
 * client closing the socket kills the command too.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "ws.h"

static void notify(srv_ws *ws, const char *code, const char *provider, const char *message);

struct session {
    srv_ws *ws;
    srv_req *r;
    atomic_int killed_with;
    bool streaming;           /* stdin goes to the pipe while it runs */
    srv_ws_stdin in;
    srv_ws_signals signals;   /* to the sandbox's provider */
};

/* A stdin message's bytes (data, encoding) into the pipe: 0, or -1
 * having told the client why. */
static int feed(struct session *se, json_t *m)
{
    json_t *d = json_object_get(m, "data");
    const char *enc = json_string_value(json_object_get(m, "encoding"));
    unsigned char *bin = NULL;
    size_t len = 0;
    int rc;

    if (!json_is_string(d)) {
        notify(se->ws, "invalid", NULL, "field 'data' of a stdin message must be a string");
        return -1;
    }
    if (enc && !strcmp(enc, "base64")) {
        if (srv_b64_decode(json_string_value(d), json_string_length(d), " \r\n", &bin,
                           &len) != 0) {
            notify(se->ws, "invalid", NULL, "field 'data' is not valid base64");
            return -1;
        }
    } else if (enc && strcmp(enc, "utf-8") != 0) {
        notify(se->ws, "invalid", NULL, "field 'encoding' must be \"utf-8\" or \"base64\"");
        return -1;
    }
    rc = bin ? srv_ws_stdin_write(&se->in, bin, len)
             : srv_ws_stdin_write(&se->in, json_string_value(d), json_string_length(d));
    free(bin);
    if (rc != 0)
        notify(se->ws, errno == EAGAIN ? "busy" : "invalid", NULL, errno == EAGAIN
               ? "the command has not read its stdin for 5 s: these bytes were not taken"
               : "stdin is closed (stdin_close, or the command closed it)");
    return rc;
}

static void refuse(srv_req *r, unsigned status, const char *message)
{
    srv_error(r, status, status == 426 ? "upgrade_required" : "invalid", NULL, "%s", message);
}

static void notify(srv_ws *ws, const char *code, const char *provider, const char *message)
{
    json_t *e = srv_error_json(code, provider, message);

    json_object_set_new(e, "type", json_string("error"));
    srv_ws_send_json(ws, e);
}

/* {"type":"signal","signal":@name}: delivered, a kill, or an error
 * message saying why not. */
static void signal_message(struct session *se, const char *name)
{
    int sig = srv_signal_number(name), rc;
    char why[256], msg[384];
    bool ends;

    if (!sig) {
        notify(se->ws, "invalid", NULL, "field 'signal' must be a signal's name such as "
               "\"SIGTERM\"");
        return;
    }
    if (sig == SIGKILL) {
        atomic_store(&se->killed_with, sig);
        sbx_cancel_fire(se->r->cancel);
        return;
    }
    rc = srv_ws_signals_send(&se->signals, sig, name, why, sizeof why);
    if (rc == SRV_SIG_SENT)
        return;
    if (rc == SRV_SIG_REFUSED) {
        notify(se->ws, "invalid", NULL, why);
        return;
    }
    /* The provider cannot deliver: as before it could, a signal that ends
     * a program ends it, through the kill. */
    ends = sig == SIGTERM || sig == SIGINT || sig == SIGQUIT || sig == SIGHUP;
    snprintf(msg, sizeof msg, "%s; %s", why, ends
             ? "the command was killed instead, with everything it started"
             : "only SIGKILL, and SIGTERM, SIGINT, SIGQUIT and SIGHUP, which kill it, "
               "can be sent");
    notify(se->ws, "not_supported", se->signals.provider, msg);
    if (ends) {
        atomic_store(&se->killed_with, sig);
        sbx_cancel_fire(se->r->cancel);
    }
}

static int on_message(void *ud, json_t *m)
{
    struct session *se = ud;
    const char *type = json_string_value(json_object_get(m, "type"));

    if (!type) {
        notify(se->ws, "invalid", NULL, "a message must be a JSON object with a \"type\"");
        return 0;
    }
    if (!strcmp(type, "signal")) {
        signal_message(se, json_string_value(json_object_get(m, "signal")));
        return 0;
    }
    if (se->streaming && !strcmp(type, "stdin")) {
        feed(se, m);
        return 0;
    }
    if (se->streaming && !strcmp(type, "stdin_close")) {
        srv_ws_stdin_close(&se->in);
        return 0;
    }
    if (!strcmp(type, "stdin") || !strcmp(type, "stdin_close")) {
        notify(se->ws, "not_supported", NULL, "stdin is not streamed in this session: give "
               "\"stdin_stream\": true in the init, or all of stdin as its \"stdin\"");
        srv_ws_send_close(se->ws, SRV_WS_POLICY, "stdin cannot be streamed");
        sbx_cancel_fire(se->r->cancel);
        return 1;
    }
    notify(se->ws, "invalid", NULL, "unknown message type (known: init, stdin, stdin_close, "
           "signal)");
    return 0;
}

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    struct session *se = ud;
    const char *name = stream == SBX_STREAM_STDERR ? "stderr" : "stdout";
    json_t *m;

    if (srv_ws_utf8(buf, len)) {
        m = json_pack("{s:s, s:s%, s:s}", "type", name, "data", (const char *)buf, len,
                      "encoding", "utf-8");
    } else {
        json_t *b64 = srv_b64_json(buf, len);
        if (!b64)
            return 1;
        m = json_pack("{s:s, s:o, s:s}", "type", name, "data", b64, "encoding", "base64");
    }
    return srv_ws_send_json(se->ws, m) != 0;
}

/* {"type":"init", ...}: 0 with the exec's options, or -1 having told the
 * client why. */
static int read_init(struct session *se, srv_opts *o, json_t **init)
{
    static const char *const extra[] = { "type", "stdin_stream", NULL };
    uint64_t t0 = srv_now_ns();

    *init = NULL;
    for (;;) {
        int opcode;
        const unsigned char *data;
        size_t len;
        long left = 10000 - (long)((srv_now_ns() - t0) / 1000000);
        int rc = left > 0 ? srv_ws_recv(se->ws, (int)left, &opcode, &data, &len)
                          : SRV_WS_TIMEOUT;
        const char *type;

        if (rc == SRV_WS_TIMEOUT)
            notify(se->ws, "request_timeout", NULL, "no init message within 10 seconds");
        if (rc != SRV_WS_MESSAGE)
            return -1;
        *init = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, NULL);
        type = json_string_value(json_object_get(*init, "type"));
        if (type && !strcmp(type, "init"))
            break;
        notify(se->ws, "invalid", NULL, "the first message must be {\"type\": \"init\", ...} "
               "with the exec's fields");
        json_decref(*init);
        *init = NULL;
        return -1;
    }
    if (srv_opts_from_json(se->r, *init, SRV_OPT_EXEC, extra, o) != 0) {
        notify(se->ws, se->r->err_code ? se->r->err_code : "invalid", NULL,
               se->r->err_message ? se->r->err_message : "bad init message");
        return -1;
    }
    return 0;
}

/* With "stdin_stream": true, stdin comes from a pipe the session writes,
 * the init's stdin first.  -1 having told the client. */
static int stream_stdin(struct session *se, struct srv_box *b, json_t *init, sbx_exec_opts *x)
{
    const sbx_provider *p = sbx_ctx_find_provider(se->r->s->ctx, srv_box_provider(b));
    json_t *want = json_object_get(init, "stdin_stream"), *first;

    if (want && !json_is_boolean(want)) {
        notify(se->ws, "invalid", NULL, "field 'stdin_stream' must be true or false");
        return -1;
    }
    if (!json_is_true(want))
        return 0;
    if (!p || !(sbx_provider_capabilities(p) & SBX_CAP_STDIN_STREAM)) {
        notify(se->ws, "not_supported", srv_box_provider(b), "this sandbox's provider cannot "
               "stream stdin to a running command (no stdin_stream capability)");
        return -1;
    }
    first = json_pack("{s:O?, s:s}", "data", json_object_get(init, "stdin"), "encoding", "utf-8");
    if (json_is_string(json_object_get(init, "stdin_base64"))) {
        json_object_set(first, "data", json_object_get(init, "stdin_base64"));
        json_object_set_new(first, "encoding", json_string("base64"));
    }
    if (srv_ws_stdin_open(&se->in) != 0) {
        json_decref(first);
        notify(se->ws, "io", NULL, "cannot make the stdin pipe");
        return -1;
    }
    se->streaming = true;
    if (json_is_string(json_object_get(first, "data")) && feed(se, first) != 0) {
        json_decref(first);
        return -1;
    }
    json_decref(first);
    sbx_exec_opts_set_stdin_fd(x, se->in.rfd);
    return 0;
}

static void exec_ws(srv_req *r)
{
    struct session se = { NULL, r, 0, false, { -1, -1 }, { { -1, -1 }, NULL } };
    sbx_sandbox *sb;
    struct srv_box *b = srv_box_use(r, &sb);
    json_t *init = NULL;
    sbx_result *res = NULL;
    uint16_t code = SRV_WS_POLICY;
    uint64_t t0 = srv_now_ns();
    bool parsed = false;
    srv_opts o;
    int rc;

    if (!b)
        return;
    if (!(se.ws = srv_ws_upgrade(r, refuse))) {
        srv_box_done(r, b);
        return;
    }
    if (read_init(&se, &o, &init) != 0)
        goto out;
    parsed = true;
    if (stream_stdin(&se, b, init, o.exec) != 0)
        goto out;
    srv_ws_signals_open(&se.signals, r->s->ctx, srv_box_provider(b), o.exec);
    sbx_exec_opts_set_output_cb(o.exec, on_output, &se);
    srv_ws_send_json(se.ws, json_pack("{s:s, s:s, s:s}", "type", "start", "sandbox_id",
                                      srv_box_id(b), "provider", srv_box_provider(b)));
    srv_ws_reader_start(se.ws, on_message, &se);
    srv_box_busy(r->s, b, r->cancel);   /* a DELETE stops it */
    rc = sbx_sandbox_exec(sb, o.exec, &res);
    srv_box_busy(r->s, b, NULL);
    srv_ws_reader_stop(se.ws);
    if (rc != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(r->s->ctx);
        const char *c;
        srv_status_of(rc, 422, &c);
        notify(se.ws, c, sbx_error_provider(e), sbx_error_message(e));
        goto out;
    }
    if (sbx_result_status(res) == SBX_RUN_SANDBOX_ERROR &&
        sbx_result_error_code(res) != SBX_E_CANCELLED)
        srv_box_drop_handle(b);   /* reopen (or find it gone) next time */
    srv_metrics_run(r->s, sbx_result_provider(res), o.language,
                    sbx_run_status_name(sbx_result_status(res)), srv_now_ns() - t0);
    if (!srv_ws_closed(se.ws)) {
        char *text = sbx_result_to_json(res);
        json_t *m = json_pack("{s:s, s:o}", "type", "exit", "result",
                              text ? json_loads(text, 0, NULL) : json_null());
        int sig = atomic_load(&se.killed_with);
        free(text);
        if (sig)
            json_object_set_new(m, "signal", json_string(srv_signal_name(sig)));
        srv_ws_send_json(se.ws, m);
        code = SRV_WS_NORMAL;
    }
out:
    srv_box_done(r, b);
    srv_ws_stdin_free(&se.in);
    srv_ws_signals_free(&se.signals);
    sbx_result_free(res);
    if (parsed)
        srv_opts_free(&o);
    json_decref(init);
    srv_ws_end(se.ws, code, code == SRV_WS_NORMAL ? "exec ended" : "error");
}

static const srv_route routes[] = {
    { SRV_GET, "/v1/sandboxes/{id}/exec/ws", exec_ws, SRV_R_WORKER },
};

int srv_routes_sandboxes_ws(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
