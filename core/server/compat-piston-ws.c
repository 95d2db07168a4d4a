/* core/server/compat-piston-ws.c - Piston's WS /api/v2/connect
 *
 * Piston's JSON messages over a WebSocket (api/src/api/v2.js):
 *   client: {"type":"init", <execute's body>}, {"type":"data","stream":
 *           "stdin","data":...}, {"type":"signal","signal":"SIGKILL"}
 *   server: {"type":"runtime",language,version}, {"type":"stage","stage":
 *           "compile"|"run"}, {"type":"data","stream":"stdout"|"stderr",
 *           "data":...}, {"type":"exit","stage",code,signal},
 *           {"type":"error","message"}
 * and its close codes: 4000 already initialised, 4001 no init within a
 * second, 4002 an error was notified, 4003 not yet initialised, 4004
 * only stdin can be written, 4005 invalid signal, 4999 job completed.
 *
 * stdin: "data" messages reach the program as it runs where the default
 * provider can stream stdin (SBX_CAP_STDIN_STREAM: local, docker), after
 * the init's "stdin" if it has one (Piston ignores that field here); as
 * with Piston, the program's stdin stays open until it ends.  Elsewhere
 * stdin is the init's, given whole, and a "data" message is answered
 * with an error (4002).  Signals: SIGKILL kills the program with
 * everything it started, on any provider, and the exit says SIGKILL.
 * Where the default provider delivers signals (SBX_CAP_SIGNAL: local),
 * SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGALRM and
 * SIGWINCH reach the program's process group as Piston's do (its handler
 * runs; without one it dies of it, and the exit says so).  Another valid
 * signal, or any but SIGKILL where the provider cannot deliver it, is
 * answered with an error message naming it, the program going on: never
 * dropped unsaid, nor turned into a kill.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat-piston.h"
#include "ws.h"

struct session {
    srv_ws *ws;
    srv_req *r;
    atomic_int killed_with;   /* the signal the client ended it with */
    bool streaming;           /* data messages go to the program's stdin */
    srv_ws_stdin in;
    srv_ws_signals signals;   /* to the default provider's program */
};

static void refuse(srv_req *r, unsigned status, const char *message)
{
    r->err_code = "invalid";
    srv_reply_json(r, status, json_pack("{s:s}", "message", message));
}

static void notify(srv_ws *ws, const char *message)
{
    srv_ws_send_json(ws, json_pack("{s:s, s:s}", "type", "error", "message", message));
}

/* A valid signal other than SIGKILL: to the program, or an error message
 * saying why not (the program goes on). */
static void deliver(struct session *se, int sig, const char *name)
{
    char why[256], msg[384];
    int rc = srv_ws_signals_send(&se->signals, sig, name, why, sizeof why);

    if (rc == SRV_SIG_SENT)
        return;
    snprintf(msg, sizeof msg, "%s%s", why, rc == SRV_SIG_NO_CAP
             ? "; only SIGKILL, which kills it, can be sent" : "");
    notify(se->ws, msg);
}

