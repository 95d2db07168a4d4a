/* plugins/e2b/e2b-exec.c - one command through envd's process.Process/Start
 *
 * Start is a Connect server stream: the request is one envelope (a flag
 * byte, a 4-byte big-endian length, a JSON message); the answer is a run
 * of envelopes, {"event":{"start"|"data"|"keepalive"|"end":...}}, closed by
 * an envelope with flag 0x02 carrying {} or {"error":{...}}.  Output
 * bytes are base64, zero values are omitted (a missing exitCode is 0).
 *
 * envd kills the process when Connect-Timeout-Ms passes, but not what it
 * started; and a dropped stream does not kill anything.  So after any kill
 * of ours (time limit, output cap, a sink asking to stop) we also kill
 * every process carrying this exec's marker variable.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "e2b-int.h"

#define MAX_MESSAGE (16u * 1024 * 1024)
#define STDIN_CHUNK (48u * 1024)
#define CLEANUP_TIMEOUT_MS 15000L

enum stop_reason { STOP_NONE, STOP_SINK };

struct run {
    struct e2b_prov *p;
    struct e2b_sb *sb;
    const sbx_output_sink_v1 *sink;
    enum stop_reason stop;
    /* envelope parser */
    unsigned char *buf;
    size_t len, alloc;
    /* what the stream said */
    bool started, ended, eos;
    long pid;
    uint64_t start_at, end_at;
    int exit_code;
    bool exited;
    char status[96];
    char eos_code[40];
    char eos_msg[300];
    char proto_err[200];
    /* stdin */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
};

/* ---- Go's signal names ("signal: killed") to numbers ---- */

static int signal_number(const char *status)
{
    static const struct {
        const char *name;
        int sig;
    } names[] = {
        {"hangup", SIGHUP}, {"interrupt", SIGINT}, {"quit", SIGQUIT},
        {"illegal instruction", SIGILL}, {"trace/breakpoint trap", SIGTRAP},
        {"aborted", SIGABRT}, {"bus error", SIGBUS}, {"floating point exception", SIGFPE},
        {"killed", SIGKILL}, {"user defined signal 1", SIGUSR1},
        {"segmentation fault", SIGSEGV}, {"user defined signal 2", SIGUSR2},
        {"broken pipe", SIGPIPE}, {"alarm clock", SIGALRM}, {"terminated", SIGTERM},
        {"CPU time limit exceeded", SIGXCPU}, {"file size limit exceeded", SIGXFSZ},
        {"bad system call", SIGSYS}, {"profiling timer expired", SIGPROF},
        {"virtual timer expired", SIGVTALRM}, {"urgent I/O condition", SIGURG},
    };
    static const char prefix[] = "signal: ";
    if (strncmp(status, prefix, sizeof prefix - 1))
        return 0;
    const char *s = status + sizeof prefix - 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].name);
        /* "segmentation fault (core dumped)" */
        if (!strncasecmp(s, names[i].name, n) && (s[n] == '\0' || s[n] == ' '))
            return names[i].sig;
    }
    int n;
    if (sscanf(s, "signal %d", &n) == 1 && n > 0 && n < 65)
        return n;
    return 0;
}

/* ---- output ---- */

/* The core's sink holds the output caps: past one it says stop. */
static int deliver(struct run *r, int stream, const unsigned char *data, size_t len)
{
    if (len > 0 && r->sink && r->sink->write && r->sink->write(r->sink->ud, stream, data, len)) {
        r->stop = STOP_SINK;
        return SBX_E_LIMIT;
    }
    return 0;
}

static void copy_str(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s ? s : "");
}

static int protocol_error(struct run *r, const char *what)
{
    copy_str(r->proto_err, sizeof r->proto_err, what);
    return SBX_E_BACKEND;
}

