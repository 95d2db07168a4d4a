/* core/server/compat-fusion.c - the SandboxFusion API (bytedance/SandboxFusion)
 *
 *   POST /run_code   {code, language, compile_timeout, run_timeout (s),
 *                     memory_limit_MB, stdin, files {path: base64},
 *                     fetch_files [path]}
 *                    -> {status: Success | Failed | SandboxError, message,
 *                        compile_result, run_result, executor_pod_name,
 *                        files {path: base64}}
 *   GET  /v1/ping    "pong"
 *   The dataset routes (/submit ...) are in compat-fusion-data.c.
 *
 * A phase result is {status: Finished | Error | TimeLimitExceeded,
 * execution_time (s), return_code, stdout, stderr}, null when the phase
 * did not run; compile_result is there for a template that compiles.
 * Statuses follow the mapping of doc/polysandboxd.8 (SANDBOXFUSION): a
 * time or CPU limit is TimeLimitExceeded; a memory limit is Finished
 * with return code 137 (SandboxFusion has no status of its own for it);
 * a sandbox error is Error and the whole answer SandboxError; anything
 * that did not exit 0 is Failed.
 *
 * Bad input is answered as FastAPI does, 422 {"detail": [{type, loc,
 * msg, input}]}, naming the field; a language with no template here is
 * a literal_error on "language" listing the ones there are.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat-fusion.h"

/* SandboxFusion's names that differ from our templates'. */
static const struct { const char *fusion, *tmpl; } names[] = {
    { "nodejs", "node" },
};

const char *srv_fusion_template(const sbx_ctx *ctx, const char *language)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].fusion, language) == 0)
            language = names[i].tmpl;
    return sbx_ctx_find_template(ctx, language) ? language : NULL;
}

