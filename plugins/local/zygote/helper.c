/* plugins/local/zygote/helper.c - a zygote's child becomes a sandbox
 *
 * Built into local-zygote.so, which the zygote (zygote/zygote.py, a warm
 * interpreter that never runs untrusted code) loads with ctypes.
 *
 * Once, before its imports, the zygote calls lcl_zc_enter: it enters a
 * user namespace of its own (the supervisor maps the sandbox user in it,
 * nothing else) and a mount namespace of its own, where it builds the
 * read-only root every exec of it shares (the shared skeleton, the
 * system binds, the /dev nodes) and pivots into it, the host's tree
 * detached: from then on it sees what a sandbox sees, and the host's
 * /proc (which its user namespace lets it read as an unprivileged user
 * could), kept because the kernel lets a user namespace mount a proc
 * only where one is fully visible.  Its imports done, lcl_zc_ready moves
 * that /proc to /tmp.
 *
 * Per exec the zygote calls lcl_zc_spawn, which clones the exec's init I
 * into fresh mount (a copy of the zygote's: a dozen mounts, nothing of
 * the host's), pid, ipc, uts (and net) namespaces, in the zygote's user
 * namespace, and returns its pid and a pidfd to the zygote.  I is pid 1
 * there and runs only this file's code, never the interpreter's: it
 * joins the exec's cgroup, closes everything but the exec's descriptors,
 * waits for the supervisor's go, mounts its own /proc (masked as every
 * init's), /dev/shm, devpts and the work directory (handed over as a
 * detached mount), forks the payload P, replaces the zygote's /proc on
 * /tmp with a fresh tmpfs while P gets ready, and reaps until P exits;
 * then (v1 cgroups: the supervisor gave it its cgroups' parents) it
 * kills and reaps whatever is left, leaves the exec's cgroups and
 * reports P's wait status, which ends the exec for the supervisor; its
 * own exit, the namespaces' teardown, is off the supervisor's path.
 * Else it reports the status and exits, and its exit ends the exec.
 *
 * P returns from lcl_zc_spawn with 0 into the interpreter, which runs the
 * interpreter's after-fork work and calls lcl_zc_payload (stdio,
 * signals, session, limits, working directory, privileges dropped,
 * every other descriptor closed, the seccomp filter loaded last) before
 * it runs the program.
 *
 * The zygote is single-threaded and calls us outside any lock of libc
 * or the interpreter, so its clone can use both; I forks P with libc's
 * fork, so P's libc knows its own thread id.  Failures travel to the
 * supervisor as in jail/child.c: a struct lcl_msg naming the step.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inside/seal.h"

#include "../jail/jail.h"
#include "../wire/exec-req.h"
#include "../wire/zygote-proto.h"

#define ZC_EXPORT __attribute__((visibility("default")))
#define ZC_NKEEP 7 /* an init's descriptors: stdio, sync, report, status, work */

ZC_EXPORT int lcl_zc_enter(const void *buf, size_t len, int ctl);
ZC_EXPORT void lcl_zc_ready(void);
ZC_EXPORT int lcl_zc_spawn(const void *buf, size_t len, const int *fds, int nfds, int *pidfd);
ZC_EXPORT void lcl_zc_payload(void);
ZC_EXPORT char *const *lcl_zc_strings(int which);

static struct lcl_prov zp;
static struct lcl_xreq zr;      /* the request being served (into the zygote's buffer) */
static char *layout;            /* lcl_zc_enter's message: zp.skel and the binds point in */
static int zygote_ctl = -1;     /* its control socket: where enter's failures go */
static struct lcl_sb zsb;
static struct lcl_child zc;
static int zygote_pidfd = -1;   /* the zygote itself: I dies with it */
static int payload_go = -1;     /* P: read end of I's "/tmp is ready" */
static int work_fd = -1;        /* I: the work directory, a detached mount */
static int payload_said = -1;   /* P: write end of the pipe that asks I for the seal */
static char seal_line[SBX_SEAL_MAX]; /* I: the pass line it keeps (sdk/inside/seal.h) */

struct zc_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* The request into zsb, zc (pointing into @buf, which outlives the
 * clone: the child has its copy); zp keeps the layout. */
