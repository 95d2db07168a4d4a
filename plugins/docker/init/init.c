/* plugins/docker/init/init.c - the in-container helper of the docker provider
 *
 * A small static program the provider places, read-only, in every sandbox
 * container (a shared volume mounted at /.sbx-init).  Two roles:
 *
 *   init --idle            PID 1 of the container: reaps orphans, sleeps,
 *                          exits on SIGTERM.
 *   init --serve           PID 1 of a sandbox in attach mode: the exec
 *                          server (init/serve.c), which runs each
 *                          request under exec_run() below.
 *   init [opts] -- CMD...  wraps one exec: runs CMD as a child, enforces the
 *                          wall timeout, and on exit, timeout or the
 *                          provider's kill request kills EVERY process the
 *                          exec started (it is a child subreaper, so even
 *                          processes that left the session or were
 *                          orphaned stay its descendants), then reports the
 *                          true wait status (Docker reports 128+N for both
 *                          "exit N" and signal N).
 *   init --install SRC DST renames SRC to DST (atomic install of a copy).
 *
 * The provider talks to the wrapper over its stdin (the hijacked exec
 * connection), in frames of 1 type byte + 4-byte big-endian length +
 * payload: 'N' the report nonce, 'D' stdin data for CMD, 'E' end of CMD's
 * stdin, 'K' kill now, 'S' signals for CMD's process group (a byte each,
 * only those sbx_signal_deliverable accepts; held until CMD runs, that is until
 * its exec closed the close-on-exec error pipe).  End of file on the
 * control channel (the provider went away) also kills.  The report is
 * the last thing written on stderr:
 *   "\036SBX" NONCE ":" STATUS " cpu=NS rss=BYTES" [" pids=1"] "\n"
 * with STATUS one of x=CODE, s=SIG, t (timeout), k (killed on request),
 * m=SIG (OOM kill seen), nf/nx=ERRNO (exec failed: not found / not
 * executable), cd=ERRNO (working directory), e=ERRNO (setup failed);
 * " pids=1" when the pids limit refused a fork during the exec.
 *
 * Options: -t MS wall timeout, -c S CPU seconds, -f BYTES file size,
 * -n N open files, -d DIR working directory, -s stdin follows ('D'/'E').
 *
 * Built with -static and no sanitizers (it runs inside any image); it
 * never allocates after fork.  Linux only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"

uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- --idle: PID 1 ---- */

static int idle_main(void)
{
    /* Nothing to keep: it only reaps.  A PID 1 that cannot set itself
     * apart still idles (the execs, which need it, say why). */
    helper_separate(0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGTERM || sig == SIGINT)
            return 0;
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}

/* ---- the control channel ---- */

struct ctl {
    unsigned char hdr[5];
    size_t hdr_got;
    unsigned char *frame;
    size_t frame_len, frame_got;
    char nonce[65];
    unsigned char *in;       /* stdin bytes not yet written to CMD */
    size_t in_len, in_off;
    int in_eof;              /* 'E' seen */
    int kill;                /* 'K' seen or the channel ended */
    unsigned char sig[32];   /* signals not yet delivered (the rest dropped) */
    size_t sig_n;
};

static void ctl_frame(struct ctl *c, unsigned char type)
{
    if (type == 'N') {
        size_t n = c->frame_len < sizeof c->nonce - 1 ? c->frame_len : sizeof c->nonce - 1;
        memcpy(c->nonce, c->frame, n);
        c->nonce[n] = '\0';
    } else if (type == 'D' && c->frame_len) {
        if (c->in_off == c->in_len) {
            free(c->in);
            c->in = NULL;
            c->in_len = c->in_off = 0;
        }
        unsigned char *nb = realloc(c->in, c->in_len + c->frame_len);
        if (!nb) {
            c->kill = 1;
            return;
        }
        memcpy(nb + c->in_len, c->frame, c->frame_len);
        c->in = nb;
        c->in_len += c->frame_len;
    } else if (type == 'E') {
        c->in_eof = 1;
    } else if (type == 'K') {
        c->kill = 1;
    } else if (type == 'S') {
        for (size_t i = 0; i < c->frame_len && c->sig_n < sizeof c->sig; i++)
            if (sbx_signal_deliverable(c->frame[i]))
                c->sig[c->sig_n++] = c->frame[i];
    }
}

