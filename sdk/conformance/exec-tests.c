/* sdk/conformance/exec-tests.c - exit codes, signals, lookup failures,
 * environment, working directory, wall timeout, result metadata */
#include "config.h"

#include "kit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- exit codes ---------------------------------------------------------- */

#define EXIT_WORKERS 4

typedef struct exit_worker {
    conf_kit *k;
    conf_case *c;
    int first, step;
} exit_worker;

static void *exit_codes_worker(void *arg)
{
    exit_worker *w = arg;
    bool ok;
    sbx_sandbox *sb = conf_multi_box(w->k, w->c, &ok);
    if (!ok)
        return NULL;
    for (int code = w->first; code <= 255; code += w->step) {
        char line[32], what[64];
        snprintf(line, sizeof line, "exit %d", code);
        sbx_exec_opts *x = conf_xshell(w->c, line);
        sbx_result *r = conf_multi_exec(w->k, w->c, sb, x);
        sbx_exec_opts_free(x);
        if (r == NULL)
            continue;
        snprintf(what, sizeof what, "'exit %d'", code);
        if (conf_expect_status(w->c, what,
                               code == 0 ? SBX_RUN_OK : SBX_RUN_NONZERO_EXIT,
                               r))
            conf_expect_int(w->c, what, code, sbx_result_exit_code(r));
        sbx_result_free(r);
    }
    conf_destroy(w->k, w->c, sb);
    return NULL;
}

static void t_exit_codes(conf_kit *k, conf_case *c)
{
    exit_worker w[EXIT_WORKERS];
    pthread_t th[EXIT_WORKERS];
    int n = (k->caps & SBX_CAP_CONCURRENT) ? EXIT_WORKERS : 1;
    int started = 0;
    for (int i = 0; i < n; i++) {
        w[i] = (exit_worker){k, c, i, n};
        if (pthread_create(&th[i], NULL, exit_codes_worker, &w[i]) != 0) {
            /* Run what could not get a thread here, in this one. */
            exit_codes_worker(&w[i]);
            continue;
        }
        started |= 1 << i;
    }
    for (int i = 0; i < n; i++)
        if (started & (1 << i))
            pthread_join(th[i], NULL);
}

/* ---- signals ------------------------------------------------------------- */

static void t_signals(conf_kit *k, conf_case *c)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"SEGV", SIGSEGV}};
    bool ok;
    sbx_sandbox *sb = conf_multi_box(k, c, &ok);
    if (!ok)
        return;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "kill -%s $$; echo survived", sigs[i].name);
        sbx_exec_opts *x = conf_xshell(c, line);
        sbx_result *r = conf_multi_exec(k, c, sb, x);
        sbx_exec_opts_free(x);
        if (r == NULL)
            continue;
        if (conf_expect_status(c, line, SBX_RUN_SIGNAL, r)) {
            conf_expect_int(c, "signal", sigs[i].sig, sbx_result_signal(r));
            conf_expect_int(c, "exit_code", -1, sbx_result_exit_code(r));
        }
        sbx_result_free(r);
    }
    conf_destroy(k, c, sb);
}

/* ---- lookup failures ----------------------------------------------------- */

static void t_not_found(conf_kit *k, conf_case *c)
{
    static const char *const abs_argv[] = {"/nonexistent/cmd", NULL};
    static const char *const path_argv[] = {"no-such-command-xyz", NULL};
    const char *const *argvs[] = {abs_argv, path_argv};
    for (size_t i = 0; i < 2; i++) {
        sbx_exec_opts *x = conf_xargv(c, argvs[i]);
        sbx_result *r = conf_run(k, c, NULL, x);
        sbx_exec_opts_free(x);
        if (r == NULL)
            continue;
        if (conf_expect_status(c, argvs[i][0], SBX_RUN_NOT_FOUND, r))
            conf_expect_int(c, "exit_code", 127, sbx_result_exit_code(r));
        sbx_result_free(r);
    }
}

