/* plugins/local/local-zygote-child.c - a zygote's child becomes a sandbox
 *
 * Built into local-zygote.so, which the zygote (local-zygote.py, a warm
 * interpreter that never runs untrusted code) loads with ctypes.  Per
 * exec the zygote forks a child C, which calls, in order:
 *
 *   lcl_zc_enter    C: joins the exec's cgroup, unshares user, mount,
 *                   pid, ipc, uts (and net) namespaces, says "ready" and
 *                   waits for the supervisor's go (uid/gid maps written)
 *   fork: C runs lcl_zc_wait (waits for the init, exits); the child is
 *   lcl_zc_init     I, pid 1 of the new pid namespace: the root, /proc,
 *                   /dev, /tmp, /work, host name, loopback as every exec's
 *                   init (local-child.c), old root detached
 *   fork: I runs lcl_zc_reap (reaps, reports the payload's wait status,
 *                   exits: the kernel ends the pid namespace); the child is
 *   lcl_zc_payload  P: stdio, signals, session, rlimits, working
 *                   directory, privileges dropped, every other descriptor
 *                   closed, the seccomp filter loaded last; then the
 *                   interpreter runs the program.
 *
 * Each process is single-threaded and a fork of the interpreter (which
 * ran its own fork handlers), so malloc is fine here.  Failures travel to
 * the supervisor as in local-child.c: a struct lcl_msg naming the step.
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

ZC_EXPORT int lcl_zc_enter(const void *buf, size_t len, const int *fds, int nfds, int zpid);
ZC_EXPORT _Noreturn void lcl_zc_wait(int pid);
ZC_EXPORT void lcl_zc_init(void);
ZC_EXPORT _Noreturn void lcl_zc_reap(int pid);
ZC_EXPORT void lcl_zc_payload(void);

static struct lcl_prov zp;
static struct lcl_sb zsb;
static struct lcl_child zc;
static int fd_ready = -1;
static int alive[2] = {-1, -1};  /* C holds the write end while it lives */

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

static int parse(const char *buf, size_t len, const int *fds, int nfds)
{
    struct lcl_zyg_cpart cp;
    const char *pos = buf + sizeof cp, *end = buf + len;
    if (len < sizeof cp || nfds < LCL_ZYG_NFD)
        return -1;
    memcpy(&cp, buf, sizeof cp);
    const char *skel = next_str(&pos, end), *skel_src = next_str(&pos, end),
               *work = next_str(&pos, end), *cwd = next_str(&pos, end),
               *tmp_opts = next_str(&pos, end);
    if (!skel || !skel_src || !work || !cwd || !tmp_opts || cp.n_binds > LCL_MAX_BINDS ||
        strlen(tmp_opts) >= sizeof zc.tmp_opts)
        return -1;
    zp.skel = (char *)skel;
    for (uint32_t i = 0; i < cp.n_binds; i++) {
        const char *b = next_str(&pos, end);
        if (!b)
            return -1;
        zp.binds[i].path = (char *)b;
        zp.binds[i].link = NULL;
        zp.binds[i].is_dir = true;
    }
    zp.n_binds = cp.n_binds;
    zp.cap_last = cp.cap_last;
    size_t blen = (size_t)cp.bpf_len * 8;  /* sizeof(struct sock_filter) */
    if ((size_t)(end - pos) < blen)
        return -1;
    if (blen) {
        void *bpf = malloc(blen);
        if (!bpf)
            return -1;
        memcpy(bpf, pos, blen);
        zp.bpf = bpf;
        zp.bpf_len = cp.bpf_len;
    }
    zsb.work = (char *)work;
    zsb.rootfs = NULL;
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
    fd_ready = fds[LCL_ZYG_FD_READY];
    int k = LCL_ZYG_NFD;
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        zc.fd_tasks[i] = -1;
        if (cp.tasks_mask & (1u << i)) {
            if (k >= nfds)
                return -1;
            zc.fd_tasks[i] = fds[k++];
        }
    }
    return 0;
}

/* Close every descriptor but @keep (the zygote's control socket, its
 * stdio, anything the interpreter had open): close_range between them. */
static void close_except(const int *keep, int n)
{
    int k[LCL_ZYG_NFD + LCL_CG_NCTRL];
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

int lcl_zc_enter(const void *buf, size_t len, const int *fds, int nfds, int zpid)
{
    /* Die with the zygote: nothing of an exec may outlive its owner. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != (pid_t)zpid)
        return -1;
    if (!buf || !fds || nfds <= 0 || parse(buf, len, fds, nfds) < 0)
        return -1;
    close_except(fds, nfds);
    /* Join the exec's cgroups first (v1 tasks files the supervisor
     * opened; v2: the supervisor moves us before the go). */
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        if (zc.fd_tasks[i] < 0)
            continue;
        if (write(zc.fd_tasks[i], "0", 1) != 1)
            lcl_child_fail(&zc, "joining the cgroup", NULL);
        close(zc.fd_tasks[i]);
        zc.fd_tasks[i] = -1;
    }
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    if (zc.net_none)
        flags |= CLONE_NEWNET;
    if (unshare(flags) < 0)
        lcl_child_fail(&zc, "unshare", "the namespaces of the exec");
    if (write(fd_ready, "r", 1) != 1)
        _exit(125);
    close(fd_ready);
    char go;
    if (read(zc.fd_sync, &go, 1) != 1)
        _exit(125); /* the supervisor gave up */
    close(zc.fd_sync);
    if (pipe2(alive, O_CLOEXEC) < 0)
        lcl_child_fail(&zc, "pipe", NULL);
    return 0;
}

_Noreturn void lcl_zc_wait(int pid)
{
    close_except(&alive[1], 1);
    for (;;) {
        int st;
        pid_t w = waitpid((pid_t)pid, &st, 0);
        if (w < 0 && errno == EINTR)
            continue;
        _exit(0);
    }
}

void lcl_zc_init(void)
{
    /* Die with C (whose death the supervisor watches); if it died before
     * this, its end of the pipe is closed already. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    close(alive[1]);
    struct pollfd pf = {alive[0], POLLIN, 0};
    if (poll(&pf, 1, 0) != 0)
        _exit(125);
    close(alive[0]);
    lcl_child_setup(&zc);
    if (umount2(".", MNT_DETACH) < 0)
        lcl_child_fail(&zc, "detaching the old root", NULL);
}

_Noreturn void lcl_zc_reap(int pid)
{
    /* EOF on the report pipe now means "the payload is ready" once the
     * payload closes its end too. */
    int keep = zc.fd_status;
    close_except(&keep, 1);
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            _exit(125);
        if (w == (pid_t)pid) {
            ssize_t r = write(zc.fd_status, &st, sizeof st);
            _exit(r == (ssize_t)sizeof st ? 0 : 125);
        }
    }
}

void lcl_zc_payload(void)
{
    close(zc.fd_status);
    lcl_payload_prepare(&zc);
    /* No exec follows: close what an exec would have (our pipes' first
     * copies, the report pipe, whose EOF tells the supervisor we start). */
    if (syscall(SYS_close_range, 3u, ~0u, 0) < 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
}
