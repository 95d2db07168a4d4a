/* plugins/modal/modal-exec.c - one command in a sandbox
 *
 * Through the task's command router (the SDKs' way): TaskExecStart with an
 * exec id of ours (which makes the start idempotent), stdin with
 * TaskExecStdinWrite (offsets, then EOF), stdout and stderr each read by a
 * TaskExecStdioRead server stream (resumed at the offset reached when a
 * stream breaks), and TaskExecWait for the exit code or signal.
 *
 * Through the control plane where a task has no router: ContainerExec,
 * ContainerExecPutInput, ContainerExecGetOutput per file descriptor (batch
 * indices, the last batch carrying the exit code) and ContainerExecWait.
 * That path takes no environment, so the command runs under env(1).
 *
 * Neither kills a command on request: the service kills it at its time
 * limit (whole seconds); for our own stops (an output cap, a sink saying
 * stop, a finer time limit) every process carrying this exec's marker
 * variable is killed by a second exec.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modal-int.h"

#define STDIN_CHUNK (256u * 1024)
#define STREAM_RETRIES 10
#define CLEANUP_TIMEOUT_MS 15000L
#define LEGACY_POLL_S 55.0f

enum stop_reason { STOP_NONE, STOP_SINK };

struct run {
    struct modal_prov *p;
    struct modal_sb *sb;
    const sbx_output_sink_v1 *sink;
    enum stop_reason stop;
    bool killed;
    pthread_mutex_t lock;        /* sink calls, stop, killed */
    char exec_id[64];            /* the service's (legacy) or ours (router) */
    char token[33];              /* the marker's value */
    uint64_t deadline_ns;        /* our time limit's end, monotonic */
    char errhead[256];           /* the first bytes of stderr */
    size_t errhead_len;
    uint64_t timeout_ms;
    /* Files written by the command's own exec (modal_prelude_argv): its
     * stderr starts with "nonce " when writing them failed, held back
     * until it is known not to. */
    char nonce[34];              /* "<32 hex> ", or "" */
    size_t nonce_len;
    size_t held;                 /* bytes of stderr matching nonce so far */
    bool failed;                 /* the prelude reported a failure */
    char report[256];            /* what followed the nonce */
    size_t report_len;
};

struct reader {
    struct run *r;
    int stream;                  /* SBX_STREAM_STDOUT or _STDERR */
    uint64_t offset;             /* bytes (router) or the last batch index (legacy) */
    bool ended;                  /* the stream said all there is */
    bool has_exit;               /* legacy: a batch carried the exit code */
    int exit_code;
    int rc;
    mg_status st;
    char err[PH_ERR_MAX];
};

/* ---- output ---- */

static void kill_marked(struct run *r);

static int deliver_now(struct run *r, int stream, const uint8_t *data, size_t len);

/* Appends what fits of @data to the NUL-terminated @buf of @cap bytes. */
static void keep_head(char *buf, size_t cap, size_t *used, const uint8_t *data, size_t len)
{
    size_t k = *used + 1 < cap ? cap - 1 - *used : 0;
    if (k > len)
        k = len;
    memcpy(buf + *used, data, k);
    *used += k;
    buf[*used] = '\0';
}

/* Hands @len bytes to the sink, which holds the output caps (the core's,
 * or collect_write's bound).  Non-zero: stop.
 * Stderr passes the prelude's filter first (one thread reads stderr). */
static int deliver(struct run *r, int stream, const uint8_t *data, size_t len)
{
    if (stream != SBX_STREAM_STDERR || !r->nonce_len || r->held == SIZE_MAX)
        return deliver_now(r, stream, data, len);
    if (r->failed) {
        keep_head(r->report, sizeof r->report, &r->report_len, data, len);
        return 0;
    }
    size_t k = r->nonce_len - r->held;
    if (k > len)
        k = len;
    if (memcmp(r->nonce + r->held, data, k)) {
        /* Not the prelude's: what was held, then the rest, as it came. */
        size_t held = r->held;
        r->held = SIZE_MAX;
        int rc = held ? deliver_now(r, stream, (const uint8_t *)r->nonce, held) : 0;
        return rc ? rc : deliver_now(r, stream, data, len);
    }
    r->held += k;
    if (r->held == r->nonce_len) {
        r->failed = true;
        return len > k ? deliver(r, stream, data + k, len - k) : 0;
    }
    return 0;
}

/* Hands over what the filter held when stderr ended inside it. */
static void deliver_held(struct run *r)
{
    if (r->nonce_len && !r->failed && r->held && r->held != SIZE_MAX) {
        size_t held = r->held;
        r->held = SIZE_MAX;
        deliver_now(r, SBX_STREAM_STDERR, (const uint8_t *)r->nonce, held);
    }
}