static int on_event(struct run *r, json_t *ev)
{
    json_t *v;
    if ((v = json_object_get(ev, "start"))) {
        json_t *pid = json_object_get(v, "pid");
        pthread_mutex_lock(&r->lock);
        r->started = true;
        r->pid = json_is_integer(pid) ? (long)json_integer_value(pid) : 0;
        r->start_at = e2b_now_ns();
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    if ((v = json_object_get(ev, "data"))) {
        static const struct {
            const char *key;
            int stream;
        } keys[] = {{"stdout", SBX_STREAM_STDOUT}, {"stderr", SBX_STREAM_STDERR},
                    {"pty", SBX_STREAM_STDOUT}};
        for (size_t i = 0; i < 3; i++) {
            const char *b = json_string_value(json_object_get(v, keys[i].key));
            if (!b)
                continue;
            size_t n = 0;
            unsigned char *bytes = pc_b64_decode(b, &n);
            if (!bytes)
                return protocol_error(r, "a data event is not base64");
            int rc = deliver(r, keys[i].stream, bytes, n);
            free(bytes);
            if (rc)
                return rc;
        }
        return 0;
    }
    if ((v = json_object_get(ev, "end"))) {
        json_t *code = json_object_get(v, "exitCode");
        /* Go's ExitCode(): 0-255, or -1 when a signal ended it.  Anything
         * else would be cut to an int, 4294967296 to 0: "ok". */
        if (code && (!json_is_integer(code) || json_integer_value(code) < -1 ||
                     json_integer_value(code) > 255))
            return protocol_error(r, "an end event's exit code is not one a process has");
        r->ended = true;
        r->end_at = e2b_now_ns();
        /* proto3 JSON omits zero values: no exitCode is 0, no exited false. */
        r->exit_code = code ? (int)json_integer_value(code) : 0;
        r->exited = json_is_true(json_object_get(v, "exited"));
        if (r->exited && r->exit_code < 0)
            return protocol_error(r, "an end event's exit code is not one a process has");
        copy_str(r->status, sizeof r->status, json_string_value(json_object_get(v, "status")));
        return 0;
    }
    return 0; /* keepalive, or an event newer than us */
}

static int on_message(struct run *r, unsigned flags, const unsigned char *msg, size_t len)
{
    if (flags & 0x01)
        return protocol_error(r, "envd sent a compressed message though none was asked for");
    json_error_t jerr;
    json_t *j = json_loadb((const char *)msg, len, 0, &jerr);
    if (!json_is_object(j)) {
        json_decref(j);
        return protocol_error(r, "a stream message is not a JSON object");
    }
    int rc = 0;
    if (flags & 0x02) {
        json_t *e = json_object_get(j, "error");
        r->eos = true;
        if (json_is_object(e)) {
            copy_str(r->eos_code, sizeof r->eos_code, json_string_value(json_object_get(e, "code")));
            copy_str(r->eos_msg, sizeof r->eos_msg, json_string_value(json_object_get(e, "message")));
            if (!r->eos_code[0])
                copy_str(r->eos_code, sizeof r->eos_code, "unknown");
        }
    } else if (r->eos) {
        rc = protocol_error(r, "a message after the end of the stream");
    } else {
        json_t *ev = json_object_get(j, "event");
        rc = json_is_object(ev) ? on_event(r, ev) : 0;
    }
    json_decref(j);
    return rc;
}

/* ph_do's on_data: split the byte stream into envelopes. */
static int on_data(void *ud, const void *data, size_t len)
{
    struct run *r = ud;
    if (r->len + len > r->alloc) {
        size_t n = r->alloc ? r->alloc : 65536;
        while (n < r->len + len)
            n *= 2;
        unsigned char *nb = realloc(r->buf, n);
        if (!nb)
            return SBX_E_NOMEM;
        r->buf = nb;
        r->alloc = n;
    }
    memcpy(r->buf + r->len, data, len);
    r->len += len;
    size_t off = 0;
    int rc = 0;
    while (!rc && r->len - off >= 5) {
        const unsigned char *h = r->buf + off;
        uint32_t n = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
        if (n > MAX_MESSAGE) {
            rc = protocol_error(r, "a stream message is larger than 16 MiB");
            break;
        }
        if (r->len - off - 5 < n)
            break;
        rc = on_message(r, h[0], h + 5, n);
        off += 5 + (size_t)n;
    }
    memmove(r->buf, r->buf + off, r->len - off);
    r->len -= off;
    return rc;
}

/* ---- stdin: SendInput in pieces, then CloseStdin, beside the stream ---- */

struct feeder {
    struct run *r;
    const unsigned char *data;
    size_t len;
};

static bool wait_started(struct run *r, long *pid)
{
    pthread_mutex_lock(&r->lock);
    while (!r->started && !r->done)
        pthread_cond_wait(&r->cond, &r->lock);
    bool ok = r->started && !r->done;
    *pid = r->pid;
    pthread_mutex_unlock(&r->lock);
    return ok;
}

static bool finished(struct run *r)
{
    pthread_mutex_lock(&r->lock);
    bool d = r->done;
    pthread_mutex_unlock(&r->lock);
    return d;
}

static json_t *selector(long pid)
{
    return json_pack("{s:{s:I}}", "process", "pid", (json_int_t)pid);
}

static void *feed_stdin(void *arg)
{
    struct feeder *f = arg;
    struct run *r = f->r;
    long pid;
    if (!wait_started(r, &pid))
        return NULL;
    /* Errors are absorbed: a command that exits without reading its
     * stdin makes SendInput fail, and that is no failure of the exec. */
    for (size_t off = 0; off < f->len && !finished(r);) {
        size_t n = f->len - off < STDIN_CHUNK ? f->len - off : STDIN_CHUNK;
        char *b64 = pc_b64_encode(f->data + off, n);
        json_t *req = b64 ? selector(pid) : NULL;
        if (!req || json_object_set_new(req, "input", json_pack("{s:s}", "stdin", b64))) {
            free(b64);
            json_decref(req);
            break;
        }
        free(b64);
        int rc = e2b_rpc(r->p, r->sb, "/process.Process/SendInput", req, 30000, -1, NULL);
        json_decref(req);
        if (rc)
            break;
        off += n;
    }
    json_t *req = selector(pid);
    if (req)
        e2b_rpc(r->p, r->sb, "/process.Process/CloseStdin", req, 30000, -1, NULL);
    json_decref(req);
    return NULL;
}

/* ---- killing ---- */

static void kill_pid(struct run *r)
{
    if (!r->started || r->pid <= 0)
        return;
    json_t *req = selector(r->pid);
    if (req && !json_object_set_new(req, "signal", json_string("SIGNAL_SIGKILL")))
        e2b_rpc(r->p, r->sb, "/process.Process/SendSignal", req, 10000, -1, NULL);
    json_decref(req);
}

/* Kills every process whose environment holds MARKER=token: what the
 * command left behind (background jobs, setsid'd children). */
static void kill_marked(struct e2b_prov *p, struct e2b_sb *sb, const char *token)
{
    static const char script[] =
        "for pass in 1 2 3; do n=0; for d in /proc/[0-9]*; do "
        "pid=${d#/proc/}; [ \"$pid\" = $$ ] && continue; "
        "if tr '\\000' '\\n' < $d/environ 2>/dev/null | grep -qx \"$1\"; then "
        "kill -9 $pid 2>/dev/null && n=$((n+1)); fi; done; "
        "[ $n = 0 ] && break; done; exit 0";
    char marker[128];
    snprintf(marker, sizeof marker, "%s=%s", E2B_EXEC_MARKER, token);
    const char *argv[] = {"/bin/sh", "-c", script, "sh", marker, NULL};
    int code;
    if (e2b_run_quiet(p, sb, argv, CLEANUP_TIMEOUT_MS, &code) || code)
        p->host->log(p->h, SBX_LOG_WARNING, "sandbox %s: could not sweep what a killed exec "
                     "left running", sb->id);
}

/* The command was stopped at a limit of ours: what it left running goes
 * too, and its outcome is @status by SIGKILL, without an exit code. */
static void killed_at_limit(struct e2b_prov *p, struct e2b_sb *sb, const char *token,
                            sbx_exec_outcome_v1 *out, sbx_run_status status)
{
    kill_marked(p, sb, token);
    out->status = status;
    out->exit_code = -1;
    out->signal = SIGKILL;
}

/* ---- the request ---- */

static json_t *start_request(struct e2b_prov *p, const sbx_exec_spec_v1 *spec, const char *cwd,
                             const char *token, bool with_stdin)
{
    json_t *args = json_array(), *envs = json_object();
    json_t *req = NULL;
    if (!args || !envs)
        goto fail;
    for (size_t i = 1; spec->argv[i]; i++)
        if (json_array_append_new(args, json_string(spec->argv[i])))
            goto fail;
    for (size_t i = 0; i < spec->n_env; i++)
        if (!spec->env[i].key || json_object_set_new(envs, spec->env[i].key,
                                                     json_string(spec->env[i].value ? spec->env[i].value : "")))
            goto fail;
    if (token) {
        char marker[64];
        snprintf(marker, sizeof marker, "%s", token);
        if (json_object_set_new(envs, E2B_EXEC_MARKER, json_string(marker)))
            goto fail;
    }
    req = json_pack("{s:{s:s,s:o,s:o,s:s},s:b}", "process", "cmd", spec->argv[0], "args", args,
                    "envs", envs, "cwd", cwd, "stdin", with_stdin);
    (void)p;
    return req;
fail:
    json_decref(args);
    json_decref(envs);
    return NULL;
}

static int envelope(json_t *msg, char **out, size_t *outlen)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return SBX_E_NOMEM;
    size_t n = strlen(text);
    char *b = malloc(n + 5);
    if (!b) {
        free(text);
        return SBX_E_NOMEM;
    }
    b[0] = 0;
    b[1] = (char)(n >> 24);
    b[2] = (char)(n >> 16);
    b[3] = (char)(n >> 8);
    b[4] = (char)n;
    memcpy(b + 5, text, n);
    free(text);
    *out = b;
    *outlen = n + 5;
    return SBX_OK;
}

