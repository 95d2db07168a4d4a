/* plugins/local/daemon/spare.c - a prepared sandbox of polysandbox-locald
 *
 * The daemon clones it as the in-process path clones an exec's init
 * (jail/child.c: same namespaces, cgroup slot joined first, same root),
 * but before anyone asked: it builds the root without /work, pivots,
 * detaches the old root, makes the payload as far as no request changes
 * it (privileges dropped, the seccomp filter loaded: see prepay_main),
 * says it is ready and waits.  The one request it ever gets brings the
 * exec's argv, environment, working directory, limits, the client's
 * stdio, report and status pipes, and the sandbox's work directory as a
 * detached mount, attached on /work; the payload gets the pipes and runs
 * the command, and the init reaps as in-process (lcl_child_reap).  It is
 * a fork of the single-threaded daemon: allocation is allowed here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../jail/jail.h"
#include "../wire/exec-req.h"
#include "../wire/locald-proto.h"
#include "locald.h"


/* The request's first descriptors are an init's pipes, in their order. */
_Static_assert((int)LCL_XR_FD_IN == LCL_CHILD_FD_IN && (int)LCL_XR_FD_OUT == LCL_CHILD_FD_OUT &&
                   (int)LCL_XR_FD_ERR == LCL_CHILD_FD_ERR &&
                   (int)LCL_XR_FD_REPORT == LCL_CHILD_FD_REPORT &&
                   (int)LCL_XR_FD_STATUS == LCL_CHILD_FD_STATUS &&
                   (int)LCL_XR_FD_WORK == LCL_CHILD_NFD,
               "wire/exec-req.h and jail/jail.h disagree on the descriptors");

static void report_to(int fd, int err, const char *what)
{
    struct lcl_msg m;
    memset(&m, 0, sizeof m);
    m.kind = LCL_MSG_SETUP;
    m.err = err;
    strncpy(m.what, what, sizeof m.what - 1);
    ssize_t n = write(fd, &m, sizeof m);
    (void)n;
}

/* ---- the payload, made before the request ---- */

/* Its view, in our memory (CLONE_VM). */
struct prepay {
    const struct lcl_child *c;  /* the prepared init's view */
    const struct lcl_child *x;  /* the request's, set before the go */
    int sock, sock_payload;     /* our end; its end */
    pid_t pid;
    char *stack;
    size_t stack_size;
};

/* Every descriptor but @keep closed (0-2 too). */
static void close_all_but(int keep)
{
    if (syscall(SYS_close_range, 0u, (unsigned int)keep - 1, 0) == 0 &&
        syscall(SYS_close_range, (unsigned int)keep + 1, ~0u, 0) == 0)
        return;
    for (int fd = 0; fd < 65536; fd++)
        if (fd != keep)
            close(fd);
}

/* Until the request, only what no request changes; then only what the
 * seccomp filter, loaded early, allows (close_range, write, recvmsg,
 * fcntl, dup2, prlimit64, execve) without privilege.  The working
 * directory and umask are ours (CLONE_FS), set with the init's rights
 * as the in-process payload sets them. */
static int prepay_main(void *arg)
{
    const struct prepay *a = arg;
    int s = a->sock_payload;
    lcl_payload_early(a->c);
    close_all_but(s); /* nothing of the daemon's or the init's */
    char r = 'r';
    if (write(s, &r, 1) != 1)
        _exit(125);
    char go = 0;
    int fds[4];
    if (lcl_fds_recv(s, &go, 1, fds, 4) < 0 || go != 'g' || !a->x)
        _exit(125);
    for (int i = 0; i < 4; i++)
        if (fds[i] < 0)
            _exit(125);
    struct lcl_child pc = *a->x;
    pc.fd_in = fds[0];
    pc.fd_out = fds[1];
    pc.fd_err = fds[2];
    pc.fd_report = fds[3];
    lcl_payload_late(&pc);
    lcl_payload_exec(&pc);
    _exit(127);
}

/* Starts the payload and waits until it is ready; failures are
 * reported on c's report pipe (the daemon's), then we exit. */
