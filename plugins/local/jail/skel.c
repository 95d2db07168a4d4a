/* plugins/local/jail/skel.c - the root skeleton, made once and kept mounted
 *
 * Every sandbox root starts as the same skeleton: mount points and the
 * made-up /etc files (lcl_skeleton_build).  Making it per exec (a tmpfs
 * and ~70 creations in a helper of the sandbox init) was ~7% of a
 * one-shot run.  As root, it is made once in a tmpfs mounted in the
 * host's mount namespace at /dev/shm/polysandbox-<euid>-skel-<hash of
 * its content> (so two layouts never share one), read-only, nosuid,
 * nodev; each exec's init binds it (one mount) as its root.  The sandbox
 * still sees `/` of a tmpfs of its own in mountinfo, and never a host
 * path of ours.  It is a cache like the seccomp filter: it stays until
 * reboot (or `umount`); a new layout makes a new one.
 *
 * Trust: /dev/shm is world-writable (sticky), so the directory is ours
 * only if it is a directory we own with no group/other bits, and the
 * skeleton is used only if a read-only tmpfs is mounted on it (another
 * user cannot mount in the host's namespace).  The tmpfs is made
 * detached (fsopen/fsmount), filled through its descriptor, made
 * read-only and only then attached, so nobody ever sees it half made;
 * a lock on the directory keeps two processes from attaching two.
 * Anything else (not root, an old kernel, a squatted directory) and the
 * init makes the skeleton per exec as before.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../local-int.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef FSCONFIG_SET_STRING
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif

#define SHM "/dev/shm"

struct skel_mount_attr {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* FNV-1a over everything the skeleton holds, and its owner. */
static uint64_t content_hash(const struct lcl_prov *p)
{
    uint64_t h = LCL_FNV_BASIS;
    char owner[64];
    snprintf(owner, sizeof owner, "%lu:%lu", (unsigned long)p->host_uid,
             (unsigned long)p->host_gid);
    const char *parts[3];
    for (size_t i = 0; i <= p->n_skel; i++) {
        char kind[2] = {i < p->n_skel ? (char)('0' + p->skel_ents[i].kind) : 'o', 0};
        parts[0] = kind;
        parts[1] = i < p->n_skel ? p->skel_ents[i].path : owner;
        parts[2] = i < p->n_skel && p->skel_ents[i].data ? p->skel_ents[i].data : "";
        for (int k = 0; k < 3; k++) {
            h = lcl_fnv(h, parts[k], strlen(parts[k]));
            h = lcl_fnv(h, "\xff", 1); /* separator */
        }
    }
    return h;
}

int lcl_skel_shared_init(struct lcl_prov *p)
{
    if (!p->root)
        return 0;
#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount) && \
    defined(SYS_move_mount) && defined(SYS_mount_setattr)
    char path[128];
    snprintf(path, sizeof path, SHM "/polysandbox-%lu-skel-%016llx", (unsigned long)geteuid(),
             (unsigned long long)content_hash(p));
    if (!(p->skel_shared = strdup(path)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
#endif
    return 0;
}

/* A read-only tmpfs mounted on @dir (another mount than /dev/shm's). */
static bool mounted(const char *dir)
{
    struct statfs sf;
    struct stat st, shm;
    return statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC && (sf.f_flags & ST_RDONLY) &&
           lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && stat(SHM, &shm) == 0 &&
           st.st_dev != shm.st_dev;
}

#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount) && \
    defined(SYS_move_mount) && defined(SYS_mount_setattr)
/* Fills the detached tmpfs @mfd; entries are the sandbox user's (host
 * uid/gid of the settings), as when the init makes them. */
static int fill(const struct lcl_prov *p, int mfd, const char **what)
{
    for (size_t i = 0; i < p->n_skel; i++) {
        const struct lcl_skel_ent *e = &p->skel_ents[i];
        *what = e->path;
        if (e->kind == LCL_SK_DIR) {
            if (mkdirat(mfd, e->path, 0755) < 0 && errno != EEXIST)
                return -1;
        } else if (e->kind == LCL_SK_LINK) {
            if (symlinkat(e->data, mfd, e->path) < 0)
                return -1;
        } else {
            int fd = openat(mfd, e->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0644);
            if (fd < 0)
                return -1;
            size_t n = e->data ? strlen(e->data) : 0;
            ssize_t w = n ? write(fd, e->data, n) : 0;
            int err = errno;
            close(fd);
            if (w != (ssize_t)n) {
                errno = w < 0 ? err : EIO;
                return -1;
            }
        }
        if (fchownat(mfd, e->path, p->host_uid, p->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
            return -1;
    }
    return 0;
}

/* Makes the tmpfs, fills it, seals it and attaches it on @dir.  Returns
 * 0, or -1 with errno and *what naming the step. */
static int make(const struct lcl_prov *p, const char *dir, const char **what)
{
    char opt[64];
    int fsfd = -1, mfd = -1, ret = -1;
    *what = "fsopen tmpfs";
    if ((fsfd = (int)syscall(SYS_fsopen, "tmpfs", 1 /* FSOPEN_CLOEXEC */)) < 0)
        goto out;
    snprintf(opt, sizeof opt, "%lu", (unsigned long)p->host_uid);
    *what = "configuring the tmpfs";
    if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "size", "1m", 0) < 0 ||
        syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "nr_inodes", "4096", 0) < 0 ||
        syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
        syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "uid", opt, 0) < 0)
        goto out;
    snprintf(opt, sizeof opt, "%lu", (unsigned long)p->host_gid);
    if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "gid", opt, 0) < 0 ||
        syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        goto out;
    *what = "fsmount";
    if ((mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
                            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
        goto out;
    if (fill(p, mfd, what) < 0)
        goto out;
    struct skel_mount_attr ma = {.attr_set = MOUNT_ATTR_RDONLY};
    *what = "making the skeleton read-only";
    if (syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH, &ma, sizeof ma) < 0)
        goto out;
    *what = "attaching the skeleton";
    if (syscall(SYS_move_mount, mfd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        goto out;
    ret = 0;
out:;
    int e = errno;
    if (mfd >= 0)
        close(mfd);
    if (fsfd >= 0)
        close(fsfd);
    errno = e;
    return ret;
}
#endif

const char *lcl_skel_shared(struct lcl_prov *p)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const char *dir = p->skel_shared;
    if (!dir)
        return NULL;
    if (mounted(dir))
        return dir; /* the usual case: two calls */
#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount) && \
    defined(SYS_move_mount) && defined(SYS_mount_setattr)
    const char *what = "creating the directory";
    struct stat st;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        goto fail;
    what = "not a private directory of ours";
    errno = EPERM;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077))
        goto fail;
    what = "opening the directory";
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        goto fail;
    /* Threads of this process, then other processes. */
    pthread_mutex_lock(&lock);
    int ret = 0;
    if (flock(dfd, LOCK_EX) < 0) {
        what = "locking the directory";
        ret = -1;
    } else if (!mounted(dir)) {
        ret = make(p, dir, &what);
    }
    int e = errno;
    close(dfd); /* releases the lock */
    pthread_mutex_unlock(&lock);
    errno = e;
    if (ret == 0 && mounted(dir))
        return dir;
fail:
    p->host->log(p->h, SBX_LOG_DEBUG, "shared root skeleton %s: %s: %s; made per exec instead",
                 dir, what, strerror(errno));
#endif
    return NULL;
}