/* Start @req; the stream's facts land in @r.  Returns ph_do's status;
 * *status gets the HTTP status, *err_body an error answer's message. */
static int start_stream(struct run *r, json_t *req, uint64_t timeout_ms, long *status,
                        char *errmsg, size_t errcap, char err[PH_ERR_MAX])
{
    char *body = NULL;
    size_t blen = 0;
    if (envelope(req, &body, &blen))
        return SBX_E_NOMEM;
    char h_timeout[64], h_keepalive[64];
    if (timeout_ms > 9999999999ull)
        timeout_ms = 9999999999ull;
    snprintf(h_timeout, sizeof h_timeout, "Connect-Timeout-Ms: %llu", (unsigned long long)timeout_ms);
    snprintf(h_keepalive, sizeof h_keepalive, "Keepalive-Ping-Interval: %u", r->p->keepalive_s);
    const char *extra[] = {h_timeout, h_keepalive, "Accept: application/connect+json", NULL};
    const char *headers[E2B_SB_HEADERS + 5];
    e2b_envd_headers(r->sb, extra, headers);
    ph_request rq = {
        .method = "POST", .path = "/process.Process/Start", .headers = headers,
        .body = body, .body_len = blen, .content_type = "application/connect+json",
        .timeout_ms = (long)(timeout_ms + E2B_EXEC_GRACE_MS),
        .on_data = on_data, .ud = r, .max_body = 64 * 1024,
    };
    ph_response resp;
    int rc = ph_do(r->sb->envd, &rq, &resp, err);
    free(body);
    *status = resp.status;
    errmsg[0] = '\0';
    if (rc == SBX_OK && (resp.status < 200 || resp.status > 299)) {
        json_t *j = resp.body_len ? json_loadb(resp.body, resp.body_len, 0, NULL) : NULL;
        const char *m = json_string_value(json_object_get(j, "message"));
        snprintf(errmsg, errcap, "%s", m ? m : (resp.body ? resp.body : ""));
        for (char *c = errmsg; *c; c++)
            if ((unsigned char)*c < 0x20)
                *c = ' ';
        json_decref(j);
        size_t used = strlen(errmsg);
        e2b_retry_after(r->p, r->sb, resp.retry_after_ms);
        if (resp.retry_after_ms >= 0 && used < errcap)
            snprintf(errmsg + used, errcap - used, " (retry after %ld s)",
                     (resp.retry_after_ms + 999) / 1000);
    }
    ph_response_clear(&resp);
    return rc;
}

