/* tests/fuzz/fuzz-server.c - polysandboxd's decoding of a request: the
 * request target (path parameters through the route table, the query
 * arguments) and the body of every route that takes one (POST /v1/run,
 * /v1/sandboxes and its exec and files, SandboxFusion's /run_code and
 * /submit, Piston's /api/v2/execute, Judge0's /submissions, the first
 * sketch's /run_single,
 * /run_batch, /run_agent), the jobs' (POST /v1/batch and /v1/eval, GET
 * and DELETE /v1/jobs and /v1/jobs/{id}, its events), through the routes'
 * own handlers (core/server/libsrv.la)
 *
 * The input is "METHOD TARGET\n" then the body.  The target is decoded as
 * libmicrohttpd decodes it for the server (the path and each query key
 * and value percent-decoded, '+' a space in the query), the route found
 * by the server's router, and its handler run on this thread.  The
 * context has templates but no provider, so a request that decodes
 * reaches the library, which refuses it: nothing is run.  Beyond not
 * crashing or leaking: every request gets exactly one reply, never
 * "internal" (500), and an error reply names its code (the metrics and
 * the log count it by that name).  A job route gets the jobs started
 * afresh in a directory of the harness, none allowed to run
 * (jobs_running 0: a job accepted stays queued), and stopped and removed
 * after it, so that no input sees another's job.  The WebSocket routes'
 * frames are target "ws" (fuzz-ws.c).
 */
#include "config.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "fuzz.h"
#include "jobs.h"
#include "server-int.h"
#include "server.h"

static srv S;

static void init(void)
{
    /* A provider "fz" that is configured but cannot load: the requests
     * that name it get past the check of provider names. */
    static const char main_ini[] = "[core]\nprovider_path = /nonexistent\n"
                                   "default_provider = fz\n";
    static const char local[] = "[provider]\nenabled = false\n";
    static const char fz[] = "[provider]\nenabled = true\noptional = false\n";
    static const char python[] =
        "[template]\nextensions = .py\nsource = main.py\nrun = python3 main.py\n";
    static const char sh[] = "[template]\nextensions = .sh\nsource = main.sh\nrun = sh main.sh\n";
    char *cdir;

    fz_write("server-config/polysandbox.ini", main_ini, sizeof main_ini - 1);
    fz_write("server-config/providers.d/local.ini", local, sizeof local - 1);
    fz_write("server-config/providers.d/fz.ini", fz, sizeof fz - 1);
    fz_write("server-config/templates.d/python.ini", python, sizeof python - 1);
    fz_write("server-config/templates.d/sh.ini", sh, sizeof sh - 1);
    cdir = fz_path("server-config");
    if (sbx_ctx_new(&S.ctx, cdir) != SBX_OK)
        fz_fail("the harness's context: %s", sbx_error_message(sbx_ctx_last_error(S.ctx)));
    free(cdir);
    srv_conf_defaults(&S.conf);
    S.conf.state_dir = fz_path("server-state");
    S.conf.jobs_running = 0;
    S.listen_fd = -1;
    /* The families that decode bodies and parameters; not the WebSocket
     * routes (they need a connection to upgrade: their frames are target
     * "ws"). */
    if (!(S.router = srv_router_new()) || srv_routes_run(S.router) != 0 ||
        srv_routes_sandboxes(S.router) != 0 || srv_routes_piston(S.router) != 0 ||
        srv_routes_fusion(S.router) != 0 || srv_routes_seed(S.router) != 0 ||
        srv_routes_judge0(S.router) != 0 || srv_routes_jobs(S.router) != 0 ||
        srv_metrics_new(&S) != 0 || srv_registry_new(&S) != 0)
        fz_fail("the harness's server: out of memory");
}

