/* plugins/local/jail/child.c - inside the sandbox: init and payload
 *
 * The supervisor clones us into new user, mount, pid, net, ipc and uts
 * namespaces.  We are pid 1 of the new pid namespace: we wait for the
 * supervisor's "go" (uid/gid maps written, cgroup joined), build the root
 * (a fresh tmpfs with the provider's skeleton and read-only binds of the
 * host's system directories, or the sandbox's image directory; the work
 * dir, a fresh /tmp, a fresh /proc with its
 * host-facing entries masked, and a minimal /dev with a private devpts),
 * pivot into it, then fork the payload and reap until it exits.  When we exit, the kernel kills whatever is left
 * in the pid namespace.
 *
 * The process that cloned us may be multi-threaded: from here on only
 * system calls, no malloc, no stdio, no locks.  Failures travel to the
 * supervisor as a struct lcl_msg naming the step and errno.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "jail-int.h"


/* ---- async-signal-safe helpers ---- */

size_t lcl_j_len(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* dst = a b c (any may be NULL); false if it does not fit. */
bool lcl_j_cat3(char *dst, size_t size, const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    size_t off = 0;
    for (int i = 0; i < 3; i++) {
        if (!parts[i])
            continue;
        size_t n = lcl_j_len(parts[i]);
        if (off + n >= size)
            return false;
        memcpy(dst + off, parts[i], n);
        off += n;
    }
    dst[off] = '\0';
    return true;
}

void lcl_j_report(int fd, int kind, int err, const char *step, const char *path)
{
    struct lcl_msg m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.err = err;
    if (!lcl_j_cat3(m.what, sizeof m.what, step, path ? " " : NULL, path))
        lcl_j_cat3(m.what, sizeof m.what, step, NULL, NULL);
    ssize_t r = write(fd, &m, sizeof m);
    (void)r;
}

_Noreturn void lcl_j_fail(const struct lcl_child *c, const char *step, const char *path)
{
    lcl_j_report(c->fd_report, LCL_MSG_SETUP, errno, step, path);
    _exit(125);
}

/* Make a mount read-only/nosuid/nodev/noexec as asked.  mount_setattr
 * (5.12) sets attributes recursively and never touches locked ones; the
 * fallback remounts keeping the flags the mount already has, which the
 * kernel requires inside a user namespace. */
int lcl_j_set_attr(const char *path, uint64_t attr, bool recursive)
{
    struct lcl_mount_attr ma = {.attr_set = attr};
    if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &ma,
                sizeof ma) == 0)
        return 0;
    if (errno != ENOSYS)
        return -1;
    struct statvfs sv;
    if (statvfs(path, &sv) < 0)
        return -1;
    unsigned long fl = MS_REMOUNT | MS_BIND;
    if (sv.f_flag & ST_NOSUID) fl |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) fl |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) fl |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) fl |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) fl |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) fl |= MS_RELATIME;
    if (sv.f_flag & ST_RDONLY) fl |= MS_RDONLY;
    if (attr & MOUNT_ATTR_RDONLY) fl |= MS_RDONLY;
    if (attr & MOUNT_ATTR_NOSUID) fl |= MS_NOSUID;
    if (attr & MOUNT_ATTR_NODEV) fl |= MS_NODEV;
    if (attr & MOUNT_ATTR_NOEXEC) fl |= MS_NOEXEC;
    return mount(NULL, path, NULL, fl, NULL);
}

void lcl_j_bind(const struct lcl_child *c, const char *src, const char *dst,
                 uint64_t attr, bool recursive)
{
    if (mount(src, dst, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL) < 0)
        lcl_j_fail(c, "bind mount", src);
    if (attr && lcl_j_set_attr(dst, attr, recursive) < 0)
        lcl_j_fail(c, "making read-only/nosuid the bind mount of", src);
}

/* The go, and with it (c->work_by_sync) the work directory's mount
 * into *@work (release_init in launch/exec.c).  *@work is on the init's
 * stack, never a static: the init's memory need not be a copy of its
 * host's (plugins/local/README.md, "Embedding processes"). */
