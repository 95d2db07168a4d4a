/* plugins/volcengine/volc-exec.c - commands and files in a veFaaS sandbox,
 * through its AIO sandbox server's bash API and the shwrap wrapper
 *
 * The AIO server runs a command line in a bash session and hands back
 * stdout and stderr as strings with byte offsets (README.md), so every
 * exec, upload and download runs the wrapper of plugins/common/shwrap.h:
 * files and stdin first go to the work directory as /v1/file/write
 * (base64), then POST /v1/bash/exec runs `sh -c WRAPPER sbx ARGV...`
 * there, waiting a moment for a quick command to end, and POST
 * /v1/bash/output long-polls the rest from the offsets already seen.
 * Reading from offsets makes a poll safe to repeat: one that failed on
 * the way (a dropped connection, a 5xx of the gateway) is asked again,
 * and the command never notices.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base64.h"
#include "randhex.h"
#include "shwrap.h"
#include "volc-int.h"

/* How long the exec call itself waits for the command (a quick command
 * then needs no poll), and the longest long-poll. */
#define VC_FIRST_WAIT_S 1.0
#define VC_POLL_WAIT_S 5.0
/* Past its own time limit, how long a command may take to be reported
 * timed out by the server before the provider kills it. */
#define VC_GRACE_NS (5 * 1000000000ull)
/* Failed polls in a row given up on. */
#define VC_POLL_TRIES 8

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool transient(int rc)
{
    return rc == SBX_E_NETWORK || rc == SBX_E_SERVER || rc == SBX_E_RATE_LIMITED ||
           rc == SBX_E_TIMEOUT;
}

/* Writes @data to the absolute path @abs in the sandbox. */
static int write_file(struct vc_prov *p, struct vc_sb *s, const char *abs, const void *data,
                      size_t len)
{
    char *b64 = pc_b64_encode(data, len);
    json_t *body = b64 ? json_pack("{s:s, s:s, s:s}", "file", abs, "content", b64, "encoding",
                                   "base64") : NULL;
    free(b64);
    if (!body)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = vc_aio(p, s, "write a file", "/v1/file/write", body, 0, NULL, NULL);
    json_decref(body);
    return rc;
}

/* What one run of the wrapper is. */
struct run {
    sw_job job;
    const char *const *argv;
    const void *stdin_data;
    size_t stdin_len;
    uint64_t timeout_ns;
    const sbx_output_sink_v1 *sink;
    /* job.scratch points here, so that it lives as long as the run. */
    char scratch[32];
};

/* The command as the server last described it. */
struct cmd {
    char session[80], command_id[80];
    json_int_t offset, stderr_offset;
    const char *status;      /* "running", "completed", ... (static copy) */
    long exit_code;
    bool fresh;              /* the last answer carried output */
};

static const char *status_of(const char *st)
{
    static const char *const known[] = {"pending", "running", "completed", "timed_out",
                                        "killed", NULL};
    for (size_t i = 0; st && known[i]; i++)
        if (!strcmp(st, known[i]))
            return known[i];
    return NULL;
}

/* Takes what an exec or output answer @d says into @c, feeding the new
 * output to @dec.  Returns SBX_OK, or SBX_E_BACKEND for an answer that is
 * not one, or SBX_E_LIMIT when the decoder says stop. */
static int take(struct vc_prov *p, struct vc_sb *s, json_t *d, json_t *info, struct cmd *c,
                sw_dec *dec)
{
    const char *out = json_string_value(json_object_get(d, "stdout"));
    const char *err = json_string_value(json_object_get(d, "stderr"));
    json_t *off = json_object_get(d, "offset"), *eoff = json_object_get(d, "stderr_offset");
    const char *st = status_of(json_string_value(json_object_get(info, "status")));
    const char *sid = json_string_value(json_object_get(d, "session_id"));
    const char *cid = json_string_value(json_object_get(info, "command_id"));
    json_t *ec = json_object_get(info, "exit_code");

    if (!st || !json_is_integer(off) || !json_is_integer(eoff) ||
        json_integer_value(off) < c->offset || json_integer_value(eoff) < c->stderr_offset)
        return p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: the bash "
                                  "answer is not one (no status or offsets)", s->id);
    if (sid && !c->session[0])
        snprintf(c->session, sizeof c->session, "%s", sid);
    if (cid && !c->command_id[0])
        snprintf(c->command_id, sizeof c->command_id, "%s", cid);
    c->fresh = (out && *out) || (err && *err);
    c->offset = json_integer_value(off);
    c->stderr_offset = json_integer_value(eoff);
    c->status = st;
    c->exit_code = json_is_integer(ec) ? (long)json_integer_value(ec) : -1;
    if ((out && sw_dec_feed(dec, 1, out, strlen(out))) ||
        (err && sw_dec_feed(dec, 2, err, strlen(err))))
        return dec->bad ? p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: the "
                                             "exec's output is not the wrapper's (no sh or "
                                             "base64 in the image?)", s->id)
                        : SBX_E_LIMIT;
    return SBX_OK;
}

