/* plugins/docker/init/serve.c - the helper's exec server (attach mode)
 *
 * `init --serve` is PID 1 of a sandbox in attach mode.  The provider
 * attaches once to the container's stdin and stdout and sends framed
 * requests (init/proto.h); for each, the server forks a supervisor
 * that is exactly the wrapper of the API path (exec_run in init/init.c:
 * child subreaper, limits, wall timeout, kill of every descendant, the
 * true wait status), with its control channel, stdout, stderr and report
 * on pipes of the server.  The server frames what comes back with the
 * exec's id.  So a docker exec (a new runc process, a new shim task) is
 * no longer paid per command: one message goes in, frames come out.
 *
 * What the sandboxed command can and cannot do to the server:
 *  - it never holds the container's stdin or stdout (only its own pipes),
 *    and everything it writes travels inside the server's length-framed
 *    payloads, so it cannot forge a frame or a report (the report comes
 *    on a pipe of its own, closed on exec);
 *  - the server is PID 1 of the container's PID namespace with no signal
 *    handler: the kernel drops every signal sent to it from inside,
 *    SIGKILL included;
 *  - the server and the supervisors run as another uid than the command
 *    (init/sep.c), so it can neither signal them (`kill -9 -1`)
 *    nor reach their memory and descriptors (/proc/PID/fd, /proc/PID/mem,
 *    ptrace need CAP_SYS_PTRACE, which the container does not have) nor
 *    their /proc files (oom_score_adj);
 *  - should a supervisor die all the same (the OOM killer), the exec is
 *    reported as a memory limit when the cgroup counted an OOM kill
 *    during it, as lost otherwise, and the server kills every process
 *    left behind (the orphans land on PID 1, outside the other execs'
 *    trees).
 * Single-threaded, one poll loop; the supervisors are forks of it.
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
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper.h"

#define MAX_EXECS 256
#define OUT_HIGH (8u << 20)       /* stop reading commands' output above this */
#define DRAIN_MS 1000             /* output pipes left open after the exit */

struct sx {
    uint64_t id;
    pid_t pid;                    /* the supervisor; 0 once reaped */
    int status;
    int ctl, out, err, rep;       /* our ends, -1 once closed */
    unsigned char *pend;          /* control bytes for the supervisor */
    size_t pend_len, pend_off;
    char report[256];
    size_t rep_len;
    uint64_t drain_until;         /* after the supervisor's exit */
    uint64_t seen;                /* the last frame of this exec (the lease) */
    char *req;                    /* the request (the options point into it) */
    struct opts o;
    long long oom0;               /* the cgroup's OOM kills at the start */
};

static struct sx *execs[MAX_EXECS];
static size_t n_execs;
/* helper_separate's errno: no command may start (each request says why). */
static int sep_err;

/* Output to the provider (the container's stdout, non-blocking). */
static unsigned char *obuf;
static size_t olen, ooff, ocap;

/* Input from the provider. */
static unsigned char ihdr[SRV_HDR];
static size_t ihdr_got;
static unsigned char *ipay;
static size_t ipay_len, ipay_got;
static int desync;                /* discarding until a sync frame */
static const unsigned char sync_frame[SRV_HDR] = {
    SRV_MAGIC0, SRV_MAGIC1, 'Y', 0,
    (unsigned char)(SRV_SYNC_ID >> 56), (unsigned char)(SRV_SYNC_ID >> 48),
    (unsigned char)(SRV_SYNC_ID >> 40), (unsigned char)(SRV_SYNC_ID >> 32),
    (unsigned char)(SRV_SYNC_ID >> 24), (unsigned char)(SRV_SYNC_ID >> 16),
    (unsigned char)(SRV_SYNC_ID >> 8), (unsigned char)SRV_SYNC_ID, 0, 0, 0, 0};
static unsigned char sync_win[SRV_HDR]; /* the last bytes, while desynced */
static size_t sync_got;

static uint64_t get64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

/* Queues a frame for the provider; drops it when out of memory (the
 * provider's deadline then reports the exec as lost, never wrongly). */
static void send_frame(char type, uint64_t id, const void *data, size_t len)
{
    if (ooff == olen)
        ooff = olen = 0;
    if (olen + SRV_HDR + len > ocap) {
        size_t nc = ocap ? ocap : 65536;
        while (nc < olen + SRV_HDR + len)
            nc *= 2;
        unsigned char *nb = realloc(obuf, nc);
        if (!nb)
            return;
        obuf = nb;
        ocap = nc;
    }
    srv_put_hdr(obuf + olen, type, id, (uint32_t)len);
    if (len)
        memcpy(obuf + olen + SRV_HDR, data, len);
    olen += SRV_HDR + len;
}