static int deliver_now(struct run *r, int stream, const uint8_t *data, size_t len)
{
    pthread_mutex_lock(&r->lock);
    if (r->stop != STOP_NONE) {
        pthread_mutex_unlock(&r->lock);
        return SBX_E_LIMIT;
    }
    if (stream == SBX_STREAM_STDERR)
        keep_head(r->errhead, sizeof r->errhead, &r->errhead_len, data, len);
    int rc = 0;
    if (len > 0 && r->sink && r->sink->write && r->sink->write(r->sink->ud, stream, data, len)) {
        r->stop = STOP_SINK;
        rc = SBX_E_LIMIT;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc)
        kill_marked(r); /* ends the command, and with it the other stream */
    return rc;
}

static uint64_t left_ms(const struct run *r, long extra)
{
    uint64_t now = modal_now_ns();
    uint64_t left = now >= r->deadline_ns ? 0 : (r->deadline_ns - now) / 1000000;
    return left + (uint64_t)extra;
}

/* ---- the router ---- */

static int on_stdio(void *ud, const uint8_t *msg, size_t len)
{
    struct reader *rd = ud;
    Modal__TaskCommandRouter__TaskExecStdioReadResponse *m =
        modal__task_command_router__task_exec_stdio_read_response__unpack(NULL, len, msg);
    if (!m) {
        snprintf(rd->err, sizeof rd->err, "a TaskExecStdioRead message does not decode");
        return SBX_E_BACKEND;
    }
    size_t n = m->data.len;
    int rc = n ? deliver(rd->r, rd->stream, m->data.data, n) : 0;
    rd->offset += n;
    modal__task_command_router__task_exec_stdio_read_response__free_unpacked(m, NULL);
    return rc;
}

/* Whether the service's exit code (an int32 on the wire) is one a
 * process has; a signal, Linux's 1 to 64.  Anything else is a protocol
 * error, never a result. */
static bool exit_code_ok(int code)
{
    return code >= 0 && code <= 255;
}

static bool signal_ok(int sig)
{
    return sig >= 1 && sig <= 64;
}

static bool transient(int rc, const mg_status *st)
{
    if (st->code < 0)
        return rc == SBX_E_NETWORK;
    return st->code == MG_UNAVAILABLE || st->code == MG_CANCELLED || st->code == MG_INTERNAL ||
           st->code == MG_UNKNOWN;
}

/* Reads one stream to its end, resuming where a broken one stopped. */
static void router_read(struct reader *rd)
{
    struct run *r = rd->r;
    long delay_ms = 10;
    for (int tries = 0;; tries++) {
        Modal__TaskCommandRouter__TaskExecStdioReadRequest req =
            MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIO_READ_REQUEST__INIT;
        req.task_id = r->sb->task_id;
        req.exec_id = r->exec_id;
        req.offset = rd->offset;
        req.file_descriptor = rd->stream == SBX_STREAM_STDOUT
            ? MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIO_FILE_DESCRIPTOR__TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT
            : MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIO_FILE_DESCRIPTOR__TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR;
        rd->err[0] = '\0';
        rd->rc = modal_router_stream(r->p, r->sb, "TaskExecStdioRead", &req.base,
                                     (long)left_ms(r, MODAL_EXEC_GRACE_MS), on_stdio, rd,
                                     &rd->st, rd->err);
        if (!rd->rc) {
            rd->ended = true;
            return;
        }
        if (rd->rc == SBX_E_LIMIT || !transient(rd->rc, &rd->st) || tries >= STREAM_RETRIES ||
            left_ms(r, MODAL_EXEC_GRACE_MS) <= (uint64_t)delay_ms)
            return;
        r->p->host->log(r->p->h, SBX_LOG_DEBUG, "sandbox %s: exec %s: %s stream broke at "
                        "byte %llu (%s); resuming", r->sb->id, r->exec_id,
                        rd->stream == SBX_STREAM_STDOUT ? "stdout" : "stderr",
                        (unsigned long long)rd->offset, rd->err);
        modal_pause_ms(delay_ms);
        delay_ms *= 2;
    }
}

/* Writes stdin and EOF.  Offsets make a write idempotent, so a transient
 * failure is written again (the command is running: the core could not
 * retry it), as the SDKs do. */
static int router_stdin(struct run *r, const uint8_t *data, size_t len)
{
    size_t off = 0;
    long delay_ms = 10;
    int tries = 0;
    do {
        size_t n = len - off < STDIN_CHUNK ? len - off : STDIN_CHUNK;
        Modal__TaskCommandRouter__TaskExecStdinWriteRequest req =
            MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIN_WRITE_REQUEST__INIT;
        req.task_id = r->sb->task_id;
        req.exec_id = r->exec_id;
        req.offset = off;
        req.data.data = (uint8_t *)(data ? data + off : NULL);
        req.data.len = n;
        req.eof = off + n == len;
        mg_status st;
        char err[PH_ERR_MAX];
        int rc = modal_router(r->p, r->sb, "stdin", "TaskExecStdinWrite", &req.base, NULL, NULL,
                              0, &st, err);
        if (rc && transient(rc, &st) && tries++ < STREAM_RETRIES) {
            modal_pause_ms(delay_ms);
            delay_ms *= 2;
            continue;
        }
        if (rc) {
            /* A command that exits without reading its stdin refuses the
             * rest: that is no failure of the exec. */
            r->p->host->log(r->p->h, SBX_LOG_DEBUG, "sandbox %s: exec %s: stdin: %s",
                            r->sb->id, r->exec_id, err);
            return rc;
        }
        off += n;
    } while (off < len);
    return SBX_OK;
}