/* One "key=value" of the query, decoded as libmicrohttpd does. */
static void query_arg(srv_req *r, char *arg)
{
    char *eq = strchr(arg, '='), *kv, **q;
    size_t kl, vl;

    if (eq)
        *eq = '\0';
    for (char *p = arg; *p; p++)
        if (*p == '+')
            *p = ' ';
    for (char *p = eq ? eq + 1 : NULL; p && *p; p++)
        if (*p == '+')
            *p = ' ';
    kl = MHD_http_unescape(arg);
    vl = eq ? MHD_http_unescape(eq + 1) : 0;
    kl = strnlen(arg, kl);
    vl = eq ? strnlen(eq + 1, vl) : 0;
    if (r->n_query >= 64)
        return;
    q = realloc(r->query, (r->n_query + 1) * sizeof *q);
    if (!q)
        fz_fail("out of memory");
    r->query = q;
    kv = fz_xmalloc(kl + vl + 2);
    memcpy(kv, arg, kl);
    kv[kl] = '\0';
    memcpy(kv + kl + 1, eq ? eq + 1 : "", vl);
    kv[kl + 1 + vl] = '\0';
    r->query[r->n_query++] = kv;
}

/* A route of the jobs (native-jobs.c). */
static bool job_route(const srv_route *rt)
{
    return !strncmp(rt->pattern, "/v1/jobs", 8) || !strcmp(rt->pattern, "/v1/batch") ||
           !strcmp(rt->pattern, "/v1/eval");
}

static int one(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data, *nl = memchr(in, '\n', size), *sp;
    size_t line = nl ? (size_t)(nl - in) : size;
    char *target, *qs, *save = NULL;
    unsigned method, allowed;
    bool jobs;
    srv_req *r;

    if (!S.router)
        init();
    sp = memchr(in, ' ', line);
    if (!sp || !(method = srv_method_bit(in, (size_t)(sp - in))))
        return 0;
    target = fz_strndup((const uint8_t *)sp + 1, line - (size_t)(sp - in) - 1);
    if (strlen(target) != line - (size_t)(sp - in) - 1 || target[0] != '/') {
        free(target);   /* libmicrohttpd answers these itself */
        return 0;
    }

    r = calloc(1, sizeof *r);
    if (!r)
        fz_fail("out of memory");
    r->s = &S;
    r->token = -1;
    r->fd = -1;
    atomic_init(&r->refs, 1);
    snprintf(r->rid, sizeof r->rid, "fz");
    r->method = method;
    if ((qs = strchr(target, '?')))
        *qs++ = '\0';
    MHD_http_unescape(target);
    r->path = target;
    for (char *a = qs ? strtok_r(qs, "&", &save) : NULL; a; a = strtok_r(NULL, "&", &save))
        query_arg(r, a);
    r->route = srv_router_match(S.router, method, r->path, &allowed, r->params,
                                r->param_names, &r->n_params);
    if (!r->route) {
        srv_req_unref(r);
        return 0;
    }
    r->body_len = nl ? size - line - 1 : 0;
    r->body = fz_strndup(nl ? (const uint8_t *)nl + 1 : data, r->body_len);
    r->body_cap = r->body_len + 1;
    if ((r->route->flags & SRV_R_WORKER) && !(r->cancel = sbx_cancel_new()))
        fz_fail("out of memory");

    jobs = job_route(r->route);
    if (jobs && srv_jobs_start(&S) != 0)
        fz_fail("the harness's jobs: cannot start them");
    r->route->handler(r);
    if (getenv("SBX_FUZZ_TRACE"))
        fprintf(stderr, "fuzz: server: %s -> %u %s: %s\n", r->route->pattern, r->status,
                r->err_code ? r->err_code : "", r->err_message ? r->err_message : "");
    if (!r->resp)
        fz_fail("%s: the handler of %s gave no reply", r->path, r->route->pattern);
    if (r->status < 200 || r->status > 599)
        fz_fail("%s: HTTP status %u", r->route->pattern, r->status);
    if (r->status == 500 && (!r->err_code || strcmp(r->err_code, "nomem") != 0))
        fz_fail("%s: 500 (%s) on a request: %s", r->route->pattern,
                r->err_code ? r->err_code : "no code",
                r->err_message ? r->err_message : "");
    if (r->status >= 400 && !r->err_code)
        fz_fail("%s: HTTP %u without an error code", r->route->pattern, r->status);
    srv_req_unref(r);
    if (jobs) {
        char *dir = fz_path("server-state/jobs");
        srv_jobs_stop(&S, 0);
        if (job_remove_dir(dir) != 0)
            fz_fail("the harness's jobs: cannot remove %s", dir);
        free(dir);
    }
    return 0;
}

FZ_TARGET(server, init, one)
