/* plugins/local/local-seccomp.c - the payload's system-call filter
 *
 * Built once at init and kept as raw BPF, so the child (which must not
 * allocate) loads it with one seccomp(2) call.  The program is two parts:
 *
 *  1. a short hand-assembled prelude for the argument checks that need
 *     "deny these values, else go on" on the low 32 bits of an argument
 *     (ioctl, personality, clone, socket, seccomp).  libseccomp cannot say
 *     that: an unconditional rule swallows conditional ones of another
 *     action, it refuses two comparisons of one argument in a rule, and
 *     its 64-bit EQ/NE let a caller dodge a check with junk in the upper
 *     half the kernel ignores (CVE-2019-10063).  The prelude either
 *     returns EPERM/EAFNOSUPPORT or falls through to part 2.
 *  2. libseccomp's default-deny allowlist for the native architecture
 *     only (i386 and x32 calls are killed: their numbers and argument
 *     layouts would dodge the checks), modelled on Docker's default
 *     profile minus its CAP_SYS_ADMIN-gated set.
 *
 * Actions: EPERM for what programs probe and must survive being refused
 * (the deny_eperm list and the prelude's cases); KILL_PROCESS (SIGSYS,
 * reported as SBX_RUN_SECCOMP) for what only exploits do (deny_kill).
 * Everything else not allowed answers ENOSYS rather than killing: runtimes
 * probe new calls (clone3, faccessat2, io_uring, statx...) and fall back
 * on ENOSYS, while a kill would break an innocent program on every new
 * kernel or libc; and ENOSYS, unlike EPERM, is what makes glibc fall back.
 * tests/hostile/syscalls.sh checks every one of these answers.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "local-int.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
/* The architecture the prelude's syscall numbers are for. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the local provider's seccomp filter knows x86_64 and aarch64 only"
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

/* Allowed unconditionally (names this libseccomp or architecture does not
 * know are skipped: they answer ENOSYS).  Docker's default allowlist for
 * x86_64 without: ptrace and process_vm_* (CAP_SYS_PTRACE-gated there),
 * adjtimex, clock_adjtime and name_to_handle_at (denied below), modify_ldt.
 * ioctl, personality, clone, socket and seccomp are listed because the
 * prelude has already refused their dangerous arguments. */
static const char *const allow[] = {
    "accept", "accept4", "access", "alarm", "arch_prctl", "bind", "brk", "cachestat",
    "capget", "capset", "chdir", "chmod", "chown", "clock_getres", "clock_gettime",
    "clock_nanosleep", "clone", "close", "close_range", "connect", "copy_file_range",
    "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl",
    "epoll_ctl_old", "epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old",
    "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat",
    "faccessat2", "fadvise64", "fallocate", "fanotify_mark", "fchdir", "fchmod",
    "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr",
    "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs",
    "fsync", "ftruncate", "futex", "futex_requeue", "futex_wait", "futex_waitv",
    "futex_wake", "futimesat", "getcpu", "getcwd", "getdents", "getdents64", "getegid",
    "geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp",
    "getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid",
    "getrlimit", "get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt",
    "get_thread_area", "gettid", "gettimeofday", "getuid", "getxattr", "getxattrat",
    "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch",
    "io_cancel", "ioctl", "io_destroy", "io_getevents", "io_pgetevents", "ioprio_get",
    "ioprio_set", "io_setup", "io_submit", "kill", "landlock_add_rule",
    "landlock_create_ruleset", "landlock_restrict_self", "lchown", "lgetxattr", "link",
    "linkat", "listen", "listmount", "listxattr", "listxattrat", "llistxattr",
    "lremovexattr", "lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack",
    "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod",
    "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mprotect", "mq_getsetattr",
    "mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap",
    "mseal", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall",
    "munmap", "nanosleep", "newfstatat", "open", "openat", "openat2", "pause",
    "personality", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc",
    "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64", "preadv",
    "preadv2", "prlimit64", "process_mrelease", "pselect6", "pwrite64", "pwritev",
    "pwritev2", "read", "readahead", "readlink", "readlinkat", "readv", "recvfrom",
    "recvmmsg", "recvmsg", "remap_file_pages", "removexattr", "removexattrat", "rename",
    "renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction",
    "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
    "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_getaffinity",
    "sched_getattr", "sched_getparam", "sched_get_priority_max",
    "sched_get_priority_min", "sched_getscheduler", "sched_rr_get_interval",
    "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler",
    "sched_yield", "seccomp", "select", "semctl", "semget", "semop", "semtimedop",
    "sendfile", "sendmmsg", "sendmsg", "sendto", "setfsgid", "setfsuid", "setgid",
    "setgroups", "setitimer", "setpgid", "setpriority", "setregid", "setresgid",
    "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid", "setsockopt",
    "set_thread_area", "set_tid_address", "setuid", "setxattr", "setxattrat", "shmat",
    "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4",
    "socket", "socketpair", "splice", "stat", "statfs", "statmount", "statx", "symlink",
    "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
    "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
    "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime", "times",
    "tkill", "truncate", "umask", "uname", "unlink", "unlinkat", "uretprobe", "utime",
    "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid", "write", "writev",
};

