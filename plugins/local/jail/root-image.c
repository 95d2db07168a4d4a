/* plugins/local/jail/root-image.c - a root from the sandbox's image
 *
 * The image directory's top-level entries bound read-only one by one
 * (links copied), so that our own mounts can go on top.  System calls
 * only (child.c says why).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "jail-int.h"


/* One top-level entry of the image: pass 0 makes its mount point (or
 * copies the symlink), pass 1 binds it read-only. */
static void image_entry(const struct lcl_child *c, int pass, int dfd, int rfd, const char *root,
                        const char *name)
{
    static const char *const ours[] = {"proc", "dev", "tmp", "work", "sys"};
    const char *image = c->sb->rootfs;
    char src[LCL_PATH_MAX], dst[LCL_PATH_MAX];
    struct stat st;
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        return;
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (!strcmp(name, ours[i]))
            return;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        lcl_j_fail(c, "stat in the image", name);
    if (!lcl_j_cat3(src, sizeof src, image, "/", name) || !lcl_j_cat3(dst, sizeof dst, root, "/", name))
        lcl_j_fail(c, "path too long", name);
    if (pass == 0 && S_ISLNK(st.st_mode)) {
        char target[LCL_PATH_MAX];
        ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
        if (n < 0)
            lcl_j_fail(c, "readlink in the image", name);
        /* cppcheck-suppress negativeIndex ; lcl_j_fail() does not return */
        target[n] = '\0';
        if (symlinkat(target, rfd, name) < 0)
            lcl_j_fail(c, "symlink", dst);
    } else if (pass == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        int fd = -1;
        if (S_ISDIR(st.st_mode) ? mkdirat(rfd, name, 0755) < 0
            : (fd = openat(rfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
            lcl_j_fail(c, "creating the mount point", dst);
        if (fd >= 0)
            close(fd);
    } else if (pass == 1 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        lcl_j_bind(c, src, dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                  S_ISDIR(st.st_mode));
    } /* sockets, devices, FIFOs at the top level: never */
}

static void image_walk(const struct lcl_child *c, int pass, int dfd, int rfd, const char *root)
{
    if (lseek(dfd, 0, SEEK_SET) < 0)
        lcl_j_fail(c, "rewinding the image directory", c->sb->rootfs);
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
        if (n < 0)
            lcl_j_fail(c, "reading the image directory", c->sb->rootfs);
        if (n == 0)
            break;
        for (long off = 0; off < n;) {
            /* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            image_entry(c, pass, dfd, rfd, root, buf + off + 19);
            off += reclen;
        }
    }
}

/* New inodes take the creator's fsuid, and ours (the host's root) has no
 * id in our user namespace (EOVERFLOW) and cannot be set back once
 * changed: a short-lived child makes the root's entries as the sandbox
 * user, relative to descriptors we open (the paths to the root and the
 * image need not be searchable by it: the state directory is 0700). */
void lcl_j_image_root(const struct lcl_child *c, const char *root)
{
    static const char *const dirs[] = {"proc", "dev", "tmp", "work", "dev/shm", "dev/pts"};
    static const char *const links[][2] = {
        {"dev/fd", "/proc/self/fd"}, {"dev/stdin", "/proc/self/fd/0"},
        {"dev/stdout", "/proc/self/fd/1"}, {"dev/stderr", "/proc/self/fd/2"},
        {"dev/ptmx", "pts/ptmx"},
    };
    char rel[64];
    _Static_assert(LCL_SANDBOX_UID == 1000 && LCL_SANDBOX_GID == 1000,
                   "the tmpfs options below name the sandbox user");
    if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=1m,nr_inodes=1024,mode=0755,uid=1000,gid=1000") < 0)
        lcl_j_fail(c, "mount tmpfs on", root);
    int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        lcl_j_fail(c, "open", root);
    int dfd = open(c->sb->rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        lcl_j_fail(c, "opening the image", c->sb->rootfs);
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid < 0)
        lcl_j_fail(c, "fork to build the root of", c->sb->rootfs);
    if (pid == 0) {
        syscall(SYS_setfsgid, LCL_SANDBOX_GID);
        syscall(SYS_setfsuid, LCL_SANDBOX_UID);
        for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
            if (mkdirat(rfd, dirs[i], 0755) < 0)
                lcl_j_fail(c, "mkdir", dirs[i]);
        for (size_t i = 0; i < sizeof lcl_j_dev_nodes / sizeof *lcl_j_dev_nodes; i++) {
            int fd;
            if (!lcl_j_cat3(rel, sizeof rel, "dev/", lcl_j_dev_nodes[i], NULL) ||
                (fd = openat(rfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
                lcl_j_fail(c, "creating the mount point", lcl_j_dev_nodes[i]);
            close(fd);
        }
        for (size_t i = 0; i < sizeof links / sizeof *links; i++)
            if (symlinkat(links[i][1], rfd, links[i][0]) < 0)
                lcl_j_fail(c, "symlink", links[i][0]);
        image_walk(c, 0, dfd, rfd, root);
        _exit(0);
    }
    int st;
    while (waitpid((pid_t)pid, &st, 0) < 0)
        if (errno != EINTR)
            lcl_j_fail(c, "waitpid", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        _exit(125); /* it reported the failing step */
    image_walk(c, 1, dfd, rfd, root);
    close(dfd);
    close(rfd);
}