int e2b_run_quiet(struct e2b_prov *p, struct e2b_sb *sb, const char *const *argv,
                  long timeout_ms, int *exit_code)
{
    struct run r = {.p = p, .sb = sb};
    sbx_exec_spec_v1 spec = {.struct_size = sizeof spec, .argv = argv};
    char err[PH_ERR_MAX], msg[200];
    long status;
    *exit_code = -1;
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.cond, NULL);
    json_t *req = start_request(p, &spec, p->workdir, NULL, false);
    int rc = req ? start_stream(&r, req, (uint64_t)timeout_ms, &status, msg, sizeof msg, err)
                 : SBX_E_NOMEM;
    json_decref(req);
    if (rc == SBX_OK && r.eos && !r.eos_code[0] && r.ended)
        *exit_code = r.exited ? r.exit_code : -1;
    else if (rc == SBX_OK)
        rc = SBX_E_BACKEND;
    free(r.buf);
    pthread_mutex_destroy(&r.lock);
    pthread_cond_destroy(&r.cond);
    return rc;
}

/* ---- the outcome ---- */

static bool contains(const char *s, const char *what)
{
    return strstr(s, what) != NULL;
}

/* Start failed before the process ran: a missing or unrunnable command is
 * the command's fate (127/126, as a shell would say), the rest an error. */
