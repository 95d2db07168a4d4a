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
 * prelude (plugins/common/syscall-prelude.h, loaded by init/init.c).
 * The profile keeps the one argument rule that is safe as "allow when":
 * clone without namespace flags, as Docker's own profile does.
 *
 * Podman 4.3's compatible API reads "seccomp=" as the path of a profile
 * file, not the profile itself (its CLI's meaning), and reads it when the
 * container is created.  So for Podman the profile is written once per
 * process to a private directory readable by all (a rootless service runs
 * as another user than a root caller, whose state directory it cannot
 * read), that path is passed, and the directory goes with the provider
 * (dk_seccomp_file).
 *
 * The profile is pure (no I/O), so it is unit-tested without a daemon
 * (tests/unit/test-docker.c); the daemon side is tests/hostile/
 * syscalls-docker.sh.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static char *profile_text(void)
{
    json_t *prof = dk_seccomp_profile();
    char *js = prof ? json_dumps(prof, JSON_COMPACT) : NULL;
    json_decref(prof);
    return js;
}

/* "seccomp=" and @what (malloc'ed), or NULL when out of memory. */
static char *opt_of(const char *what)
{
    char *opt = malloc(strlen("seccomp=") + strlen(what) + 1);
    if (opt) {
        strcpy(opt, "seccomp=");
        strcat(opt, what);
    }
    return opt;
}

char *dk_seccomp_opt(void)
{
    char *js = profile_text();
    char *opt = js ? opt_of(js) : NULL;
    free(js);
    return opt;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

char *dk_seccomp_file(char *dir_out, size_t dir_cap, char *err, size_t errlen)
{
    char *js = profile_text();
    if (!js) {
        snprintf(err, errlen, "out of memory building the containers' seccomp profile");
        return NULL;
    }
    char path[PATH_MAX];
    const char *tmp = secure_getenv("TMPDIR");
    snprintf(dir_out, dir_cap, "%s/polysandbox-seccomp-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    int fd = -1, bad = 0, e = 0;
    /* A directory of our own: nobody else can place or swap the file;
     * 0755 so that a rootless service of another user reads it. */
    bool made = mkdtemp(dir_out) != NULL;
    if (!made || chmod(dir_out, 0755) < 0) {
        e = errno;
        snprintf(err, errlen, "a directory for the containers' seccomp profile (%s): %s",
                 dir_out, strerror(e));
        if (made)
            rmdir(dir_out);
        dir_out[0] = '\0';
        free(js);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/seccomp.json", dir_out);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    bad = fd < 0 || fchmod(fd, 0644) < 0 || write_all(fd, js, strlen(js)) < 0;
    e = errno;
    if (fd >= 0 && close(fd) < 0 && !bad) {
        bad = 1;
        e = errno;
    }
    free(js);
    if (bad) {
        snprintf(err, errlen, "writing the containers' seccomp profile %s: %s", path,
                 strerror(e));
        dk_seccomp_file_remove(dir_out);
        return NULL;
    }
    return opt_of(path);
}

void dk_seccomp_file_remove(char *dir)
{
    char path[PATH_MAX];
    if (!dir[0])
        return;
    snprintf(path, sizeof path, "%s/seccomp.json", dir);
    unlink(path);
    rmdir(dir);
    dir[0] = '\0';
}