static int parse(const char *buf, size_t len, const int *fds, int nfds)
{
    const char *why = NULL;
    lcl_xr_free(&zr);
    if (lcl_xr_decode(buf, len, fds, nfds, &zr, &why) < 0 || !(zr.parts & LCL_XR_INIT) ||
        (zr.init.tasks_mask >> LCL_CG_NCTRL) || strlen(zr.tmp_opts) >= sizeof zc.tmp_opts)
        return -1;
    memset(&zsb, 0, sizeof zsb);
    memset(&zc, 0, sizeof zc);
    zp.cap_last = zr.init.cap_last;
    size_t blen = (size_t)zr.init.bpf_len * 8;  /* sizeof(struct sock_filter) */
    /* A copy (aligned) in the zygote, the previous request's freed. */
    static void *bpf;
    free(bpf);
    bpf = NULL;
    if (blen && !(bpf = malloc(blen)))
        return -1;
    if (blen)
        memcpy(bpf, zr.bpf, blen);
    zp.bpf = bpf;
    zp.bpf_len = zr.init.bpf_len;
    zsb.limits = zr.limits;
    zc.rl_data = zr.init.rl_data;
    zc.rl_nproc = zr.init.rl_nproc;
    zc.prov = &zp;
    zc.sb = &zsb;
    zc.argv = zr.argv;
    zc.envp = zr.envp;
    zc.cwd = zr.cwd;
    memcpy(zc.tmp_opts, zr.tmp_opts, strlen(zr.tmp_opts) + 1);
    zc.drop_groups = zr.init.flags & LCL_XR_F_DROP_GROUPS;
    zc.net_none = zr.init.flags & LCL_XR_F_NET_NONE;
    zc.new_cgroup_ns = true;
    zc.fd_in = zr.fd[LCL_XR_FD_IN];
    zc.fd_out = zr.fd[LCL_XR_FD_OUT];
    zc.fd_err = zr.fd[LCL_XR_FD_ERR];
    zc.fd_sync = zr.fd_sync;
    zc.fd_report = zr.fd[LCL_XR_FD_REPORT];
    zc.fd_status = zr.fd[LCL_XR_FD_STATUS];
    work_fd = zr.fd[LCL_XR_FD_WORK];
    /* The supervisor takes the status as the exec's end (the sandbox
     * empty, the init out of its cgroups); our exit, tearing the
     * namespaces down, is then off its path. */
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        zc.fd_tasks[i] = zr.fd_tasks[i];
        zc.fd_leave[i] = zr.fd_leave[i];
    }
    zc.leave_cgroup = zc.empty_before_status = zr.init.leave_mask != 0;
    return 0;
}

/* Close every descriptor but @keep (the zygote's control socket, its
 * stdio, anything the interpreter had open): close_range between them. */
static void close_except(const int *keep, int n)
{
    int k[ZC_NKEEP + LCL_CG_NCTRL];
    int m = 0;
    for (int i = 0; i < n && m < (int)(sizeof k / sizeof *k); i++)
        if (keep[i] >= 0)
            k[m++] = keep[i];
    for (int i = 1; i < m; i++) /* insertion sort, a dozen entries */
        for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
            int t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
    unsigned int from = 0;
    for (int i = 0; i <= m; i++) {
        /* cppcheck-suppress uninitvar ; k[i] is read only for i < m, all set */
        unsigned int to = i < m ? (unsigned int)k[i] : ~0u;
        if (to > from && syscall(SYS_close_range, from, to - 1, 0) < 0) {
            unsigned int stop = to - 1 > 4096 ? 4096 : to - 1;
            for (unsigned int fd = from; fd <= stop; fd++)
                close((int)fd);
        }
        if (i < m)
            from = (unsigned int)k[i] + 1;
    }
}

/* A pipe (O_CLOEXEC) whose ends are above 0-2, which the payload's
 * stdio takes. */
static void pipe_above_stdio(int p[2])
{
    if (pipe2(p, O_CLOEXEC) < 0)
        lcl_child_fail(&zc, "pipe", NULL);
    for (int i = 0; i < 2; i++)
        if (p[i] < 3) {
            int fd = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                lcl_child_fail(&zc, "pipe", NULL);
            close(p[i]);
            p[i] = fd;
        }
}

/* I, P forked but not released: take polysandbox eval's pass line out
 * of the work directory (@file, opened before the fork, so that P's
 * memory never held it) into I's, made undumpable first, and keep the
 * read end of P's pipe @said.  Returns whether I keeps it; if not, the
 * file stays, and the runner keeps the line itself. */