static void send_text(char type, uint64_t id, const char *msg)
{
    send_frame(type, id, msg, strlen(msg));
}

static void flush_out(void)
{
    while (ooff < olen) {
        ssize_t n = write(1, obuf + ooff, olen - ooff);
        if (n > 0) {
            ooff += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        /* Nobody can read us any more (Docker keeps draining stdout, so
         * this is not expected): forget the output. */
        ooff = olen = 0;
        return;
    }
    if (ocap > (1u << 20)) {
        free(obuf);
        obuf = NULL;
        ocap = olen = ooff = 0;
    }
}

static struct sx *find(uint64_t id)
{
    for (size_t i = 0; i < n_execs; i++)
        if (execs[i]->id == id)
            return execs[i];
    return NULL;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Queues a control frame ('D', 'E', 'K', 'S') for a supervisor. */
static void to_ctl(struct sx *x, char type, const void *data, size_t len)
{
    if (x->ctl < 0)
        return;
    if (x->pend_off == x->pend_len) {
        free(x->pend);
        x->pend = NULL;
        x->pend_len = x->pend_off = 0;
    }
    unsigned char *nb = realloc(x->pend, x->pend_len + 5 + len);
    if (!nb) {
        /* Cannot pass it on: end the control channel, which kills. */
        close_fd(&x->ctl);
        return;
    }
    unsigned char *f = nb + x->pend_len;
    wrap_put_hdr(f, (char)type, (uint32_t)len);
    if (len)
        memcpy(f + 5, data, len);
    x->pend = nb;
    x->pend_len += 5 + len;
}

static void close_from(int lowfd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0u) == 0)
        return;
#endif
    for (int fd = lowfd; fd < 65536; fd++)
        close(fd);
}

