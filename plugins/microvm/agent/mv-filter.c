/* plugins/microvm/agent/mv-filter.c - the guest agent's system-call filter
 *
 * A command in the VM runs as an unprivileged uid, so loading a module
 * fails with EPERM anyway; the filter makes such an attempt end as it
 * does on the local and docker providers, killed by SIGSYS (status
 * seccomp), and keeps a root escape inside the guest from loading
 * kernel code.  The list is SYSPOL_DENY_KILL of
 * plugins/common/syscall-lists.h, by number: the agent is a static
 * program without libseccomp.  Another architecture's calls (i386's
 * int 0x80) and x32's are killed whole: the guest has no such programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "mv-filter.h"

#define X32_BIT 0x40000000u

static const unsigned deny[] = {
    SYS_kexec_load,    SYS_kexec_file_load, SYS_init_module, SYS_finit_module, SYS_delete_module,
#ifdef SYS_create_module
    SYS_create_module,
#endif
};
#define N_DENY (sizeof deny / sizeof deny[0])

int mv_filter_install(void)
{
    /* arch, x32, one jump per call, allow, kill */
    struct sock_filter f[5 + N_DENY + 2];
    unsigned n = 0;

    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    /* x32: jump to the kill at the end */
    f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT,
                                        (unsigned char)(N_DENY + 1), 0);
    n++;
    for (unsigned i = 0; i < N_DENY; i++) {
        f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, deny[i],
                                            (unsigned char)(N_DENY - i), 0);
        n++;
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);

    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
}
