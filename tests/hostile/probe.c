/* tests/hostile/probe.c - try each filtered system call harmlessly
 *
 * ONLY EVER RUN INSIDE THE SANDBOX UNDER TEST (tests/hostile/syscalls.sh
 * copies it in with --file).
 *
 * `probe all` makes every call of its table once and prints one line per
 * call, "NAME ERRNO" (e.g. "ptrace EPERM", "OK" on success).  The
 * arguments are chosen, as in bubblewrap's try-syscall, so that a call the
 * filter lets through fails on its own (bad descriptor, NULL pointer,
 * invalid flags: EBADF, EFAULT, EINVAL) instead of doing anything; the
 * filter's answer (EPERM, ENOSYS, EAFNOSUPPORT) is then told apart.
 * `probe kill NAME` makes one call the filter must kill the process for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/seccomp.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

#define BAD_TYPE 0x7ff0 /* socket type flags the kernel rejects (EINVAL) */
#define HI 0x100000000ULL /* junk in an argument's upper half */

static const char *ename(int e)
{
    static const struct { int e; const char *name; } names[] = {
        {EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ESRCH, "ESRCH"}, {EIO, "EIO"},
        {EBADF, "EBADF"}, {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"}, {EACCES, "EACCES"},
        {EFAULT, "EFAULT"}, {EBUSY, "EBUSY"}, {EEXIST, "EEXIST"}, {ENOTDIR, "ENOTDIR"},
        {EINVAL, "EINVAL"}, {ENOTTY, "ENOTTY"}, {ENOSPC, "ENOSPC"}, {ENOSYS, "ENOSYS"},
        {EOPNOTSUPP, "EOPNOTSUPP"}, {EAFNOSUPPORT, "EAFNOSUPPORT"},
        {EPROTONOSUPPORT, "EPROTONOSUPPORT"}, {ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"},
    };
    static char buf[16];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (names[i].e == e)
            return names[i].name;
    snprintf(buf, sizeof buf, "E%d", e);
    return buf;
}

static void show(const char *name, long r)
{
    printf("%s %s\n", name, r >= 0 ? "OK" : ename(errno));
}

/* clone(flags | CLONE_THREAD) without CLONE_SIGHAND is EINVAL if allowed. */
static void try_clone(const char *name, unsigned long long flags)
{
    long r = syscall(SYS_clone, flags | CLONE_THREAD, NULL, NULL, NULL, 0);
    if (r == 0)
        _exit(0); /* never: the kernel refuses the combination */
    show(name, r);
}

static void probe_all(void)
{
    pid_t me = getpid();
    /* other processes */
    show("ptrace", syscall(SYS_ptrace, 2 /* PEEKDATA */, -1, NULL, NULL));
    show("process_vm_readv", syscall(SYS_process_vm_readv, me, NULL, 1, NULL, 1, 0));
    show("process_vm_writev", syscall(SYS_process_vm_writev, me, NULL, 1, NULL, 1, 0));
    show("kcmp", syscall(SYS_kcmp, me, me, 0 /* KCMP_FILE */, -1, -1));
    show("pidfd_getfd", syscall(SYS_pidfd_getfd, -1, -1, 0));
    /* kernel surface */
    show("bpf", syscall(SYS_bpf, -1, NULL, 0));
    show("keyctl", syscall(SYS_keyctl, -1, 0, 0, 0, 0));
    show("add_key", syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
    show("request_key", syscall(SYS_request_key, NULL, NULL, NULL, 0));
    show("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
    show("userfaultfd", syscall(SYS_userfaultfd, ~0));
    show("fanotify_init", syscall(SYS_fanotify_init, ~0u, 0));
    show("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));
    show("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
    show("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL, 0));
    /* mounts */
    show("mount", syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
    show("umount2", syscall(SYS_umount2, NULL, 0));
    show("pivot_root", syscall(SYS_pivot_root, NULL, NULL));
    show("chroot", syscall(SYS_chroot, NULL));
    show("move_mount", syscall(SYS_move_mount, -1, NULL, -1, NULL, ~0u));
    show("open_tree", syscall(SYS_open_tree, -1, NULL, ~0u));
    show("fsopen", syscall(SYS_fsopen, NULL, ~0u));
    show("fsconfig", syscall(SYS_fsconfig, -1, ~0u, NULL, NULL, 0));
    show("fsmount", syscall(SYS_fsmount, -1, ~0u, 0));
    show("fspick", syscall(SYS_fspick, -1, NULL, ~0u));
    show("mount_setattr", syscall(__NR_mount_setattr, -1, NULL, ~0u, NULL, 0));
    /* namespaces */
    show("unshare", syscall(SYS_unshare, ~0L));
    show("setns", syscall(SYS_setns, -1, 0));
    try_clone("clone_newuser", CLONE_NEWUSER);
    try_clone("clone_newns", CLONE_NEWNS);
    try_clone("clone_newpid", CLONE_NEWPID);
    try_clone("clone_newnet", CLONE_NEWNET);
    try_clone("clone_newipc", CLONE_NEWIPC);
    try_clone("clone_newuts", CLONE_NEWUTS);
    try_clone("clone_newcgroup", CLONE_NEWCGROUP);
    try_clone("clone_newuser_hi", HI | CLONE_NEWUSER);
    try_clone("clone_plain", 0);
    show("clone3", syscall(__NR_clone3, NULL, 0));
    /* time */
    show("clock_settime", syscall(SYS_clock_settime, CLOCK_REALTIME, NULL));
    show("settimeofday", syscall(SYS_settimeofday, (void *)8, (void *)8));
    show("adjtimex", syscall(SYS_adjtimex, NULL));
    show("clock_adjtime", syscall(SYS_clock_adjtime, CLOCK_REALTIME, NULL));
    /* terminals */
    show("ioctl_tiocsti", syscall(SYS_ioctl, -1, TIOCSTI, NULL));
    show("ioctl_tiocsti_hi", syscall(SYS_ioctl, -1, HI | TIOCSTI, NULL));
    show("ioctl_tioclinux", syscall(SYS_ioctl, -1, TIOCLINUX, NULL));
    show("ioctl_fionread", syscall(SYS_ioctl, -1, FIONREAD, NULL));
    /* sockets */
    show("socket_vsock", syscall(SYS_socket, 40, BAD_TYPE, 0));
    show("socket_vsock_hi", syscall(SYS_socket, HI | 40, BAD_TYPE, 0));
    show("socket_alg", syscall(SYS_socket, 38, BAD_TYPE, 0));
    show("socket_packet", syscall(SYS_socket, AF_PACKET, BAD_TYPE, 0));
    show("socket_netlink_audit", syscall(SYS_socket, AF_NETLINK, BAD_TYPE, NETLINK_AUDIT));
    show("socket_netlink_route", syscall(SYS_socket, AF_NETLINK, BAD_TYPE, NETLINK_ROUTE));
    show("socket_unix", syscall(SYS_socket, AF_UNIX, BAD_TYPE, 0));
    show("socket_inet", syscall(SYS_socket, AF_INET, BAD_TYPE, 0));
    show("socket_inet6", syscall(SYS_socket, AF_INET6, BAD_TYPE, 0));
    /* personality: the query is allowed, changes are not */
    show("personality_query", syscall(SYS_personality, 0xffffffffUL));
    show("personality_no_randomize", syscall(SYS_personality, ADDR_NO_RANDOMIZE));
    show("personality_read_implies_exec", syscall(SYS_personality, READ_IMPLIES_EXEC));
    /* seccomp notifier */
    show("seccomp_listener", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                     SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL));
    show("seccomp_filter", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL));
    /* host-global administration */
    show("acct", syscall(SYS_acct, NULL));
    show("swapon", syscall(SYS_swapon, NULL, 0));
    show("swapoff", syscall(SYS_swapoff, NULL));
    show("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
    show("syslog", syscall(SYS_syslog, -1, NULL, 0));
    show("quotactl", syscall(SYS_quotactl, 0, NULL, 0, NULL));
    show("lookup_dcookie", syscall(SYS_lookup_dcookie, 0, NULL, 0));
    show("name_to_handle_at", syscall(SYS_name_to_handle_at, -1, NULL, NULL, NULL, ~0));
    show("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
    show("iopl", syscall(SYS_iopl, 99));
    show("ioperm", syscall(SYS_ioperm, 0, 0, 0));
    show("nfsservctl", syscall(SYS_nfsservctl, 0, NULL, NULL));
    show("vhangup", syscall(SYS_vhangup));
    show("sethostname", syscall(SYS_sethostname, NULL, -1));
    /* not in the allowlist: the default answer */
    show("modify_ldt", syscall(SYS_modify_ldt, 0, NULL, 0));
    show("mbind", syscall(SYS_mbind, NULL, 0, 0, NULL, 0, 0));
    /* allowed */
    show("getpid", syscall(SYS_getpid));
}

/* Kill-listed calls, with arguments that would fail if allowed. */
static int probe_kill(const char *name)
{
    long r;
    if (!strcmp(name, "kexec_load"))
        r = syscall(SYS_kexec_load, 0, 0, NULL, ~0UL);
    else if (!strcmp(name, "kexec_file_load"))
        r = syscall(SYS_kexec_file_load, -1, -1, 0, NULL, ~0UL);
    else if (!strcmp(name, "init_module"))
        r = syscall(SYS_init_module, NULL, 0, NULL);
    else if (!strcmp(name, "finit_module"))
        r = syscall(SYS_finit_module, -1, NULL, ~0);
    else if (!strcmp(name, "delete_module"))
        r = syscall(SYS_delete_module, NULL, 0);
    else if (!strcmp(name, "create_module"))
        r = syscall(SYS_create_module, NULL, 0);
#if defined(__x86_64__)
    else if (!strcmp(name, "x32")) /* getpid through the x32 ABI */
        r = syscall(0x40000000L | SYS_getpid);
    else if (!strcmp(name, "i386")) { /* getpid (20) through int 0x80 */
        long nr = 20;
        __asm__ volatile("int $0x80" : "+a"(nr) : : "memory");
        r = nr;
        errno = r < 0 ? (int)-r : 0;
    }
#endif
    else {
        fprintf(stderr, "probe: unknown kill probe '%s'\n", name);
        return 2;
    }
    show(name, r);
    return 1; /* still alive: the filter did not kill */
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && !strcmp(argv[1], "all")) {
        probe_all();
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "kill"))
        return probe_kill(argv[2]);
    fprintf(stderr, "usage: probe all | probe kill NAME\n");
    return 2;
}