/* TaskExecWait until the command's fate is known or our time is up. */
static int router_wait(struct run *r, int *code, int *sig, mg_status *st, char err[PH_ERR_MAX])
{
    long delay_ms = 50;
    for (int tries = 0;; tries++) {
        Modal__TaskCommandRouter__TaskExecWaitRequest req =
            MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_WAIT_REQUEST__INIT;
        req.task_id = r->sb->task_id;
        req.exec_id = r->exec_id;
        Modal__TaskCommandRouter__TaskExecWaitResponse *ans = NULL;
        int rc = modal_router(r->p, r->sb, "wait", "TaskExecWait", &req.base,
                              &modal__task_command_router__task_exec_wait_response__descriptor,
                              (ProtobufCMessage **)&ans, (long)left_ms(r, MODAL_EXEC_GRACE_MS),
                              st, err);
        if (!rc) {
            bool is_sig = ans->exit_status_case ==
                MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_WAIT_RESPONSE__EXIT_STATUS_SIGNAL;
            int v = is_sig ? ans->signal : ans->code; /* no oneof set: proto3's zero */
            modal__task_command_router__task_exec_wait_response__free_unpacked(ans, NULL);
            if (is_sig ? !signal_ok(v) : !exit_code_ok(v)) {
                st->code = -2;
                return r->p->host->set_error(r->p->h, SBX_E_BACKEND, "Modal: sandbox %s: exec "
                                             "%s: TaskExecWait says %s %d, which no process "
                                             "ends with", r->sb->id, r->exec_id,
                                             is_sig ? "signal" : "exit code", v);
            }
            *(is_sig ? sig : code) = v;
            return SBX_OK;
        }
        if (!transient(rc, st) || tries >= STREAM_RETRIES ||
            left_ms(r, MODAL_EXEC_GRACE_MS) <= (uint64_t)delay_ms)
            return rc;
        modal_pause_ms(delay_ms);
        delay_ms = delay_ms * 2 > 1000 ? 1000 : delay_ms * 2;
    }
}

/* ---- the control plane's exec ---- */

static int on_batch(void *ud, const uint8_t *msg, size_t len)
{
    struct reader *rd = ud;
    Modal__Client__RuntimeOutputBatch *b = modal__client__runtime_output_batch__unpack(NULL, len, msg);
    if (!b) {
        snprintf(rd->err, sizeof rd->err, "a RuntimeOutputBatch does not decode");
        return SBX_E_BACKEND;
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < b->n_items; i++) {
        const Modal__Client__RuntimeOutputMessage *m = b->items[i];
        if (m->message_bytes.len)
            rc = deliver(rd->r, rd->stream, m->message_bytes.data, m->message_bytes.len);
        else if (m->message && *m->message)
            rc = deliver(rd->r, rd->stream, (const uint8_t *)m->message, strlen(m->message));
    }
    if (b->batch_index > rd->offset)
        rd->offset = b->batch_index;
    if (b->_exit_code_case && !exit_code_ok(b->exit_code)) {
        snprintf(rd->err, sizeof rd->err, "a RuntimeOutputBatch says exit code %d, which no "
                 "process ends with", (int)b->exit_code);
        rc = SBX_E_BACKEND;
    } else if (b->_exit_code_case) {
        rd->has_exit = true;
        rd->exit_code = b->exit_code;
        rd->ended = true;
    }
    modal__client__runtime_output_batch__free_unpacked(b, NULL);
    return rc;
}

static void legacy_read(struct reader *rd)
{
    struct run *r = rd->r;
    int broken = 0;
    long delay_ms = 10;
    while (!rd->ended) {
        Modal__Client__ContainerExecGetOutputRequest req =
            MODAL__CLIENT__CONTAINER_EXEC_GET_OUTPUT_REQUEST__INIT;
        req.exec_id = r->exec_id;
        req.timeout = LEGACY_POLL_S;
        req.last_batch_index = rd->offset;
        req.file_descriptor = rd->stream == SBX_STREAM_STDOUT
                                  ? MODAL__CLIENT__FILE_DESCRIPTOR__FILE_DESCRIPTOR_STDOUT
                                  : MODAL__CLIENT__FILE_DESCRIPTOR__FILE_DESCRIPTOR_STDERR;
        req.get_raw_bytes = 1;
        rd->err[0] = '\0';
        rd->rc = modal_api_stream(r->p, "exec output", "ContainerExecGetOutput", &req.base,
                                  (long)(LEGACY_POLL_S * 1000) + 10000, on_batch, rd, &rd->st);
        if (!rd->rc) {
            if (left_ms(r, MODAL_EXEC_GRACE_MS) == 0) {
                rd->rc = SBX_E_TIMEOUT;
                return;
            }
            continue; /* a poll ended without the exit: ask again from where it was */
        }
        if (rd->rc == SBX_E_LIMIT || !transient(rd->rc, &rd->st) || ++broken > STREAM_RETRIES ||
            left_ms(r, MODAL_EXEC_GRACE_MS) <= (uint64_t)delay_ms)
            return;
        modal_pause_ms(delay_ms);
        delay_ms *= 2;
    }
    rd->rc = SBX_OK;
}

