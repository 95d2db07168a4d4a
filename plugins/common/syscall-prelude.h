/* plugins/common/syscall-prelude.h - the argument checks of the seccomp
 * filters, as raw BPF
 *
 * A short hand-assembled program for the checks that need "deny these
 * values, else go on" on the low 32 bits of an argument (ioctl,
 * personality, clone, socket, seccomp).  libseccomp cannot say that: an
 * unconditional rule swallows conditional ones of another action, it
 * refuses two comparisons of one argument in a rule, and its 64-bit
 * EQ/NE let a caller dodge a check with junk in the upper half the kernel
 * ignores (CVE-2019-10063); neither can a Docker seccomp profile, which
 * libseccomp compiles.  The prelude either returns EPERM/EAFNOSUPPORT or
 * falls through past its end (SYSPOL_CONT), where the includer goes on:
 * the local provider with libseccomp's allowlist (plugins/local/
 * jail/seccomp.c), the docker provider's helper with its own tail and
 * ALLOW, under the container's profile (plugins/docker/init/init.c).
 * A call of another architecture falls through unchecked: what follows
 * must refuse it.
 *
 * Header only, no libseccomp and no allocation: the docker helper is a
 * static program that loads it in a child after fork.
 */
#ifndef SYSCALL_PRELUDE_H
#define SYSCALL_PRELUDE_H

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>

#include "syscall-lists.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
/* The architecture the prelude's syscall numbers are for. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define SYSPOL_NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SYSPOL_NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp prelude knows x86_64 and aarch64 only"
#endif

/* The low 32 bits of argument i: what the kernel reads for int-sized
 * arguments, whatever the caller left in the upper half. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SYSPOL_ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]))
#else
#define SYSPOL_ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]) + 4)
#endif

/* Jump targets of the prelude: NEXT is the following instruction, CONT
 * the end of the prelude (where the includer goes on). */
enum {
    SYSPOL_NEXT, SYSPOL_CONT, SYSPOL_DENY, SYSPOL_NOAF, SYSPOL_L_IOCTL, SYSPOL_L_PERS,
    SYSPOL_L_CLONE, SYSPOL_L_SOCK, SYSPOL_L_NL, SYSPOL_L_SECC, SYSPOL_N_LABELS
};

struct syspol_op {
    uint16_t code;
    uint32_t k;
    uint8_t jt, jf; /* labels */
    uint8_t here;   /* nonzero: not an instruction, defines this label */
};

#define SYSPOL_LABEL(l) {0, 0, 0, 0, (l)}
#define SYSPOL_LD(off) {BPF_LD | BPF_W | BPF_ABS, (off), 0, 0, 0}
#define SYSPOL_IF_EQ(v, t, f) {BPF_JMP | BPF_JEQ | BPF_K, (v), (t), (f), 0}
#define SYSPOL_IF_SET(v, t, f) {BPF_JMP | BPF_JSET | BPF_K, (v), (t), (f), 0}
#define SYSPOL_RET(v) {BPF_RET | BPF_K, (v), 0, 0, 0}