/* A message after init (the reader thread).  Non-zero: stop reading. */
static int on_message(void *ud, json_t *m)
{
    struct session *se = ud;
    const char *type = json_string_value(json_object_get(m, "type"));
    int sig;

    if (!type)
        return 0;   /* Piston ignores what it does not know */
    if (!strcmp(type, "init")) {
        srv_ws_send_close(se->ws, 4000, "Already Initialized");
    } else if (!strcmp(type, "data")) {
        const char *stream = json_string_value(json_object_get(m, "stream"));
        if (!stream || strcmp(stream, "stdin") != 0) {
            srv_ws_send_close(se->ws, 4004, "Can only write to stdin");
        } else if (se->streaming) {
            json_t *d = json_object_get(m, "data");
            if (json_is_string(d) &&
                srv_ws_stdin_write(&se->in, json_string_value(d), json_string_length(d)) == 0)
                return 0;
            notify(se->ws, !json_is_string(d) ? "data must be a string"
                   : errno == EAGAIN ? "the program has not read its stdin for 5 s"
                   : "the program closed its stdin");
            srv_ws_send_close(se->ws, 4002, "Notified Error");
        } else {
            notify(se->ws, "this server cannot feed stdin to a running program: give all "
                   "of it as \"stdin\" in the init message");
            srv_ws_send_close(se->ws, 4002, "Notified Error");
        }
    } else if (!strcmp(type, "signal")) {
        const char *name = json_string_value(json_object_get(m, "signal"));
        if (!(sig = srv_signal_number(name))) {
            srv_ws_send_close(se->ws, 4005, "Invalid signal");
        } else if (sig == SIGKILL) {
            atomic_store(&se->killed_with, sig);
            sbx_cancel_fire(se->r->cancel);
            return 0;
        } else {
            deliver(se, sig, name);
            return 0;
        }
    } else {
        return 0;
    }
    sbx_cancel_fire(se->r->cancel);
    return 1;
}

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    struct session *se = ud;

    return srv_ws_send_json(se->ws, json_pack("{s:s, s:s, s:o}", "type", "data", "stream",
                                              stream == SBX_STREAM_STDERR ? "stderr" : "stdout",
                                              "data", srv_json_text(buf, len))) != 0;
}

static void on_step(void *ud, uint64_t compile_ns)
{
    struct session *se = ud;

    (void)compile_ns;
    srv_ws_send_json(se->ws, json_pack("{s:s, s:s, s:i, s:n}", "type", "exit", "stage",
                                       "compile", "code", 0, "signal"));
    srv_ws_send_json(se->ws, json_pack("{s:s, s:s}", "type", "stage", "stage", "run"));
}

/* The exit message of the stage that ended the job. */
static json_t *exit_message(struct session *se, const sbx_result *res, bool compiled)
{
    sbx_run_status st = sbx_result_status(res), cst = SBX_RUN_OK;
    bool in_compile = compiled && st == SBX_RUN_COMPILE_ERROR;
    int code = sbx_result_exit_code(res), sig = sbx_result_signal(res);
    int killed = atomic_load(&se->killed_with);
    json_t *o = json_pack("{s:s, s:s}", "type", "exit", "stage", in_compile ? "compile" : "run");

    if (in_compile)
        sbx_result_compile(res, &cst, NULL);
    if (killed) {
        code = -1;
        sig = killed;
    } else if (in_compile ? cst == SBX_RUN_TIMEOUT || cst == SBX_RUN_CPU_LIMIT
                          : st == SBX_RUN_TIMEOUT || st == SBX_RUN_CPU_LIMIT ||
                            st == SBX_RUN_MEMORY_LIMIT || st == SBX_RUN_OUTPUT_LIMIT) {
        code = -1;
        sig = SIGKILL;
    }
    if (st == SBX_RUN_SANDBOX_ERROR && !killed)
        json_object_set_new(o, "error", json_string(sbx_result_error(res) ? sbx_result_error(res)
                                                    : "sandbox error"));
    json_object_set_new(o, "code", code >= 0 && !(sig > 0 && code == 0) ? json_integer(code)
                                                                        : json_null());
    json_object_set_new(o, "signal", sig > 0 && srv_signal_name(sig)
                        ? json_string(srv_signal_name(sig)) : json_null());
    return o;
}