static void kill_command(struct vc_prov *p, struct vc_sb *s, const struct cmd *c)
{
    json_t *body = json_pack("{s:s, s:s}", "session_id", c->session, "signal", "SIGKILL");
    if (body && vc_aio(p, s, "kill", "/v1/bash/kill", body, 0, NULL, NULL) != SBX_OK)
        p->host->log(p->h, SBX_LOG_WARNING, "sandbox %s: the command of session %s may run on "
                     "(kill failed)", s->id, c->session);
    json_decref(body);
    s->session[0] = '\0';   /* a fresh session next time */
}

/* The body of a /v1/bash/output read of @c's output from its offsets,
 * waiting up to @timeout s for more when @wait. */
static json_t *output_request(const struct cmd *c, bool wait, double timeout)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:b, s:f}", "session_id", c->session, "command_id",
                     c->command_id, "offset", c->offset, "stderr_offset", c->stderr_offset,
                     "wait", wait, "wait_timeout", timeout);
}

/* Polls until the command is no longer running; *stop says whether the
 * decoder asked to stop (SBX_E_LIMIT then), *late whether the deadline
 * passed. */
static int follow(struct vc_prov *p, struct vc_sb *s, struct cmd *c, sw_dec *dec,
                  uint64_t deadline, bool *late)
{
    int fails = 0;
    *late = false;
    /* A finished command whose last answer carried output is read once
     * more, unless its status line came: then nothing can follow. */
    while (!strcmp(c->status, "running") || !strcmp(c->status, "pending") ||
           (c->fresh && !dec->status[0])) {
        uint64_t now = vc_now_ns();
        bool done = strcmp(c->status, "running") && strcmp(c->status, "pending");
        if (!done && now >= deadline) {
            *late = true;
            return SBX_OK;
        }
        double wait = done ? 0 : (double)(deadline - now) / 1e9;
        if (wait > VC_POLL_WAIT_S)
            wait = VC_POLL_WAIT_S;
        json_t *body = output_request(c, !done, wait);
        json_t *d = NULL;
        long status = 0;
        int rc = body ? vc_aio(p, s, "read output", "/v1/bash/output", body,
                               (long)(wait * 1000) + p->request_ms, &d, &status)
                      : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        json_decref(body);
        if (rc == SBX_E_NOT_FOUND) {
            json_decref(d);
            return p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s died while "
                                      "its command ran (killed or expired)", s->id);
        }
        if (rc != SBX_OK && transient(rc) && ++fails < VC_POLL_TRIES &&
            vc_now_ns() < deadline + VC_GRACE_NS) {
            json_decref(d);
            pause_ms(50L << (fails < 5 ? fails : 5));
            continue;
        }
        if (rc == SBX_OK)
            rc = take(p, s, d, json_object_get(d, "command"), c, dec);
        json_decref(d);
        if (rc != SBX_OK)
            return rc;
        fails = 0;
    }
    return SBX_OK;
}

