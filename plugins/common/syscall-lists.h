/* plugins/common/syscall-lists.h - the system calls a sandbox may make
 *
 * One list for every provider that filters system calls, so their
 * policies cannot drift: the local provider compiles it into its seccomp
 * filter with libseccomp (plugins/local/jail/seccomp.c), the docker
 * provider into the seccomp profile of the containers it creates
 * (plugins/docker/docker-seccomp.c).  The argument checks that neither a
 * name list nor libseccomp can say are in syscall-prelude.h.
 *
 * Each list is an initializer of string literals:
 *   static const char *const allow[] = {SYSPOL_ALLOW};
 * Names a libseccomp or architecture does not know are skipped by both
 * providers: they answer ENOSYS like every call not listed.
 */
#ifndef SYSCALL_LISTS_H
#define SYSCALL_LISTS_H

/* Allowed.  Docker's default allowlist for x86_64 without: ptrace and
 * process_vm_* (CAP_SYS_PTRACE-gated there), adjtimex, clock_adjtime and
 * name_to_handle_at (denied below), modify_ldt.  ioctl, personality,
 * clone, socket and seccomp are listed because the prelude
 * (syscall-prelude.h) refuses their dangerous arguments first. */
#define SYSPOL_ALLOW \
    "accept", "accept4", "access", "alarm", "arch_prctl", "bind", "brk", "cachestat", \
    "capget", "capset", "chdir", "chmod", "chown", "clock_getres", "clock_gettime", \
    "clock_nanosleep", "clone", "close", "close_range", "connect", "copy_file_range", \
    "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", \
    "epoll_ctl_old", "epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old", \
    "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat", \
    "faccessat2", "fadvise64", "fallocate", "fanotify_mark", "fchdir", "fchmod", \
    "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr", \
    "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs", \
    "fsync", "ftruncate", "futex", "futex_requeue", "futex_wait", "futex_waitv", \
    "futex_wake", "futimesat", "getcpu", "getcwd", "getdents", "getdents64", "getegid", \
    "geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp", \
    "getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid", \
    "getrlimit", "get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt", \
    "get_thread_area", "gettid", "gettimeofday", "getuid", "getxattr", "getxattrat", \
    "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch", \
    "io_cancel", "ioctl", "io_destroy", "io_getevents", "io_pgetevents", "ioprio_get", \
    "ioprio_set", "io_setup", "io_submit", "kill", "landlock_add_rule", \
    "landlock_create_ruleset", "landlock_restrict_self", "lchown", "lgetxattr", "link", \
    "linkat", "listen", "listmount", "listxattr", "listxattrat", "llistxattr", \
    "lremovexattr", "lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack", \
    "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod", \
    "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mprotect", "mq_getsetattr", \
    "mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap", \
    "mseal", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall", \
    "munmap", "nanosleep", "newfstatat", "open", "openat", "openat2", "pause", \
    "personality", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", \
    "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64", "preadv", \
    "preadv2", "prlimit64", "process_mrelease", "pselect6", "pwrite64", "pwritev", \
    "pwritev2", "read", "readahead", "readlink", "readlinkat", "readv", "recvfrom", \
    "recvmmsg", "recvmsg", "remap_file_pages", "removexattr", "removexattrat", "rename", \
    "renameat", "renameat2", "restart_syscall", "rmdir", "rseq", "rt_sigaction", \
    "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", \
    "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_getaffinity", \
    "sched_getattr", "sched_getparam", "sched_get_priority_max", \
    "sched_get_priority_min", "sched_getscheduler", "sched_rr_get_interval", \
    "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler", \
    "sched_yield", "seccomp", "select", "semctl", "semget", "semop", "semtimedop", \
    "sendfile", "sendmmsg", "sendmsg", "sendto", "setfsgid", "setfsuid", "setgid", \
    "setgroups", "setitimer", "setpgid", "setpriority", "setregid", "setresgid", \
    "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid", "setsockopt", \
    "set_thread_area", "set_tid_address", "setuid", "setxattr", "setxattrat", "shmat", \
    "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", \
    "socket", "socketpair", "splice", "stat", "statfs", "statmount", "statx", "symlink", \
    "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time", \
    "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime", \
    "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime", "times", \
    "tkill", "truncate", "umask", "uname", "unlink", "unlinkat", "uretprobe", "utime", \
    "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid", "write", "writev",

/* Refused with EPERM: programs probe these and must fail gracefully. */
#define SYSPOL_DENY_EPERM \
    /* other processes */ \
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", \
    "process_madvise", \
    /* large, often-exploited kernel surface */ \
    "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd", \
    "fanotify_init", \
    /* mounts, old and new API, and namespaces */ \
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", \
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", \
    /* host-global administration */ \
    "clock_settime", "settimeofday", "stime", "adjtimex", "clock_adjtime", "acct", \
    "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd", \
    "lookup_dcookie", "name_to_handle_at", "open_by_handle_at", "iopl", "ioperm", \
    "vm86", "vm86old", "nfsservctl", "vhangup", "sethostname", "setdomainname",

/* Killed (SIGSYS): only exploits load kernel code. */
#define SYSPOL_DENY_KILL \
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", \
    "create_module",

/* Namespace flags clone(2) can take (CLONE_NEWTIME overlaps the exit
 * signal there and only works with clone3/unshare): Docker's mask. */
#define SYSPOL_NS_FLAGS                                                             \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |  \
     CLONE_NEWPID | CLONE_NEWNET)

#endif /* SYSCALL_LISTS_H */
