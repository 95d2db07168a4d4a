/* plugins/local/jail/seccomp.c - the payload's system-call filter
 *
 * Built once at init and kept as raw BPF, so the child (which must not
 * allocate) loads it with one seccomp(2) call.  The program is two parts:
 *
 *  1. the hand-assembled prelude of argument checks (ioctl, personality,
 *     clone, socket, seccomp: plugins/common/syscall-prelude.h, which says
 *     why libseccomp cannot); it either returns EPERM/EAFNOSUPPORT or
 *     falls through to part 2.
 *  2. libseccomp's default-deny allowlist for the native architecture
 *     only (i386 and x32 calls are killed: their numbers and argument
 *     layouts would dodge the checks), modelled on Docker's default
 *     profile minus its CAP_SYS_ADMIN-gated set.
 *
 * The lists are plugins/common/syscall-lists.h, which the docker
 * provider's container profile is made of too.
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "../local-int.h"
#include "syscall-prelude.h"

#define NATIVE_ARCH SYSPOL_NATIVE_ARCH

/* The lists and the argument checks, shared with the docker provider's
 * profile and helper (plugins/common). */
static const char *const allow[] = {SYSPOL_ALLOW};
static const char *const deny_eperm[] = {SYSPOL_DENY_EPERM};
static const char *const deny_kill[] = {SYSPOL_DENY_KILL};

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
        prog = malloc((SYSPOL_PRELUDE_MAX + list_len) * sizeof *prog);
        n = prog ? syspol_assemble(prog) : 0;
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
    struct sock_filter pre[SYSPOL_PRELUDE_MAX];
    const struct scmp_version *v = seccomp_version();
    uint32_t fixed[5] = {FILTER_LAYOUT, NATIVE_ARCH, v ? v->major : 0, v ? v->minor : 0,
                        v ? v->micro : 0};
    uint64_t h = LCL_FNV_BASIS;
    int n = syspol_assemble(pre);

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
