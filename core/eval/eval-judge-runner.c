/* core/eval/eval-judge-runner.c - the judged tests' runner: a static program
 * the core puts into a sandbox to run a compiled program once per test in
 * one exec, instead of one exec per test (the protocol is in
 * eval-judge-proto.h).
 *
 * It runs inside the sandbox, so it is built with the plain compiler,
 * statically, without the user's CFLAGS (core/local.mk), and it treats
 * its input as hostile: every number is checked, and the tests' programs
 * get only their own pipes, never this process's stdin or stdout.  It is
 * undumpable, so a test's program (same uid) can neither trace it nor
 * open its descriptors through /proc.  It is a child subreaper: whatever
 * a test leaves running is killed before the next test starts.  It
 * decides nothing but "clean" (exit 0, in time, within the caps); the
 * core compares outputs, and runs again on its own exec every test that
 * is not clean, so verdicts come from the provider as before.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval-judge-proto.h"
#include "inside/proc-each.h"

#define MARKER_MAX 64
#define HEADER_MAX 256
#define REAP_TRIES 2000         /* x 1 ms: killing what a test left */
#define DRAIN_NS 1000000000ull  /* output still open after the exit */

static int in_fd = -1, out_fd = -1, chld_r = -1, chld_w = -1;
static pid_t running;          /* the test's process group, while it runs */
static unsigned char buf[CORE_JR_CHUNK];

static void on_chld(int sig)
{
    int e = errno;
    ssize_t r = write(chld_w, "c", 1);

    (void)sig;
    (void)r;
    errno = e;
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *why)
{
    if (running > 0)
        kill(-running, SIGKILL);
    dprintf(2, "polysandbox judge runner: %s\n", why);
    exit(2);
}