static void legacy_stdin(struct run *r, const uint8_t *data, size_t len)
{
    size_t off = 0;
    uint64_t index = 1;
    long delay_ms = 10;
    int tries = 0;
    do {
        size_t n = len - off < STDIN_CHUNK ? len - off : STDIN_CHUNK;
        Modal__Client__RuntimeInputMessage in = MODAL__CLIENT__RUNTIME_INPUT_MESSAGE__INIT;
        in.message.data = (uint8_t *)(data ? data + off : NULL);
        in.message.len = n;
        in.message_index = index++;
        in.eof = off + n == len;
        Modal__Client__ContainerExecPutInputRequest req =
            MODAL__CLIENT__CONTAINER_EXEC_PUT_INPUT_REQUEST__INIT;
        req.exec_id = r->exec_id;
        req.input = &in;
        mg_status st;
        int rc = modal_api_st(r->p, r->sb, "exec stdin", "ContainerExecPutInput", &req.base, NULL,
                              NULL, 0, MODAL_SILENT, &st);
        if (rc && transient(rc, &st) && tries++ < STREAM_RETRIES) {
            /* The message index makes it idempotent: write it again. */
            index--;
            modal_pause_ms(delay_ms);
            delay_ms *= 2;
            continue;
        }
        if (rc) {
            r->p->host->log(r->p->h, SBX_LOG_DEBUG, "sandbox %s: exec %s: stdin refused",
                            r->sb->id, r->exec_id);
            return;
        }
        off += n;
    } while (off < len);
}

/* ---- killing ---- */

/* Kills every process whose environment holds MARKER=token: the command
 * and what it left behind.  Once per exec. */
static void kill_marked(struct run *r)
{
    /* GNU grep reads every environment at once (-z: NUL-separated); a
     * shell loop over /proc where grep lacks -z. */
    static const char script[] =
        "m=$1; list() { if printf 'a\\0' | grep -qxzF a 2>/dev/null; then "
        "grep -lxzF -- \"$m\" /proc/[0-9]*/environ 2>/dev/null; else "
        "for f in /proc/[0-9]*/environ; do tr '\\000' '\\n' <$f 2>/dev/null | "
        "grep -qxF -- \"$m\" && echo $f; done; fi; }\n"
        "for pass in 1 2 3; do n=0; for f in $(list); do p=${f#/proc/}; p=${p%/environ}; "
        "[ \"$p\" = $$ ] && continue; kill -9 $p 2>/dev/null && n=$((n+1)); done; "
        "[ $n = 0 ] && break; done; exit 0";
    pthread_mutex_lock(&r->lock);
    bool first = !r->killed;
    r->killed = true;
    pthread_mutex_unlock(&r->lock);
    if (!first)
        return;
    char marker[128], err[200];
    snprintf(marker, sizeof marker, "%s=%s", MODAL_EXEC_MARKER, r->token);
    const char *argv[] = {"/bin/sh", "-c", script, "sh", marker, NULL};
    int code = -1;
    if (modal_run(r->p, r->sb, argv, NULL, 0, 0, CLEANUP_TIMEOUT_MS, NULL, NULL, err,
                  sizeof err, &code) || code)
        r->p->host->log(r->p->h, SBX_LOG_WARNING, "sandbox %s: could not stop what exec %s "
                        "left running", r->sb->id, r->exec_id);
}

/* ---- one exec ---- */

static void *read_thread(void *arg)
{
    struct reader *rd = arg;
    if (rd->r->sb->legacy)
        legacy_read(rd);
    else
        router_read(rd);
    return NULL;
}

/* The work directory, or cwd under it, as an absolute path. */
static char *exec_dir(struct modal_prov *p, const char *cwd)
{
    char *d = NULL;
    if (!cwd || !*cwd || !strcmp(cwd, "."))
        return strdup(p->workdir);
    if (cwd[0] == '/')
        return strdup(cwd);
    return asprintf(&d, "%s/%s", p->workdir, cwd) < 0 ? NULL : d;
}

static bool env_ok(const sbx_kv_v1 *e)
{
    return e->key && *e->key && !strchr(e->key, '=');
}