/* Refused with EPERM: programs probe these and must fail gracefully. */
static const char *const deny_eperm[] = {
    /* other processes */
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "process_madvise",
    /* large, often-exploited kernel surface */
    "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
    "fanotify_init",
    /* mounts, old and new API, and namespaces */
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    /* host-global administration */
    "clock_settime", "settimeofday", "stime", "adjtimex", "clock_adjtime", "acct",
    "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd",
    "lookup_dcookie", "name_to_handle_at", "open_by_handle_at", "iopl", "ioperm",
    "vm86", "vm86old", "nfsservctl", "vhangup", "sethostname", "setdomainname",
};

/* Killed: only exploits load kernel code. */
static const char *const deny_kill[] = {
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "create_module",
};

/* ---- the prelude ---- */

/* Namespace flags clone(2) can take (CLONE_NEWTIME overlaps the exit
 * signal there and only works with clone3/unshare): Docker's mask. */
#define NS_FLAGS                                                                    \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |  \
     CLONE_NEWPID | CLONE_NEWNET)

/* The low 32 bits of argument i: what the kernel reads for int-sized
 * arguments, whatever the caller left in the upper half. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]))
#else
#define ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]) + 4)
#endif

/* Jump targets of the prelude: NEXT is the following instruction, CONT
 * the start of the allowlist (the end of the prelude). */
enum { NEXT, CONT, DENY, NOAF, L_IOCTL, L_PERS, L_CLONE, L_SOCK, L_NL, L_SECC, N_LABELS };

struct op {
    uint16_t code;
    uint32_t k;
    uint8_t jt, jf; /* labels */
    uint8_t here;   /* nonzero: not an instruction, defines this label */
};

#define LABEL(l) {0, 0, 0, 0, (l)}
#define LD(off) {BPF_LD | BPF_W | BPF_ABS, (off), 0, 0, 0}
#define IF_EQ(v, t, f) {BPF_JMP | BPF_JEQ | BPF_K, (v), (t), (f), 0}
#define IF_SET(v, t, f) {BPF_JMP | BPF_JSET | BPF_K, (v), (t), (f), 0}
#define RET(v) {BPF_RET | BPF_K, (v), 0, 0, 0}

static const struct op prelude[] = {
    /* Another architecture: the allowlist kills it. */
    LD(offsetof(struct seccomp_data, arch)),
    IF_EQ(NATIVE_ARCH, NEXT, CONT),
    LD(offsetof(struct seccomp_data, nr)),
    IF_EQ(__NR_ioctl, L_IOCTL, NEXT),
    IF_EQ(__NR_personality, L_PERS, NEXT),
    IF_EQ(__NR_clone, L_CLONE, NEXT),
    IF_EQ(__NR_socket, L_SOCK, NEXT),
    IF_EQ(__NR_seccomp, L_SECC, CONT),

    /* Keystrokes into a terminal outside (CVE-2017-5226, CVE-2023-28100). */
    LABEL(L_IOCTL),
    LD(ARG_LO(1)),
    IF_EQ(TIOCSTI, DENY, NEXT),
    IF_EQ(TIOCLINUX, DENY, CONT),

    /* Docker's harmless personalities (Linux, 32-bit, uname26, query);
     * not READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and the like. */
    LABEL(L_PERS),
    LD(ARG_LO(0)),
    IF_EQ(0x0, CONT, NEXT),
    IF_EQ(0x8, CONT, NEXT),
    IF_EQ(0x20000, CONT, NEXT),
    IF_EQ(0x20008, CONT, NEXT),
    IF_EQ(0xffffffff, CONT, DENY),

    /* No new namespaces: they hand the payload fresh capabilities over
     * netfilter, mounts, ... (clone3 answers ENOSYS: its flags are in
     * memory, so libc falls back to this clone). */
    LABEL(L_CLONE),
    LD(ARG_LO(0)),
    IF_SET(NS_FLAGS, DENY, CONT),

    /* No notifier filter the payload could confuse a supervisor with. */
    LABEL(L_SECC),
    LD(ARG_LO(1)),
    IF_SET(SECCOMP_FILTER_FLAG_NEW_LISTENER, DENY, CONT),

    /* Unix, IP and route netlink only: vsock is host-wide, AF_ALG a large
     * crypto surface, other netlink families reach audit, netfilter... */
    LABEL(L_SOCK),
    LD(ARG_LO(0)),
    IF_EQ(AF_UNIX, CONT, NEXT),
    IF_EQ(AF_INET, CONT, NEXT),
    IF_EQ(AF_INET6, CONT, NEXT),
    IF_EQ(AF_NETLINK, L_NL, NEXT),
    IF_EQ(AF_VSOCK, DENY, NEXT),
    IF_EQ(AF_ALG, DENY, NOAF),
    LABEL(L_NL),
    LD(ARG_LO(2)),
    IF_EQ(NETLINK_ROUTE, CONT, DENY),

    LABEL(DENY),
    RET(SECCOMP_RET_ERRNO | EPERM),
    LABEL(NOAF),
    RET(SECCOMP_RET_ERRNO | EAFNOSUPPORT),
    LABEL(CONT),
};

