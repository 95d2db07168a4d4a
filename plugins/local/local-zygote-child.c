/* plugins/local/local-zygote-child.c - a zygote's child becomes a sandbox
 *
 * Built into local-zygote.so, which the zygote (local-zygote.py, a warm
 * interpreter that never runs untrusted code) loads with ctypes.  Per
 * exec the zygote calls lcl_zc_spawn, which clones the exec's init I
 * straight into fresh user, mount, pid, ipc, uts (and net) namespaces
 * and returns its pid and a pidfd to the zygote.  I is pid 1 there and
 * runs only this file's code, never the interpreter's: it joins the
 * exec's cgroup, closes everything but the exec's descriptors, waits for
 * the supervisor's go (uid/gid maps written), builds the root, /proc,
 * /dev, /tmp and /work as every exec's init does (local-child.c),
 * forks the payload P, detaches the old root while P gets ready, and
 * reaps until P exits; then (v1 cgroups: the supervisor gave it its
 * cgroups' parents) it kills and reaps whatever is left, leaves the
 * exec's cgroups and reports P's wait status, which ends the exec for
 * the supervisor; its own exit, the namespaces' teardown, is off the
 * supervisor's path.  Else it reports the status and exits, and its exit
 * ends the exec.
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
 * supervisor as in local-child.c: a struct lcl_msg naming the step.
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

#include "local-int.h"
#include "local-zygote.h"

#define ZC_EXPORT __attribute__((visibility("default")))

ZC_EXPORT int lcl_zc_spawn(const void *buf, size_t len, const int *fds, int nfds, int *pidfd);
ZC_EXPORT void lcl_zc_payload(void);

static struct lcl_prov zp;
static struct lcl_sb zsb;
static struct lcl_child zc;
static int zygote_pidfd = -1;   /* the zygote itself: I dies with it */
static int payload_go = -1;     /* P: read end of I's "the old root is detached" */

struct zc_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* The next NUL-terminated string of [*pos, end), or NULL. */
static const char *next_str(const char **pos, const char *end)
{
    const char *s = *pos;
    const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!nul)
        return NULL;
    *pos = nul + 1;
    return s;
}

/* The request into zp, zsb, zc (pointing into @buf, which outlives the
 * clone: the child has its copy). */
static int parse(const char *buf, size_t len, const int *fds, int nfds)
{
    struct lcl_zyg_cpart cp;
    const char *pos = buf + sizeof cp, *end = buf + len;
    if (len < sizeof cp || nfds < LCL_ZYG_NFD || nfds > LCL_ZYG_NFD + 2 * LCL_CG_NCTRL)
        return -1;
    memcpy(&cp, buf, sizeof cp);
    if (cp.leave_mask && cp.leave_mask != cp.tasks_mask)
        return -1;
    const char *skel = next_str(&pos, end), *skel_src = next_str(&pos, end),
               *work = next_str(&pos, end), *cwd = next_str(&pos, end),
               *tmp_opts = next_str(&pos, end);
    if (!skel || !skel_src || !work || !cwd || !tmp_opts || cp.n_binds > LCL_MAX_BINDS ||
        strlen(tmp_opts) >= sizeof zc.tmp_opts)
        return -1;
    memset(&zp, 0, sizeof zp);
    memset(&zsb, 0, sizeof zsb);
    memset(&zc, 0, sizeof zc);
    zp.skel = (char *)skel;
    for (uint32_t i = 0; i < cp.n_binds; i++) {
        const char *b = next_str(&pos, end);
        if (!b)
            return -1;
        zp.binds[i].path = (char *)b;
        zp.binds[i].is_dir = true;
    }
    zp.n_binds = cp.n_binds;
    zp.cap_last = cp.cap_last;
    size_t blen = (size_t)cp.bpf_len * 8;  /* sizeof(struct sock_filter) */
    if ((size_t)(end - pos) < blen)
        return -1;
    /* A copy (aligned) in the zygote, the previous request's freed. */
    static void *bpf;
    free(bpf);
    bpf = NULL;
    if (blen && !(bpf = malloc(blen)))
        return -1;
    if (blen)
        memcpy(bpf, pos, blen);
    zp.bpf = bpf;
    zp.bpf_len = cp.bpf_len;
    zsb.work = (char *)work;
    zsb.limits.cpu_ns = cp.cpu_ns;
    zsb.limits.nofile = cp.nofile;
    zsb.limits.fsize_bytes = cp.fsize_bytes;
    zc.prov = &zp;
    zc.sb = &zsb;
    zc.cwd = cwd;
    zc.skel_src = *skel_src ? skel_src : NULL;
    memcpy(zc.tmp_opts, tmp_opts, strlen(tmp_opts) + 1);
    zc.drop_groups = cp.flags & LCL_ZYG_F_DROP_GROUPS;
    zc.net_none = cp.flags & LCL_ZYG_F_NET_NONE;
    zc.new_cgroup_ns = true;
    zc.fd_in = fds[LCL_ZYG_FD_IN];
    zc.fd_out = fds[LCL_ZYG_FD_OUT];
    zc.fd_err = fds[LCL_ZYG_FD_ERR];
    zc.fd_sync = fds[LCL_ZYG_FD_SYNC];
    zc.fd_report = fds[LCL_ZYG_FD_REPORT];
    zc.fd_status = fds[LCL_ZYG_FD_STATUS];
    int k = LCL_ZYG_NFD;
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        zc.fd_tasks[i] = -1;
        if (cp.tasks_mask & (1u << i)) {
            if (k >= nfds)
                return -1;
            zc.fd_tasks[i] = fds[k++];
        }
    }
    /* The supervisor takes the status as the exec's end (the sandbox
     * empty, the init out of its cgroups); our exit, tearing the
     * namespaces down, is then off its path. */
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        zc.fd_leave[i] = -1;
        if (cp.leave_mask & (1u << i)) {
            if (k >= nfds)
                return -1;
            zc.fd_leave[i] = fds[k++];
        }
    }
    zc.leave_cgroup = zc.empty_before_status = cp.leave_mask != 0;
    return 0;
}