/* Starts the exec of request @req (@len bytes, NUL-terminated strings). */
static void start(uint64_t id, unsigned char *req, size_t len)
{
    char msg[160];
    if (find(id)) {
        free(req);
        send_text('L', id, "an exec with this id is running");
        return;
    }
    if (sep_err) {
        free(req);
        snprintf(msg, sizeof msg, "the exec server could not run apart from the commands "
                 "(uid %d, CAP_SETUID, CAP_KILL): %s", HELPER_UID, strerror(sep_err));
        send_text('L', id, msg);
        return;
    }
    if (n_execs == MAX_EXECS) {
        free(req);
        send_text('L', id, "too many execs at once in this sandbox");
        return;
    }
    if (!len || req[len - 1] != '\0') {
        free(req);
        send_text('L', id, "bad request (not NUL-terminated)");
        return;
    }
    size_t argc = 1;
    for (size_t i = 0; i < len; i++)
        argc += req[i] == '\0';
    struct sx *x = calloc(1, sizeof *x);
    char **argv = calloc(argc + 1, sizeof *argv);
    if (!x || !argv) {
        free(x);
        free(argv);
        free(req);
        send_text('L', id, "out of memory in the exec server");
        return;
    }
    argv[0] = "init";
    size_t k = 1;
    for (size_t i = 0; i < len; i += strlen((char *)req + i) + 1)
        argv[k++] = (char *)req + i;
    x->id = id;
    x->seen = now_ms();
    x->req = (char *)req;
    x->ctl = x->out = x->err = x->rep = -1;
    if (parse((int)argc, argv, &x->o) < 0) {
        free(x->o.env);
        free(argv);
        free(req);
        free(x);
        send_text('L', id, "bad request (options)");
        return;
    }
    int ctl[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
    if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
        pipe2(rep, O_CLOEXEC) < 0) {
        snprintf(msg, sizeof msg, "pipe: %s", strerror(errno));
        goto fail;
    }
    /* Above 3, so the dup2s below never overwrite one another. */
    int c0 = fcntl(ctl[0], F_DUPFD_CLOEXEC, 10), o1 = fcntl(out[1], F_DUPFD_CLOEXEC, 10),
        e1 = fcntl(err[1], F_DUPFD_CLOEXEC, 10), r1 = fcntl(rep[1], F_DUPFD_CLOEXEC, 10);
    if (c0 < 0 || o1 < 0 || e1 < 0 || r1 < 0) {
        snprintf(msg, sizeof msg, "fcntl: %s", strerror(errno));
        close(c0), close(o1), close(e1), close(r1);
        goto fail;
    }
    x->oom0 = oom_kills();
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* The report pipe stays close-on-exec: the command must never
         * hold it (it could write a report of its own). */
        if (dup2(c0, 0) < 0 || dup2(o1, 1) < 0 || dup2(e1, 2) < 0 || dup2(r1, 3) < 0 ||
            fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
            _exit(125);
        close_from(4);
        _exit(exec_run(&x->o, 3, 0, 0));
    }
    int fe = errno;
    close(c0), close(o1), close(e1), close(r1);
    close(ctl[0]), close(out[1]), close(err[1]), close(rep[1]);
    if (pid < 0) {
        snprintf(msg, sizeof msg, "fork: %s", strerror(fe));
        close(ctl[1]), close(out[0]), close(err[0]), close(rep[0]);
        free(x->o.env);
        free(argv);
        free(req);
        free(x);
        send_text('L', id, msg);
        return;
    }
    x->pid = pid;
    x->ctl = ctl[1];
    x->out = out[0];
    x->err = err[0];
    x->rep = rep[0];
    fcntl(x->ctl, F_SETFL, O_NONBLOCK);
    fcntl(x->out, F_SETFL, O_NONBLOCK);
    fcntl(x->err, F_SETFL, O_NONBLOCK);
    fcntl(x->rep, F_SETFL, O_NONBLOCK);
    x->o.argv = NULL; /* the supervisor has its copy; ours points into argv */
    free(argv);
    execs[n_execs++] = x;
    return;
fail:
    for (int i = 0; i < 2; i++) {
        if (ctl[i] >= 0)
            close(ctl[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
        if (rep[i] >= 0)
            close(rep[i]);
    }
    free(x->o.env);
    free(argv);
    free(req);
    free(x);
    send_text('L', id, msg);
}

/* One complete frame from the provider (the payload is ours to keep or
 * free). */
static void on_frame(char type, uint64_t id, unsigned char *pay, size_t len)
{
    struct sx *x = type == 'R' || type == 'Y' ? NULL : find(id);
    if (x)
        x->seen = now_ms();
    switch (type) {
    case 'R':
        start(id, pay, len);
        return;
    case 'D':
        if (x && len)
            to_ctl(x, 'D', pay, len);
        break;
    case 'E':
        if (x)
            to_ctl(x, 'E', NULL, 0);
        break;
    case 'K':
        if (x)
            to_ctl(x, 'K', NULL, 0);
        break;
    case 'S': {
        /* Only the signals a command may get, at most 32 a frame (the
         * supervisor holds no more): the rest is dropped here. */
        unsigned char sig[32];
        size_t n = 0;
        for (size_t i = 0; x && i < len && n < sizeof sig; i++)
            if (sbx_signal_deliverable(pay[i]))
                sig[n++] = pay[i];
        if (n)
            to_ctl(x, 'S', sig, n);
        break;
    }
    case 'Q':
        send_frame('q', id, NULL, 0); /* a new connection finds its place */
        break;
    default:
        break; /* 'Y' and unknown types: nothing to do */
    }
    free(pay);
}

/* Copies into @dst, which holds @*got of its @want bytes, what it still
 * lacks from @buf[@*i..@n), as far as that goes. */
static void take_in(unsigned char *dst, size_t *got, size_t want, const unsigned char *buf,
                    size_t n, size_t *i)
{
    size_t take = want - *got;
    if (take > n - *i)
        take = n - *i;
    memcpy(dst + *got, buf + *i, take);
    *got += take;
    *i += take;
}

/* Input from the provider; -1 at end of file. */
static int read_in(void)
{
    unsigned char buf[65536];
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)
        return -1;
    for (size_t i = 0; i < (size_t)n;) {
        if (desync) {
            /* Look for the sync frame: the last SRV_HDR bytes seen. */
            if (sync_got == SRV_HDR) {
                memmove(sync_win, sync_win + 1, SRV_HDR - 1);
                sync_got--;
            }
            sync_win[sync_got++] = buf[i++];
            if (sync_got == SRV_HDR && !memcmp(sync_win, sync_frame, SRV_HDR)) {
                desync = 0;
                sync_got = 0;
                ihdr_got = 0;
            }
            continue;
        }
        if (ihdr_got < SRV_HDR) {
            take_in(ihdr, &ihdr_got, SRV_HDR, buf, (size_t)n, &i);
            if (ihdr_got < SRV_HDR)
                break;
            ipay_len = (size_t)ihdr[12] << 24 | (size_t)ihdr[13] << 16 |
                       (size_t)ihdr[14] << 8 | ihdr[15];
            if (ihdr[0] != SRV_MAGIC0 || ihdr[1] != SRV_MAGIC1 || ihdr[3] != 0 ||
                ipay_len > SRV_FRAME_MAX) {
                desync = 1;
                sync_got = 0;
                send_text('Z', 0, "framing lost (two clients at once?): input discarded until "
                                  "the next sync");
                continue;
            }
            ipay = malloc(ipay_len ? ipay_len : 1);
            ipay_got = 0;
            if (!ipay) {
                /* Skip it: treat as lost framing, which the provider sees. */
                desync = 1;
                sync_got = 0;
                send_text('Z', 0, "out of memory in the exec server");
                continue;
            }
        }
        take_in(ipay, &ipay_got, ipay_len, buf, (size_t)n, &i);
        if (ipay_got == ipay_len) {
            unsigned char *pay = ipay;
            ipay = NULL;
            ihdr_got = 0;
            on_frame((char)ihdr[2], get64(ihdr + 4), pay, ipay_len);
        }
    }
    return 0;
}

/* Sends what is left in pipe @fd (none when -1) as frames of @type. */
static void drain(int fd, char type, uint64_t id)
{
    unsigned char b[65536];
    ssize_t n;

    while (fd >= 0 && (n = read(fd, b, sizeof b)) > 0)
        send_frame(type, id, b, (size_t)n);
}

/* Moves a command's output from a pipe to the provider. */
static void pump(struct sx *x, int *fd, char type)
{
    unsigned char buf[65536];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0)
        send_frame(type, x->id, buf, (size_t)n);
    else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        close_fd(fd);
}