static bool read_go(const struct lcl_child *c, int *work)
{
    char go;
    *work = -1;
    if (!c->work_by_sync)
        return read(c->fd_sync, &go, 1) == 1;
    if (lcl_fds_recv(c->fd_sync, &go, 1, work, 1) < 0)
        return false;
    if (*work < 0)
        lcl_j_fail(c, "receiving the work directory", NULL);
    return true;
}

/* /work: the sandbox's work directory opened without following a link
 * (lcl_work_open) and bound through its descriptor, so what is mounted
 * is what was opened, never what a link swapped in points to. */
void lcl_j_bind_work(const struct lcl_child *c, const char *dst)
{
    int fd = lcl_work_open(c->sb, O_PATH);
    if (fd < 0)
        lcl_j_fail(c, "opening the work directory (refused if a link)", c->sb->work);
    char src[40] = "/proc/self/fd/", num[12];
    int n = 0;
    for (int v = fd; n == 0 || v; v /= 10)
        num[n++] = (char)('0' + v % 10);
    size_t off = lcl_j_len(src);
    while (n)
        src[off++] = num[--n];
    src[off] = '\0';
    lcl_j_bind(c, src, dst, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
    close(fd);
}

/* ---- init ---- */

/* Close every descriptor the host process had except ours: the other
 * ends of our pipes (or stdin would never see EOF), other sandboxes'
 * pipes, the host's files and sockets. */
static void close_host_fds(const struct lcl_child *c)
{
    /* shared_mm: the payload joins the cgroups, through the tasks files. */
    int keep[6 + LCL_CG_NCTRL] = {c->fd_in, c->fd_out, c->fd_err, c->fd_sync, c->fd_report,
                                  c->fd_status};
    int nk = 6;
    for (int i = 0; c->shared_mm && i < LCL_CG_NCTRL; i++)
        if (c->fd_tasks[i] >= 0)
            keep[nk++] = c->fd_tasks[i];
    for (int i = 1; i < nk; i++) /* insertion sort, a dozen entries */
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    unsigned int from = 0;
    for (int i = 0; i <= nk; i++) {
        unsigned int to = i < nk ? (unsigned int)keep[i] : ~0u;
        if (to > from) {
            unsigned int last = i < nk ? to - 1 : ~0u;
            if (syscall(SYS_close_range, from, last, 0) < 0) {
                unsigned int stop = last > 65536 ? 65536 : last;
                for (unsigned int fd = from; fd <= stop; fd++)
                    close((int)fd);
            }
        }
        if (i < nk)
            from = (unsigned int)keep[i] + 1;
    }
}

/* Up to a built root and network: the init of a prepared sandbox
 * (daemon/spare.c) stops here and waits for its request. */
void lcl_child_setup(const struct lcl_child *c)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    /* Join our cgroups first: everything after, the payload included,
     * is accounted and limited there.  Not on the caller's memory: the
     * OOM killer, killing a member of the cgroup, would kill every
     * process sharing its memory, the caller too; the payload joins. */
    for (int i = 0; !c->shared_mm && i < LCL_CG_NCTRL; i++)
        if (c->fd_tasks[i] >= 0 && write(c->fd_tasks[i], "0", 1) != 1)
            lcl_j_fail(c, "joining the cgroup", NULL);
    close_host_fds(c);
    int work;
    if (!read_go(c, &work))
        _exit(125); /* the supervisor gave up */
    if (!c->keep_sync)
        close(c->fd_sync);
    lcl_child_root(c, work);
}

/* The old root gone, then the payload's go on @det_w. */
static void detach_old_root(const struct lcl_child *c, int det_w)
{
    if (!c->root_detached && umount2(".", MNT_DETACH) < 0)
        lcl_j_fail(c, "detaching the old root", NULL);
    if (write(det_w, "d", 1) != 1)
        lcl_j_fail(c, "releasing the payload", NULL);
}

