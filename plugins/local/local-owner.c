/* plugins/local/local-owner.c - directories only we may touch
 *
 * Everything below the state directory (sandboxes' metadata and work
 * directories, the seccomp and /etc caches, the pointer to the run
 * directory) and the run directory in /dev/shm is trusted later without
 * a second look, so each is checked where it is made or found, as tmux
 * and ssh-agent check theirs: a directory (not a link), owned by us,
 * no access for group or others, in directories that are root's or ours
 * and that nobody else may write (unless sticky, as /tmp and /dev/shm
 * are: there nobody else can rename or remove what is ours).  Without
 * this, a user who made /tmp/polysandbox-<uid>/local first could swap a
 * sandbox's work directory for a link to the victim's home.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local-int.h"

/* The directory holding @path: root's or ours, and not writable by
 * others unless sticky.  Only that one: the core has checked every
 * directory from / down to its state directory, which holds ours (and
 * the daemon is started on a state directory its client checked). */
static int check_parent(struct lcl_prov *p, const char *path, const char *what)
{
    char dir[LCL_PATH_MAX];
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 1 && path[n - 1] != '/')
        n--;
    if (n == 0 || path[0] != '/' || n >= sizeof dir)
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s %s is not an absolute path", what,
                                  path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    struct stat st;
    if (stat(dir, &st) < 0)
        return p->host->set_error(p->h, lcl_err_code(errno), "%s %s: %s: %s", what, path, dir,
                                  strerror(errno));
    if (st.st_uid != 0 && st.st_uid != geteuid())
        return p->host->set_error(p->h, SBX_E_PERM, "%s %s is in %s, owned by uid %u, who "
                                  "could replace it: refused", what, path, dir,
                                  (unsigned)st.st_uid);
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
        return p->host->set_error(p->h, SBX_E_PERM, "%s %s is in %s, which others may write "
                                  "(mode %04o, not sticky) and so replace it: refused", what,
                                  path, dir, (unsigned)(st.st_mode & 07777));
    return 0;
}

int lcl_private_check(struct lcl_prov *p, int fd, const char *path, const char *what)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "%s %s: %s", what, path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return p->host->set_error(p->h, SBX_E_PERM, "%s %s is not a directory: refused", what,
                                  path);
    if (st.st_uid != geteuid())
        return p->host->set_error(p->h, SBX_E_PERM,
                                  "%s %s is owned by uid %u, not by this user (uid %u): refused "
                                  "(another user may have made it to take over your "
                                  "sandboxes; remove it, or choose another state directory "
                                  "with POLYSANDBOX_STATE_DIR)", what, path,
                                  (unsigned)st.st_uid, (unsigned)geteuid());
    if (st.st_mode & 022)
        return p->host->set_error(p->h, SBX_E_PERM,
                                  "%s %s has mode %04o: others may have put files in it: "
                                  "refused (check it, then chmod 700 %s)", what, path,
                                  (unsigned)(st.st_mode & 07777), path);
    /* Ours and only readable by others (older releases made parents
     * 0755): nobody else can have written in it. */
    if ((st.st_mode & 077) && fchmod(fd, 0700) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "chmod 700 %s: %s", path, strerror(errno));
    return 0;
}

int lcl_private_dir(struct lcl_prov *p, const char *path, const char *what)
{
    if (mkdir(path, 0700) < 0 && errno == ENOENT) {
        /* Parents too, 0700: what we make is ours only. */
        char buf[LCL_PATH_MAX];
        size_t len = strlen(path);
        if (len >= sizeof buf)
            return p->host->set_error(p->h, SBX_E_CONFIG, "%s %s: path too long", what, path);
        memcpy(buf, path, len + 1);
        for (char *s = buf + 1; (s = strchr(s, '/')); s++) {
            *s = '\0';
            if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return p->host->set_error(p->h, lcl_err_code(errno), "creating %s %s: %s",
                                          what, buf, strerror(errno));
            *s = '/';
        }
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
            return p->host->set_error(p->h, lcl_err_code(errno), "creating %s %s: %s", what,
                                      path, strerror(errno));
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return p->host->set_error(p->h, errno == ELOOP || errno == ENOTDIR ? SBX_E_PERM
                                                                            : lcl_err_code(errno),
                                  "%s %s: %s", what, path,
                                  errno == ELOOP ? "a symbolic link: refused"
                                  : errno == ENOTDIR ? "not a directory: refused"
                                                     : strerror(errno));
    int ret = lcl_private_check(p, fd, path, what);
    close(fd);
    return ret ? ret : check_parent(p, path, what);
}