static void pump_report(struct sx *x)
{
    ssize_t n = read(x->rep, x->report + x->rep_len, sizeof x->report - 1 - x->rep_len);
    if (n > 0)
        x->rep_len += (size_t)n;
    else if (n == 0 || (errno != EAGAIN && errno != EINTR) || x->rep_len == sizeof x->report - 1)
        close_fd(&x->rep);
}

static void feed_ctl(struct sx *x)
{
    if (x->ctl < 0 || x->pend_off == x->pend_len)
        return;
    ssize_t n = write(x->ctl, x->pend + x->pend_off, x->pend_len - x->pend_off);
    if (n > 0)
        x->pend_off += (size_t)n;
    else if (n < 0 && errno != EAGAIN && errno != EINTR)
        close_fd(&x->ctl); /* the supervisor is gone */
}

static void finish(size_t i)
{
    struct sx *x = execs[i];
    int ok = x->rep_len > 0 && x->report[x->rep_len - 1] == '\n';
    long long oom1 = ok ? -1 : oom_kills();
    if (ok) {
        send_frame('X', x->id, x->report, x->rep_len);
    } else if (WIFSIGNALED(x->status) && WTERMSIG(x->status) == SIGKILL && x->oom0 >= 0 &&
               oom1 > x->oom0) {
        /* The OOM killer chose the supervisor: the exec ran out of
         * memory all the same (its processes are killed below). */
        static const char oom[] = "m=9 cpu=0 rss=0\n";
        send_frame('X', x->id, oom, sizeof oom - 1);
    } else {
        char msg[160];
        if (WIFSIGNALED(x->status))
            snprintf(msg, sizeof msg, "the exec's supervisor was killed by signal %d (by the "
                     "command?)", WTERMSIG(x->status));
        else
            snprintf(msg, sizeof msg, "the exec's supervisor ended (status %d) without a report",
                     WEXITSTATUS(x->status));
        send_text('L', x->id, msg);
    }
    close_fd(&x->ctl);
    close_fd(&x->out);
    close_fd(&x->err);
    close_fd(&x->rep);
    free(x->pend);
    free(x->o.env);
    free(x->req);
    free(x);
    execs[i] = execs[--n_execs];
    if (!ok) {
        /* Its processes were orphaned to us: kill all but the other
         * execs' trees. */
        pid_t skip[MAX_EXECS];
        for (size_t k = 0; k < n_execs; k++)
            skip[k] = execs[k]->pid;
        for (int round = 0; round < 2000 && kill_descendants(skip, n_execs) > 0; round++) {
            while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
                ;
            usleep(2000);
        }
    }
}

static void reap(void)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (size_t i = 0; i < n_execs; i++) {
            if (execs[i]->pid == pid) {
                execs[i]->pid = 0;
                execs[i]->status = st;
                execs[i]->drain_until = now_ms() + DRAIN_MS;
                close_fd(&execs[i]->ctl);
            }
        }
    }
}