/* Reads what is there; returns -1 at end of file or error. */
static int ctl_read(struct ctl *c, int fd)
{
    unsigned char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)
        return -1;
    for (ssize_t i = 0; i < n;) {
        if (c->hdr_got < 5) {
            c->hdr[c->hdr_got++] = buf[i++];
            if (c->hdr_got == 5) {
                c->frame_len = (size_t)c->hdr[1] << 24 | (size_t)c->hdr[2] << 16 |
                               (size_t)c->hdr[3] << 8 | c->hdr[4];
                if (c->frame_len > (64u << 20))
                    return -1;
                free(c->frame);
                c->frame = malloc(c->frame_len ? c->frame_len : 1);
                if (!c->frame)
                    return -1;
                c->frame_got = 0;
            }
        } else {
            size_t take = c->frame_len - c->frame_got;
            if (take > (size_t)(n - i))
                take = (size_t)(n - i);
            memcpy(c->frame + c->frame_got, buf + i, take);
            c->frame_got += take;
            i += (ssize_t)take;
        }
        if (c->hdr_got == 5 && c->frame_got == c->frame_len) {
            ctl_frame(c, c->hdr[0]);
            c->hdr_got = 0;
        }
    }
    return 0;
}

/* ---- exec ---- */

int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(a, "-s")) {
            o->has_stdin = 1;
            continue;
        }
        if (i + 1 >= argc)
            return -1;
        char *v = argv[++i];
        if (!strcmp(a, "-e")) {
            if (!strchr(v, '=') || v[0] == '=')
                return -1;
            char **ne = realloc(o->env, (o->n_env + 1) * sizeof *ne);
            if (!ne)
                return -1;
            o->env = ne;
            o->env[o->n_env++] = v;
            continue;
        }
        if (!strcmp(a, "-t"))
            o->timeout_ms = atoll(v);
        else if (!strcmp(a, "-c"))
            o->cpu_s = atoll(v);
        else if (!strcmp(a, "-f"))
            o->fsize = atoll(v);
        else if (!strcmp(a, "-n"))
            o->nofile = atoll(v);
        else if (!strcmp(a, "-d"))
            o->dir = v;
        else if (!strcmp(a, "-l"))
            o->lease_ms = atoll(v); /* the server's business (init/serve.c) */
        else
            return -1;
    }
    if (i + 1 >= argc)
        return -1;
    o->argv = argv + i + 1;
    return 0;
}

/* In the child: limits, directory, stdin, exec.  Reports errno on @rep
 * (close-on-exec: silence means the exec worked). */
static _Noreturn void child(const struct opts *o, int in_fd, int rep, const sigset_t *old)
{
    char msg[16];
    int stage = 'e';
    struct rlimit rl;
    sigprocmask(SIG_SETMASK, old, NULL);
    if (command_confine() < 0)
        goto fail;
    if (dup2(in_fd, 0) < 0)
        goto fail;
    if (in_fd != 0)
        close(in_fd);
    if (o->cpu_s > 0) {
        rl.rlim_cur = (rlim_t)o->cpu_s;
        rl.rlim_max = (rlim_t)o->cpu_s + 1;
        if (setrlimit(RLIMIT_CPU, &rl) < 0)
            goto fail;
    }
    if (o->fsize > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)o->fsize;
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
            goto fail;
    }
    if (o->nofile > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)o->nofile;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && errno != EPERM)
            goto fail;
    }
    /* Over the sandbox's environment, as Docker merges an exec's Env. */
    for (size_t i = 0; i < o->n_env; i++)
        if (putenv(o->env[i]) != 0)
            goto fail;
    stage = 'd';
    if (o->dir && chdir(o->dir) < 0)
        goto fail;
    stage = 'x';
    execvp(o->argv[0], o->argv);
fail:;
    int e = errno;
    snprintf(msg, sizeof msg, "%c%d", stage, e);
    if (write_all(rep, msg, strlen(msg)) < 0) {
        /* nothing more to do */
    }
    _exit(stage == 'x' ? (e == ENOENT || e == ENOTDIR ? 127 : 126) : 125);
}

