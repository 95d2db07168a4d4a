/* tests/kube/test-signal.c - signals for a running command through the
 * library (sbx_exec_opts_set_signal_fd; SIGKILL is sbx_cancel's), on one
 * sandbox of PROVIDER.  Driven by signal.sh, which runs it on local and on
 * kubernetes (against the Kubernetes fake) and compares what each says.
 *
 *   test-signal PROVIDER N
 *
 * Each case signals once the command printed "up" (from the output
 * callback), so no check depends on timing.  Prints TAP lines numbered
 * from N + 1, and "= CASE STATUS SIGNAL EXIT" per case for the comparison. */
#include "config.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "../unit/tap.h"

#define SEC_NS 1000000000ull

static void check(const char *what, bool cond)
{
    ok(cond, "%s", what);
}

/* What to do once "up" came: write @bytes into the signal pipe, or fire
 * the cancel handle. */
struct trigger {
    int fd;
    const char *bytes;
    sbx_cancel *cancel;
    bool fired;
};

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    struct trigger *t = ud;
    if (stream != SBX_STREAM_STDOUT || t->fired || !memmem(buf, len, "up", 2))
        return 0;
    t->fired = true;
    if (t->cancel)
        sbx_cancel_fire(t->cancel);
    else if (write(t->fd, t->bytes, strlen(t->bytes)) != (ssize_t)strlen(t->bytes))
        check("write to the signal pipe", false);
    return 0;
}

/* PATH for the execs, when not NULL. */
static const char *path_env;

/* Runs @line under sh -c with a signal pipe; @early: bytes written before
 * the exec, @on_up: bytes written once it printed "up" (NULL with
 * @cancel: fire it instead).  The result (NULL on failure). */
static sbx_result *run(sbx_sandbox *sb, const char *line, const char *early, const char *on_up,
                       bool cancel)
{
    int p[2];
    if (pipe(p)) {
        check("pipe", false);
        return NULL;
    }
    struct trigger t = {.fd = p[1], .bytes = on_up ? on_up : "",
                        .cancel = cancel ? sbx_cancel_new() : NULL, .fired = !on_up && !cancel};
    sbx_exec_opts *x = sbx_exec_opts_new();
    const char *argv[] = {"sh", "-c", line, NULL};
    sbx_result *r = NULL;
    if (early && write(p[1], early, strlen(early)) != (ssize_t)strlen(early))
        check("write to the signal pipe", false);
    if (!x || sbx_exec_opts_set_argv(x, argv) || sbx_exec_opts_set_timeout(x, 60 * SEC_NS) ||
        sbx_exec_opts_set_signal_fd(x, p[0]) || sbx_exec_opts_set_output_cb(x, on_output, &t) ||
        (t.cancel && sbx_exec_opts_set_cancel(x, t.cancel)) ||
        (path_env && sbx_exec_opts_add_env(x, "PATH", path_env)) || sbx_sandbox_exec(sb, x, &r))
        r = NULL;
    /* After the end: a signal nobody reads is harmless. */
    if (write(p[1], "\002", 1) != 1)
        check("write to the signal pipe", false);
    sbx_exec_opts_free(x);
    sbx_cancel_free(t.cancel);
    close(p[0]);
    close(p[1]);
    return r;
}

/* One case: its line for the comparison, and whether it ended as wanted. */
static void expect(sbx_sandbox *sb, const char *name, const char *what, const char *line,
                   const char *early, const char *on_up, bool cancel, sbx_run_status status,
                   int sig, int code)
{
    sbx_result *r = run(sb, line, early, on_up, cancel);
    sbx_run_status st = r ? sbx_result_status(r) : SBX_RUN_SANDBOX_ERROR;
    int s = r ? sbx_result_signal(r) : -1, x = r ? sbx_result_exit_code(r) : -2;
    printf("= %s %s %d %d\n", name, sbx_run_status_name(st), s, x);
    bool ok = r && st == status && s == sig && x == code;
    check(what, ok);
    if (!ok && r) {
        size_t len = 0;
        const char *out = sbx_result_stdout(r, &len);
        printf("# got %s signal %d exit %d; error: %s; stdout: %.*s\n", sbx_run_status_name(st),
               s, x, sbx_result_error(r) ? sbx_result_error(r) : "none",
               (int)(len > 300 ? 300 : len), out ? out : "");
    }
    sbx_result_free(r);
}