/* Puts @data at <workdir>/<scratch><suffix>, for the wrapper. */
static int put(struct vc_prov *p, struct vc_sb *s, const char *scratch, const char *suffix,
               const void *data, size_t len)
{
    char *abs = NULL;
    if (asprintf(&abs, "%s/%s%s", p->workdir, scratch, suffix) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    int rc = write_file(p, s, abs, data, len);
    free(abs);
    return rc;
}

/* Runs the wrapper; fills @out (its status, timings) and leaves the
 * wrapper's outcome in *kind and *code. */
static int run_wrapper(struct vc_prov *p, struct vc_sb *s, struct run *w,
                       sbx_exec_outcome_v1 *out, sw_kind *kind, long *code)
{
    char hex[17], *scratch = w->scratch, suffix[32];
    int rc = SBX_OK;

    if (pc_random_hex(hex, 8) != 0)
        return p->host->set_error(p->h, SBX_E_INTERNAL, VC_NAME ": no random bytes");
    /* The wrapper works in the exec's directory, the work directory. */
    snprintf(scratch, sizeof w->scratch, ".sbx-%s", hex);
    w->job.workdir = NULL;
    w->job.scratch = scratch;
    uint64_t t0 = vc_now_ns();
    for (size_t i = 0; rc == SBX_OK && i < w->job.n_files; i++) {
        snprintf(suffix, sizeof suffix, ".f%zu", i);
        rc = put(p, s, scratch, suffix, w->job.files[i].data, w->job.files[i].len);
    }
    if (rc == SBX_OK && w->stdin_len) {
        rc = put(p, s, scratch, ".in", w->stdin_data, w->stdin_len);
        w->job.stdin_file = true;
    }
    if (rc != SBX_OK) {
        vc_not_started(s);
        return rc;
    }
    char *script = sw_script(&w->job);
    char *line = script ? sw_command_line(script, w->argv) : NULL;
    free(script);
    if (!line)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    double limit = (double)w->timeout_ns / 1e9;
    struct cmd c = {.status = "running"};
    sw_dec dec;
    sw_dec_init(&dec, w->sink);
    json_t *d = NULL;
    long status = 0;
    uint64_t t1 = vc_now_ns(), deadline = t1 + w->timeout_ns;
    for (int tries = 0; tries < 2; tries++) {
        json_t *body = json_pack("{s:s, s:s, s:b, s:f, s:f, s:i}", "command", line, "exec_dir",
                                 p->workdir, "async_mode", 0, "timeout",
                                 limit < VC_FIRST_WAIT_S ? limit : VC_FIRST_WAIT_S,
                                 "hard_timeout", limit, "max_output_length", 0);
        if (body && s->session[0] && json_object_set_new(body, "session_id",
                                                         json_string(s->session)))
            json_decref(body), body = NULL;
        rc = body ? vc_aio(p, s, "exec", "/v1/bash/exec", body,
                           (long)(VC_FIRST_WAIT_S * 1000) + p->request_ms, &d, &status)
                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        json_decref(body);
        /* A session of ours the server no longer knows: once more, in a
         * new one (the command did not start). */
        if (rc == SBX_E_BACKEND && status >= 200 && status < 300 && s->session[0]) {
            s->session[0] = '\0';
            continue;
        }
        break;
    }
    free(line);
    if (rc != SBX_OK) {
        /* An HTTP answer refusing it: the command never started.  A
         * transport failure may have come after it did. */
        if (status != 0)
            vc_not_started(s);
        goto done;
    }
    rc = take(p, s, d, d, &c, &dec);
    json_decref(d);
    if (c.session[0])
        snprintf(s->session, sizeof s->session, "%s", c.session);
    if (rc == SBX_OK && !c.command_id[0])
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: the exec answer "
                                "names no command", s->id);
    bool late = false;
    if (rc == SBX_OK)
        rc = follow(p, s, &c, &dec, deadline + VC_GRACE_NS, &late);
    uint64_t t2 = vc_now_ns();
    out->start_ns = t1 - t0;
    out->exec_ns = t2 - t1;
    bool running = !strcmp(c.status, "running") || !strcmp(c.status, "pending");
    if (rc == SBX_E_LIMIT) {
        /* The sink said stop (past a cap, or for the caller). */
        if (running)
            kill_command(p, s, &c);
        out->status = SBX_RUN_OUTPUT_LIMIT;
        rc = SBX_OK;
        goto done;
    }
    if (rc != SBX_OK)
        goto done;  /* the server stops it at its hard_timeout */
    if (late || !strcmp(c.status, "timed_out")) {
        if (late)
            kill_command(p, s, &c);
        out->status = SBX_RUN_TIMEOUT;
        goto done;
    }
    if (!strcmp(c.status, "killed")) {
        s->session[0] = '\0';
        /* A sandbox that died kills its commands first: one more read
         * tells the two apart (a dead sandbox is not found). */
        json_t *pd = NULL, *body = output_request(&c, false, 0);
        long st = 0;
        int probe = body ? vc_aio(p, s, "read output", "/v1/bash/output", body,
                                  p->request_ms, &pd, &st) : SBX_E_NOMEM;
        json_decref(body);
        json_decref(pd);
        if (probe == SBX_E_NOT_FOUND)
            rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s died while its "
                                    "command ran (killed or expired)", s->id);
        else
            rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: the command "
                                    "was killed in the sandbox (its session closed, or the "
                                    "server failed)", s->id);
        goto done;
    }
    sw_dec_finish(&dec);
    *kind = sw_outcome(&dec, code);
    if (*kind == SW_NONE || *kind == SW_BAD)
        rc = p->host->set_error(p->h, SBX_E_BACKEND, VC_NAME ": sandbox %s: the wrapper ended "
                                "without a status (exit %ld)", s->id, c.exit_code);
done:
    sw_dec_free(&dec);
    return rc;
}

