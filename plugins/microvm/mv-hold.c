/* plugins/microvm/mv-hold.c - one holder of a snapshot's sealed copies
 *
 * A jailed restore is given sealed memfd copies of the snapshot's files
 * (mv-seal.c), 0.5-0.8 s of copying under TCG here.  Made once per
 * provider process, a one-shot `polysandbox run` paid it every time and
 * two processes held two copies.  So the first process that seals a
 * snapshot forks a holder: a small process of its own session (double
 * fork, setsid, no parent-death signal: it outlives a one-shot CLI) that
 * keeps the two sealed memfds and hands them, SCM_RIGHTS, to this euid's
 * processes that ask on MV_HOLD_SOCK in the snapshot's directory (0700,
 * the socket 0600; each peer's uid checked with SO_PEERCRED, both ways).
 *
 * The wire: one request, one answer per connection, each a fixed struct
 * with a magic and a version; the client names the file it opened (its
 * device, inode, size and mtime) and gets the copy only when the
 * holder's was made from that very file.  A client trusts nothing it
 * gets: a wrong length, version or identity, more or fewer than one fd,
 * an fd that is not a memfd with exactly the four seals and the file's
 * size are all refused, and the caller copies the file itself.
 *
 * The holder runs no code of the provider's but this file's, forked
 * from a threaded process without exec: it calls async-signal-safe
 * functions only (no malloc, no stdio), keeps no descriptor but its
 * memfds and socket (so no lock and no pipe of its parent's), and ends
 * after MV_HOLD_IDLE_S without a request (POLYSANDBOX_MICROVM_HOLD_IDLE,
 * seconds, for tests), or once the snapshot's files are no longer the
 * ones it copied (rebuilt, removed: checked every MV_HOLD_CHECK_MS and at
 * a request for another file).  gc kills the holder of a snapshot it
 * removes (mv_hold_stop: the socket's listener, by SO_PEERCRED's pid,
 * if its name is the holder's).
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

#define HOLD_MAGIC 0x48584253u /* "SBXH" */
#define HOLD_VERSION 1
#define HOLD_COMM "sbx-mv-hold"
#define HOLD_IO_MS 1000
#define MV_HOLD_IDLE_S 600
#define MV_HOLD_CHECK_MS 2000
#define ALL_SEALS (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)

enum { HOLD_OK, HOLD_STALE, HOLD_NONE, HOLD_BAD };

struct hold_req {
    uint32_t magic;
    uint16_t version;
    uint16_t which; /* 0 the stream's copy, 1 the RAM's */
    struct mv_hold_id id;
};

struct hold_rep {
    uint32_t magic;
    uint16_t version;
    uint16_t status; /* HOLD_* */
    uint32_t which;
    uint32_t pid;         /* the holder's */
    struct mv_hold_id id; /* of the file its copy was made from */
};

_Static_assert(sizeof(struct hold_req) == 48, "hold_req has no padding");
_Static_assert(sizeof(struct hold_rep) == 56, "hold_rep has no padding");