/* Starts the command; SBX_OK when the service took it. */
static int start_router(struct run *r, const sbx_exec_spec_v1 *spec, const char *dir)
{
    size_t argc = 0;
    while (spec->argv[argc])
        argc++;
    size_t ne = spec->n_env + 1;
    Modal__TaskCommandRouter__TaskExecStartRequest__EnvEntry *ents = calloc(ne, sizeof *ents);
    Modal__TaskCommandRouter__TaskExecStartRequest__EnvEntry **ptrs = calloc(ne, sizeof *ptrs);
    char marker[64];
    if (!ents || !ptrs) {
        free(ents);
        free(ptrs);
        return r->p->host->set_error(r->p->h, SBX_E_NOMEM, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < spec->n_env; i++) {
        modal__task_command_router__task_exec_start_request__env_entry__init(&ents[n]);
        ents[n].key = (char *)spec->env[i].key;
        ents[n].value = (char *)(spec->env[i].value ? spec->env[i].value : "");
        ptrs[n] = &ents[n];
        n++;
    }
    snprintf(marker, sizeof marker, "%s", r->token);
    modal__task_command_router__task_exec_start_request__env_entry__init(&ents[n]);
    ents[n].key = MODAL_EXEC_MARKER;
    ents[n].value = marker;
    ptrs[n] = &ents[n];
    n++;
    Modal__TaskCommandRouter__TaskExecStartRequest req =
        MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_START_REQUEST__INIT;
    req.task_id = r->sb->task_id;
    req.exec_id = r->exec_id;
    req.n_command_args = argc;
    req.command_args = (char **)spec->argv;
    req.stdout_config = MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDOUT_CONFIG__TASK_EXEC_STDOUT_CONFIG_PIPE;
    req.stderr_config = MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDERR_CONFIG__TASK_EXEC_STDERR_CONFIG_PIPE;
    req._timeout_secs_case = MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_START_REQUEST___TIMEOUT_SECS_TIMEOUT_SECS;
    req.timeout_secs = (uint32_t)((r->timeout_ms + 999) / 1000);
    req._workdir_case = MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_START_REQUEST___WORKDIR_WORKDIR;
    req.workdir = (char *)dir;
    req.n_env = n;
    req.env = ptrs;
    mg_status st;
    char err[PH_ERR_MAX] = "";
    int rc = modal_router(r->p, r->sb, "start", "TaskExecStart", &req.base, NULL, NULL, 0, &st,
                          err);
    free(ents);
    free(ptrs);
    if (rc) {
        /* The service answered: it did not start the command.  (A broken
         * connection leaves that unknown.) */
        if (st.code > 0)
            modal_not_started(r->sb);
        if (st.code != -2)
            modal_call_error(r->p, r->sb, "exec", rc, &st, err);
    }
    return rc;
}

static int start_legacy(struct run *r, const sbx_exec_spec_v1 *spec, const char *dir)
{
    size_t argc = 0;
    while (spec->argv[argc])
        argc++;
    /* env MARKER=.. K=V... argv: ContainerExec takes no environment. */
    size_t total = 2 + spec->n_env + argc;
    char **cmd = calloc(total + 1, sizeof *cmd);
    char **owned = calloc(spec->n_env + 1, sizeof *owned);
    int rc = SBX_OK;
    if (!cmd || !owned)
        rc = SBX_E_NOMEM;
    size_t c = 0;
    if (!rc) {
        cmd[c++] = "env";
        if (asprintf(&owned[0], "%s=%s", MODAL_EXEC_MARKER, r->token) < 0)
            owned[0] = NULL, rc = SBX_E_NOMEM;
        cmd[c++] = owned[0];
    }
    for (size_t i = 0; !rc && i < spec->n_env; i++) {
        if (asprintf(&owned[i + 1], "%s=%s", spec->env[i].key,
                     spec->env[i].value ? spec->env[i].value : "") < 0)
            owned[i + 1] = NULL, rc = SBX_E_NOMEM;
        cmd[c++] = owned[i + 1];
    }
    for (size_t i = 0; !rc && i < argc; i++)
        cmd[c++] = (char *)spec->argv[i];
    Modal__Client__ContainerExecResponse *ans = NULL;
    if (!rc) {
        Modal__Client__ContainerExecRequest req = MODAL__CLIENT__CONTAINER_EXEC_REQUEST__INIT;
        req.task_id = r->sb->task_id;
        req.n_command = c;
        req.command = cmd;
        req.stdout_output = MODAL__CLIENT__EXEC_OUTPUT_OPTION__EXEC_OUTPUT_OPTION_PIPE;
        req.stderr_output = MODAL__CLIENT__EXEC_OUTPUT_OPTION__EXEC_OUTPUT_OPTION_PIPE;
        req.timeout_secs = (uint32_t)((r->timeout_ms + 999) / 1000);
        req._workdir_case = MODAL__CLIENT__CONTAINER_EXEC_REQUEST___WORKDIR_WORKDIR;
        req.workdir = (char *)dir;
        mg_status st;
        rc = modal_api_st(r->p, r->sb, "exec", "ContainerExec", &req.base,
                          &modal__client__container_exec_response__descriptor,
                          (ProtobufCMessage **)&ans, 0, -1, &st);
        if (rc && st.code > 0)
            modal_not_started(r->sb);
    } else {
        r->p->host->set_error(r->p->h, rc, "out of memory");
    }
    for (size_t i = 0; owned && i <= spec->n_env; i++)
        free(owned[i]);
    free(owned);
    free(cmd);
    if (rc)
        return rc;
    if (!ans->exec_id || !*ans->exec_id || strlen(ans->exec_id) >= sizeof r->exec_id)
        rc = r->p->host->set_error(r->p->h, SBX_E_BACKEND, "Modal: ContainerExec answered no "
                                   "usable exec id");
    else
        snprintf(r->exec_id, sizeof r->exec_id, "%s", ans->exec_id);
    modal__client__container_exec_response__free_unpacked(ans, NULL);
    return rc;
}

static int legacy_wait(struct run *r, int *code)
{
    long delay_ms = 50;
    for (int tries = 0;;) {
        Modal__Client__ContainerExecWaitRequest req = MODAL__CLIENT__CONTAINER_EXEC_WAIT_REQUEST__INIT;
        req.exec_id = r->exec_id;
        req.timeout = 10;
        Modal__Client__ContainerExecWaitResponse *ans = NULL;
        mg_status st;
        int rc = modal_api_st(r->p, r->sb, "exec wait", "ContainerExecWait", &req.base,
                              &modal__client__container_exec_wait_response__descriptor,
                              (ProtobufCMessage **)&ans, 20000, MODAL_SILENT, &st);
        if (rc && transient(rc, &st) && tries++ < STREAM_RETRIES &&
            left_ms(r, MODAL_EXEC_GRACE_MS) > (uint64_t)delay_ms) {
            modal_pause_ms(delay_ms);
            delay_ms = delay_ms * 2 > 1000 ? 1000 : delay_ms * 2;
            continue;
        }
        if (rc) {
            char err[PH_ERR_MAX];
            snprintf(err, sizeof err, "ContainerExecWait: %s", st.code >= 0 ? mg_code_name(st.code)
                                                                             : "transport failure");
            return st.code == -2 ? rc
                                 : modal_call_error(r->p, r->sb, "exec wait", rc, &st, err);
        }
        bool done = ans->completed;
        bool known = ans->_exit_code_case && exit_code_ok(ans->exit_code);
        int v = ans->_exit_code_case ? ans->exit_code : -1;
        modal__client__container_exec_wait_response__free_unpacked(ans, NULL);
        if (done && !known)
            return r->p->host->set_error(r->p->h, SBX_E_BACKEND, "Modal: sandbox %s: exec %s: "
                                         "ContainerExecWait says it completed with %s%d%s",
                                         r->sb->id, r->exec_id, v < 0 ? "no exit code (" : "exit code ",
                                         v, v < 0 ? ")" : ", which no process ends with");
        if (done) {
            *code = v;
            return SBX_OK;
        }
        if (left_ms(r, MODAL_EXEC_GRACE_MS) == 0)
            return r->p->host->set_error(r->p->h, SBX_E_TIMEOUT, "Modal: sandbox %s: exec %s "
                                         "did not end %ld ms past its time limit", r->sb->id,
                                         r->exec_id, MODAL_EXEC_GRACE_MS);
    }
}

static bool has(const char *s, const char *what)
{
    return strcasestr(s, what) != NULL;
}

/* 127 and 126 are the command's own exit codes, unless what the runtime
 * (or env(1), on the control plane's path) said on stderr shows it could
 * not be executed at all. */
static sbx_run_status start_failure(const struct run *r, int code)
{
    const char *e = r->errhead;
    if (code == 127 && (has(e, "executable file not found") || has(e, "no such file or directory")))
        return SBX_RUN_NOT_FOUND;
    if (code == 126 && (has(e, "permission denied") || has(e, "exec format error")))
        return SBX_RUN_NOT_EXECUTABLE;
    return SBX_RUN_NONZERO_EXIT;
}

static int uuid4(char out[37])
{
    char hex[33];
    if (pc_random_hex(hex, 16))
        return -1;
    hex[12] = '4';
    hex[16] = "89ab"[hex[16] % 4];
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
    return 0;
}

/* Runs spec's command; with @prelude, the files of the spec are written
 * by the same exec first (modal_files_fit said they can be). */
static int exec_run(struct modal_prov *p, struct modal_sb *sb, const sbx_exec_spec_v1 *spec,
                    bool prelude, const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: empty command");
    for (size_t i = 0; i < spec->n_env; i++)
        if (!env_ok(&spec->env[i]))
            return p->host->set_error(p->h, SBX_E_INVAL, "exec: environment name '%s' is not "
                                      "valid", spec->env[i].key ? spec->env[i].key : "(null)");
    uint64_t t0 = modal_now_ns();
    int rc = modal_router_open(p, sb);
    if (rc) {
        modal_not_started(sb); /* nothing was asked of the sandbox yet */
        return rc;
    }
    char *dir = exec_dir(p, spec->cwd);
    if (!dir)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");

    struct run r = {.p = p, .sb = sb, .sink = sink};
    r.timeout_ms = (spec->timeout_ns + 999999) / 1000000;
    if (r.timeout_ms == 0)
        r.timeout_ms = 1;
    pthread_mutex_init(&r.lock, NULL);
    if (pc_random_hex(r.token, 16) || (!sb->legacy && uuid4(r.exec_id))) {
        free(dir);
        pthread_mutex_destroy(&r.lock);
        return p->host->set_error(p->h, SBX_E_IO, "exec: no random bytes for the exec id");
    }
    sbx_exec_spec_v1 with = *spec;
    char **argv = NULL;
    char hex[33];
    if (prelude) {
        if (pc_random_hex(hex, 16)) {
            free(dir);
            pthread_mutex_destroy(&r.lock);
            return p->host->set_error(p->h, SBX_E_IO, "exec: no random bytes for the exec");
        }
        r.nonce_len = (size_t)snprintf(r.nonce, sizeof r.nonce, "%s ", hex);
        argv = modal_prelude_argv(spec->files, spec->n_files, spec->argv, hex, spec->cwd);
        if (!argv) {
            free(dir);
            pthread_mutex_destroy(&r.lock);
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        }
        with.argv = (const char *const *)argv;
    }
    /* The service's clock for the command starts after this: a kill of
     * its at the limit comes no earlier than sent + timeout. */
    uint64_t sent = modal_now_ns();
    const char *start_dir = prelude ? p->workdir : dir; /* the prelude goes to cwd */
    rc = sb->legacy ? start_legacy(&r, &with, start_dir) : start_router(&r, &with, start_dir);
    free(argv);
    free(dir);
    if (rc) {
        pthread_mutex_destroy(&r.lock);
        return rc;
    }
    uint64_t started = modal_now_ns();
    r.deadline_ns = started + spec->timeout_ns;
    out->start_ns = started - t0;

    if (sb->legacy)
        legacy_stdin(&r, spec->stdin_data, spec->stdin_data ? spec->stdin_len : 0);
    else
        router_stdin(&r, spec->stdin_data, spec->stdin_data ? spec->stdin_len : 0);

    struct reader rd_out = {.r = &r, .stream = SBX_STREAM_STDOUT};
    struct reader rd_err = {.r = &r, .stream = SBX_STREAM_STDERR};
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, read_thread, &rd_err) == 0;
    read_thread(&rd_out);
    if (threaded)
        pthread_join(th, NULL);
    else
        read_thread(&rd_err);
    if (r.failed) {
        /* The files could not be written: the command never ran. */
        rc = modal_prelude_failed(p, sb, spec->files, spec->n_files, r.report);
        modal_not_started(sb);
        goto out;
    }
    deliver_held(&r);

    int code = 0, sig = 0;
    mg_status st = {.code = -1};
    char err[PH_ERR_MAX] = "";
    bool stopped = r.stop != STOP_NONE;
    if (!stopped && (rd_out.rc || rd_err.rc)) {
        struct reader *bad = rd_out.rc ? &rd_out : &rd_err;
        rc = bad->rc;
        if (rc == SBX_E_TIMEOUT) {
            kill_marked(&r);
            rc = p->host->set_error(p->h, SBX_E_TIMEOUT, "Modal: sandbox %s: exec %s did not "
                                    "end %ld ms past its time limit", sb->id, r.exec_id,
                                    MODAL_EXEC_GRACE_MS);
        } else if (bad->st.code == -2 && (bad == &rd_out || !threaded)) {
            /* set already, on this thread */
        } else if (bad->st.code == -2) {
            /* Set on the reader's own thread, where the core, which keeps
             * errors per thread, never sees it: say it again here. */
            rc = p->host->set_error(p->h, rc, "Modal: sandbox %s: exec output: %s", sb->id,
                                    bad->err[0] ? bad->err : "the stderr stream failed");
        } else {
            if (!bad->err[0])
                snprintf(bad->err, sizeof bad->err, "%s", bad->st.code >= 0
                         ? mg_code_name(bad->st.code) : "the transfer failed");
            if (bad->st.code >= 0)
                modal_call_error(p, sb, "exec output", rc, &bad->st, bad->err);
            else if (rc == SBX_E_BACKEND)   /* the stream held what cannot be */
                p->host->set_error(p->h, rc, "Modal: sandbox %s: exec output: %s", sb->id,
                                   bad->err);
            else
                p->host->set_error(p->h, rc, "Modal: sandbox %s: exec output: %s (the stream "
                                   "broke while the command ran; the sandbox may have ended)",
                                   sb->id, bad->err);
        }
        goto out;
    }
    if (sb->legacy) {
        if (rd_out.has_exit)
            code = rd_out.exit_code;
        else if ((rc = legacy_wait(&r, &code)))
            goto out;
    } else if ((rc = router_wait(&r, &code, &sig, &st, err))) {
        if (rc == SBX_E_TIMEOUT || left_ms(&r, 0) == 0) {
            kill_marked(&r);
            if (stopped)
                rc = SBX_OK; /* our own stop: its outcome follows */
        }
        if (rc && st.code != -2)
            modal_call_error(p, sb, "exec wait", rc, &st, err);
        if (rc)
            goto out;
    }
    uint64_t now = modal_now_ns();
    out->exec_ns = now - started ? now - started : 1;
    bool past = now - sent >= spec->timeout_ns;
    if (stopped) {
        out->status = SBX_RUN_OUTPUT_LIMIT;
        out->exit_code = -1;
        out->signal = SIGKILL;
    } else if (past && (sig == SIGKILL || (sb->legacy && code == 128 + SIGKILL) || sig)) {
        kill_marked(&r);
        out->status = SBX_RUN_TIMEOUT;
        out->exit_code = -1;
        out->signal = SIGKILL;
    } else if (sig) {
        out->status = SBX_RUN_SIGNAL;
        out->exit_code = -1;
        out->signal = sig;
    } else {
        out->exit_code = code;
        out->status = code == 0 ? SBX_RUN_OK : SBX_RUN_NONZERO_EXIT;
        if (code == 127 || code == 126)
            out->status = start_failure(&r, code);
    }
    rc = SBX_OK;
out:
    if (!out->exec_ns)
        out->exec_ns = 1;
    pthread_mutex_destroy(&r.lock);
    return rc;
}