/* Assembles the prelude into out[] (room for every op); returns its
 * length, or -1 if a jump does not fit (a bug in the table above). */
static int assemble(struct sock_filter *out)
{
    const size_t n_ops = sizeof prelude / sizeof *prelude;
    unsigned pos[N_LABELS] = {0};
    unsigned n = 0;
    for (size_t i = 0; i < n_ops; i++) {
        if (prelude[i].here)
            pos[prelude[i].here] = n;
        else
            n++;
    }
    n = 0;
    for (size_t i = 0; i < n_ops; i++) {
        const struct op *o = &prelude[i];
        if (o->here)
            continue;
        unsigned jt = o->jt == NEXT ? 0 : pos[o->jt] - (n + 1);
        unsigned jf = o->jf == NEXT ? 0 : pos[o->jf] - (n + 1);
        if ((o->jt != NEXT && pos[o->jt] <= n) || (o->jf != NEXT && pos[o->jf] <= n) ||
            jt > 255 || jf > 255)
            return -1;
        out[n++] = (struct sock_filter)BPF_JUMP(o->code, o->k, (uint8_t)jt, (uint8_t)jf);
    }
    return (int)n;
}

/* ---- the allowlist ---- */

static int rule_list(scmp_filter_ctx ctx, uint32_t action, const char *const *names,
                     size_t n, const char **bad)
{
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name(names[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* unknown here: default action */
        int r = seccomp_rule_add(ctx, action, nr, 0);
        if (r < 0) {
            *bad = names[i];
            return r;
        }
    }
    return 0;
}

/* Exports ctx's BPF into a malloc'd array; sets *len (instructions). */
static int export_bpf(scmp_filter_ctx ctx, struct sock_filter **out, size_t *len)
{
    int r, fd = memfd_create("lcl-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    r = seccomp_export_bpf(ctx, fd);
    if (r == 0 && fstat(fd, &st) < 0)
        r = -errno;
    if (r == 0 && (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter)))
        r = -EINVAL;
    if (r == 0 && !(*out = malloc((size_t)st.st_size)))
        r = -ENOMEM;
    if (r == 0 && pread(fd, *out, (size_t)st.st_size, 0) != st.st_size) {
        free(*out);
        *out = NULL;
        r = -EIO;
    }
    if (r == 0)
        *len = (size_t)st.st_size / sizeof(struct sock_filter);
    close(fd);
    return r;
}

int lcl_seccomp_build(struct lcl_prov *p)
{
    const char *bad = "seccomp_init";
    char why[256];
    struct sock_filter *list = NULL, *prog = NULL;
    size_t list_len = 0;
    int n = 0, r;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
    if (!ctx) {
        r = -ENOMEM;
        goto fail;
    }
    bad = "the native architecture";
    r = seccomp_arch_native() == NATIVE_ARCH ? 0 : -EOPNOTSUPP;
    if (r == 0) {
        bad = "bad-arch action";
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    }
    if (r == 0) {
        bad = "binary tree optimization";
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    }
    if (r == 0)
        r = rule_list(ctx, SCMP_ACT_ALLOW, allow, sizeof allow / sizeof *allow, &bad);
    if (r == 0)
        r = rule_list(ctx, SCMP_ACT_ERRNO(EPERM), deny_eperm,
                      sizeof deny_eperm / sizeof *deny_eperm, &bad);
    if (r == 0)
        r = rule_list(ctx, SCMP_ACT_KILL_PROCESS, deny_kill,
                      sizeof deny_kill / sizeof *deny_kill, &bad);
    if (r == 0) {
        bad = "exporting BPF";
        r = export_bpf(ctx, &list, &list_len);
    }
    if (r == 0) {
        bad = "assembling the argument checks";
        prog = malloc((sizeof prelude / sizeof *prelude + list_len) * sizeof *prog);
        n = prog ? assemble(prog) : 0;
        r = !prog ? -ENOMEM : n < 0 ? -EINVAL : (size_t)n + list_len > BPF_MAXINSNS ? -E2BIG : 0;
    }
    if (r < 0)
        goto fail;
    memcpy(prog + n, list, list_len * sizeof *prog);
    free(list);
    free(p->bpf);
    p->bpf = prog;
    p->bpf_len = (size_t)n + list_len;
    seccomp_release(ctx);
    return 0;
fail:
    snprintf(why, sizeof why, "building the seccomp filter (%s): %s", bad, strerror(-r));
    free(prog);
    free(list);
    free(p->seccomp_why);
    p->seccomp_why = strdup(why);
    if (ctx)
        seccomp_release(ctx);
    return p->host->set_error(p->h, SBX_E_INTERNAL, "%s", why);
}

/* ---- a cache of the built filter ---- */

static uint64_t fnv_names(uint64_t h, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = lcl_fnv(h, names[i], strlen(names[i]) + 1);
    return h;
}

/* How the allowlist is laid out (bump when that changes): 2 = libseccomp's
 * binary tree. */
#define FILTER_LAYOUT 2

/* Everything the built program depends on: the three name lists, the
 * assembled prelude, the architecture and libseccomp's version (which
 * resolves the names to numbers). */
static uint64_t filter_key(void)
{
    struct sock_filter pre[sizeof prelude / sizeof *prelude];
    const struct scmp_version *v = seccomp_version();
    uint32_t fixed[5] = {FILTER_LAYOUT, NATIVE_ARCH, v ? v->major : 0, v ? v->minor : 0,
                        v ? v->micro : 0};
    uint64_t h = LCL_FNV_BASIS;
    int n = assemble(pre);

    h = fnv_names(h, allow, sizeof allow / sizeof *allow);
    h = fnv_names(h, deny_eperm, sizeof deny_eperm / sizeof *deny_eperm);
    h = fnv_names(h, deny_kill, sizeof deny_kill / sizeof *deny_kill);
    if (n > 0)
        h = lcl_fnv(h, pre, (size_t)n * sizeof *pre);
    return lcl_fnv(h, fixed, sizeof fixed);
}

/* The file is the program followed by a 64-bit checksum of it, so a
 * damaged file is rebuilt rather than loaded. */
static int cache_load(struct lcl_prov *p, const char *path, uint64_t key)
{
    struct stat st;
    struct sock_filter *prog;
    uint64_t sum;
    size_t size;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size <= (off_t)sizeof sum ||
        st.st_size > (off_t)(BPF_MAXINSNS * sizeof *prog + sizeof sum) ||
        (st.st_size - (off_t)sizeof sum) % (off_t)sizeof *prog) {
        close(fd);
        return -1;
    }
    size = (size_t)st.st_size - sizeof sum;
    if (!(prog = malloc(size))) {
        close(fd);
        return -1;
    }
    if (pread(fd, prog, size, 0) != (ssize_t)size ||
        pread(fd, &sum, sizeof sum, (off_t)size) != (ssize_t)sizeof sum ||
        sum != lcl_fnv(key, prog, size)) {
        free(prog);
        close(fd);
        return -1;
    }
    close(fd);
    p->bpf = prog;
    p->bpf_len = size / sizeof *prog;
    return 0;
}

