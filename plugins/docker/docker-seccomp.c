/* plugins/docker/docker-seccomp.c - the seccomp profile of the provider's
 * containers
 *
 * The daemon's default profile is not ours to rely on: Docker 20.10's
 * allows io_uring, and it changes with every release.  So each container
 * is created with HostConfig.SecurityOpt "seccomp=<this profile>", made
 * of the same lists as the local provider's filter
 * (plugins/common/syscall-lists.h): allowed, refused with EPERM, killed.
 * Every other call the host's libseccomp knows answers ENOSYS by a rule
 * of its own: Docker 20.10 ignores the profile's "defaultErrnoRet" (its
 * default is EPERM), and glibc falls back from clone3 to clone only on
 * ENOSYS.  Calls newer than any the profile names get ENOSYS from runc's
 * own stub; the default action stays EPERM for the rest.
 *
 * What a profile cannot say safely (libseccomp compares 64-bit values,
 * so "deny when the argument is X" is dodged by junk in the upper half)
 * the helper adds in each command's own filter: the local provider's
 * prelude (plugins/common/syscall-prelude.h, loaded by docker-init.c).
 * The profile keeps the one argument rule that is safe as "allow when":
 * clone without namespace flags, as Docker's own profile does.
 *
 * Pure (no I/O), so it is unit-tested without a daemon
 * (tests/unit/test-docker.c); the daemon side is tests/hostile/
 * syscalls-docker.sh.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <seccomp.h>

#include "docker-int.h"
#include "syscall-lists.h"

static const char *const allow[] = {SYSPOL_ALLOW};
static const char *const deny_eperm[] = {SYSPOL_DENY_EPERM};
static const char *const deny_kill[] = {SYSPOL_DENY_KILL};

#define N(a) (sizeof a / sizeof *a)
/* Above every system call number of x86_64 and aarch64. */
#define NR_MAX 1024

static bool listed(const char *name)
{
    const char *const *lists[] = {allow, deny_eperm, deny_kill};
    const size_t lens[] = {N(allow), N(deny_eperm), N(deny_kill)};
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < lens[l]; i++)
            if (!strcmp(lists[l][i], name))
                return true;
    return false;
}

/* A JSON array of @n names (clone left out: it has a rule of its own). */
static json_t *names(const char *const *list, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (strcmp(list[i], "clone") && json_array_append_new(a, json_string(list[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* Every name the host's libseccomp knows for the native architecture
 * that no list has. */
static json_t *unlisted(void)
{
    json_t *a = json_array();
    for (int nr = 0; a && nr < NR_MAX; nr++) {
        char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
        if (!name)
            continue;
        int bad = !listed(name) && json_array_append_new(a, json_string(name)) < 0;
        free(name);
        if (bad) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *dk_seccomp_profile(void)
{
#if defined(__x86_64__)
    const char *arch = "SCMP_ARCH_X86_64";
#elif defined(__aarch64__)
    const char *arch = "SCMP_ARCH_AARCH64";
#else
#error "the docker provider's seccomp profile knows x86_64 and aarch64 only"
#endif
    json_t *al = names(allow, N(allow)), *ep = names(deny_eperm, N(deny_eperm)),
           *kl = names(deny_kill, N(deny_kill)), *ns = unlisted();
    if (!al || !ep || !kl || !ns) {
        json_decref(al);
        json_decref(ep);
        json_decref(kl);
        json_decref(ns);
        return NULL;
    }
    /* Only other architectures' calls are killed by the default: the
     * profile lists one, so i386 and x32 calls never reach a rule. */
    return json_pack("{s:s, s:i, s:[s], s:[{s:o, s:s}, {s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]},"
                     " {s:o, s:s, s:i}, {s:o, s:s, s:i}, {s:o, s:s}]}",
                     "defaultAction", "SCMP_ACT_ERRNO", "defaultErrnoRet", ENOSYS,
                     "architectures", arch, "syscalls",
                     "names", al, "action", "SCMP_ACT_ALLOW",
                     "names", "clone", "action", "SCMP_ACT_ALLOW", "args", "index", 0,
                     "value", (json_int_t)SYSPOL_NS_FLAGS, "valueTwo", (json_int_t)0,
                     "op", "SCMP_CMP_MASKED_EQ",
                     "names", ep, "action", "SCMP_ACT_ERRNO", "errnoRet", EPERM,
                     "names", ns, "action", "SCMP_ACT_ERRNO", "errnoRet", ENOSYS,
                     "names", kl, "action", "SCMP_ACT_KILL_PROCESS");
}

char *dk_seccomp_opt(void)
{
    json_t *prof = dk_seccomp_profile();
    char *js = prof ? json_dumps(prof, JSON_COMPACT) : NULL;
    json_decref(prof);
    if (!js)
        return NULL;
    char *opt = malloc(strlen("seccomp=") + strlen(js) + 1);
    if (opt) {
        strcpy(opt, "seccomp=");
        strcat(opt, js);
    }
    free(js);
    return opt;
}
