/* plugins/local/jail/payload.c - the payload, from the init's fork to
 * the command
 *
 * Its stdio, signals, limits, OOM score, privileges dropped, the seccomp
 * filter loaded last, then the command looked up in PATH and executed.
 * An in-process payload does it all after the fork; a spare's payload
 * (daemon/spare.c) does the early part before its request.  System
 * calls only (child.c says why).
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


/* ---- the payload ---- */

static void set_limit(const struct lcl_child *c, int res, uint64_t soft, uint64_t hard,
                      const char *name)
{
    struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
    if (setrlimit(res, &rl) < 0)
        lcl_j_fail(c, "setrlimit", name);
}

static void drop_privileges(const struct lcl_child *c)
{
    for (int cap = 0; cap <= c->prov->cap_last; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            lcl_j_fail(c, "dropping the capability bounding set", NULL);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        lcl_j_fail(c, "clearing ambient capabilities", NULL);
    /* Raw calls: glibc's wrappers broadcast to the threads it believes
     * exist (those of the host process) and take its locks. */
    if (syscall(SYS_setresgid, LCL_SANDBOX_GID, LCL_SANDBOX_GID, LCL_SANDBOX_GID) < 0)
        lcl_j_fail(c, "setresgid", NULL);
    if (syscall(SYS_setresuid, LCL_SANDBOX_UID, LCL_SANDBOX_UID, LCL_SANDBOX_UID) < 0)
        lcl_j_fail(c, "setresuid", NULL);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) < 0)
        lcl_j_fail(c, "clearing capabilities", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        lcl_j_fail(c, "PR_SET_NO_NEW_PRIVS", NULL);
}