/* The payload, then reaping until it exits. */
_Noreturn void lcl_child_start(const struct lcl_child *c)
{

    /* The payload shares our memory until it executes the command
     * (CLONE_VM on a stack of its own, as posix_spawn does): no copy of
     * the page tables of the process that cloned us.  Its descriptors,
     * credentials, signal handlers and limits are its own.  While it gets
     * ready we detach the old root (an RCU grace period); it executes the
     * command only once we say that is done.  Until it has executed it
     * (EOF on execd: its end is close-on-exec) we touch nothing it uses,
     * errno included (shared), and read no errno. */
    int det[2], execd[2];
    if (pipe2(det, O_CLOEXEC) < 0 || pipe2(execd, O_CLOEXEC) < 0 || lcl_j_above_stdio(det) < 0 ||
        lcl_j_above_stdio(execd) < 0)
        lcl_j_fail(c, "pipe", NULL);
    struct lcl_j_payload_arg pa = {c, det[0], det[1], execd[0]};
    const size_t stack_size = 256 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        lcl_j_fail(c, "mmap of the payload's stack", NULL);
    /* On the caller's memory (shared_mm) the payload is a vfork child:
     * its oom_score_adj is then its own, not every sharer's (the
     * kernel's __set_oom_adj), and the OOM killer never picks it while
     * it shares (in_vfork).  We wait in the clone until it executed, so
     * the old root goes first. */
    bool vf = c->shared_mm;
    if (vf)
        detach_old_root(c, det[1]);
    int pid = clone(lcl_j_payload_main, stack + stack_size,
                    CLONE_VM | (vf ? CLONE_VFORK : 0) | SIGCHLD, &pa);
    if (pid < 0)
        lcl_j_fail(c, "clone of the payload", NULL);
    /* Its credentials' change made the caller's memory undumpable (the
     * kernel's commit_creds): the caller's flag back. */
    if (c->redumpable)
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    close(execd[1]);
    /* (A failure here reports an errno the payload may have changed: the
     * step named is right, the number may not be.) */
    if (!vf)
        detach_old_root(c, det[1]);
    char b;
    while (read(execd[0], &b, 1) != 0)
        ; /* -1: interrupted; 0: it executed the command, or is gone */
    close(det[0]);
    close(det[1]);
    close(execd[0]);
    munmap(stack, stack_size);
    lcl_signal_forward_to(pid);
    /* EOF on the report pipe now means "the payload exec'd". */
    close(c->fd_report);
    close(c->fd_in);
    close(c->fd_out);
    close(c->fd_err);
    lcl_child_reap(c, pid);
}

/* The kept pass line to stdout if the payload's tree asked for it;
 * stdout closed either way (the supervisor's EOF). */
static void unseal(const struct lcl_child *c)
{
    char b = 0;
    if (read(c->fd_said, &b, 1) == 1 && b == '1') {
        for (size_t off = 0; off < c->seal_len;) {
            ssize_t w = write(c->fd_out, c->seal + off, c->seal_len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    close(c->fd_said);
    close(c->fd_out);
}

/* pid 1's duty: reap whatever ends until @payload does, then send its
 * wait status on fd_status and exit. */
_Noreturn void lcl_child_reap(const struct lcl_child *c, pid_t payload)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            _exit(125);
        if (w == payload) {
            if (c->empty_before_status) {
                /* Nothing of the sandbox left once the status is out: the
                 * supervisor takes it as the end, and our own exit
                 * (tearing the namespaces down) is off its path. */
                kill(-1, SIGKILL);
                while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
                    ;
                /* A zygote's init (v1) leaves the exec's cgroups too:
                 * they are empty for the supervisor once the status is
                 * out.  Should a move fail, the supervisor's wait for an
                 * empty cgroup (and its kill) ends us all the same. */
                for (int i = 0; c->leave_cgroup && i < LCL_CG_NCTRL; i++)
                    if (c->fd_leave[i] >= 0 && write(c->fd_leave[i], "0", 1) != 1)
                        break;
            }
            if (c->sealed)
                unseal(c);
            ssize_t r = write(c->fd_status, &st, sizeof st);
            _exit(r == (ssize_t)sizeof st ? 0 : 125);
        }
    }
}

_Noreturn void lcl_child_main(const struct lcl_child *c)
{
    lcl_child_setup(c);
    lcl_child_start(c);
}