static void t_not_executable(conf_kit *k, conf_case *c)
{
    static const char *const argv[] = {"./file", NULL};
    static const char script[] = "#!/bin/sh\necho should-not-run\n";
    sbx_exec_opts *x = conf_xargv(c, argv);
    if (x == NULL)
        return;
    if (conf_set_ok(c, "sbx_exec_opts_add_file(\"file\", 0644)",
                    sbx_exec_opts_add_file(x, "file", script,
                                           sizeof script - 1, 0644))) {
        sbx_result *r = conf_run(k, c, NULL, x);
        if (r != NULL) {
            if (conf_expect_status(c, "./file with mode 0644",
                                   SBX_RUN_NOT_EXECUTABLE, r))
                conf_expect_int(c, "exit_code", 126, sbx_result_exit_code(r));
            sbx_result_free(r);
        }
    }
    sbx_exec_opts_free(x);
}

/* ---- environment --------------------------------------------------------- */

#define HOST_MARKER "SBX_CONFORMANCE_HOST_MARKER"

static void t_env(conf_kit *k, conf_case *c)
{
    sbx_create_opts *o = conf_copts(k, c);
    sbx_exec_opts *x = conf_xshell(
        c, "printf '%s|%s|%s|%s' \"$CONF_A\" \"$CONF_B\" \"$CONF_C\" "
           "\"${" HOST_MARKER "-unset}\"");
    if (o == NULL || x == NULL)
        goto out;
    if (!conf_set_ok(c, "sbx_create_opts_add_env(CONF_A)",
                     sbx_create_opts_add_env(o, "CONF_A", "create-a")) ||
        !conf_set_ok(c, "sbx_create_opts_add_env(CONF_B)",
                     sbx_create_opts_add_env(o, "CONF_B", "create-b")) ||
        !conf_set_ok(c, "sbx_exec_opts_add_env(CONF_B)",
                     sbx_exec_opts_add_env(x, "CONF_B", "exec-b")) ||
        !conf_set_ok(c, "sbx_exec_opts_add_env(CONF_C)",
                     sbx_exec_opts_add_env(x, "CONF_C", "exec-c")))
        goto out;
    /* The host's environment must not leak in: put a marker in ours. */
    if (setenv(HOST_MARKER, "leaked", 1) != 0) {
        conf_fail(c, "setenv(%s): %s", HOST_MARKER, strerror(errno));
        goto out;
    }
    sbx_result *r = conf_run(k, c, o, x);
    unsetenv(HOST_MARKER);
    if (r == NULL)
        goto out;
    if (conf_expect_status(c, "printf of the variables", SBX_RUN_OK, r))
        conf_expect_stdout(c,
                           "CONF_A (create) | CONF_B (exec over create) | "
                           "CONF_C (exec) | host marker",
                           "create-a|exec-b|exec-c|unset", r);
    sbx_result_free(r);
out:
    sbx_exec_opts_free(x);
    sbx_create_opts_free(o);
}

/* ---- working directory --------------------------------------------------- */

static bool ends_with_sub(const sbx_result *r)
{
    size_t len = 0;
    const char *p = sbx_result_stdout(r, &len);
    return len >= 5 && p[0] == '/' && memcmp(p + len - 5, "/sub\n", 5) == 0;
}

static void t_cwd(conf_kit *k, conf_case *c)
{
    bool ok;
    sbx_result *r = NULL;
    sbx_exec_opts *x = NULL;
    sbx_sandbox *sb = conf_multi_box(k, c, &ok);
    if (!ok)
        return;
    if (sb != NULL) {
        /* A persistent sandbox: make the directory, then run in it. */
        r = conf_exec_shell(k, c, sb, "mkdir sub");
        if (r == NULL || !conf_expect_status(c, "mkdir sub", SBX_RUN_OK, r))
            goto out;
        sbx_result_free(r);
        r = NULL;
        x = conf_xshell(c, "pwd");
    } else {
        /* One-shot: a file placed before the command makes the directory. */
        x = conf_xshell(c, "pwd");
        if (x != NULL &&
            !conf_set_ok(c, "sbx_exec_opts_add_file(\"sub/keep\")",
                         sbx_exec_opts_add_file(x, "sub/keep", "", 0, 0644)))
            goto out;
    }
    if (x == NULL ||
        !conf_set_ok(c, "sbx_exec_opts_set_cwd(\"sub\")",
                     sbx_exec_opts_set_cwd(x, "sub")))
        goto out;
    r = conf_multi_exec(k, c, sb, x);
    if (r != NULL && conf_expect_status(c, "pwd in sub", SBX_RUN_OK, r) &&
        !ends_with_sub(r)) {
        conf_fail(c, "pwd with cwd \"sub\": expected an absolute path ending "
                     "in /sub");
        conf_describe(c, r);
    }
out:
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    conf_destroy(k, c, sb);
}