void mv_hold_id_of(const struct stat *st, struct mv_hold_id *id)
{
    *id = (struct mv_hold_id){(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                              (int64_t)st->st_mtim.tv_sec, (int64_t)st->st_mtim.tv_nsec};
}

static int same_id(const struct mv_hold_id *a, const struct mv_hold_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->sec == b->sec &&
           a->nsec == b->nsec;
}

static int hold_path(const char *dir, const char *leaf, char *buf, size_t n)
{
    if ((size_t)snprintf(buf, n, "%s/%s", dir, leaf) >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static void io_timeouts(int fd)
{
    struct timeval tv = {HOLD_IO_MS / 1000, (HOLD_IO_MS % 1000) * 1000};

    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* The peer of @fd runs as our euid: its pid into *pid. */
static int peer_is_us(int fd, pid_t *pid)
{
    struct ucred cr;
    socklen_t l = sizeof cr;

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0 || l != sizeof cr)
        return 0;
    if (pid)
        *pid = cr.pid;
    return cr.uid == geteuid();
}

/* A connection to the holder's socket at @path within HOLD_IO_MS, or -1. */
static int hold_connect(const char *path, pid_t *pid)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int c;

    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    if ((c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    io_timeouts(c); /* SO_SNDTIMEO bounds a unix connect too */
    if (connect(c, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(c);
        errno = e;
        return -1;
    }
    if (!peer_is_us(c, pid)) {
        close(c);
        errno = EPERM;
        return -1;
    }
    return c;
}

/* ---- the client --------------------------------------------------------- */

/* Whether @fd is one of our sealed copies of @size bytes. */
static const char *not_sealed_copy(int fd, uint64_t size)
{
    struct stat st;
    char self[64], link[64];
    ssize_t n;

    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return "not a regular file";
    if ((uint64_t)st.st_size != size)
        return "not the file's size";
    if (fcntl(fd, F_GET_SEALS) != ALL_SEALS)
        return "not sealed against write, grow, shrink and seal, exactly";
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    if ((n = readlink(self, link, sizeof link - 1)) < 0)
        return "not readable in /proc/self/fd";
    link[n] = '\0';
    if (strncmp(link, "/memfd:polysandbox-vm-", 22) != 0)
        return "not a memfd of ours";
    return NULL;
}

/* The fd of @m's one SCM_RIGHTS with one fd, or -1; every other fd it
 * carried is closed. */
static int one_fd(struct msghdr *m)
{
    int got = -1, extra = 0;

    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (got < 0 && !extra)
                got = fd;
            else {
                close(fd);
                extra = 1;
            }
        }
    }
    if (extra && got >= 0) {
        close(got);
        got = -1;
    }
    return got;
}

int mv_hold_fetch(const char *dir, int which, const struct mv_hold_id *want, pid_t *pid, char *why,
                  size_t whylen)
{
    char path[PATH_MAX];
    struct hold_req q = {HOLD_MAGIC, HOLD_VERSION, (uint16_t)which, *want};
    struct hold_rep r;
    union {
        char b[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {&r, sizeof r};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
    const char *bad = NULL;
    int c, fd = -1;
    ssize_t n;

    why[0] = '\0';
    if (hold_path(dir, MV_HOLD_SOCK, path, sizeof path) != 0 || (c = hold_connect(path, pid)) < 0)
        return -1; /* no holder: nothing to say */
    if (send(c, &q, sizeof q, MSG_NOSIGNAL) != (ssize_t)sizeof q) {
        snprintf(why, whylen, "sending: %s", strerror(errno));
        close(c);
        return -1;
    }
    n = recvmsg(c, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    close(c);
    if (n >= 0)
        fd = one_fd(&m);
    if (n != (ssize_t)sizeof r)
        bad = n < 0 ? "no answer in time" : "an answer of the wrong length";
    else if (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC))
        bad = "an answer with more than it may carry";
    else if (r.magic != HOLD_MAGIC || r.version != HOLD_VERSION)
        bad = "an answer of another protocol or version";
    else if (r.status == HOLD_STALE || r.status == HOLD_NONE)
        bad = "it holds a copy of another file";
    else if (r.status != HOLD_OK || r.which != (uint32_t)which || !same_id(&r.id, want) ||
             r.pid == 0 || (pid_t)r.pid != *pid)
        bad = "a wrong answer";
    else if (fd < 0)
        bad = "no fd, or more than one";
    else
        bad = not_sealed_copy(fd, want->size);
    if (bad) {
        snprintf(why, whylen, "%s", bad);
        if (fd >= 0)
            close(fd);
        errno = EPROTO;
        return -1;
    }
    return fd;
}

/* ---- the holder (async-signal-safe only below: see the top) ------------- */

ssize_t mv_send_fd(int sock, const void *buf, size_t len, int fd)
{
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {(void *)buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

    if (fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        m.msg_control = ctl.b;
        m.msg_controllen = sizeof ctl.b;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    return sendmsg(sock, &m, MSG_NOSIGNAL);
}

struct holder {
    int fd[2];
    struct mv_hold_id id[2];
    char file[2][PATH_MAX]; /* the snapshot's files, to see them change */
    char sock[PATH_MAX], lock[PATH_MAX];
    struct stat sock_st; /* the socket's path as bound */
    int64_t idle_ms;
};

static int64_t now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Whether the snapshot's files are still the ones copied. */
static int still_current(const struct holder *h)
{
    for (int i = 0; i < 2; i++) {
        struct stat st;
        struct mv_hold_id id;
        if (h->fd[i] < 0)
            continue;
        if (stat(h->file[i], &st) != 0)
            return 0;
        mv_hold_id_of(&st, &id);
        if (!same_id(&id, &h->id[i]))
            return 0;
    }
    return 1;
}

/* Answers the connection @c: 1 served a copy, 0 not, -1 time to go. */
static int serve(struct holder *h, int c)
{
    struct hold_req q;
    struct hold_rep r = {HOLD_MAGIC, HOLD_VERSION, HOLD_BAD, 0, (uint32_t)getpid(), {0}};
    int rc = 0;

    io_timeouts(c);
    if (!peer_is_us(c, NULL))
        return 0;
    if (recv(c, &q, sizeof q, MSG_WAITALL) == (ssize_t)sizeof q && q.magic == HOLD_MAGIC &&
        q.version == HOLD_VERSION && q.which < 2) {
        r.which = q.which;
        if (h->fd[q.which] >= 0)
            r.id = h->id[q.which];
        if (h->fd[q.which] < 0)
            r.status = HOLD_NONE;
        else if (same_id(&q.id, &h->id[q.which]))
            r.status = HOLD_OK;
        else {
            /* A client of an older snapshot, or we are the old one. */
            r.status = HOLD_STALE;
            rc = still_current(h) ? 0 : -1;
        }
    }
    if (r.status == HOLD_OK)
        rc = 1;
    (void)mv_send_fd(c, &r, sizeof r, r.status == HOLD_OK ? h->fd[q.which] : -1);
    return rc;
}

/* Closes every fd but @keep's @n (0 to 2 of them may be among them). */
static void close_all_but(const int *keep, int n)
{
    int k[4], lo = 0;

    for (int i = 0; i < n; i++) { /* sorted */
        int j = i;
        for (; j > 0 && k[j - 1] > keep[i]; j--)
            k[j] = k[j - 1];
        k[j] = keep[i];
    }
    for (int i = 0; i < n; i++) {
        if (k[i] > lo)
            (void)close_range((unsigned)lo, (unsigned)k[i] - 1, 0);
        lo = k[i] + 1;
    }
    (void)close_range((unsigned)lo, ~0u, 0);
}

/* Removes our socket's path unless another holder has bound it since
 * (a starter holds the lock while it replaces us: then it is left). */
static void unbind(const struct holder *h)
{
    int l = open(h->lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;

    if ((l >= 0 ? flock(l, LOCK_EX | LOCK_NB) == 0 : errno == ENOENT) && lstat(h->sock, &st) == 0 &&
        st.st_dev == h->sock_st.st_dev && st.st_ino == h->sock_st.st_ino)
        (void)unlink(h->sock);
    if (l >= 0)
        close(l);
}

static _Noreturn void hold_main(struct holder *h, int ready)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    struct sigaction sa = {.sa_handler = SIG_DFL};
    static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD};
    int keep[3] = {h->fd[0], h->fd[1], ready}, n = 0, l;
    sigset_t none;

    /* No handler of the provider's runs here; SIGPIPE never ends it. */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        (void)sigaction(sigs[i], &sa, NULL);
    sa.sa_handler = SIG_IGN;
    (void)sigaction(SIGPIPE, &sa, NULL);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    (void)prctl(PR_SET_NAME, HOLD_COMM, 0, 0, 0);
    for (int i = 0; i < 3; i++)
        if (keep[i] >= 0)
            keep[n++] = keep[i];
    close_all_but(keep, n);
    (void)chdir("/");
    umask(0177); /* the socket 0600 */
    memcpy(a.sun_path, h->sock, strlen(h->sock) + 1);
    if ((l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 16) != 0 ||
        lstat(h->sock, &h->sock_st) != 0)
        _exit(1);
    pid_t me = getpid();
    if (write(ready, &me, sizeof me) != (ssize_t)sizeof me)
        _exit(1);
    close(ready);
    for (int64_t last = now_ms();;) {
        int64_t left = h->idle_ms - (now_ms() - last);
        struct pollfd pf = {l, POLLIN, 0};
        if (left <= 0)
            break;
        int r = poll(&pf, 1, (int)(left < MV_HOLD_CHECK_MS ? left : MV_HOLD_CHECK_MS));
        if (r < 0 && errno != EINTR)
            break;
        if (!still_current(h))
            break;
        if (r <= 0)
            continue;
        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        int s = serve(h, c);
        close(c);
        if (s < 0)
            break;
        if (s > 0)
            last = now_ms();
    }
    unbind(h);
    _exit(0);
}

/* ---- starting and stopping one ------------------------------------------ */

pid_t mv_hold_start(const char *dir, const int fds[2], const struct mv_hold_id ids[2])
{
    struct holder h; /* the child's copy is what it reads */
    static const char *const leaves[2] = {MV_SNAP_FILE, MV_SNAP_RAM};
    const char *env = getenv("POLYSANDBOX_MICROVM_HOLD_IDLE");
    long idle = env ? strtol(env, NULL, 10) : MV_HOLD_IDLE_S;
    int pv[2];
    pid_t a, got = -1;

    memset(&h, 0, sizeof h);
    h.idle_ms = (idle > 0 && idle <= 86400 ? idle : MV_HOLD_IDLE_S) * 1000LL;
    for (int i = 0; i < 2; i++) {
        h.fd[i] = fds[i];
        h.id[i] = ids[i];
        if (hold_path(dir, leaves[i], h.file[i], sizeof h.file[i]) != 0)
            return -1;
    }
    if (hold_path(dir, MV_HOLD_SOCK, h.sock, sizeof h.sock) != 0 ||
        hold_path(dir, MV_HOLD_LOCK, h.lock, sizeof h.lock) != 0)
        return -1;
    if (strlen(h.sock) >= sizeof((struct sockaddr_un *)0)->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (pipe2(pv, O_CLOEXEC) != 0)
        return -1;
    /* A holder that answered wrong or not in time goes, and its path
     * with it (the caller holds MV_HOLD_LOCK). */
    (void)mv_hold_stop(dir);
    if (unlink(h.sock) != 0 && errno != ENOENT) {
        close(pv[0]);
        close(pv[1]);
        return -1;
    }
    if ((a = fork()) < 0) {
        close(pv[0]);
        close(pv[1]);
        return -1;
    }
    if (a == 0) { /* its own session; its child, the holder, orphaned */
        close(pv[0]);
        if (setsid() < 0)
            _exit(1);
        pid_t b = _Fork(); /* no atfork handler in a threaded process's child */
        if (b == 0)
            hold_main(&h, pv[1]);
        _exit(b < 0);
    }
    close(pv[1]);
    while (waitpid(a, NULL, 0) < 0 && errno == EINTR)
        ;
    struct pollfd pf = {pv[0], POLLIN, 0};
    if (poll(&pf, 1, HOLD_IO_MS) == 1 && read(pv[0], &got, sizeof got) != (ssize_t)sizeof got)
        got = -1;
    close(pv[0]);
    if (got <= 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    return got;
}

int mv_hold_stop(const char *dir)
{
    char path[PATH_MAX], comm[64], want[] = HOLD_COMM "\n";
    pid_t pid = 0;
    int c, f, rc = 0;
    ssize_t n;

    if (hold_path(dir, MV_HOLD_SOCK, path, sizeof path) != 0)
        return -1;
    if ((c = hold_connect(path, &pid)) < 0)
        return 0; /* none listening (its path, if any, is removed with the rest) */
    close(c);
    /* Its listener's pid; killed only when it is a holder (the name we
     * give it), never a process that merely listens there. */
    snprintf(comm, sizeof comm, "/proc/%d/comm", (int)pid);
    if (pid > 0 && (f = open(comm, O_RDONLY | O_CLOEXEC)) >= 0) {
        n = read(f, comm, sizeof comm - 1);
        close(f);
        if (n == (ssize_t)strlen(want) && !memcmp(comm, want, (size_t)n) && kill(pid, SIGKILL) == 0)
            rc = 1;
    }
    return rc;
}
