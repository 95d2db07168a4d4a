/* plugins/local/jail/root-skel.c - a root from the skeleton (no image)
 *
 * The shared skeleton bound (or a tmpfs filled per exec), then the
 * host's system trees and /etc entries bound read-only, our own paths
 * covered.  System calls only (child.c says why).
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


/* ---- the skeleton root (no image) ---- */

struct skel_job {
    const struct lcl_child *c;
    int rfd;                /* the root tmpfs, O_PATH */
};

/* Runs as a vfork-style child sharing our memory (we wait): creates the
 * skeleton's entries as the sandbox user, whose fsuid the tmpfs can
 * record (ours, the host's root, has no id here: EOVERFLOW, and could
 * not be set back once changed). */
static int skel_fill(void *arg)
{
    const struct skel_job *j = arg;
    const struct lcl_child *c = j->c;
    const struct lcl_prov *p = c->prov;
    if (syscall(SYS_setfsgid, LCL_SANDBOX_GID) < 0 || syscall(SYS_setfsuid, LCL_SANDBOX_UID) < 0)
        lcl_j_fail(c, "setfsuid to build the root", NULL);
    for (size_t i = 0; i < p->n_skel; i++) {
        const struct lcl_skel_ent *e = &p->skel_ents[i];
        int fd;
        switch (e->kind) {
        case LCL_SK_DIR:
            if (mkdirat(j->rfd, e->path, 0755) < 0 && errno != EEXIST)
                lcl_j_fail(c, "creating the mount point", e->path);
            break;
        case LCL_SK_LINK:
            if (symlinkat(e->data, j->rfd, e->path) < 0)
                lcl_j_fail(c, "symlink", e->path);
            break;
        default:
            if (!e->data) { /* a mount point: one call, not open + close */
                if (mknodat(j->rfd, e->path, S_IFREG | 0644, 0) < 0)
                    lcl_j_fail(c, "creating the mount point", e->path);
                break;
            }
            fd = openat(j->rfd, e->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
            if (fd < 0)
                lcl_j_fail(c, "creating", e->path);
            if (write(fd, e->data, lcl_j_len(e->data)) != (ssize_t)lcl_j_len(e->data))
                lcl_j_fail(c, "writing", e->path);
            close(fd);
        }
    }
    _exit(0);
}

/* The root: a small tmpfs with the skeleton, then the system binds. */
static void skel_root(const struct lcl_child *c, const char *root)
{
    _Static_assert(LCL_SANDBOX_UID == 1000 && LCL_SANDBOX_GID == 1000,
                   "the tmpfs options below name the sandbox user");
    if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=1m,nr_inodes=4096,mode=0755,uid=1000,gid=1000") < 0)
        lcl_j_fail(c, "mount tmpfs on", root);
    struct skel_job j = {c, open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (j.rfd < 0)
        lcl_j_fail(c, "open", root);
    /* A stack of its own: it shares our memory (CLONE_VM), and we sleep
     * until it exits (CLONE_VFORK), as posix_spawn does. */
    const size_t stack_size = 64 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        lcl_j_fail(c, "mmap of a stack to build the root", NULL);
    int pid = clone(skel_fill, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &j);
    if (pid < 0)
        lcl_j_fail(c, "clone to build the root", NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            lcl_j_fail(c, "waitpid", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        _exit(125); /* it reported the failing step */
    munmap(stack, stack_size);
    close(j.rfd);
}

/* The skeleton (mount points, made-up /etc files) becomes the root, the
 * system directories are bound in, then the whole tree is made
 * read-only, nosuid, nodev at once (recursively), before the writable
 * mounts go on top of it. */
/* An optional bind (the cache directory) removed since the probe: its
 * mount point stays an empty directory, as if it had never been made. */
static bool gone(const struct lcl_bind *b)
{
    return b->optional && access(b->path, F_OK) < 0;
}

void lcl_j_skel_tree(const struct lcl_child *c, const char *root)
{
    const struct lcl_prov *p = c->prov;
    char dst[LCL_PATH_MAX];
    const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

    if (!c->skel_src)
        skel_root(c, root);
    else if (mount(c->skel_src, root, NULL, MS_BIND, NULL) < 0)
        lcl_j_fail(c, "bind mount of the root skeleton", c->skel_src);
    for (size_t i = 0; i < p->n_binds; i++) {
        const struct lcl_bind *b = &p->binds[i];
        if (b->link || gone(b))
            continue; /* a symlink in the skeleton already, or gone */
        if (!lcl_j_cat3(dst, sizeof dst, root, b->path, NULL))
            lcl_j_fail(c, "path too long", b->path);
        lcl_j_bind(c, b->path, dst, 0, true);
    }
    /* Our own directories below those trees (configuration, state,
     * modules under /usr/local): one empty tmpfs, bound over the others;
     * made read-only with the rest below. */
    char first[LCL_PATH_MAX] = "";
    for (size_t i = 0; i < p->n_masks; i++) {
        if (!lcl_j_cat3(dst, sizeof dst, root, p->masks[i], NULL))
            lcl_j_fail(c, "path too long", p->masks[i]);
        if (*first ? mount(first, dst, NULL, MS_BIND, NULL) < 0
                   : mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           "size=4k,nr_inodes=2,mode=0555") < 0)
            lcl_j_fail(c, "covering our own directory", p->masks[i]);
        if (!*first)
            memcpy(first, dst, sizeof first);
    }
    struct lcl_mount_attr ma = {.attr_set = ro};
    if (syscall(SYS_mount_setattr, AT_FDCWD, root, AT_RECURSIVE, &ma, sizeof ma) < 0) {
        if (errno != ENOSYS)
            lcl_j_fail(c, "making read-only the root", NULL);
        /* Before 5.12: one remount per mount (not recursive; the
         * system directories' own submounts keep the host's flags). */
        for (size_t i = 0; i < p->n_binds; i++) {
            const struct lcl_bind *b = &p->binds[i];
            if (b->link || gone(b))
                continue;
            if (!lcl_j_cat3(dst, sizeof dst, root, b->path, NULL) || lcl_j_set_attr(dst, ro, false) < 0)
                lcl_j_fail(c, "making read-only the bind mount of", b->path);
        }
        if (lcl_j_set_attr(root, ro, false) < 0)
            lcl_j_fail(c, "making read-only the root", NULL);
    }
}

