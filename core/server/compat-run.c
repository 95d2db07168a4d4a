/* core/server/compat-run.c - one run for the compatibility routes, its
 * output split back into compile and run phases
 *
 * The library streams a template's compile output to the output callback
 * before the program's and keeps in the result only the program's (or,
 * when the compile fails, the compiler's).  So what the callback saw
 * minus what the result holds is the compile step's output, and it is a
 * prefix of each stream and of their interleaving.
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "ws-frame.h"

int srv_bytes_add(srv_bytes *b, const void *data, size_t len)
{
    if (len > b->cap - b->len || !b->data) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < len) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

void srv_bytes_free(srv_bytes *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    srv_capture *cap = ud;
    srv_bytes *b = stream == SBX_STREAM_STDERR ? &cap->err : &cap->out;

    /* Out of memory: stop the program rather than answer with a hole. */
    return srv_bytes_add(b, buf, len) != 0 || srv_bytes_add(&cap->mix, buf, len) != 0;
}

static void split(srv_capture *cap)
{
    size_t out_len = 0, err_len = 0, c_out, c_err;
    const char *out = sbx_result_stdout(cap->res, &out_len);
    const char *err = sbx_result_stderr(cap->res, &err_len);
    uint64_t exec_ns = sbx_result_timing(cap->res, SBX_TIMING_EXEC), c_ns = 0;

    cap->compiled = sbx_result_compile(cap->res, &cap->compile_status, &c_ns);
    if (cap->compiled && sbx_result_status(cap->res) == SBX_RUN_COMPILE_ERROR) {
        cap->compile = (srv_phase){ true, out, err, cap->mix.data, out_len, err_len,
                                    cap->mix.len, c_ns };
        return;
    }
    /* What the callback saw beyond the result's is the compiler's. */
    c_out = cap->out.len > out_len ? cap->out.len - out_len : 0;
    c_err = cap->err.len > err_len ? cap->err.len - err_len : 0;
    if (cap->compiled)
        cap->compile = (srv_phase){ true, cap->out.data, cap->err.data, cap->mix.data,
                                    c_out, c_err, c_out + c_err, c_ns };
    cap->run = (srv_phase){ true, out, err, cap->mix.data ? cap->mix.data + c_out + c_err : NULL,
                            out_len, err_len,
                            cap->mix.len > c_out + c_err ? cap->mix.len - c_out - c_err : 0,
                            exec_ns };
    /* Output that reached the result without the callback (a provider
     * that does not stream still calls it; this is a guard). */
    if (cap->run.mix_len < out_len + err_len) {
        cap->run.mix_len = 0;
        cap->run.mix = NULL;
    }
}

static int fetch_files(srv *s, sbx_sandbox *sb, const char *const *fetch, size_t n,
                       srv_capture *cap)
{
    if (!(cap->files = json_object()))
        return SBX_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        void *data = NULL;
        size_t len = 0;
        int rc = sbx_sandbox_download(sb, fetch[i], s->conf.max_download, &data, &len);
        if (rc == SBX_E_NOT_FOUND)
            continue;
        if (rc != SBX_OK)
            return rc;
        json_t *text = srv_b64_json(data, len);
        free(data);
        if (!text)
            return SBX_E_NOMEM;
        json_object_set_new(cap->files, fetch[i], text);
    }
    return SBX_OK;
}

int srv_capture_run(srv_req *r, const sbx_create_opts *c, sbx_exec_opts *x,
                    const char *tmpl, const char *const *fetch, size_t n_fetch,
                    srv_capture *cap)
{
    return srv_capture_run_in(r->s, r->cancel, c, x, tmpl, fetch, n_fetch, cap);
}

int srv_capture_run_in(srv *s, sbx_cancel *cancel, const sbx_create_opts *c,
                       sbx_exec_opts *x, const char *tmpl, const char *const *fetch,
                       size_t n_fetch, srv_capture *cap)
{
    uint64_t t0 = srv_now_ns();
    sbx_sandbox *sb = NULL;

    memset(cap, 0, sizeof *cap);
    sbx_exec_opts_set_output_cb(x, on_output, cap);
    sbx_exec_opts_set_cancel(x, cancel);
    if (!n_fetch) {
        cap->rc = sbx_run(s->ctx, c, x, &cap->res);
    } else {
        /* The files are read before the sandbox goes. */
        cap->rc = sbx_sandbox_create(s->ctx, c, &sb);
        if (cap->rc == SBX_OK)
            cap->rc = sbx_sandbox_exec(sb, x, &cap->res);
        if (cap->rc == SBX_OK && sbx_result_status(cap->res) != SBX_RUN_SANDBOX_ERROR)
            cap->rc = fetch_files(s, sb, fetch, n_fetch, cap);
        if (sb)
            sbx_sandbox_destroy(sb);
    }
    if (cap->rc != SBX_OK) {
        sbx_result_free(cap->res);
        cap->res = NULL;
        return cap->rc;
    }
    split(cap);
    srv_metrics_run(s, sbx_result_provider(cap->res), tmpl,
                    sbx_run_status_name(sbx_result_status(cap->res)), srv_now_ns() - t0);
    return SBX_OK;
}

void srv_capture_free(srv_capture *cap)
{
    sbx_result_free(cap->res);
    json_decref(cap->files);
    srv_bytes_free(&cap->out);
    srv_bytes_free(&cap->err);
    srv_bytes_free(&cap->mix);
    memset(cap, 0, sizeof *cap);
}

json_t *srv_compat_body(srv_req *r, char *why, size_t why_size)
{
    json_error_t e;
    json_t *j;

    if (r->body_len == 0)
        return json_object();
    if (!(j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &e))) {
        snprintf(why, why_size, "the body is not valid JSON: %s (line %d, column %d)", e.text,
                 e.line, e.column);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        snprintf(why, why_size, "the body must be a JSON object");
        return NULL;
    }
    return j;
}

void srv_compat_message(srv_req *r, unsigned status, const char *key, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->err_code = status == 404 ? "not_found" : status == 415 ? "unsupported_media_type"
                : status >= 500 ? "internal" : "invalid";
    srv_reply_json(r, status, json_pack("{s:o}", key, srv_json_text(msg, strlen(msg))));
}

const char *srv_signal_name(int sig)
{
    static const char *const names[] = {
        [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
        [SIGILL] = "SIGILL",   [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
        [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",   [SIGKILL] = "SIGKILL",
        [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
        [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
        [SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
        [SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
        [SIGURG] = "SIGURG",   [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
        [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
        [SIGIO] = "SIGIO",     [SIGPWR] = "SIGPWR",   [SIGSYS] = "SIGSYS",
    };

    return sig > 0 && (size_t)sig < sizeof names / sizeof names[0] ? names[sig] : NULL;
}

int srv_signal_number(const char *name)
{
    for (int s = 1; name && s < 32; s++)
        if (srv_signal_name(s) && !strcmp(srv_signal_name(s), name))
            return s;
    return 0;
}