static void close_others(void)
{
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    for (int fd = 3; fd < 4096; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Returns only when the command could not be executed (reported).  Not
 * _Noreturn: a sanitizer build would instrument the call on the payload's
 * own stack, which it warns about on the program's stderr. */
static void payload_exec(const struct lcl_child *c);

/* shared_mm: the exec's cgroups, which the init stays out of
 * (jail/child.c), joined first, then a cgroup namespace rooted there
 * (the privilege of our user namespace is still ours). */
static void payload_join_cgroups(const struct lcl_child *c)
{
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        if (c->fd_tasks[i] >= 0 && write(c->fd_tasks[i], "0", 1) != 1)
            lcl_j_fail(c, "joining the cgroup", NULL);
    if (c->new_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
        lcl_j_fail(c, "unshare", "CLONE_NEWCGROUP");
}

/* The payload's view of the init: detached = the init's end saying the
 * old root is gone (one byte; EOF: the init failed). */

_Noreturn static void payload(const struct lcl_child *c, const struct lcl_j_payload_arg *a)
{
    close(a->detach_w);
    close(a->execd_r);
    if (c->shared_mm)
        payload_join_cgroups(c);
    lcl_payload_prepare(c);

    /* Not before the host's mount tree is gone from our namespace.  EOF
     * means the init failed (and reported why): it closes its files
     * before the kernel ends the pid namespace, so we must not go on. */
    char done = 0;
    ssize_t got;
    while ((got = read(a->detached, &done, 1)) < 0)
        ;
    if (got != 1 || done != 'd')
        _exit(125);
    payload_exec(c);
    _exit(127);
}

/* The payload's stdio: the pipes moved out of the way first, in case
 * one is 0..2. */
static void payload_stdio(const struct lcl_child *c)
{
    int in = fcntl(c->fd_in, F_DUPFD, 10), out = fcntl(c->fd_out, F_DUPFD, 10),
        err = fcntl(c->fd_err, F_DUPFD, 10);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        lcl_j_fail(c, "setting up stdin/stdout/stderr", NULL);
}

/* Host dispositions and mask must not leak in (e.g. SIGPIPE ignored);
 * a session of its own. */
static void payload_signals(const struct lcl_child *c)
{
    lcl_signals_default();
    if (setsid() < 0)
        lcl_j_fail(c, "setsid", NULL);
}

/* The exec's rlimits (lowering them needs no privilege). */
static void payload_limits(const struct lcl_child *c)
{
    const sbx_limits_v1 *l = &c->sb->limits;
    uint64_t cpu_s = (l->cpu_ns + 999999999u) / 1000000000u;
    /* The CPU rlimit is a per-process backstop one second above the
     * limit; the supervisor's cgroup accounting decides first. */
    set_limit(c, RLIMIT_CPU, cpu_s + 1, cpu_s + 2, "RLIMIT_CPU");
    set_limit(c, RLIMIT_NOFILE, l->nofile, l->nofile, "RLIMIT_NOFILE");
    set_limit(c, RLIMIT_FSIZE, l->fsize_bytes, l->fsize_bytes, "RLIMIT_FSIZE");
    set_limit(c, RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    /* Floors where no cgroup holds the limit (jail/limits.c). */
    if (c->rl_data)
        set_limit(c, RLIMIT_DATA, c->rl_data, c->rl_data, "RLIMIT_DATA");
    if (c->rl_nproc)
        set_limit(c, RLIMIT_NPROC, c->rl_nproc, c->rl_nproc, "RLIMIT_NPROC");
}

static void payload_oom_first(void)
{
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = write(fd, "1000", 4);
        (void)r;
        close(fd);
    }
}

static void payload_seccomp(const struct lcl_child *c)
{
    if (c->prov->bpf) {
        struct sock_fprog prog = {(unsigned short)c->prov->bpf_len, c->prov->bpf};
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
            lcl_j_fail(c, "loading the seccomp filter", NULL);
    }
}

/* The payload up to the command: stdio, signals, session, limits, working
 * directory, privileges, the seccomp filter (also the zygote's, in
 * zygote/helper.c). */
void lcl_payload_prepare(const struct lcl_child *c)
{
    payload_stdio(c);
    payload_signals(c);
    payload_limits(c);
    payload_oom_first();
    if (chdir(c->cwd) < 0)
        lcl_j_fail(c, LCL_STEP_CWD, c->cwd);
    drop_privileges(c);
    close_others();
    payload_seccomp(c);
}

static void payload_exec(const struct lcl_child *c)
{
    /* execvp by hand: our PATH, our environment, no allocation. */
    const char *file = c->argv[0];
    int e = ENOENT;
    if (strchr(file, '/')) {
        execve(file, c->argv, c->envp);
        e = errno;
    } else {
        bool eacces = false;
        char buf[LCL_PATH_MAX];
        for (char **d = c->path_dirs; *d; d++) {
            if (!lcl_j_cat3(buf, sizeof buf, *d, "/", file))
                continue;
            execve(buf, c->argv, c->envp);
            if (errno == EACCES)
                eacces = true;
            else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV) {
                eacces = false;
                e = errno;
                break;
            }
        }
        if (eacces)
            e = EACCES;
    }
    lcl_j_report(c->fd_report, LCL_MSG_EXEC, e, "execve", file);
}

/* 0-2 are free in the init (close_host_fds): move a new pipe's ends
 * above them, or the payload's stdio would replace them. */
int lcl_j_above_stdio(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] < 3) {
            int fd = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                return -1;
            close(p[i]);
            p[i] = fd;
        }
    return 0;
}

int lcl_j_payload_main(void *arg)
{
    const struct lcl_j_payload_arg *a = arg;
    payload(a->c, a);
}

/* ---- a payload made before its request (daemon/spare.c) ---- */

void lcl_payload_early(const struct lcl_child *c)
{
    payload_signals(c);
    payload_oom_first();
    drop_privileges(c);
    payload_seccomp(c);
}

void lcl_payload_late(const struct lcl_child *c)
{
    payload_stdio(c);
    payload_limits(c);
    close_others();
}

void lcl_payload_exec(const struct lcl_child *c)
{
    payload_exec(c);
}