/* "Input should be 'python', 'nodejs' or ...": the languages there are. */
static void languages(const sbx_ctx *ctx, char *buf, size_t size)
{
    size_t used = 0, n = sbx_ctx_template_count(ctx);

    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 1 < size; i++) {
        const char *t = sbx_template_name(sbx_ctx_template(ctx, i)), *shown = t;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            if (!strcmp(names[k].tmpl, t))
                shown = names[k].fusion;
        int w = snprintf(buf + used, size - used, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or "
                         : ", ", shown);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void srv_fusion_detail(srv_req *r, const char *type, const char *field, const char *msg,
                       json_t *input)
{
    json_t *loc = json_pack("[s]", "body");

    if (field)
        json_array_append_new(loc, json_string(field));
    r->err_code = "invalid";
    srv_reply_json(r, 422, json_pack("{s:[{s:s, s:o, s:s, s:O?}]}", "detail", "type", type,
                                     "loc", loc, "msg", msg, "input", input));
}

json_t *srv_fusion_body(srv_req *r)
{
    char why[512];
    json_t *j = srv_compat_body(r, why, sizeof why);

    if (!j) {
        json_t *in = json_object();
        srv_fusion_detail(r, "json_invalid", NULL, why, in);
        json_decref(in);
    }
    return j;
}

/* A number of seconds (> 0) in @field, or @def when absent. */
static int seconds(srv_req *r, json_t *j, const char *field, double def, uint64_t *ns)
{
    json_t *v = json_object_get(j, field);
    double s = def;

    if (v && !json_is_null(v)) {
        if (!json_is_number(v)) {
            srv_fusion_detail(r, "float_parsing", field, "Input should be a valid number", v);
            return -1;
        }
        s = json_number_value(v);
    }
    if (!(s > 0) || !isfinite(s) || s > 1e7) {
        srv_fusion_detail(r, "greater_than", field, "Input should be a number of seconds "
                          "greater than 0 (a time limit cannot be switched off)", v);
        return -1;
    }
    *ns = (uint64_t)llround(s * 1e9);
    return 0;
}

/* {path: base64 or null} into the exec. */
static int files_in(srv_req *r, json_t *files, sbx_exec_opts *x)
{
    const char *path;
    json_t *v;

    if (!files || json_is_null(files))
        return 0;
    if (!json_is_object(files)) {
        srv_fusion_detail(r, "dict_type", "files", "Input should be a valid dictionary", files);
        return -1;
    }
    json_object_foreach(files, path, v) {
        unsigned char *data = NULL;
        size_t len = 0;
        int rc;

        if (json_is_null(v))
            continue;
        if (!json_is_string(v)) {
            srv_fusion_detail(r, "string_type", "files", "Input should be a valid string", v);
            return -1;
        }
        if (!srv_path_safe(path)) {
            srv_fusion_detail(r, "value_error", "files", "file paths must be relative to the "
                              "work directory, without '..' or empty parts", v);
            return -1;
        }
        rc = srv_b64_decode(json_string_value(v), json_string_length(v), " \r\n", &data, &len);
        if (rc == ENOMEM)
            return -1;
        if (rc != 0) {
            srv_fusion_detail(r, "value_error", "files", "file contents must be base64", v);
            return -1;
        }
        rc = sbx_exec_opts_add_file(x, path, data, len, 0644);
        free(data);
        if (rc != SBX_OK) {
            srv_fusion_detail(r, "value_error", "files",
                              sbx_error_message(sbx_ctx_last_error(r->s->ctx)), v);
            return -1;
        }
    }
    return 0;
}

int srv_fusion_request(srv_req *r, json_t *j, srv_fusion_job *job)
{
    json_t *code = json_object_get(j, "code"), *lang = json_object_get(j, "language"), *v;
    uint64_t ns;
    char list[1024], msg[1200];

    memset(job, 0, sizeof *job);
    if (!code || !lang) {
        srv_fusion_detail(r, "missing", code ? "language" : "code", "Field required", j);
        return -1;
    }
    if (!json_is_string(code) || !json_is_string(lang)) {
        srv_fusion_detail(r, "string_type", json_is_string(code) ? "language" : "code",
                          "Input should be a valid string", json_is_string(code) ? lang : code);
        return -1;
    }
    if (!(job->tmpl = srv_fusion_template(r->s->ctx, json_string_value(lang)))) {
        languages(r->s->ctx, list, sizeof list);
        snprintf(msg, sizeof msg, "Input should be %s (the languages this server has a "
                 "template for)", list);
        srv_fusion_detail(r, "literal_error", "language", msg, lang);
        return -1;
    }
    if (!(job->create = sbx_create_opts_new()) || !(job->exec = sbx_exec_opts_new())) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    sbx_create_opts_set_template(job->create, job->tmpl);
    sbx_exec_opts_set_code(job->exec, job->tmpl, json_string_value(code), json_string_length(code));
    if (seconds(r, j, "compile_timeout", 10, &ns) != 0)
        return -1;
    sbx_exec_opts_set_compile_timeout(job->exec, ns);
    if (seconds(r, j, "run_timeout", 10, &ns) != 0)
        return -1;
    sbx_exec_opts_set_timeout(job->exec, ns);
    if ((v = json_object_get(j, "memory_limit_MB")) && !json_is_null(v)) {
        json_int_t mb;
        if (!json_is_integer(v)) {
            srv_fusion_detail(r, "int_type", "memory_limit_MB", "Input should be a valid integer", v);
            return -1;
        }
        mb = json_integer_value(v);
        if (mb != -1 && (mb <= 0 || mb > (json_int_t)1 << 40)) {
            srv_fusion_detail(r, "greater_than", "memory_limit_MB", "Input should be -1 (the "
                              "server's default limit) or a positive number of MB", v);
            return -1;
        }
        if (mb > 0)
            sbx_create_opts_set_limit(job->create, SBX_LIMIT_MEMORY, (uint64_t)mb << 20);
    }
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v)) {
        if (!json_is_string(v)) {
            srv_fusion_detail(r, "string_type", "stdin", "Input should be a valid string", v);
            return -1;
        }
        sbx_exec_opts_set_stdin(job->exec, json_string_value(v), json_string_length(v));
    }
    if (files_in(r, json_object_get(j, "files"), job->exec) != 0) {
        if (!r->resp)
            srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    if ((v = json_object_get(j, "fetch_files")) && !json_is_null(v)) {
        if (!json_is_array(v)) {
            srv_fusion_detail(r, "list_type", "fetch_files", "Input should be a valid list", v);
            return -1;
        }
        if (!(job->fetch = calloc(json_array_size(v) + 1, sizeof *job->fetch))) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            if (!json_is_string(e) || !srv_path_safe(json_string_value(e))) {
                srv_fusion_detail(r, json_is_string(e) ? "value_error" : "string_type",
                                  "fetch_files", json_is_string(e) ? "paths must be relative "
                                  "to the work directory, without '..' or empty parts"
                                  : "Input should be a valid string", e);
                return -1;
            }
            job->fetch[job->n_fetch++] = json_string_value(e);
        }
    }
    return 0;
}