int main(int argc, char **argv)
{
    sbx_ctx *ctx = NULL;
    sbx_sandbox *sb = NULL;
    signal(SIGPIPE, SIG_IGN);
    if (argc != 3) {
        fprintf(stderr, "usage: %s PROVIDER FIRST-NUMBER\n", argv[0]);
        return 2;
    }
    const char *prov = argv[1];
    tap_count = atoi(argv[2]);
    sbx_create_opts *c = sbx_create_opts_new();
    if (sbx_ctx_new(&ctx, getenv("POLYSANDBOX_CONFIG_DIR")) != SBX_OK || !c ||
        sbx_create_opts_set_provider(c, prov) || sbx_sandbox_create(ctx, c, &sb)) {
        const sbx_error *e = sbx_ctx_last_error(ctx);
        printf("Bail out! no %s sandbox: %s\n", prov, e ? sbx_error_message(e) : "?");
        return 1;
    }
    sbx_create_opts_free(c);
    char what[200];
#define WHAT(s) (snprintf(what, sizeof what, "%s: %s", prov, s), what)
    static const char py_loop[] =
        "exec python3 -c 'import time\nprint(\"up\", flush=True)\nwhile True: time.sleep(0.05)'";
    expect(sb, "int-sleep", WHAT("SIGINT reaches a running sleep: it dies of it"),
           "echo up; exec sleep 30", NULL, "\002", false, SBX_RUN_SIGNAL, SIGINT, -1);
    expect(sb, "term-python", WHAT("SIGTERM reaches a python loop: it dies of it"), py_loop,
           NULL, "\017", false, SBX_RUN_SIGNAL, SIGTERM, -1);
    expect(sb, "int-python", WHAT("SIGINT reaches a python loop: KeyboardInterrupt, then "
                                  "the signal"), py_loop, NULL, "\002", false, SBX_RUN_SIGNAL,
           SIGINT, -1);
    expect(sb, "held", WHAT("a SIGTERM written before the command ran reaches it"),
           "exec sleep 30", "\017", NULL, false, SBX_RUN_SIGNAL, SIGTERM, -1);
    expect(sb, "trap", WHAT("a trapped SIGUSR1, SIGHUP, SIGWINCH: the command goes on, its "
                            "own exit"),
           "n=0; trap 'n=$((n+1))' USR1 HUP WINCH; echo up; "
           "while [ $n -lt 3 ]; do sleep 0.05; done; exit 7", NULL, "\012\001\034", false,
           SBX_RUN_NONZERO_EXIT, 0, 7);
    expect(sb, "stop-dropped", WHAT("SIGSTOP, not deliverable, is dropped: the SIGTERM after "
                                    "it ends the command"),
           "echo up; exec sleep 30", NULL, "\023\017", false, SBX_RUN_SIGNAL, SIGTERM, -1);
    expect(sb, "ignored-end", WHAT("a signal as the command ends: no harm, its own exit"),
           "trap '' TERM; echo up", NULL, "\017", false, SBX_RUN_OK, 0, 0);
    expect(sb, "left", WHAT("no per-exec file of those execs is left in /tmp (this one's aside)"),
           "ls -a /tmp | grep '^[.]polysandbox-' | grep -v \"${POLYSANDBOX_EXEC:-none}\" && "
           "exit 1; exit 0", NULL, NULL,
           false, SBX_RUN_OK, 0, 0);
    /* SIGKILL is sbx_cancel's: print what it gives, for the comparison. */
    sbx_result *r = run(sb, "echo up; exec sleep 30", NULL, NULL, true);
    int ec = r ? sbx_result_error_code(r) : -1;
    printf("= kill %s %d %d %d\n", r ? sbx_run_status_name(sbx_result_status(r)) : "none",
           r ? sbx_result_signal(r) : -1, r ? sbx_result_exit_code(r) : -2, ec);
    check(WHAT("a cancel (SIGKILL) ends a running sleep"), r && ec == SBX_E_CANCELLED);
    sbx_result_free(r);
    /* Without perl in reach (a PATH of links to the tools the exec
     * wrapper uses, perl left out) the kubernetes provider signals what
     * carries the exec's marker, and tells the signal by 128 + N only. */
    r = run(sb, "mkdir -p nopl && for t in sh sleep head tr grep rm ls cat mkdir; do "
            "ln -sf \"$(command -v $t)\" nopl/$t; done; pwd", NULL, NULL, false);
    size_t len = 0;
    const char *wd = r ? sbx_result_stdout(r, &len) : NULL;
    char path[512];
    snprintf(path, sizeof path, "%.*s/nopl", (int)(len && wd[len - 1] == '\n' ? len - 1 : len),
             wd ? wd : "");
    check(WHAT("a PATH without perl is made"), r && sbx_result_status(r) == SBX_RUN_OK);
    sbx_result_free(r);
    path_env = path;
    bool kube = !strcmp(prov, "kubernetes");
    expect(sb, "no-perl", WHAT(kube ? "without perl SIGTERM reaches a sleep: exit 143"
                                    : "without perl SIGTERM reaches a sleep: it dies of it"),
           "echo up; sleep 30", NULL, "\017", false,
           kube ? SBX_RUN_NONZERO_EXIT : SBX_RUN_SIGNAL, kube ? 0 : SIGTERM, kube ? 143 : -1);
    path_env = NULL;
    check(WHAT("the sandbox is destroyed"), sbx_sandbox_destroy(sb) == SBX_OK);
    sbx_ctx_free(ctx);
    return tap_status();
}