int vc_exec(struct vc_prov *p, struct vc_sb *s, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    sw_kind kind = SW_NONE;
    long code = 0;

    if (spec->cwd && !sw_path_ok(spec->cwd))
        return p->host->set_error(p->h, SBX_E_PATH, VC_NAME ": cwd '%s' is not a safe relative "
                                  "path", spec->cwd);
    for (size_t i = 0; i < spec->n_files; i++)
        if (!sw_path_ok(spec->files[i].path))
            return p->host->set_error(p->h, SBX_E_PATH, VC_NAME ": file '%s' is not a safe "
                                      "relative path", spec->files[i].path);
    for (size_t i = 0; i < spec->n_env; i++)
        if (!sw_env_name_ok(spec->env[i].key))
            return p->host->set_error(p->h, SBX_E_INVAL, VC_NAME ": '%s' is not a variable name "
                                      "the shell can export", spec->env[i].key);
    struct run w = {.job = {.cwd = spec->cwd, .env = spec->env, .n_env = spec->n_env,
                            .files = spec->files, .n_files = spec->n_files},
                    .argv = spec->argv, .stdin_data = spec->stdin_data,
                    .stdin_len = spec->stdin_data ? spec->stdin_len : 0,
                    .timeout_ns = spec->timeout_ns, .sink = sink};
    out->status = SBX_RUN_OK;
    int rc = run_wrapper(p, s, &w, out, &kind, &code);
    if (rc != SBX_OK || out->status == SBX_RUN_TIMEOUT || out->status == SBX_RUN_OUTPUT_LIMIT)
        return rc;
    switch (kind) {
    case SW_EXITED:
    case SW_WAITED:
    case SW_EXEC_FAILED:
        sw_fill_exit(kind, code, out);
        return SBX_OK;
    case SW_PATH:
        vc_not_started(s);
        return p->host->set_error(p->h, SBX_E_PATH, VC_NAME ": file '%s' goes through a "
                                  "symbolic link", spec->files[code < 0 ? 0 : code].path);
    case SW_CWD:
        vc_not_started(s);
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, VC_NAME ": cwd '%s' is missing or goes "
                                  "through a symbolic link", spec->cwd ? spec->cwd : ".");
    default:
        vc_not_started(s);
        return p->host->set_error(p->h, SBX_E_IO, VC_NAME ": sandbox %s: a file could not be "
                                  "placed before the command", s->id);
    }
}

int vc_upload(struct vc_prov *p, struct vc_sb *s, const char *path, const void *data, size_t len,
              uint32_t mode)
{
    static const char *const argv[] = {"true", NULL};
    sw_kind kind = SW_NONE;
    long code = 0;
    if (!sw_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH, VC_NAME ": '%s' is not a safe relative path",
                                  path);
    sbx_file_v1 f = {.path = path, .data = data, .len = len, .mode = mode};
    sbx_exec_outcome_v1 o = {.struct_size = sizeof o};
    struct run w = {.job = {.files = &f, .n_files = 1}, .argv = argv,
                    .timeout_ns = (uint64_t)p->request_ms * 1000000u};
    int rc = run_wrapper(p, s, &w, &o, &kind, &code);
    return rc != SBX_OK ? rc : sw_upload_result(p->host, p->h, VC_NAME, path, kind, code);
}

int vc_download(struct vc_prov *p, struct vc_sb *s, const char *path, size_t max, void **data,
                size_t *len)
{
    sw_kind kind = SW_NONE;
    long code = 0;
    *data = NULL;
    *len = 0;
    if (!sw_path_ok(path))
        return p->host->set_error(p->h, SBX_E_PATH, VC_NAME ": '%s' is not a safe relative path",
                                  path);
    sw_collect c = {.cap = max};
    if (!(c.buf = p->host->alloc(max ? max : 1)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    sbx_output_sink_v1 sink = {.write = sw_collect_write, .ud = &c};
    sbx_exec_outcome_v1 o = {.struct_size = sizeof o};
    struct run w = {.job = {.download = path, .download_max = max},
                    .timeout_ns = (uint64_t)p->request_ms * 1000000u, .sink = &sink};
    int rc = run_wrapper(p, s, &w, &o, &kind, &code);
    if (rc == SBX_OK && o.status == SBX_RUN_OUTPUT_LIMIT)
        kind = SW_TOO_BIG;
    if (rc == SBX_OK)
        rc = sw_download_result(p->host, p->h, VC_NAME, path, max, kind);
    if (rc == SBX_OK) {
        *data = c.buf;
        *len = c.len;
        return SBX_OK;
    }
    p->host->free(c.buf);
    return rc;
}