int serve_main(void)
{
    if (helper_separate(1) < 0)
        sep_err = errno;
    /* As PID 1 it gets every orphan anyway; elsewhere (tests) too. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    helper_ignore_signals();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        return 125;
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
    int in_open = 1;
    /* Until the first sync, input is not trusted to be framed. */
    desync = 1;
    for (;;) {
        struct pollfd pf[2 + 4 * MAX_EXECS];
        struct sx *who[2 + 4 * MAX_EXECS];
        char what[2 + 4 * MAX_EXECS];
        nfds_t np = 0;
        pf[np] = (struct pollfd){.fd = sfd, .events = POLLIN};
        who[np] = NULL, what[np++] = 's';
        if (in_open) {
            pf[np] = (struct pollfd){.fd = 0, .events = POLLIN};
            who[np] = NULL, what[np++] = 'i';
        }
        if (ooff < olen) {
            pf[np] = (struct pollfd){.fd = 1, .events = POLLOUT};
            who[np] = NULL, what[np++] = 'o';
        }
        int room = olen - ooff < OUT_HIGH;
        int wait = -1;
        uint64_t now = now_ms();
        for (size_t i = 0; i < n_execs; i++) {
            struct sx *x = execs[i];
            if (x->pid && x->o.lease_ms > 0 && x->ctl >= 0 &&
                now >= x->seen + (uint64_t)x->o.lease_ms) {
                /* Nobody waits for it any more: kill it (the end of the
                 * control channel does). */
                close_fd(&x->ctl);
            }
            if (room && x->out >= 0)
                pf[np] = (struct pollfd){.fd = x->out, .events = POLLIN}, who[np] = x,
                what[np++] = '1';
            if (room && x->err >= 0)
                pf[np] = (struct pollfd){.fd = x->err, .events = POLLIN}, who[np] = x,
                what[np++] = '2';
            if (x->rep >= 0)
                pf[np] = (struct pollfd){.fd = x->rep, .events = POLLIN}, who[np] = x,
                what[np++] = 'r';
            if (x->ctl >= 0 && x->pend_off < x->pend_len)
                pf[np] = (struct pollfd){.fd = x->ctl, .events = POLLOUT}, who[np] = x,
                what[np++] = 'c';
            if (!x->pid) {
                int left = x->drain_until > now ? (int)(x->drain_until - now) : 0;
                wait = wait < 0 || left < wait ? left : wait;
            } else if (x->o.lease_ms > 0 && x->ctl >= 0) {
                uint64_t end = x->seen + (uint64_t)x->o.lease_ms;
                int left = end > now ? (int)(end - now) : 0;
                wait = wait < 0 || left < wait ? left : wait;
            }
        }
        if (poll(pf, np, wait) < 0 && errno != EINTR)
            continue;
        for (nfds_t k = 0; k < np; k++) {
            if (!pf[k].revents)
                continue;
            struct sx *x = who[k];
            switch (what[k]) {
            case 's': {
                struct signalfd_siginfo si;
                while (read(sfd, &si, sizeof si) > 0)
                    ;
                break;
            }
            case 'i':
                if (read_in() < 0)
                    in_open = 0; /* no more requests: keep serving the running ones */
                break;
            case 'o':
                break;
            case '1':
                pump(x, &x->out, '1');
                break;
            case '2':
                pump(x, &x->err, '2');
                break;
            case 'r':
                pump_report(x);
                break;
            case 'c':
                feed_ctl(x);
                break;
            }
        }
        for (size_t i = 0; i < n_execs; i++)
            feed_ctl(execs[i]);
        reap();
        now = now_ms();
        for (size_t i = 0; i < n_execs;) {
            struct sx *x = execs[i];
            int pipes_done = x->out < 0 && x->err < 0 && x->rep < 0;
            if (!x->pid && (pipes_done || now >= x->drain_until)) {
                /* Last output first, then the report. */
                drain(x->out, '1', x->id);
                drain(x->err, '2', x->id);
                while (x->rep >= 0 && x->rep_len < sizeof x->report - 1) {
                    ssize_t n = read(x->rep, x->report + x->rep_len,
                                     sizeof x->report - 1 - x->rep_len);
                    if (n <= 0)
                        break;
                    x->rep_len += (size_t)n;
                }
                finish(i);
                continue;
            }
            i++;
        }
        flush_out();
    }
}