static bool take_seal(int file, const int said[2])
{
    ssize_t n = -1;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
        while ((n = read(file, seal_line, sizeof seal_line)) < 0 && errno == EINTR)
            ;
    close(file);
    if (n <= 0 || (size_t)n == sizeof seal_line || unlink("/work/" SBX_SEAL_FILE) < 0 ||
        fcntl(said[0], F_SETFL, O_NONBLOCK) < 0) {
        explicit_bzero(seal_line, sizeof seal_line);
        close(said[0]);
        return false;
    }
    zc.sealed = true;
    zc.fd_said = said[0];
    zc.seal = seal_line;
    zc.seal_len = (size_t)n;
    return true;
}

/* I, pid 1 of the exec's namespaces: returns only in P. */
static void init_main(const int *fds, int nfds)
{
    /* Die with the zygote; if it died before this, its pidfd says so. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    struct pollfd pf = {zygote_pidfd, POLLIN, 0};
    if (poll(&pf, 1, 0) != 0)
        _exit(125);
    /* Join the exec's cgroups first (v1 tasks files the supervisor
     * opened; v2: the supervisor moves us before the go). */
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        if (zc.fd_tasks[i] >= 0 && write(zc.fd_tasks[i], "0", 1) != 1)
            lcl_child_fail(&zc, "joining the cgroup", NULL);
    int keep[ZC_NKEEP + LCL_CG_NCTRL] = {zc.fd_in, zc.fd_out, zc.fd_err, zc.fd_sync,
                                         zc.fd_report, zc.fd_status, work_fd};
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        keep[ZC_NKEEP + i] = zc.fd_leave[i];
    (void)fds;
    (void)nfds;
    close_except(keep, ZC_NKEEP + LCL_CG_NCTRL);
    char go;
    if (read(zc.fd_sync, &go, 1) != 1)
        _exit(125); /* the supervisor gave up */
    close(zc.fd_sync);
    lcl_child_zroot_exec(&zc);
    if (syscall(SYS_move_mount, work_fd, "", AT_FDCWD, "/work", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        lcl_child_fail(&zc, "attaching the work directory on", "/work");
    close(work_fd);
    /* The payload gets ready (the interpreter's after-fork work, limits,
     * privileges, the filter) while we detach the zygote's /proc from
     * /tmp, an unmount that waits out an RCU grace period, and mount the
     * exec's /tmp; it runs the program only once we say that is done, as
     * jail/child.c's payload does.  The pipe's ends go above 0-2, which
     * the payload's stdio takes. */
    int det[2], said[2] = {-1, -1};
    pipe_above_stdio(det);
    /* polysandbox eval's pass line, if it left one: I keeps it, and P
     * gets a pipe to ask for it, instead of the runner forking a keeper
     * (sdk/inside/seal.h).  Opened now, read once P is forked. */
    int seal = open("/work/" SBX_SEAL_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (seal >= 0)
        pipe_above_stdio(said);
    pid_t pid = fork();
    if (pid < 0)
        lcl_child_fail(&zc, "fork of the payload", NULL);
    if (pid == 0) {
        close(det[1]);
        payload_go = det[0];
        if (seal >= 0) {
            close(seal);
            close(said[0]);
            payload_said = said[1];
        }
        return;
    }
    close(det[0]);
    /* 's': I keeps the line, P keeps its pipe on SBX_SEAL_FD; 'd': not. */
    const char *go_word = "d";
    if (seal >= 0) {
        close(said[1]);
        if (take_seal(seal, said))
            go_word = "s";
    }
    lcl_child_zroot_tmp(&zc);
    if (write(det[1], go_word, 1) != 1)
        lcl_child_fail(&zc, "releasing the payload", NULL);
    lcl_signal_forward_to(pid);
    /* EOF on the report pipe once the payload closes its end too
     * (stdout stays while I keeps the pass line: it writes it there). */
    int keep_end[3 + LCL_CG_NCTRL] = {zc.fd_status, zc.sealed ? zc.fd_out : -1,
                                      zc.sealed ? zc.fd_said : -1};
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        keep_end[3 + i] = zc.fd_leave[i];
    close_except(keep_end, 3 + LCL_CG_NCTRL);
    lcl_child_reap(&zc, pid);
}

/* The zygote enters its own user and mount namespaces and builds the root
 * its sandboxes share there (@buf: the layout message); failures go to
 * @ctl as a struct lcl_msg, then it exits. */
int lcl_zc_enter(const void *buf, size_t len, int ctl)
{
    struct lcl_zyg_layout l;
    if (!buf || len < sizeof l || layout)
        return -1;
    memcpy(&l, buf, sizeof l);
    if (l.magic != LCL_ZYG_LAYOUT_MAGIC || l.n_binds > LCL_MAX_BINDS ||
        l.n_masks > LCL_MAX_HIDDEN || !(layout = malloc(len)))
        return -1;
    memcpy(layout, buf, len);
    const char *pos = layout + sizeof l, *end = layout + len;
    const char *skel = lcl_xr_next_str(&pos, end), *skel_src = lcl_xr_next_str(&pos, end);
    if (!skel || !skel_src || skel[0] != '/' || skel_src[0] != '/')
        return -1;
    memset(&zp, 0, sizeof zp);
    zp.skel = (char *)skel;
    for (uint32_t i = 0; i < l.n_binds; i++) {
        const char *b = lcl_xr_next_str(&pos, end);
        if (!b || b[0] != '/')
            return -1;
        zp.binds[i].path = (char *)b;
        zp.binds[i].is_dir = true;
    }
    zp.n_binds = l.n_binds;
    for (uint32_t i = 0; i < l.n_masks; i++) {
        const char *m = lcl_xr_next_str(&pos, end);
        if (!m || m[0] != '/')
            return -1;
        zp.masks[i] = (char *)m;
    }
    zp.n_masks = l.n_masks;
    memset(&zsb, 0, sizeof zsb);
    memset(&zc, 0, sizeof zc);
    zc.prov = &zp;
    zc.sb = &zsb;
    zc.skel_src = skel_src;
    zc.fd_report = zygote_ctl = ctl;
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        lcl_child_fail(&zc, "unshare", "CLONE_NEWUSER|CLONE_NEWNS");
    lcl_child_zroot_build(&zc);
    return 0;
}

/* The zygote's imports are done. */
void lcl_zc_ready(void)
{
    zc.fd_report = zygote_ctl;
    lcl_child_zroot_ready(&zc);
}

int lcl_zc_spawn(const void *buf, size_t len, const int *fds, int nfds, int *pidfd)
{
    if (!buf || !fds || !pidfd || parse(buf, len, fds, nfds) < 0)
        return -1;
    if (zygote_pidfd < 0 &&
        (zygote_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0)) < 0)
        return -1;
    if (!layout)
        return -1;  /* no root: lcl_zc_enter first */
    /* The zygote's user namespace (its samples one after another: see
     * plugins/local/README.md, Zygote); everything else fresh. */
    uint64_t flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_PIDFD;
    if (zc.net_none)
        flags |= CLONE_NEWNET;
    struct zc_clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = flags;
    ca.pidfd = (uint64_t)(uintptr_t)pidfd;
    ca.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid == 0) {
        init_main(fds, nfds);
        return 0;   /* P */
    }
    return pid < 0 ? -1 : (int)pid;
}

void lcl_zc_payload(void)
{
    close(zc.fd_status);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        if (zc.fd_leave[i] >= 0)
            close(zc.fd_leave[i]);
    lcl_payload_prepare(&zc);
    /* Not before the host's mount tree is gone from our namespace.  EOF
     * means the init failed (and reported why). */
    char done = 0;
    ssize_t got;
    while ((got = read(payload_go, &done, 1)) < 0 && errno == EINTR)
        ;
    if (got != 1 || (done != 'd' && done != 's'))
        _exit(125);
    /* I keeps eval's pass line: our pipe to ask for it on SBX_SEAL_FD. */
    unsigned int first = 3;
    if (done == 's') {
        if (payload_said != SBX_SEAL_FD && dup2(payload_said, SBX_SEAL_FD) < 0)
            _exit(125);
        first = SBX_SEAL_FD + 1;
    }
    /* No exec follows: close what an exec would have (our pipes' first
     * copies, the report pipe, whose EOF tells the supervisor we start). */
    if (syscall(SYS_close_range, first, ~0u, 0) < 0)
        for (int fd = (int)first; fd < 1024; fd++)
            close(fd);
}

/* The request's argv (@which 0) or environment (1), NULL-terminated: the
 * payload's, for the interpreter to run the program with. */
char *const *lcl_zc_strings(int which)
{
    static char *const none[] = {NULL};
    char *const *v = which ? zc.envp : zc.argv;
    return v ? v : none;
}