void srv_fusion_job_free(srv_fusion_job *job)
{
    sbx_create_opts_free(job->create);
    sbx_exec_opts_free(job->exec);
    free(job->fetch);
    memset(job, 0, sizeof *job);
}

/* A phase as CommandRunResult. */
static json_t *phase(sbx_run_status st, const sbx_result *res, const srv_phase *ph)
{
    const char *status = "Finished";
    json_t *rc = NULL;
    int code = sbx_result_exit_code(res), sig = sbx_result_signal(res);

    switch (st) {
    case SBX_RUN_TIMEOUT:
    case SBX_RUN_CPU_LIMIT:
        status = "TimeLimitExceeded";
        rc = json_null();
        break;
    case SBX_RUN_SANDBOX_ERROR:
    case SBX_RUN_COMPILE_ERROR:   /* not a step's own status */
        status = "Error";
        rc = json_null();
        break;
    case SBX_RUN_MEMORY_LIMIT:
        rc = json_integer(137);   /* as a shell reports the kill */
        break;
    case SBX_RUN_OK:
        rc = json_integer(0);     /* (a compile step's: the result's code is the run's) */
        break;
    default:
        /* A process killed by a signal: Python's returncode, -signal. */
        rc = json_integer(code >= 0 ? code : sig > 0 ? -sig : 1);
        break;
    }
    return json_pack("{s:s, s:f, s:o, s:o, s:o}", "status", status, "execution_time",
                     (double)ph->ns / 1e9, "return_code", rc, "stdout",
                     srv_json_text(ph->out, ph->out_len), "stderr",
                     srv_json_text(ph->err, ph->err_len));
}

json_t *srv_fusion_response(const srv_capture *cap)
{
    sbx_run_status st = sbx_result_status(cap->res);
    bool compile_failed = st == SBX_RUN_COMPILE_ERROR;
    const char *status = st == SBX_RUN_OK ? "Success" : "Failed", *err = sbx_result_error(cap->res);
    json_t *o;

    if (st == SBX_RUN_SANDBOX_ERROR)
        status = "SandboxError";
    o = json_pack("{s:s, s:s, s:o, s:o, s:n, s:o}", "status", status, "message",
                  st == SBX_RUN_SANDBOX_ERROR && err ? err : "",
                  "compile_result", cap->compiled ? phase(cap->compile_status, cap->res,
                                                          &cap->compile) : json_null(),
                  "run_result", compile_failed ? json_null()
                                               : phase(st, cap->res, &cap->run),
                  "executor_pod_name", "files",
                  cap->files ? json_incref(cap->files) : json_object());
    return o;
}

static void run_code(srv_req *r)
{
    json_t *j = srv_fusion_body(r);
    srv_fusion_job job;
    srv_capture cap;

    if (!j)
        return;
    if (srv_fusion_request(r, j, &job) == 0) {
        if (srv_capture_run(r, job.create, job.exec, job.tmpl, job.fetch, job.n_fetch, &cap)
            != SBX_OK) {
            int rc = cap.rc;
            const char *msg = sbx_error_message(sbx_ctx_last_error(r->s->ctx));
            if (rc == SBX_E_LIMIT || rc == SBX_E_INVAL)
                srv_fusion_detail(r, "value_error", NULL, msg, j);
            else
                srv_reply_json(r, 200, json_pack("{s:s, s:s, s:n, s:n, s:n, s:{}}", "status",
                                                 "SandboxError", "message", msg && *msg ? msg
                                                 : sbx_strerror(rc), "compile_result",
                                                 "run_result", "executor_pod_name", "files"));
        } else if (sbx_result_error_code(cap.res) == SBX_E_CANCELLED) {
            srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
        } else {
            srv_reply_json(r, 200, srv_fusion_response(&cap));
        }
        srv_capture_free(&cap);
    }
    srv_fusion_job_free(&job);
    json_decref(j);
}

static void ping(srv_req *r)
{
    char *body = strdup("\"pong\"");

    srv_reply(r, 200, "application/json", body, body ? 6 : 0);
}

static const srv_route routes[] = {
    { SRV_POST, "/run_code", run_code, SRV_R_WORKER },
    { SRV_GET, "/v1/ping", ping, 0 },
};

int srv_routes_fusion(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]) != 0 ||
           srv_routes_fusion_data(rt) != 0 ? -1 : 0;
}