static void piston_connect(srv_req *r)
{
    struct session se = { NULL, r, 0, false, { -1, -1 }, { { -1, -1 }, NULL } };
    srv_piston_job job = {0};
    char err[1024];
    json_t *init = NULL;
    sbx_result *res = NULL;
    uint16_t code = 4999;
    const char *reason = "Job Completed";
    uint64_t t0 = srv_now_ns();
    int rc;

    if (!(se.ws = srv_ws_upgrade(r, refuse)))
        return;
    /* Piston gives a client one second to initialise. */
    while (!init) {
        int opcode;
        const unsigned char *data;
        size_t len;
        long left = 1000 - (long)((srv_now_ns() - t0) / 1000000);
        const char *type;
        json_t *m;

        rc = left > 0 ? srv_ws_recv(se.ws, (int)left, &opcode, &data, &len) : SRV_WS_TIMEOUT;
        if (rc == SRV_WS_TIMEOUT) {
            srv_ws_end(se.ws, 4001, "Initialization Timeout");
            return;
        }
        if (rc != SRV_WS_MESSAGE) {
            srv_ws_end(se.ws, SRV_WS_NORMAL, NULL);
            return;
        }
        m = json_loadb((const char *)data, len, 0, NULL);
        type = json_string_value(json_object_get(m, "type"));
        if (!json_is_object(m)) {
            notify(se.ws, "the message is not a JSON object");
            json_decref(m);
            srv_ws_end(se.ws, 4002, "Notified Error");
            return;
        }
        if (type && !strcmp(type, "init")) {
            init = m;
        } else {
            bool early = type && (!strcmp(type, "data") || !strcmp(type, "signal"));
            json_decref(m);
            if (early) {
                srv_ws_end(se.ws, 4003, "Not yet initialized");
                return;
            }
        }
    }
    if (srv_piston_request(r, init, &job, err, sizeof err) != 0) {
        notify(se.ws, err);
        code = 4002;
        reason = "Notified Error";
        goto out;
    }
    /* stdin: streamed where the provider can, the init's first; signals
     * delivered where it can. */
    {
        const char *def = sbx_ctx_default_provider(r->s->ctx);
        const sbx_provider *p = def ? sbx_ctx_find_provider(r->s->ctx, def) : NULL;
        srv_ws_signals_open(&se.signals, r->s->ctx, def, job.exec);
        if (p && (sbx_provider_capabilities(p) & SBX_CAP_STDIN_STREAM) &&
            srv_ws_stdin_open(&se.in) == 0) {
            se.streaming = true;
            if (job.stdin_data && srv_ws_stdin_write(&se.in, job.stdin_data, job.stdin_len)) {
                notify(se.ws, "the init's stdin is larger than the pipe holds");
                code = 4002;
                reason = "Notified Error";
                goto out;
            }
            sbx_exec_opts_set_stdin_fd(job.exec, se.in.rfd);
        } else if (job.stdin_data) {
            sbx_exec_opts_set_stdin(job.exec, job.stdin_data, job.stdin_len);
        }
    }
    sbx_exec_opts_set_output_cb(job.exec, on_output, &se);
    sbx_exec_opts_set_step_cb(job.exec, on_step, &se);
    sbx_exec_opts_set_cancel(job.exec, r->cancel);
    srv_ws_send_json(se.ws, json_pack("{s:s, s:s, s:s}", "type", "runtime", "language",
                                      job.rt->language, "version", job.rt->version));
    srv_ws_send_json(se.ws, json_pack("{s:s, s:s}", "type", "stage", "stage",
                                      job.rt->compiled ? "compile" : "run"));
    srv_ws_reader_start(se.ws, on_message, &se);
    rc = sbx_run(r->s->ctx, job.create, job.exec, &res);
    srv_ws_reader_stop(se.ws);
    if (rc != SBX_OK) {
        notify(se.ws, sbx_error_message(sbx_ctx_last_error(r->s->ctx)));
        code = 4002;
        reason = "Notified Error";
        goto out;
    }
    srv_metrics_run(r->s, sbx_result_provider(res), job.rt->tmpl,
                    sbx_run_status_name(sbx_result_status(res)), srv_now_ns() - t0);
    if (srv_ws_closed(se.ws) || (sbx_result_error_code(res) == SBX_E_CANCELLED &&
                                 !atomic_load(&se.killed_with)))
        goto out;   /* the client left, or the session ended on its message */
    srv_ws_send_json(se.ws, exit_message(&se, res, job.rt->compiled));
out:
    srv_ws_stdin_free(&se.in);
    srv_ws_signals_free(&se.signals);
    sbx_result_free(res);
    srv_piston_job_free(&job);
    json_decref(init);
    srv_ws_end(se.ws, code, reason);
}

static const srv_route routes[] = {
    { SRV_GET, "/api/v2/connect", piston_connect, SRV_R_WORKER },
};

int srv_routes_piston_ws(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