int modal_exec(struct modal_prov *p, struct modal_sb *sb, const sbx_exec_spec_v1 *spec,
               const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    if (spec->n_files && p->files_in_exec && modal_files_fit(spec->files, spec->n_files, spec->cwd))
        return exec_run(p, sb, spec, true, sink, out);
    for (size_t i = 0; i < spec->n_files; i++) {
        const sbx_file_v1 *f = &spec->files[i];
        int rc = modal_upload(p, sb, f->path, f->data, f->len, f->mode);
        if (rc) {
            modal_not_started(sb); /* the command was never asked for */
            return rc;
        }
    }
    return exec_run(p, sb, spec, false, sink, out);
}

/* ---- a quiet exec for files and clean-ups ---- */

struct collect {
    char *buf;
    size_t len, cap, max;
    char *errbuf;
    size_t errlen, errcap;
};

static int collect_write(void *ud, int stream, const void *buf, size_t len)
{
    struct collect *c = ud;
    if (stream == SBX_STREAM_STDERR) {
        size_t n = c->errlen + 1 < c->errcap ? c->errcap - 1 - c->errlen : 0;
        if (n > len)
            n = len;
        memcpy(c->errbuf + c->errlen, buf, n);
        c->errlen += n;
        c->errbuf[c->errlen] = '\0';
        return 0;
    }
    /* The exec's stdout cap is out_max + 1: this sink holds it (one byte
     * past max tells the caller the file is too big). */
    size_t room = c->len > c->max ? 0 : c->max - c->len + 1;
    bool over = len > room;
    if (over)
        len = room;
    if (len == 0)
        return over;
    if (c->len + len > c->cap) {
        size_t n = c->cap ? c->cap : 4096;
        while (n < c->len + len)
            n *= 2;
        char *nb = realloc(c->buf, n + 1);
        if (!nb)
            return 1;
        c->buf = nb;
        c->cap = n;
    }
    memcpy(c->buf + c->len, buf, len);
    c->len += len;
    return over;
}