static void put_all(const void *p, size_t n)
{
    const char *s = p;

    while (n) {
        ssize_t w = write(out_fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            exit(3);            /* the core stopped reading: nothing to say */
        s += w;
        n -= (size_t)w;
    }
}

/* Read exactly @n bytes of stdin into @p; false at its end. */
static bool get_all(void *p, size_t n)
{
    char *d = p;

    while (n) {
        ssize_t r = read(in_fd, d, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        d += r;
        n -= (size_t)r;
    }
    return true;
}

/* A line of stdin of at most @size - 1 bytes, without its newline. */
static bool get_line(char *line, size_t size)
{
    for (size_t n = 0; n + 1 < size; n++) {
        if (!get_all(line + n, 1))
            return false;
        if (line[n] == '\n') {
            line[n] = '\0';
            return true;
        }
    }
    return false;
}

/* A decimal number of at most @max, digits only. */
static bool get_num(const char *s, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;

    if (!*s)
        return false;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    if (x > max)
        return false;
    *v = x;
    return true;
}

/* Kill and reap everything a test left behind: its process group, then
 * every process reparented to us (we are a subreaper).  False when some
 * process would not go. */
static int kill_if_ours(pid_t pid, pid_t ppid, void *self)
{
    if (ppid == *(pid_t *)self)
        kill(pid, SIGKILL);
    return 0;
}

static bool reap_all(pid_t pgid)
{
    pid_t self = getpid();
    kill(-pgid, SIGKILL);
    for (int tries = 0; tries < REAP_TRIES; tries++) {
        int st;
        pid_t w;

        inside_proc_each(kill_if_ours, &self);
        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            ;
        if (w < 0 && errno == ECHILD)
            return true;
        usleep(1000);
    }
    return false;
}

struct test {
    uint64_t in_left;           /* input bytes still to give (or to skip) */
    size_t pend, pend_off;      /* read from stdin, not yet written */
    uint64_t out_len, err_len;
    bool timed_out, capped, exited, in_open;
    int status;
    struct rusage ru;
};

/* Feed the test's input: read a chunk from stdin when the last is gone. */
static void feed(struct test *t, int fd)
{
    if (t->pend == t->pend_off && t->in_left) {
        size_t want = t->in_left < sizeof buf ? (size_t)t->in_left : sizeof buf;
        if (!get_all(buf, want))
            die("stdin ended inside a test's input");
        t->in_left -= want;
        t->pend = want;
        t->pend_off = 0;
    }
    while (t->pend_off < t->pend) {
        ssize_t w = write(fd, buf + t->pend_off, t->pend - t->pend_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return;
        if (w < 0) {            /* EPIPE: the program took no more */
            t->pend = t->pend_off = 0;
            t->in_open = false;
            return;
        }
        t->pend_off += (size_t)w;
    }
}

/* Forward what the program wrote on @fd: stdout as "D" chunks up to the
 * cap and one byte past it, stderr only counted.  False at its end. */
static bool pump(struct test *t, int fd, bool is_out, uint64_t cap)
{
    static char data[CORE_JR_CHUNK];
    ssize_t r = read(fd, data, sizeof data);
    uint64_t *len = is_out ? &t->out_len : &t->err_len;

    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (r <= 0)
        return false;
    if (is_out && *len <= cap) {
        char head[32];
        uint64_t room = cap + 1 - *len;
        size_t n = (uint64_t)r < room ? (size_t)r : (size_t)room;
        int h = snprintf(head, sizeof head, "D %zu\n", n);
        put_all(head, (size_t)h);
        put_all(data, n);
    }
    *len += (uint64_t)r;
    if (*len > cap)
        t->capped = true;
    return true;
}

/* Run test @i with @in_len bytes of input: its "D" chunks and "T" line.
 * False when the runner cannot go on (a process that would not die). */
static bool run_test(uint64_t i, uint64_t in_len, uint64_t limit, uint64_t out_cap,
                     uint64_t err_cap, char **argv, bool *clean)
{
    int pin[2], pout[2], perr[2];
    struct test t = { .in_left = in_len, .in_open = true };
    uint64_t t0, deadline, end = 0;
    bool out_open = true, err_open = true, reaped = false;
    char line[160];
    pid_t pid;
    int n;

    if (pipe2(pin, O_CLOEXEC) < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0)
        die("pipe2 failed");
    t0 = now_ns();
    pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        sigset_t none;
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0)
            _exit(127);
        execvp(argv[0], argv);
        _exit(errno == ENOENT ? 127 : 126);
    }
    setpgid(pid, pid);
    running = pid;
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    fcntl(pin[1], F_SETFL, O_NONBLOCK);
    fcntl(pout[0], F_SETFL, O_NONBLOCK);
    fcntl(perr[0], F_SETFL, O_NONBLOCK);
    deadline = t0 + limit;
    if (!t.in_left) {
        close(pin[1]);
        t.in_open = false;
    }
    while (!t.exited || out_open || err_open) {
        struct pollfd pf[4];
        uint64_t now = now_ns(), stop = t.exited ? end + DRAIN_NS : deadline;
        int k = 0, wait_ms;
        char c;

        if (now >= stop) {
            if (t.exited)
                break;          /* output held open past the exit */
            t.timed_out = true;
            kill(-pid, SIGKILL);
            deadline = UINT64_MAX;  /* the exit comes next */
            continue;
        }
        /* at most a second: the child's exit also wakes poll, through chld_r */
        wait_ms = stop - now >= 1000000000u ? 1000 : (int)((stop - now) / 1000000u) + 1;
        pf[k++] = (struct pollfd){ chld_r, POLLIN, 0 };
        if (out_open)
            pf[k++] = (struct pollfd){ pout[0], POLLIN, 0 };
        if (err_open)
            pf[k++] = (struct pollfd){ perr[0], POLLIN, 0 };
        if (t.in_open)
            pf[k++] = (struct pollfd){ pin[1], POLLOUT, 0 };
        if (poll(pf, (nfds_t)k, wait_ms) < 0 && errno != EINTR)
            die("poll failed");
        while (read(chld_r, &c, 1) == 1)
            ;
        if (!t.exited && wait4(pid, &t.status, WNOHANG, &t.ru) == pid) {
            t.exited = true;
            running = 0;
            end = now_ns();
            /* what it left running goes with it: then its pipes end */
            reaped = reap_all(pid);
        }
        if (out_open)
            out_open = pump(&t, pout[0], true, out_cap);
        if (err_open)
            err_open = pump(&t, perr[0], false, err_cap);
        if (t.in_open) {
            feed(&t, pin[1]);
            if (t.in_open && !t.in_left && t.pend_off == t.pend) {
                close(pin[1]);
                t.in_open = false;
            }
        }
        if (t.capped && !t.exited)
            kill(-pid, SIGKILL);    /* past a cap: not clean, no need to go on */
    }
    if (t.in_open)
        close(pin[1]);
    close(pout[0]);
    close(perr[0]);
    if (!t.exited)
        die("a test's program was never reaped");
    /* the rest of this test's input, never read by the program */
    while (t.in_left) {
        size_t want = t.in_left < sizeof buf ? (size_t)t.in_left : sizeof buf;
        if (!get_all(buf, want))
            die("stdin ended inside a test's input");
        t.in_left -= want;
    }
    *clean = reaped && t.exited && !t.timed_out && !t.capped && !out_open && !err_open &&
             WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0 && t.out_len <= out_cap &&
             t.err_len <= err_cap;
    n = snprintf(line, sizeof line, "T %llu %d %llu %llu\n", (unsigned long long)i, *clean,
                 (unsigned long long)((t.exited ? end : now_ns()) - t0),
                 (unsigned long long)(t.ru.ru_utime.tv_sec + t.ru.ru_stime.tv_sec) *
                         1000000000ull +
                     (unsigned long long)(t.ru.ru_utime.tv_usec + t.ru.ru_stime.tv_usec) *
                         1000ull);
    put_all(line, (size_t)n);
    return reaped;
}

int main(int argc, char **argv)
{
    char header[HEADER_MAX], marker[MARKER_MAX + 1], line[HEADER_MAX];
    uint64_t n, limit, out_cap, err_cap, fail_fast, done = 0;
    char *f[8], *save = NULL;
    int nf = 0, pc[2];
    struct sigaction sa;

    if (argc < 3 || strcmp(argv[1], "--") != 0)
        die("usage: .polysandbox-judge -- PROGRAM [ARG...] < tests");
    /* our stdin and stdout move out of the way of the tests' */
    if ((in_fd = fcntl(0, F_DUPFD_CLOEXEC, 10)) < 0 || (out_fd = fcntl(1, F_DUPFD_CLOEXEC, 10)) < 0)
        die("cannot keep stdin and stdout");
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        die("prctl failed");
    if (pipe2(pc, O_CLOEXEC | O_NONBLOCK) < 0)
        die("pipe2 failed");
    chld_r = pc[0];
    chld_w = pc[1];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) < 0)
        die("sigaction failed");
    signal(SIGPIPE, SIG_IGN);

    if (!get_line(header, sizeof header))
        die("no header");
    for (char *w = strtok_r(header, " ", &save); w && nf < 8; w = strtok_r(NULL, " ", &save))
        f[nf++] = w;
    if (nf != 7 || strcmp(f[0], CORE_JR_MAGIC) != 0 || strlen(f[1]) > MARKER_MAX ||
        !get_num(f[2], CORE_JR_MAX_TESTS, &n) || !get_num(f[3], UINT64_MAX / 2, &limit) ||
        !get_num(f[4], UINT64_MAX / 2, &out_cap) || !get_num(f[5], UINT64_MAX / 2, &err_cap) ||
        !get_num(f[6], 1, &fail_fast) || limit == 0)
        die("a bad header");
    strcpy(marker, f[1]);
    for (const char *m = marker; *m; m++)
        if (!isxdigit((unsigned char)*m))
            die("a bad marker");
    {
        int h = snprintf(line, sizeof line, "\n%s%s%s\n", CORE_EVAL_MARKER_PREFIX, CORE_JR_START,
                         marker);
        put_all(line, (size_t)h);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        bool clean;

        if (!get_line(line, sizeof line) || !get_num(line, UINT64_MAX / 2, &len))
            die("a bad test length");
        if (!run_test(i, len, limit, out_cap, err_cap, argv + 2, &clean))
            break;              /* something of a test lives on: no more tests here */
        done++;
        if (!clean && fail_fast)
            break;
    }
    {
        int h = snprintf(line, sizeof line, "%s%s%s %llu\n", CORE_EVAL_MARKER_PREFIX, CORE_JR_END,
                         marker, (unsigned long long)done);
        put_all(line, (size_t)h);
    }
    return 0;
}