static const struct syspol_op syspol_prelude[] = {
    /* Another architecture: what follows the prelude refuses it. */
    SYSPOL_LD(offsetof(struct seccomp_data, arch)),
    SYSPOL_IF_EQ(SYSPOL_NATIVE_ARCH, SYSPOL_NEXT, SYSPOL_CONT),
    SYSPOL_LD(offsetof(struct seccomp_data, nr)),
    SYSPOL_IF_EQ(__NR_ioctl, SYSPOL_L_IOCTL, SYSPOL_NEXT),
    SYSPOL_IF_EQ(__NR_personality, SYSPOL_L_PERS, SYSPOL_NEXT),
    SYSPOL_IF_EQ(__NR_clone, SYSPOL_L_CLONE, SYSPOL_NEXT),
    SYSPOL_IF_EQ(__NR_socket, SYSPOL_L_SOCK, SYSPOL_NEXT),
    SYSPOL_IF_EQ(__NR_seccomp, SYSPOL_L_SECC, SYSPOL_CONT),

    /* Keystrokes into a terminal outside (CVE-2017-5226, CVE-2023-28100). */
    SYSPOL_LABEL(SYSPOL_L_IOCTL),
    SYSPOL_LD(SYSPOL_ARG_LO(1)),
    SYSPOL_IF_EQ(TIOCSTI, SYSPOL_DENY, SYSPOL_NEXT),
    SYSPOL_IF_EQ(TIOCLINUX, SYSPOL_DENY, SYSPOL_CONT),

    /* Docker's harmless personalities (Linux, 32-bit, uname26, query);
     * not READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and the like. */
    SYSPOL_LABEL(SYSPOL_L_PERS),
    SYSPOL_LD(SYSPOL_ARG_LO(0)),
    SYSPOL_IF_EQ(0x0, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(0x8, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(0x20000, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(0x20008, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(0xffffffff, SYSPOL_CONT, SYSPOL_DENY),

    /* No new namespaces: they hand the payload fresh capabilities over
     * netfilter, mounts, ... (clone3 answers ENOSYS: its flags are in
     * memory, so libc falls back to this clone). */
    SYSPOL_LABEL(SYSPOL_L_CLONE),
    SYSPOL_LD(SYSPOL_ARG_LO(0)),
    SYSPOL_IF_SET(SYSPOL_NS_FLAGS, SYSPOL_DENY, SYSPOL_CONT),

    /* No notifier filter the payload could confuse a supervisor with. */
    SYSPOL_LABEL(SYSPOL_L_SECC),
    SYSPOL_LD(SYSPOL_ARG_LO(1)),
    SYSPOL_IF_SET(SECCOMP_FILTER_FLAG_NEW_LISTENER, SYSPOL_DENY, SYSPOL_CONT),

    /* Unix, IP and route netlink only: vsock is host-wide, AF_ALG a large
     * crypto surface, other netlink families reach audit, netfilter... */
    SYSPOL_LABEL(SYSPOL_L_SOCK),
    SYSPOL_LD(SYSPOL_ARG_LO(0)),
    SYSPOL_IF_EQ(AF_UNIX, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(AF_INET, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(AF_INET6, SYSPOL_CONT, SYSPOL_NEXT),
    SYSPOL_IF_EQ(AF_NETLINK, SYSPOL_L_NL, SYSPOL_NEXT),
    SYSPOL_IF_EQ(AF_VSOCK, SYSPOL_DENY, SYSPOL_NEXT),
    SYSPOL_IF_EQ(AF_ALG, SYSPOL_DENY, SYSPOL_NOAF),
    SYSPOL_LABEL(SYSPOL_L_NL),
    SYSPOL_LD(SYSPOL_ARG_LO(2)),
    SYSPOL_IF_EQ(NETLINK_ROUTE, SYSPOL_CONT, SYSPOL_DENY),

    SYSPOL_LABEL(SYSPOL_DENY),
    SYSPOL_RET(SECCOMP_RET_ERRNO | EPERM),
    SYSPOL_LABEL(SYSPOL_NOAF),
    SYSPOL_RET(SECCOMP_RET_ERRNO | EAFNOSUPPORT),
    SYSPOL_LABEL(SYSPOL_CONT),
};

/* Room for the assembled prelude (at least its instructions). */
#define SYSPOL_PRELUDE_MAX (sizeof syspol_prelude / sizeof *syspol_prelude)

/* Assembles the prelude into out[] (room for SYSPOL_PRELUDE_MAX); returns
 * its length, or -1 if a jump does not fit (a bug in the table above). */
static inline int syspol_assemble(struct sock_filter *out)
{
    const size_t n_ops = SYSPOL_PRELUDE_MAX;
    unsigned pos[SYSPOL_N_LABELS] = {0};
    unsigned n = 0;
    for (size_t i = 0; i < n_ops; i++) {
        if (syspol_prelude[i].here)
            pos[syspol_prelude[i].here] = n;
        else
            n++;
    }
    n = 0;
    for (size_t i = 0; i < n_ops; i++) {
        const struct syspol_op *o = &syspol_prelude[i];
        if (o->here)
            continue;
        unsigned jt = o->jt == SYSPOL_NEXT ? 0 : pos[o->jt] - (n + 1);
        unsigned jf = o->jf == SYSPOL_NEXT ? 0 : pos[o->jf] - (n + 1);
        if ((o->jt != SYSPOL_NEXT && pos[o->jt] <= n) ||
            (o->jf != SYSPOL_NEXT && pos[o->jf] <= n) || jt > 255 || jf > 255)
            return -1;
        out[n++] = (struct sock_filter)BPF_JUMP(o->code, o->k, (uint8_t)jt, (uint8_t)jf);
    }
    return (int)n;
}

#endif /* SYSCALL_PRELUDE_H */