static void t_default_cwd_writable(conf_kit *k, conf_case *c)
{
    sbx_result *r = conf_run_shell(
        k, c, "echo written > conformance.txt && cat conformance.txt");
    if (r == NULL)
        return;
    if (conf_expect_status(c, "write in the default directory", SBX_RUN_OK, r))
        conf_expect_stdout(c, "file read back", "written\n", r);
    sbx_result_free(r);
}

/* ---- wall timeout -------------------------------------------------------- */

/* True when the host runs a process whose command line is exactly
 * "sleep <secs>" (the provider's processes are visible here when the
 * backend runs on this kernel). */
static bool host_has_sleep(unsigned secs, long *pid_out)
{
    char want[32];
    int wl = snprintf(want, sizeof want, "sleep%c%u%c", '\0', secs, '\0');
    DIR *d = opendir("/proc");
    if (d == NULL)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[64];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        /* Match on the last path component of argv[0]. */
        if (n >= wl) {
            const char *base = buf;
            const char *end = memchr(buf, '\0', (size_t)n);
            if (end == NULL)
                continue;
            for (const char *p = buf; p < end; p++)
                if (*p == '/')
                    base = p + 1;
            size_t rest = (size_t)(n - (base - buf));
            if (rest == (size_t)wl && memcmp(base, want, (size_t)wl) == 0) {
                found = true;
                *pid_out = strtol(e->d_name, NULL, 10);
            }
        }
    }
    closedir(d);
    return found;
}

/* A leftover might still be on its way out when exec returns (a zombie has
 * an empty command line, a dying process not yet): look for a moment. */
static void check_host_leftovers(conf_case *c, unsigned secs, const char *when)
{
    long pid = 0;
    for (int i = 0; i < 20; i++) {
        if (!host_has_sleep(secs, &pid))
            return;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    conf_fail(c, "%s: process %ld ('sleep %u') is still running on the host",
              when, pid, secs);
}

/* Shell text that ignores SIGTERM, SIGHUP and SIGINT, and starts
 * "sleep SECS" in a session of its own (setsid, where there is one),
 * waiting on a fifo until it has left, so that the test does not race
 * the escape. */
static void escape_prefix(char *out, size_t cap, unsigned secs)
{
    snprintf(out, cap,
             "trap '' TERM HUP INT; f=.conf-fifo-$$; mkfifo $f || exit 3; "
             "s=; command -v setsid >/dev/null 2>&1 && s=setsid; "
             "$s sh -c 'echo > '$f'; exec sleep %u' "
             ">/dev/null 2>&1 </dev/null & read x < $f; rm -f $f; ",
             secs);
}

static void t_timeout(conf_kit *k, conf_case *c)
{
    /* A duration no other test uses, so a leftover is recognisably ours. */
    unsigned secs = 600 + (unsigned)getpid() % 9000;
    char line[512], scan[512];
    bool ok;
    sbx_result *r = NULL;
    sbx_sandbox *sb = conf_multi_box(k, c, &ok);
    if (!ok)
        return;
    /* Ignoring SIGTERM and leaving the session must not help: the wall
     * limit kills whatever the command started. */
    escape_prefix(line, sizeof line, secs);
    snprintf(line + strlen(line), sizeof line - strlen(line),
             "sleep %u & sleep %u", secs, secs);
    sbx_exec_opts *x = conf_xshell(c, line);
    if (x == NULL ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout(1 s)",
                     sbx_exec_opts_set_timeout(x, SEC_NS)))
        goto out;
    r = conf_multi_exec(k, c, sb, x);
    if (r == NULL)
        goto out;
    conf_expect_status(c, "sleep with a 1 s timeout", SBX_RUN_TIMEOUT, r);
    sbx_result_free(r);
    r = NULL;
    check_host_leftovers(c, secs, "after the timed-out exec");

    /* The sandbox's own view: no "sleep SECS" left in its /proc. */
    snprintf(scan, sizeof scan,
             "[ -r /proc/self/cmdline ] || { echo no-proc; exit 0; }; "
             "for d in /proc/[0-9]*; do "
             "c=$(tr '\\000' ' ' < $d/cmdline 2>/dev/null) || continue; "
             "case \"$c\" in 'sleep %u '|*'/sleep %u ') echo \"left: $d $c\";; "
             "esac; done; exit 0",
             secs, secs);
    sbx_exec_opts_free(x);
    x = conf_xshell(c, scan);
    r = conf_multi_exec(k, c, sb, x);
    if (r == NULL)
        goto out;
    if (conf_stdout_is(r, "no-proc\n"))
        conf_note(c, "no /proc inside the sandbox: only the host was checked");
    else if (conf_expect_status(c, "scan of /proc", SBX_RUN_OK, r))
        conf_expect_stdout(c, "processes left by the timed-out exec "
                              "(seen from inside)", "", r);
out:
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    conf_destroy(k, c, sb);
    check_host_leftovers(c, secs, "after destroy");
}