static int start_failure(struct run *r, const sbx_exec_spec_v1 *spec, sbx_exec_outcome_v1 *out)
{
    const char *m = r->eos_msg;
    bool nf = contains(m, "executable file not found") || contains(m, "no such file or directory");
    bool nx = contains(m, "permission denied") || contains(m, "exec format error") ||
              contains(m, "is a directory");
    if (!r->started && (nf || nx) && !contains(m, "chdir")) {
        char line[400];
        int n = snprintf(line, sizeof line, "%s: %s\n", spec->argv[0],
                         nf ? "command not found" : "cannot execute (permission denied)");
        deliver(r, SBX_STREAM_STDERR, (const unsigned char *)line,
                n > 0 && (size_t)n < sizeof line ? (size_t)n : 0);
        out->status = nf ? SBX_RUN_NOT_FOUND : SBX_RUN_NOT_EXECUTABLE;
        out->exit_code = nf ? 127 : 126;
        return SBX_OK;
    }
    if (!r->started)
        e2b_not_started(r->sb); /* envd refused before starting anything */
    return r->p->host->set_error(r->p->h, e2b_connect_code(r->eos_code),
                                 "sandbox %s: envd refused to run %s: %s (%s)", r->sb->id,
                                 spec->argv[0], m[0] ? m : "no message", r->eos_code);
}

static int upload_files(struct e2b_prov *p, struct e2b_sb *sb, const sbx_exec_spec_v1 *spec)
{
    for (size_t i = 0; i < spec->n_files; i++) {
        const sbx_file_v1 *f = &spec->files[i];
        int rc = e2b_upload(p, sb, f->path, f->data, f->len, f->mode);
        if (rc)
            return rc;
    }
    return SBX_OK;
}