/* Write it atomically; a failure only costs the next process a build. */
static void cache_store(struct lcl_prov *p, const char *path, uint64_t key)
{
    char tmp[LCL_PATH_MAX + 32];
    size_t size = p->bpf_len * sizeof(struct sock_filter);
    uint64_t sum = lcl_fnv(key, p->bpf, size);
    int fd;

    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    bool ok = write(fd, p->bpf, size) == (ssize_t)size &&
              write(fd, &sum, sizeof sum) == (ssize_t)sizeof sum;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        unlink(tmp);
        p->host->log(p->h, SBX_LOG_DEBUG, "could not cache the seccomp filter at %s", path);
    }
}

/* The filter costs about 2 ms to build (libseccomp's rule set and export):
 * build it at the first use, and keep it in the state directory so the
 * next process (a CLI run) loads it instead. */
int lcl_seccomp_ensure(struct lcl_prov *p)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    char path[LCL_PATH_MAX];
    int ret = 0;

    pthread_mutex_lock(&lock);
    if (!p->bpf) {
        uint64_t key = filter_key();
        snprintf(path, sizeof path, "%s/seccomp-%016" PRIx64 ".bpf", p->state_dir, key);
        if (cache_load(p, path, key) != 0 && (ret = lcl_seccomp_build(p)) == 0)
            cache_store(p, path, key);
    }
    pthread_mutex_unlock(&lock);
    return ret;
}