/* Background processes, even ones that left the session and closed
 * their output, do not outlive the sandbox: not a one-shot run, and not a
 * persistent sandbox once destroyed. */
static void t_no_leftovers(conf_kit *k, conf_case *c)
{
    unsigned secs = 600 + (unsigned)(getpid() + 1) % 9000;
    char line[512];
    escape_prefix(line, sizeof line, secs);
    snprintf(line + strlen(line), sizeof line - strlen(line),
             "sleep %u >/dev/null 2>&1 </dev/null & exit 0", secs);
    sbx_result *r = conf_run_shell(k, c, line);
    if (r != NULL) {
        conf_expect_status(c, "one-shot run leaving sleeps behind", SBX_RUN_OK,
                           r);
        sbx_result_free(r);
        check_host_leftovers(c, secs, "after sbx_run");
    }
    if (!(k->caps & SBX_CAP_PERSISTENT))
        return;
    /* Another duration, so each check sees only its own leftovers. */
    secs = 600 + (unsigned)(getpid() + 2) % 9000;
    escape_prefix(line, sizeof line, secs);
    snprintf(line + strlen(line), sizeof line - strlen(line),
             "sleep %u >/dev/null 2>&1 </dev/null & exit 0", secs);
    sbx_sandbox *sb = conf_box(k, c, NULL, true);
    if (sb == NULL)
        return;
    r = conf_exec_shell(k, c, sb, line);
    if (r != NULL) {
        conf_expect_status(c, "exec leaving sleeps behind", SBX_RUN_OK, r);
        sbx_result_free(r);
    }
    conf_destroy(k, c, sb);
    check_host_leftovers(c, secs, "after destroying the persistent sandbox");
}

/* ---- cancellation ---------------------------------------------------------- */

struct firer {
    sbx_cancel *cancel;
    uint64_t after_ns;
};

static void *fire_later(void *arg)
{
    struct firer *f = arg;
    struct timespec ts = {(time_t)(f->after_ns / SEC_NS), (long)(f->after_ns % SEC_NS)};

    nanosleep(&ts, NULL);
    sbx_cancel_fire(f->cancel);
    return NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SEC_NS + (uint64_t)ts.tv_nsec;
}

/* A provider claiming "cancel" stops a silent command (and what it
 * started, also in a session of its own) soon after the handle fires,
 * long before its time limit; the result is a sandbox error with
 * SBX_E_CANCELLED, never a verdict. */