/* Close every descriptor but @keep (the zygote's control socket, its
 * stdio, anything the interpreter had open): close_range between them. */
static void close_except(const int *keep, int n)
{
    int k[LCL_ZYG_NFD + 2 * LCL_CG_NCTRL];
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
    int keep[LCL_ZYG_NFD + LCL_CG_NCTRL] = {zc.fd_in, zc.fd_out, zc.fd_err, zc.fd_sync,
                                            zc.fd_report, zc.fd_status};
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        keep[LCL_ZYG_NFD + i] = zc.fd_leave[i];
    (void)fds;
    (void)nfds;
    close_except(keep, LCL_ZYG_NFD + LCL_CG_NCTRL);
    char go;
    if (read(zc.fd_sync, &go, 1) != 1)
        _exit(125); /* the supervisor gave up */
    close(zc.fd_sync);
    lcl_child_root(&zc);
    /* The payload gets ready (the interpreter's after-fork work, limits,
     * privileges, the filter) while we detach the old root, an unmount
     * that waits out an RCU grace period; it runs the program only once
     * we say that is done, as local-child.c's payload does.  The pipe's
     * ends go above 0-2, which the payload's stdio takes. */
    int det[2];
    if (pipe2(det, O_CLOEXEC) < 0)
        lcl_child_fail(&zc, "pipe", NULL);
    for (int i = 0; i < 2; i++)
        if (det[i] < 3) {
            int fd = fcntl(det[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                lcl_child_fail(&zc, "pipe", NULL);
            close(det[i]);
            det[i] = fd;
        }
    pid_t pid = fork();
    if (pid < 0)
        lcl_child_fail(&zc, "fork of the payload", NULL);
    if (pid == 0) {
        close(det[1]);
        payload_go = det[0];
        return;
    }
    close(det[0]);
    if (umount2(".", MNT_DETACH) < 0)
        lcl_child_fail(&zc, "detaching the old root", NULL);
    if (write(det[1], "d", 1) != 1)
        lcl_child_fail(&zc, "releasing the payload", NULL);
    /* EOF on the report pipe once the payload closes its end too. */
    int keep_end[1 + LCL_CG_NCTRL] = {zc.fd_status};
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        keep_end[1 + i] = zc.fd_leave[i];
    close_except(keep_end, 1 + LCL_CG_NCTRL);
    lcl_child_reap(&zc, pid);
}

int lcl_zc_spawn(const void *buf, size_t len, const int *fds, int nfds, int *pidfd)
{
    if (!buf || !fds || !pidfd || parse(buf, len, fds, nfds) < 0)
        return -1;
    if (zygote_pidfd < 0 &&
        (zygote_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0)) < 0)
        return -1;
    uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                     CLONE_PIDFD;
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
    if (got != 1 || done != 'd')
        _exit(125);
    /* No exec follows: close what an exec would have (our pipes' first
     * copies, the report pipe, whose EOF tells the supervisor we start). */
    if (syscall(SYS_close_range, 3u, ~0u, 0) < 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
}