static void prepay_start(const struct lcl_child *c, struct prepay *pp)
{
    int sv[2];
    memset(pp, 0, sizeof *pp);
    pp->c = c;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        lcl_child_fail(c, "socketpair for the payload", NULL);
    /* Above 0-2, which the payload's stdio takes. */
    for (int i = 0; i < 2; i++)
        if (sv[i] < 3) {
            int fd = fcntl(sv[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                lcl_child_fail(c, "socketpair for the payload", NULL);
            close(sv[i]);
            sv[i] = fd;
        }
    pp->sock = sv[0];
    pp->sock_payload = sv[1];
    pp->stack_size = 256 * 1024;
    pp->stack = mmap(NULL, pp->stack_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (pp->stack == MAP_FAILED)
        lcl_child_fail(c, "mmap of the payload's stack", NULL);
    int pid = clone(prepay_main, pp->stack + pp->stack_size, CLONE_VM | CLONE_FS | SIGCHLD, pp);
    if (pid < 0)
        lcl_child_fail(c, "clone of the payload", NULL);
    pp->pid = pid;
    close(sv[1]);
    char r = 0;
    if (read(pp->sock, &r, 1) != 1 || r != 'r')
        _exit(125); /* it said why */
}

/* The request's view @x: the payload runs the command, we reap. */
_Noreturn static void prepay_go(const struct lcl_child *x, struct prepay *pp)
{
    pp->x = x;
    int fds[4] = {x->fd_in, x->fd_out, x->fd_err, x->fd_report};
    if (lcl_fds_send(pp->sock, "g", 1, fds, 4) < 0)
        lcl_child_fail(x, "releasing the payload", NULL);
    /* EOF: it executed the command (its end is close-on-exec), or is
     * gone.  Until then we touch nothing it uses (memory, errno). */
    char b;
    while (read(pp->sock, &b, 1) > 0)
        ;
    close(pp->sock);
    munmap(pp->stack, pp->stack_size);
    lcl_signal_forward_to(pp->pid);
    /* EOF on the report pipe now means "the payload exec'd". */
    close(x->fd_report);
    close(x->fd_in);
    close(x->fd_out);
    close(x->fd_err);
    lcl_child_reap(x, pp->pid);
}

_Noreturn void lcl_spare_main(struct lcl_child *c)
{
    int ctl = c->fd_sync;
    lcl_child_setup(c);
    /* cwd is the new root, with the old one stacked on it. */
    if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
        report_to(c->fd_report, errno, "detaching the old root");
        _exit(125);
    }
    /* The payload, as far as no request changes it (seccomp included). */
    struct prepay pp;
    prepay_start(c, &pp);
    char r = LCL_LD_READY;
    if (write(ctl, &r, 1) != 1)
        _exit(0);

    /* The request (EOF: the daemon retired us), as the daemon checked it. */
    char *buf = NULL;
    size_t len = 0;
    int fds[LCL_XR_MAX_FDS], nfds = 0;
    int e = lcl_xr_recv(ctl, &buf, &len, fds, &nfds);
    if (e && !nfds)
        _exit(0);
    if (nfds != LCL_XR_NFD)
        _exit(125);
    for (int i = 0; i < nfds; i++) {
        /* 0-2 are free here (as in an in-process init): what the init or
         * the sanitizers write there must not reach the client's pipes. */
        if (fds[i] < 3) {
            int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                _exit(125);
            close(fds[i]);
            fds[i] = fd;
        }
    }
    close(c->fd_report); /* the daemon's: from now on the client hears us */
    struct lcl_xreq q = {0};
    const char *why = NULL;
    if (!e)
        e = lcl_xr_decode(buf, len, fds, nfds, &q, &why);
    if (e || !(q.parts & LCL_XR_INHERIT)) {
        report_to(fds[LCL_XR_FD_REPORT], e == -ENOMEM ? ENOMEM : EPROTO,
                  "reading the exec request");
        _exit(125);
    }
    /* The limits the payload sets itself (rlimits); the cgroup's were
     * written when the slot was made for these same limits. */
    struct lcl_sb sb = *c->sb;
    sb.limits = q.limits;
    memcpy(sb.id, q.inh.id, sizeof sb.id);
    sb.id[sizeof sb.id - 1] = '\0';
    struct lcl_child x = *c;
    lcl_child_exec_view(&x, &sb, q.argv, q.envp, q.path, q.cwd, q.fd);
    x.root_detached = true;
    x.empty_before_status = true;
    x.keep_sync = false;
    /* What the payload inherits in-process (the daemon checked the rest):
     * the umask and working directory are shared with it (CLONE_FS), set
     * here with the init's rights as the in-process payload sets them. */
    umask((mode_t)(q.inh.umask & 0777));
    if (syscall(SYS_move_mount, q.fd[LCL_XR_FD_WORK], "", AT_FDCWD, "/work",
                MOVE_MOUNT_F_EMPTY_PATH) < 0) {
        report_to(x.fd_report, errno, "attaching the work directory on /work");
        _exit(125);
    }
    close(q.fd[LCL_XR_FD_WORK]);
    close(ctl);
    if (chdir(x.cwd) < 0)
        lcl_child_fail(&x, LCL_STEP_CWD, x.cwd);
    prepay_go(&x, &pp);
}
