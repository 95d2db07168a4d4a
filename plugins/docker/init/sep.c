/* plugins/docker/init/sep.c - the helper apart from the commands
 *
 * A command runs as root of the container (without capabilities), as
 * through a daemon's exec: uploads and /work are root's.  The helper's
 * processes (PID 1, the exec server's supervisors, the API path's
 * wrapper) must outlive anything it does, or its status is lost.  Root
 * without CAP_KILL may still signal every process of uid 0, so the
 * helper does not stay uid 0:
 *
 *  - at start it drops the container's bounding set (CAP_SETPCAP) and
 *    becomes HELPER_UID (real, effective, saved; CAP_SETUID), keeping
 *    only CAP_SETUID (to start commands as root) and CAP_KILL (to end
 *    them): the container is created with exactly those three
 *    (docker-spec.c).  `kill -9 -1`, kill of its process group or of the
 *    helper's pid, prlimit and ptrace from a command now fail for want of
 *    a matching uid;
 *  - it is dumpable, so its /proc files are HELPER_UID's, not root's: a
 *    command cannot raise its oom_score_adj (a non-dumpable process's
 *    files belong to root, which the command is);
 *  - it ignores every signal it can (SIGCHLD aside): root's F_SETOWN
 *    passes the kernel's check for SIGIO to any process, and the prelude
 *    below refuses only F_SETSIG with SIGKILL or SIGSTOP;
 *  - a command starts as root in a session of its own, with default
 *    signal dispositions, no capability (permitted, effective, bounding),
 *    no_new_privs, oom_score_adj 1000 (it, not the helper, is the OOM
 *    killer's choice), and a seccomp filter of its own over the
 *    container's profile: the local provider's argument checks
 *    (plugins/common/syscall-prelude.h) and F_SETSIG's.
 *
 * Built into the static helper only (no allocation, async-signal-safe
 * after fork).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "helper.h"
#include "syscall-prelude.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* Sets the permitted and effective sets to @caps (a mask of CAP_*, all
 * below 32), the inheritable set to nothing. */
static int caps_set(uint32_t caps)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    data[0].permitted = data[0].effective = caps;
    return (int)syscall(SYS_capset, &hdr, data);
}

int helper_separate(int keep)
{
    uint32_t caps = keep ? (1u << CAP_SETUID) | (1u << CAP_KILL) : 0;
    /* Already (a supervisor is a fork of the server); or started by hand
     * as another user than root (tests, never the provider's containers,
     * which run it as 0:0): commands then run as that user too. */
    if (getuid() == HELPER_UID || getuid() != 0)
        return 0;
    /* Nothing started from here on may ever gain a capability. */
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return -1;
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
        syscall(SYS_setresgid, 0, 0, 0) < 0 ||
        syscall(SYS_setresuid, HELPER_UID, HELPER_UID, HELPER_UID) < 0 ||
        caps_set(caps) < 0 || prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
        return -1;
    /* Our /proc files then belong to HELPER_UID (not root, the command's
     * uid); ptrace and /proc/PID/mem still need CAP_SYS_PTRACE. */
    return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

void helper_ignore_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGCHLD && sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &sa, NULL);
}

/* The command's filter: the prelude, then (past its end) calls of another
 * architecture are killed (the container's profile knows one) and
 * F_SETSIG may not name SIGKILL or SIGSTOP (F_SETOWN then aims SIGIO
 * at the helper, which ignores it); everything else is the profile's. */
static int filter_load(void)
{
    struct sock_filter prog[SYSPOL_PRELUDE_MAX + 16];
    int n = syspol_assemble(prog);
    if (n < 0) {
        errno = EINVAL;
        return -1;
    }
    const struct sock_filter tail[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYSPOL_NATIVE_ARCH, 0, 10),
        /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 8, 0),
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fcntl, 0, 6),
        /* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYSPOL_ARG_LO(1)),
        /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETSIG, 0, 4),
        /* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SYSPOL_ARG_LO(2)),
        /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGKILL, 1, 0),
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGSTOP, 0, 1),
        /* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        /* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    _Static_assert(sizeof tail / sizeof *tail <= 16, "room for the tail");
    memcpy(prog + n, tail, sizeof tail);
    struct sock_fprog fp = {(unsigned short)(n + (int)(sizeof tail / sizeof *tail)), prog};
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
}

int command_confine(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &sa, NULL);
    if (setsid() < 0)
        return -1;
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t w = write(fd, "1000", 4);
        (void)w; /* best effort: the helper's own files are not the command's anyway */
        close(fd);
    }
    if ((getuid() == HELPER_UID && syscall(SYS_setresuid, 0, 0, 0) < 0) || caps_set(0) < 0 ||
        (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return filter_load();
}