static void t_cancel(conf_kit *k, conf_case *c)
{
    unsigned secs = 600 + (unsigned)(getpid() + 3) % 9000;
    char line[512];
    struct firer f = {sbx_cancel_new(), 500 * 1000 * 1000};
    pthread_t th;
    bool ok;
    sbx_result *r = NULL;
    sbx_exec_opts *x = NULL;
    sbx_sandbox *sb = conf_multi_box(k, c, &ok);

    if (!ok || !f.cancel) {
        if (!f.cancel)
            conf_fail(c, "sbx_cancel_new failed");
        goto out;
    }
    escape_prefix(line, sizeof line, secs);
    snprintf(line + strlen(line), sizeof line - strlen(line), "sleep %u & sleep %u", secs,
             secs);
    if (!(x = conf_xshell(c, line)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout(60 s)",
                     sbx_exec_opts_set_timeout(x, 60 * SEC_NS)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_cancel", sbx_exec_opts_set_cancel(x, f.cancel)))
        goto out;
    if (pthread_create(&th, NULL, fire_later, &f) != 0) {
        conf_fail(c, "pthread_create failed");
        goto out;
    }
    uint64_t t0 = mono_ns();
    r = conf_multi_exec(k, c, sb, x);
    uint64_t took = mono_ns() - t0;
    pthread_join(th, NULL);
    if (r == NULL)
        goto out;
    conf_expect_status(c, "a silent command cancelled after 0.5 s", SBX_RUN_SANDBOX_ERROR, r);
    conf_expect_int(c, "error code", SBX_E_CANCELLED, sbx_result_error_code(r));
    if (took > 10 * SEC_NS)
        conf_fail(c, "the cancelled exec took %.1f s to return (its time limit is 60 s)",
                  (double)took / 1e9);
    sbx_result_free(r);
    r = NULL;
    check_host_leftovers(c, secs, "after the cancelled exec");

    /* A handle fired before the call: nothing runs. */
    r = conf_multi_exec(k, c, sb, x);
    if (r) {
        conf_expect_status(c, "an exec whose handle fired before", SBX_RUN_SANDBOX_ERROR, r);
        conf_expect_int(c, "error code", SBX_E_CANCELLED, sbx_result_error_code(r));
        conf_expect_true(c, "no output", sbx_result_timing(r, SBX_TIMING_EXEC) == 0);
    }
out:
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    conf_destroy(k, c, sb);
    check_host_leftovers(c, secs, "after destroy");
    sbx_cancel_free(f.cancel);
}

/* ---- metadata ------------------------------------------------------------ */

static void t_metadata(conf_kit *k, conf_case *c)
{
    sbx_result *r = conf_run_shell(k, c, "echo hi");
    if (r == NULL)
        return;
    conf_expect_status(c, "echo hi", SBX_RUN_OK, r);
    const char *prov = sbx_result_provider(r);
    const char *id = sbx_result_sandbox_id(r);
    if (prov == NULL || strcmp(prov, k->provider) != 0)
        conf_fail(c, "provider: expected \"%s\", got \"%s\"", k->provider,
                  prov ? prov : "(null)");
    if (id == NULL || *id == '\0')
        conf_fail(c, "sandbox id: expected non-empty, got \"%s\"",
                  id ? id : "(null)");
    uint64_t cr = sbx_result_timing(r, SBX_TIMING_CREATE);
    uint64_t ex = sbx_result_timing(r, SBX_TIMING_EXEC);
    uint64_t to = sbx_result_timing(r, SBX_TIMING_TOTAL);
    conf_note(c, "timings: create %llu ns, start %llu ns, exec %llu ns, "
                 "total %llu ns",
              (unsigned long long)cr,
              (unsigned long long)sbx_result_timing(r, SBX_TIMING_START),
              (unsigned long long)ex, (unsigned long long)to);
    conf_expect_true(c, "create timing non-zero", cr > 0);
    conf_expect_true(c, "exec timing non-zero", ex > 0);
    conf_expect_true(c, "total timing non-zero", to > 0);
    if (to < ex)
        conf_fail(c, "total timing (%llu ns) is less than exec timing "
                     "(%llu ns)",
                  (unsigned long long)to, (unsigned long long)ex);
    if (to < cr)
        conf_fail(c, "total timing (%llu ns) is less than create timing "
                     "(%llu ns)",
                  (unsigned long long)to, (unsigned long long)cr);
    sbx_result_free(r);
}

/* ---- streamed stdin ----------------------------------------------------------- */

struct feeder {
    int fd;                    /* the pipe's write end */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char out[512];             /* stdout as delivered */
    size_t out_len;
    bool answered;             /* "got one" was delivered before "two" was written */
};

static int feeder_output(void *ud, int stream, const void *buf, size_t len)
{
    struct feeder *f = ud;

    pthread_mutex_lock(&f->mu);
    if (stream == SBX_STREAM_STDOUT && len < sizeof f->out - f->out_len) {
        memcpy(f->out + f->out_len, buf, len);
        f->out_len += len;
        f->out[f->out_len] = '\0';
        pthread_cond_broadcast(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static bool write_all_fd(int fd, const char *s)
{
    size_t n = strlen(s);

    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* Writes "one", waits (20 s at most) for the command's answer to it, then
 * writes "two" and a last line, and closes the pipe. */
static void *feed(void *arg)
{
    struct feeder *f = arg;
    struct timespec until;

    write_all_fd(f->fd, "one\n");
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&f->mu);
    while (!strstr(f->out, "got one") &&
           pthread_cond_timedwait(&f->cv, &f->mu, &until) == 0)
        ;
    f->answered = strstr(f->out, "got one") != NULL;
    pthread_mutex_unlock(&f->mu);
    write_all_fd(f->fd, "two\n");
    write_all_fd(f->fd, "rest\n");
    close(f->fd);
    return NULL;
}

/* A provider claiming "stdin_stream" feeds the command what is written
 * to the stdin fd while it runs: the command answers a first line before
 * the second is written (interactive), reads the rest, and sees the end
 * when the writer closes; a provider without it refuses such an exec. */
static void t_stdin_stream(conf_kit *k, conf_case *c)
{
    int p[2] = {-1, -1};
    struct feeder f = {.fd = -1};
    pthread_t th;
    bool ok, started = false;
    sbx_result *r = NULL;
    sbx_exec_opts *x = NULL;
    sbx_sandbox *sb = conf_multi_box(k, c, &ok);

    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    if (!ok)
        goto out;
    if (pipe(p) != 0) {
        conf_fail(c, "pipe: %s", strerror(errno));
        goto out;
    }
    f.fd = p[1];
    if (!(x = conf_xshell(c, "read a; echo \"got $a\"; read b; echo \"got $b\"; cat; echo end")) ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout(30 s)",
                     sbx_exec_opts_set_timeout(x, 30 * SEC_NS)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_stdin_fd", sbx_exec_opts_set_stdin_fd(x, p[0])) ||
        !conf_set_ok(c, "sbx_exec_opts_set_output_cb",
                     sbx_exec_opts_set_output_cb(x, feeder_output, &f)))
        goto out;
    if (pthread_create(&th, NULL, feed, &f) != 0) {
        conf_fail(c, "pthread_create failed");
        goto out;
    }
    started = true;
    r = conf_multi_exec(k, c, sb, x);
    pthread_join(th, NULL);
    if (!r)
        goto out;
    conf_expect_status(c, "a command reading streamed stdin to its end", SBX_RUN_OK, r);
    conf_expect_stdout(c, "stdout", "got one\ngot two\nrest\nend\n", r);
    conf_expect_true(c, "the command answered the first line before the second was written",
                     f.answered);
out:
    if (!started && p[1] >= 0)
        close(p[1]);
    if (p[0] >= 0)
        close(p[0]);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    if (sb)
        conf_destroy(k, c, sb);
    pthread_mutex_destroy(&f.mu);
    pthread_cond_destroy(&f.cv);
}

/* The command's output so far, and the signals to send once it shows a
 * line: the output callback (the exec's own thread) writes each in turn. */
struct signaller {
    int fd;                    /* the pipe's write end */
    char out[256];
    size_t out_len;
    int step;                  /* signals sent */
};

static int signaller_output(void *ud, int stream, const void *buf, size_t len)
{
    static const char *const after[] = { "ready\n", "got USR1\n" };
    static const unsigned char sigs[] = { SIGUSR1, SIGTERM };
    struct signaller *g = ud;

    if (stream != SBX_STREAM_STDOUT || len >= sizeof g->out - g->out_len)
        return 0;
    memcpy(g->out + g->out_len, buf, len);
    g->out_len += len;
    g->out[g->out_len] = '\0';
    while (g->step < 2 && strstr(g->out, after[g->step])) {
        if (write(g->fd, &sigs[g->step], 1) != 1)
            break;
        g->step++;
    }
    return 0;
}

static void t_signal(conf_kit *k, conf_case *c)
{
    int p[2] = {-1, -1};
    struct signaller g = {.fd = -1};
    bool ok;
    sbx_result *r = NULL;
    sbx_exec_opts *x = NULL;
    sbx_sandbox *sb = conf_multi_box(k, c, &ok);

    if (!ok)
        goto out;
    if (pipe(p) != 0) {
        conf_fail(c, "pipe: %s", strerror(errno));
        goto out;
    }
    g.fd = p[1];
    if (!(x = conf_xshell(c, "trap 'echo got USR1' USR1; trap 'echo got TERM; exit 7' TERM; "
                          "echo ready; while :; do sleep 0.1; done")) ||
        !conf_set_ok(c, "sbx_exec_opts_set_timeout(30 s)",
                     sbx_exec_opts_set_timeout(x, 30 * SEC_NS)) ||
        !conf_set_ok(c, "sbx_exec_opts_set_signal_fd", sbx_exec_opts_set_signal_fd(x, p[0])) ||
        !conf_set_ok(c, "sbx_exec_opts_set_output_cb",
                     sbx_exec_opts_set_output_cb(x, signaller_output, &g)))
        goto out;
    if (!(r = conf_multi_exec(k, c, sb, x)))
        goto out;
    conf_expect_stdout(c, "stdout", "ready\ngot USR1\ngot TERM\n", r);
    conf_expect_int(c, "exit code (the TERM trap's)", 7, sbx_result_exit_code(r));
out:
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    if (sb)
        conf_destroy(k, c, sb);
}

const conf_test conf_exec_tests[] = {
    {"exit_codes", 0, t_exit_codes,
     "'exit N' for N in 0..255: status ok for 0, nonzero_exit otherwise, "
     "exit_code N"},
    {"signals", 0, t_signals,
     "'kill -TERM/-KILL/-SEGV $$': status signal, that signal, exit_code -1"},
    {"not_found", 0, t_not_found,
     "argv /nonexistent/cmd and no-such-command-xyz: status not_found, 127"},
    {"not_executable", 0, t_not_executable,
     "a mode 0644 file run as ./file: status not_executable, 126"},
    {"env", 0, t_env,
     "create and exec environment visible, exec overrides create, the "
     "host's environment not inherited"},
    {"cwd", 0, t_cwd, "set_cwd(\"sub\"): pwd prints a path ending in /sub"},
    {"default_cwd_writable", 0, t_default_cwd_writable,
     "the default working directory is writable"},
    {"timeout", 0, t_timeout,
     "'sleep & sleep' ignoring SIGTERM, one in its own session, under a 1 s "
     "timeout: status timeout, no process left"},
    {"no_leftovers", 0, t_no_leftovers,
     "background processes (also setsid ones) do not outlive sbx_run or "
     "sbx_sandbox_destroy"},
    {"cancel", SBX_CAP_CANCEL, t_cancel,
     "a silent 'sleep & sleep' (one in its own session) with a 60 s limit, "
     "cancelled after 0.5 s: returns within 10 s, sandbox_error with "
     "SBX_E_CANCELLED, no process left; a fired handle runs nothing"},
    {"stdin_stream", SBX_CAP_STDIN_STREAM, t_stdin_stream,
     "stdin from a pipe fed by another thread: the command answers a first "
     "line before the second is written, reads the rest to the end when the "
     "writer closes"},
    {"signal", SBX_CAP_SIGNAL, t_signal,
     "signals from a pipe, written as the output asks: a shell's USR1 trap "
     "runs and it goes on, its TERM trap runs and exits 7"},
    {"metadata", 0, t_metadata,
     "result names the provider and a sandbox id; timings non-zero, total "
     ">= exec"},
    {NULL, 0, NULL, NULL},
};