int e2b_exec(struct e2b_prov *p, struct e2b_sb *sb, const sbx_exec_spec_v1 *spec,
             const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: empty command");
    uint64_t t0 = e2b_now_ns();
    int rc = upload_files(p, sb, spec);
    if (rc) {
        e2b_not_started(sb); /* the command was never asked for */
        return rc;
    }

    char *cwd = NULL;
    if (spec->cwd && spec->cwd[0] == '/')
        cwd = strdup(spec->cwd);
    else if (spec->cwd && *spec->cwd && strcmp(spec->cwd, "."))
        rc = e2b_sandbox_path(p, spec->cwd, &cwd);
    else
        cwd = strdup(p->workdir);
    if (rc)
        /* cppcheck-suppress memleak ; e2b_sandbox_path leaves cwd NULL when it fails */
        return rc;
    if (!cwd)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");

    char token[33];
    if (pc_random_hex(token, 16)) {
        free(cwd);
        return p->host->set_error(p->h, SBX_E_IO, "exec: no random bytes for the exec marker");
    }
    bool with_stdin = spec->stdin_data && spec->stdin_len > 0;
    json_t *req = start_request(p, spec, cwd, token, with_stdin);
    free(cwd);
    if (!req)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");

    struct run r = {.p = p, .sb = sb, .sink = sink};
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.cond, NULL);
    struct feeder f = {&r, spec->stdin_data, spec->stdin_len};
    pthread_t feeder;
    bool feeding = with_stdin && pthread_create(&feeder, NULL, feed_stdin, &f) == 0;
    if (with_stdin && !feeding) {
        json_decref(req);
        rc = p->host->set_error(p->h, SBX_E_IO, "exec: cannot start the stdin thread");
        goto out;
    }

    uint64_t timeout_ms = (spec->timeout_ns + 999999) / 1000000;
    if (timeout_ms == 0)
        timeout_ms = 1;
    char err[PH_ERR_MAX] = "", msg[300];
    long status = 0;
    uint64_t sent = e2b_now_ns();
    rc = start_stream(&r, req, timeout_ms, &status, msg, sizeof msg, err);
    json_decref(req);
    pthread_mutex_lock(&r.lock);
    r.done = true;
    pthread_cond_broadcast(&r.cond);
    pthread_mutex_unlock(&r.lock);
    if (feeding)
        pthread_join(feeder, NULL);

    uint64_t now = e2b_now_ns();
    out->start_ns = (r.started ? r.start_at : now) - t0;
    out->exec_ns = r.started ? (r.ended ? r.end_at : now) - r.start_at : 0;
    if (out->exec_ns == 0)
        out->exec_ns = 1;
    bool past_limit = now - sent >= spec->timeout_ns;

    if (r.stop != STOP_NONE) {
        /* Our own stop: the command's fate is the output limit. */
        kill_pid(&r);
        killed_at_limit(p, sb, token, out, SBX_RUN_OUTPUT_LIMIT);
        rc = SBX_OK;
        goto out;
    }
    if (rc == SBX_E_TIMEOUT) {
        /* envd should have ended the stream at the limit; it did not. */
        kill_pid(&r);
        kill_marked(p, sb, token);
        rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "sandbox %s: envd did not end the exec "
                                "%ld ms past its time limit", sb->id, E2B_EXEC_GRACE_MS);
        goto out;
    }
    if (rc == SBX_E_BACKEND && r.proto_err[0]) {
        kill_pid(&r);
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "sandbox %s: exec: %s", sb->id, r.proto_err);
        goto out;
    }
    if (rc != SBX_OK) {
        /* The stream broke: whatever ran may run on; stop it if we can. */
        if (r.started)
            kill_pid(&r);
        rc = p->host->set_error(p->h, rc, "sandbox %s: exec: %s%s", sb->id, err,
                                r.started ? " (the output stream broke while the command ran)"
                                          : "");
        goto out;
    }
    if (status < 200 || status > 299) {
        /* envd (or the edge before it) refused the Start: nothing ran. */
        e2b_not_started(sb);
        rc = p->host->set_error(p->h, ph_status_code(status),
                                "sandbox %s: exec: envd answered HTTP %ld%s%s%s", sb->id, status,
                                msg[0] ? ": " : "", msg,
                                status == 502 ? " (the sandbox is not running: expired or killed?)"
                                              : "");
        goto out;
    }
    if (!r.eos) {
        if (r.started)
            kill_pid(&r);
        rc = p->host->set_error(p->h, SBX_E_NETWORK, "sandbox %s: exec: the output stream "
                                "ended without its end-of-stream message (connection cut?)",
                                sb->id);
        goto out;
    }
    if (!strcmp(r.eos_code, "deadline_exceeded") ||
        (r.ended && !r.exited && signal_number(r.status) == SIGKILL && past_limit)) {
        killed_at_limit(p, sb, token, out, SBX_RUN_TIMEOUT);
        rc = SBX_OK;
        goto out;
    }
    if (r.eos_code[0]) {
        rc = start_failure(&r, spec, out);
        goto out;
    }
    if (!r.ended) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND, "sandbox %s: exec: the stream ended "
                                "without the process's end event", sb->id);
        goto out;
    }
    if (r.exited) {
        out->status = r.exit_code == 0 ? SBX_RUN_OK : SBX_RUN_NONZERO_EXIT;
        out->exit_code = r.exit_code;
    } else {
        out->status = SBX_RUN_SIGNAL;
        out->exit_code = -1;
        out->signal = signal_number(r.status);
    }
    rc = SBX_OK;
out:
    free(r.buf);
    pthread_mutex_destroy(&r.lock);
    pthread_cond_destroy(&r.cond);
    return rc;
}
