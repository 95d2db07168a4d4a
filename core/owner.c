/* core/owner.c - who may own what the core trusts
 *
 * What the core runs (provider modules: their constructors run with our
 * privileges, root's as often as not), reads as a credential (the host
 * key pair, `file:` secrets) or keeps its sandboxes in (the state
 * directory) must be out of other users' reach: owned by this user or
 * root, not writable by group or others, below directories that are the
 * same.  A world-writable directory on the way is allowed when sticky
 * (/tmp): its other users cannot rename or remove what is ours.  The
 * state directory itself must be ours and private (0700), as tmux and
 * ssh-agent check theirs, because in /tmp anybody can make it first.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "owner.h"

void core_owner_name(uid_t uid, char *buf, size_t size)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];

    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, size, "uid %u (%s)", (unsigned)uid, res->pw_name);
    else
        snprintf(buf, size, "uid %u", (unsigned)uid);
}

char *core_canonical(const char *path)
{
    /* The kernel's name of an O_PATH descriptor: two calls, where
     * realpath(3) reads every component's link in turn. */
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd >= 0) {
        char link[40], buf[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, buf, sizeof buf - 1);
        close(fd);
        if (n > 0 && buf[0] == '/' && (size_t)n < sizeof buf - 1) {
            buf[n] = '\0';
            if (!strstr(buf, " (deleted)"))
                return strdup(buf);
        }
    }
    return realpath(path, NULL);
}

static bool owner_ok(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

int core_owner_check(const struct stat *st, const char *path, const char *what, int code)
{
    char who[160];

    if (!owner_ok(st->st_uid)) {
        core_owner_name(st->st_uid, who, sizeof who);
        return core_error_set(code, NULL,
                              "%s %s is owned by %s, neither root nor this user: refused "
                              "(another user could change it; make it root's or yours)",
                              what, path, who);
    }
    if (st->st_mode & 022)
        return core_error_set(code, NULL,
                              "%s %s is writable by %s: refused (chmod go-w %s)", what, path,
                              (st->st_mode & 002) ? "everyone" : "its group", path);
    return SBX_OK;
}

int core_owner_check_parents(const char *path, const char *what, int code)
{
    char *real, *slash;
    struct stat st;
    char who[160];
    int rc = SBX_OK;

    /* The directories that hold @path, links resolved: each could rename
     * what it holds. */
    char *copy = strdup(path);
    if (!copy)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    slash = strrchr(copy, '/');
    if (slash == copy)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    real = core_canonical(slash ? copy : ".");
    free(copy);
    if (!real)
        return core_error_set(code, NULL, "%s %s: its directory cannot be resolved: %s", what,
                              path, strerror(errno));
    for (char *end = real;;) {
        char keep = *end;
        *end = '\0';
        const char *dir = end == real ? "/" : real;
        if (lstat(dir, &st) != 0) {
            rc = core_error_set(code, NULL, "%s %s: %s: %s", what, path, dir, strerror(errno));
            break;
        }
        if (!owner_ok(st.st_uid)) {
            core_owner_name(st.st_uid, who, sizeof who);
            rc = core_error_set(code, NULL,
                                "%s %s is in %s, owned by %s, who could replace it: refused",
                                what, path, dir, who);
            break;
        }
        if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
            rc = core_error_set(code, NULL,
                                "%s %s is in %s, which others may write (mode %04o, not "
                                "sticky) and so replace it: refused", what, path, dir,
                                (unsigned)(st.st_mode & 07777));
            break;
        }
        *end = keep;
        if (!keep)
            break;
        end = strchr(end + 1, '/');
        if (!end)
            end = real + strlen(real);
    }
    free(real);
    return rc;
}

/* mkdir -p of @path's parents, each 0700 (what we make is ours only). */
static int make_parents(const char *path)
{
    char buf[PATH_MAX];
    size_t len = strlen(path);

    if (len >= sizeof buf)
        return ENAMETOOLONG;
    memcpy(buf, path, len + 1);
    for (char *s = buf + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return errno;
        *s = '/';
    }
    return 0;
}

int core_private_dir(const char *path, const char *what)
{
    struct stat st;
    char who[160];

    if (mkdir(path, 0700) != 0 && errno == ENOENT) {
        int e = make_parents(path);
        if (e)
            return core_error_set(SBX_E_IO, NULL, "cannot make the %s %s: %s", what, path,
                                  strerror(e));
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return core_error_set(SBX_E_IO, NULL, "cannot make the %s %s: %s", what, path,
                                  strerror(errno));
    }
    if (lstat(path, &st) != 0)
        return core_error_set(SBX_E_IO, NULL, "cannot make the %s %s: %s", what, path,
                              strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return core_error_set(SBX_E_PERM, NULL, "%s %s is %s, not a directory: refused", what,
                              path, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
    if (st.st_uid != geteuid()) {
        core_owner_name(st.st_uid, who, sizeof who);
        return core_error_set(SBX_E_PERM, NULL,
                              "%s %s is owned by %s, not by this user (uid %u): refused "
                              "(another user may have made it to take over your sandboxes; "
                              "remove it, or choose another with POLYSANDBOX_STATE_DIR)",
                              what, path, who, (unsigned)geteuid());
    }
    if (st.st_mode & 022)
        return core_error_set(SBX_E_PERM, NULL,
                              "%s %s has mode %04o: others may have put files in it: refused "
                              "(check it, then chmod 700 %s)", what, path,
                              (unsigned)(st.st_mode & 07777), path);
    if (st.st_mode & 077) {
        /* Ours, and only readable by others (older releases made it
         * 0755): nobody else could have written in it. */
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = fd < 0 || fchmod(fd, 0700) != 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
        if (e)
            return core_error_set(SBX_E_IO, NULL, "chmod 700 %s: %s", path, strerror(e));
    }
    return core_owner_check_parents(path, what, SBX_E_PERM);
}