/* Runs one exec as described by @o (control frames on fd 0, CMD's
 * output on fds 1 and 2) and writes the report line on @rep_fd: behind
 * the nonce of the 'N' frame when @nonce_mode (the API path: the report
 * shares stderr with CMD), bare otherwise (server mode: a pipe of its
 * own that CMD never holds). */
int exec_run(const struct opts *op, int rep_fd, int nonce_mode, int setup_err)
{
    struct opts o = *op;
    int reserved = tree_reserve();
    struct ctl c;
    memset(&c, 0, sizeof c);
    if (reserved < 0)
        return 125;
    /* Nothing in the sandbox may read our memory (the nonce) or our
     * descriptors through /proc or ptrace, nor signal us: we are of
     * another uid than CMD (helper_separate), and it has no capability. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    helper_ignore_signals();
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    int rep[2], inp[2] = {-1, -1};
    if (sfd < 0 || pipe2(rep, O_CLOEXEC) < 0)
        return 125;
    int child_in;
    if (o.has_stdin) {
        if (pipe2(inp, O_CLOEXEC) < 0)
            return 125;
        child_in = inp[0];
    } else {
        child_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    long long oom0 = oom_kills(), pids0 = pids_refusals();
    uint64_t t0 = now_ms();
    pid_t pid = setup_err ? 0 : fork();
    if (pid < 0)
        return 125;
    if (pid == 0 && !setup_err)
        child(&o, child_in, rep[1], &old);
    close(rep[1]);
    close(child_in);
    int in_w = inp[1];
    if (in_w >= 0)
        fcntl(in_w, F_SETFL, O_NONBLOCK);
    /* Set apart or not started: only the report (after the nonce). */
    int ctl_fd = 0, status = 0, have_status = setup_err != 0, timed_out = 0, killed = 0;
    fcntl(ctl_fd, F_SETFL, fcntl(ctl_fd, F_GETFL) | O_NONBLOCK);

    /* CMD runs once its exec closed rep[1] (close-on-exec); signals wait
     * for that: before it they would meet our ignored dispositions. */
    int started = 0;
    while (!have_status) {
        struct pollfd pf[4];
        int np = 0;
        pf[np++] = (struct pollfd){.fd = sfd, .events = POLLIN};
        int ci = -1, wi = -1, ri = -1;
        if (!started) {
            ri = np;
            pf[np++] = (struct pollfd){.fd = rep[0], .events = POLLIN};
        }
        if (ctl_fd >= 0) {
            ci = np;
            pf[np++] = (struct pollfd){.fd = ctl_fd, .events = POLLIN};
        }
        if (in_w >= 0 && c.in_off < c.in_len) {
            wi = np;
            pf[np++] = (struct pollfd){.fd = in_w, .events = POLLOUT};
        }
        int wait_ms = -1;
        if (o.timeout_ms > 0) {
            uint64_t now = now_ms(), end = t0 + (uint64_t)o.timeout_ms;
            if (now >= end) {
                timed_out = 1;
                break;
            }
            wait_ms = (int)(end - now);
        }
        int r = poll(pf, (nfds_t)np, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        if (ci >= 0 && pf[ci].revents) {
            if (ctl_read(&c, ctl_fd) < 0) {
                /* The provider is gone: nobody waits for the output. */
                ctl_fd = -1;
                c.kill = 1;
            }
        }
        if (c.kill) {
            killed = 1;
            break;
        }
        /* POLLHUP: exec'd; POLLIN: its exec failed (nothing to signal).
         * The error stays in the pipe for the report. */
        if (ri >= 0 && pf[ri].revents)
            started = 1;
        if (started && c.sig_n) {
            /* Its own session and group (command_confine); we have
             * CAP_KILL.  It may be gone already: nothing to do then. */
            for (size_t i = 0; i < c.sig_n; i++)
                (void)kill(-pid, c.sig[i]);
            c.sig_n = 0;
        }
        if (in_w >= 0 && c.in_off < c.in_len) {
            ssize_t n = write(in_w, c.in + c.in_off, c.in_len - c.in_off);
            if (n > 0)
                c.in_off += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                close(in_w); /* EPIPE: CMD closed its stdin */
                in_w = -1;
            }
        }
        (void)wi;
        if (in_w >= 0 && c.in_eof && c.in_off == c.in_len) {
            close(in_w);
            in_w = -1;
        }
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) > 0)
            ;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            status = st;
            have_status = 1;
        }
    }
    if (in_w >= 0)
        close(in_w);
    /* Whatever the reason, nothing the exec started outlives it. */
    kill_tree();
    if (!have_status) {
        int st;
        if (waitpid(pid, &st, 0) == pid)
            status = st;
    }
    /* Collect the rest of the control channel: the nonce if it was late,
     * and the stdin CMD left unread, up to its end (dropped).  Podman
     * drops the output not yet relayed, the report among it, when its
     * copy of stdin fails against an exec that is gone. */
    uint64_t give_up = now_ms() + 2000;
    while (nonce_mode && (!c.nonce[0] || !c.in_eof) && !c.kill && ctl_fd >= 0 &&
           now_ms() < give_up) {
        struct pollfd pf = {.fd = ctl_fd, .events = POLLIN};
        if (poll(&pf, 1, 100) > 0 && ctl_read(&c, ctl_fd) < 0)
            break;
        c.in_off = c.in_len;
    }
    char err[32] = "";
    ssize_t en = read(rep[0], err, sizeof err - 1);
    if (en > 0)
        err[en] = '\0';
    long long oom1 = oom_kills(), pids1 = pids_refusals();
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    long long cpu_ns = ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                       ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    long long rss = (long long)ru.ru_maxrss * 1024;
    char line[256];
    char what[48];
    if (setup_err)
        snprintf(what, sizeof what, "e=%d", setup_err);
    else if (timed_out)
        snprintf(what, sizeof what, "t");
    else if (killed)
        snprintf(what, sizeof what, "k");
    else if (en > 0 && err[0] == 'x')
        snprintf(what, sizeof what, "%s=%s",
                 atoi(err + 1) == ENOENT || atoi(err + 1) == ENOTDIR ? "nf" : "nx", err + 1);
    else if (en > 0 && err[0] == 'd')
        snprintf(what, sizeof what, "cd=%s", err + 1);
    else if (en > 0)
        snprintf(what, sizeof what, "e=%s", err + 1);
    else if (oom0 >= 0 && oom1 > oom0 && (WIFSIGNALED(status) || WEXITSTATUS(status) != 0))
        snprintf(what, sizeof what, "m=%d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    else if (WIFSIGNALED(status))
        snprintf(what, sizeof what, "s=%d", WTERMSIG(status));
    else
        snprintf(what, sizeof what, "x=%d", WEXITSTATUS(status));
    /* " pids=1": the pids limit refused a fork during the exec. */
    const char *pids_mark = pids0 >= 0 && pids1 > pids0 ? " pids=1" : "";
    int n = nonce_mode ? snprintf(line, sizeof line, "\036SBX%s:%s cpu=%lld rss=%lld%s\n",
                                  c.nonce, what, cpu_ns, rss, pids_mark)
                       : snprintf(line, sizeof line, "%s cpu=%lld rss=%lld%s\n", what, cpu_ns,
                                  rss, pids_mark);
    write_all(rep_fd, line, (size_t)n);
    return 0;
}

static int exec_main(int argc, char **argv)
{
    struct opts o;
    if (parse(argc, argv, &o) < 0) {
        free(o.env);
        static const char usage[] = "docker-init: usage: init [-t MS] [-c S] [-f B] [-n N] "
                                    "[-d DIR] [-e K=V]... [-s] -- CMD [ARG]...\n";
        write_all(2, usage, sizeof usage - 1);
        return 125;
    }
    int e = helper_separate(1) < 0 ? errno : 0;
    return exec_run(&o, 2, 1, e);
}



int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--idle"))
        return idle_main();
    if (argc == 2 && !strcmp(argv[1], "--serve"))
        return serve_main();
    if (argc == 4 && !strcmp(argv[1], "--install"))
        return rename(argv[2], argv[3]) == 0 ? 0 : 1;
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        static const char v[] = "polysandbox docker-init 3\n";
        return write_all(1, v, sizeof v - 1) < 0;
    }
    return exec_main(argc, argv);
}