int modal_run(struct modal_prov *p, struct modal_sb *sb, const char *const *argv,
              const void *stdin_data, size_t stdin_len, size_t out_max, long timeout_ms,
              char **out, size_t *out_len, char *errbuf, size_t errcap, int *exit_code)
{
    struct collect c = {.max = out_max, .errbuf = errbuf, .errcap = errcap};
    if (errcap)
        errbuf[0] = '\0';
    *exit_code = -1;
    sbx_output_sink_v1 sink = {collect_write, &c};
    sbx_exec_spec_v1 spec = {
        .struct_size = sizeof spec, .argv = argv, .stdin_data = stdin_data,
        .stdin_len = stdin_len, .timeout_ns = (uint64_t)timeout_ms * 1000000u,
        .stdout_cap = out_max + 1, .stderr_cap = UINT64_MAX,
    };
    sbx_exec_outcome_v1 o = {.struct_size = sizeof o};
    int rc = exec_run(p, sb, &spec, false, &sink, &o);
    if (rc) {
        free(c.buf);
        return rc;
    }
    if (o.status == SBX_RUN_OK || o.status == SBX_RUN_NONZERO_EXIT)
        *exit_code = o.exit_code;
    if (out) {
        *out = c.buf ? c.buf : calloc(1, 1);
        *out_len = c.len;
        if (!*out)
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    } else {
        free(c.buf);
    }
    return SBX_OK;
}
