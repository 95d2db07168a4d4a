/* plugins/local/local-seccomp.c - the payload's system-call filter
 *
 * Built once at init with libseccomp and kept as raw BPF, so the child
 * (which must not allocate) loads it with one seccomp(2) call.  For now a
 * deny list over a default of "allow"; native architecture only.
 * EPERM/ENOSYS for what programs probe, KILL_PROCESS (SIGSYS, reported as
 * SBX_RUN_SECCOMP) for what only exploits do.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/filter.h>
#include <seccomp.h>

#include "local-int.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const char *const deny_eperm[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "bpf", "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie",
    "mount", "umount", "umount2", "pivot_root", "chroot",
    "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "unshare", "setns",
    "clock_settime", "clock_adjtime", "settimeofday", "stime",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "open_by_handle_at", "name_to_handle_at", "syslog", "vhangup",
    "iopl", "ioperm", "personality",
};

static const char *const deny_kill[] = {
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot",
};

static const unsigned long ns_flags[] = {
    CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
    CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
                unsigned n, const struct scmp_arg_cmp *cmp, const char **bad)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture */
    int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
    if (r < 0)
        *bad = name;
    return r;
}

static int add_rules(scmp_filter_ctx ctx, const char **bad)
{
    int r = 0;
    for (size_t i = 0; !r && i < sizeof deny_eperm / sizeof *deny_eperm; i++)
        r = rule(ctx, SCMP_ACT_ERRNO(EPERM), deny_eperm[i], 0, NULL, bad);
    for (size_t i = 0; !r && i < sizeof deny_kill / sizeof *deny_kill; i++)
        r = rule(ctx, SCMP_ACT_KILL_PROCESS, deny_kill[i], 0, NULL, bad);
    /* clone3 passes flags in memory the filter cannot read: ENOSYS makes
     * libc fall back to clone, whose flags we can check. */
    if (!r)
        r = rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, bad);
    for (size_t i = 0; !r && i < sizeof ns_flags / sizeof *ns_flags; i++) {
        struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        r = rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &c, bad);
    }
    /* 32-bit masked compare: the kernel ignores the upper half of cmd. */
    const unsigned long ioctls[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; !r && i < 2; i++) {
        struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]);
        r = rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &c, bad);
    }
    const int families[] = {AF_VSOCK, AF_ALG};
    for (size_t i = 0; !r && i < 2; i++) {
        struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]);
        r = rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &c, bad);
    }
    return r;
}

int lcl_seccomp_build(struct lcl_prov *p)
{
    const char *bad = "seccomp_init";
    char why[256];
    int fd = -1, r;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        r = -ENOMEM;
        goto fail;
    }
    bad = "bad-arch action";
    r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (r == 0)
        r = add_rules(ctx, &bad);
    if (r < 0)
        goto fail;
    bad = "exporting BPF";
    fd = memfd_create("lcl-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        r = -errno;
        goto fail;
    }
    r = seccomp_export_bpf(ctx, fd);
    if (r < 0)
        goto fail;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter)) {
        r = -EINVAL;
        goto fail;
    }
    p->bpf = malloc((size_t)st.st_size);
    if (!p->bpf || pread(fd, p->bpf, (size_t)st.st_size, 0) != st.st_size) {
        free(p->bpf);
        p->bpf = NULL;
        r = -EIO;
        goto fail;
    }
    p->bpf_len = (size_t)st.st_size / sizeof(struct sock_filter);
    close(fd);
    seccomp_release(ctx);
    return 0;
fail:
    snprintf(why, sizeof why, "building the seccomp filter (%s): %s", bad, strerror(-r));
    free(p->seccomp_why);
    p->seccomp_why = strdup(why);
    if (fd >= 0)
        close(fd);
    if (ctx)
        seccomp_release(ctx);
    return p->host->set_error(p->h, SBX_E_INTERNAL, "%s", why);
}
