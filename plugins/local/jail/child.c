/* plugins/local/jail/child.c - inside the sandbox: init and payload
 *
 * The supervisor clones us into new user, mount, pid, net, ipc and uts
 * namespaces.  We are pid 1 of the new pid namespace: we wait for the
 * supervisor's "go" (uid/gid maps written, cgroup joined), build the root
 * (a fresh tmpfs with the provider's skeleton and read-only binds of the
 * host's system directories, or the sandbox's image directory; the work
 * dir, a fresh /tmp, a fresh /proc with its
 * host-facing entries masked, and a minimal /dev with a private devpts),
 * pivot into it, then fork the payload and reap until it exits.  When we exit, the kernel kills whatever is left
 * in the pid namespace.
 *
 * The process that cloned us may be multi-threaded: from here on only
 * system calls, no malloc, no stdio, no locks.  Failures travel to the
 * supervisor as a struct lcl_msg naming the step and errno.
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

#include "jail.h"
#include "../wire/fdpass.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct lcl_mount_attr {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

/* ---- async-signal-safe helpers ---- */

static size_t s_len(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* dst = a b c (any may be NULL); false if it does not fit. */
static bool s_cat3(char *dst, size_t size, const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    size_t off = 0;
    for (int i = 0; i < 3; i++) {
        if (!parts[i])
            continue;
        size_t n = s_len(parts[i]);
        if (off + n >= size)
            return false;
        memcpy(dst + off, parts[i], n);
        off += n;
    }
    dst[off] = '\0';
    return true;
}

static void report(int fd, int kind, int err, const char *step, const char *path)
{
    struct lcl_msg m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.err = err;
    if (!s_cat3(m.what, sizeof m.what, step, path ? " " : NULL, path))
        s_cat3(m.what, sizeof m.what, step, NULL, NULL);
    ssize_t r = write(fd, &m, sizeof m);
    (void)r;
}

_Noreturn static void fail(const struct lcl_child *c, const char *step, const char *path)
{
    report(c->fd_report, LCL_MSG_SETUP, errno, step, path);
    _exit(125);
}

/* Make a mount read-only/nosuid/nodev/noexec as asked.  mount_setattr
 * (5.12) sets attributes recursively and never touches locked ones; the
 * fallback remounts keeping the flags the mount already has, which the
 * kernel requires inside a user namespace. */
static int set_attr(const char *path, uint64_t attr, bool recursive)
{
    struct lcl_mount_attr ma = {.attr_set = attr};
    if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &ma,
                sizeof ma) == 0)
        return 0;
    if (errno != ENOSYS)
        return -1;
    struct statvfs sv;
    if (statvfs(path, &sv) < 0)
        return -1;
    unsigned long fl = MS_REMOUNT | MS_BIND;
    if (sv.f_flag & ST_NOSUID) fl |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) fl |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) fl |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) fl |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) fl |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) fl |= MS_RELATIME;
    if (sv.f_flag & ST_RDONLY) fl |= MS_RDONLY;
    if (attr & MOUNT_ATTR_RDONLY) fl |= MS_RDONLY;
    if (attr & MOUNT_ATTR_NOSUID) fl |= MS_NOSUID;
    if (attr & MOUNT_ATTR_NODEV) fl |= MS_NODEV;
    if (attr & MOUNT_ATTR_NOEXEC) fl |= MS_NOEXEC;
    return mount(NULL, path, NULL, fl, NULL);
}

static void bind_path(const struct lcl_child *c, const char *src, const char *dst,
                 uint64_t attr, bool recursive)
{
    if (mount(src, dst, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL) < 0)
        fail(c, "bind mount", src);
    if (attr && set_attr(dst, attr, recursive) < 0)
        fail(c, "making read-only/nosuid the bind mount of", src);
}

/* The work directory the go brought (release_init in launch/exec.c):
 * ours alone, this being our own copy of the memory. */
static int work_from_go = -1;

/* The go, and with it (c->work_by_sync) the work directory's mount. */
static bool read_go(const struct lcl_child *c)
{
    char go;
    if (!c->work_by_sync)
        return read(c->fd_sync, &go, 1) == 1;
    if (lcl_fds_recv(c->fd_sync, &go, 1, &work_from_go, 1) < 0)
        return false;
    if (work_from_go < 0)
        fail(c, "receiving the work directory", NULL);
    return true;
}

/* /work: the sandbox's work directory opened without following a link
 * (lcl_work_open) and bound through its descriptor, so what is mounted
 * is what was opened, never what a link swapped in points to. */
static void bind_work(const struct lcl_child *c, const char *dst)
{
    int fd = lcl_work_open(c->sb, O_PATH);
    if (fd < 0)
        fail(c, "opening the work directory (refused if a link)", c->sb->work);
    char src[40] = "/proc/self/fd/", num[12];
    int n = 0;
    for (int v = fd; n == 0 || v; v /= 10)
        num[n++] = (char)('0' + v % 10);
    size_t off = s_len(src);
    while (n)
        src[off++] = num[--n];
    src[off] = '\0';
    bind_path(c, src, dst, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
    close(fd);
}

/* ---- the new root ---- */

/* /proc entries that leak host kernel state or act on the host, masked
 * as runc and bubblewrap do: files get /dev/null bound over them (read:
 * nothing), directories an empty read-only tmpfs; /proc/sys stays
 * readable (runtimes read it) but is re-bound read-only.  Absent entries
 * are skipped. */
static const char *const proc_masked_files[] = {
    "kcore", "keys", "timer_list", "sched_debug", "latency_stats", "kallsyms", "sysrq-trigger",
    "kpagecount", "kpageflags", "kpagecgroup", "config.gz",
};
static const char *const proc_masked_dirs[] = {"irq", "bus", "fs", "acpi", "scsi", "driver"};

static void mount_proc(const struct lcl_child *c, const char *root)
{
    char proc[LCL_PATH_MAX], dst[LCL_PATH_MAX], null[LCL_PATH_MAX], first[LCL_PATH_MAX] = "";
    char first_dir[LCL_PATH_MAX] = "";
    /* Not nodev on the masks: they are /dev/null, and read as empty. */
    const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;

    /* We are pid 1 of the new pid namespace: this /proc shows only it,
     * and hidepid=2 hides from the payload what is not its own user's
     * (us, the init, owned by an id the sandbox has no name for). */
    if (!s_cat3(proc, sizeof proc, root, "/proc", NULL) ||
        mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") < 0)
        fail(c, "mount proc on", "/proc");
    if (!s_cat3(null, sizeof null, root, "/dev/null", NULL))
        fail(c, "path too long", "/dev/null");
    /* The first mask is made read-only; the others are binds of it, which
     * copy its flags (one mount each instead of two). */
    /* No lstat first: an absent entry fails the mount with ENOENT, a
     * directory where a file was expected (or the reverse) with ENOTDIR
     * or EISDIR; both are skipped, one call each instead of two. */
    for (size_t i = 0; i < sizeof proc_masked_files / sizeof *proc_masked_files; i++) {
        if (!s_cat3(dst, sizeof dst, proc, "/", proc_masked_files[i]))
            fail(c, "path too long", proc_masked_files[i]);
        if (mount(*first ? first : null, dst, NULL, MS_BIND, NULL) < 0) {
            if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR)
                continue;
            fail(c, "masking /proc/", proc_masked_files[i]);
        }
        if (!*first) {
            if (set_attr(dst, ro, false) < 0)
                fail(c, "making read-only the mask of /proc/", proc_masked_files[i]);
            memcpy(first, dst, sizeof first);
        }
    }
    for (size_t i = 0; i < sizeof proc_masked_dirs / sizeof *proc_masked_dirs; i++) {
        if (!s_cat3(dst, sizeof dst, proc, "/", proc_masked_dirs[i]))
            fail(c, "path too long", proc_masked_dirs[i]);
        if (*first_dir ? mount(first_dir, dst, NULL, MS_BIND, NULL) < 0
                       : mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                               "size=4k,nr_inodes=2,mode=0555") < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue;
            fail(c, "masking /proc/", proc_masked_dirs[i]);
        }
        if (!*first_dir)
            memcpy(first_dir, dst, sizeof first_dir);
    }
    if (!s_cat3(dst, sizeof dst, proc, "/sys", NULL))
        fail(c, "path too long", "/proc/sys");
    bind_path(c, dst, dst, ro, true);
}

/* The minimal /dev: host nodes bound over the mount points, a tmpfs
 * /dev/shm and a private devpts instance (the skeleton or the image
 * root links /dev/ptmx to pts/ptmx), so programs can open a pty. */
static void dev_nodes_bind(const struct lcl_child *c, const char *root)
{
    char dst[LCL_PATH_MAX];
    for (size_t i = 0; i < sizeof dev_nodes / sizeof *dev_nodes; i++) {
        char src[32];
        s_cat3(src, sizeof src, "/dev/", dev_nodes[i], NULL);
        if (!s_cat3(dst, sizeof dst, root, src, NULL))
            fail(c, "path too long", src);
        /* No nosuid/noexec: a character device can be neither executed
         * nor set-id, so those flags would cost a call and mean nothing. */
        bind_path(c, src, dst, 0, false);
    }
}

/* /dev's fresh parts: /dev/shm and the devpts instance. */
static void dev_fresh(const struct lcl_child *c, const char *root)
{
    char dst[LCL_PATH_MAX];
    if (!s_cat3(dst, sizeof dst, root, "/dev/shm", NULL) ||
        mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) < 0)
        fail(c, "mount tmpfs on", "/dev/shm");
    if (!s_cat3(dst, sizeof dst, root, "/dev/pts", NULL) ||
        mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=0620,max=64") < 0)
        fail(c, "mount devpts on", "/dev/pts");
}

static void mount_dev(const struct lcl_child *c, const char *root)
{
    dev_nodes_bind(c, root);
    dev_fresh(c, root);
}

/* Root from an image directory (an unpacked root file system): a small
 * tmpfs holds the mount points, each top-level entry of the image is
 * bound read-only into it (symlinks copied), and /dev, /proc, /tmp,
 * /work are ours as with the skeleton.  getdents64 into a stack buffer:
 * no allocation here. */
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
        fail(c, "stat in the image", name);
    if (!s_cat3(src, sizeof src, image, "/", name) || !s_cat3(dst, sizeof dst, root, "/", name))
        fail(c, "path too long", name);
    if (pass == 0 && S_ISLNK(st.st_mode)) {
        char target[LCL_PATH_MAX];
        ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
        if (n < 0)
            fail(c, "readlink in the image", name);
        /* cppcheck-suppress negativeIndex ; fail() does not return */
        target[n] = '\0';
        if (symlinkat(target, rfd, name) < 0)
            fail(c, "symlink", dst);
    } else if (pass == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        int fd = -1;
        if (S_ISDIR(st.st_mode) ? mkdirat(rfd, name, 0755) < 0
            : (fd = openat(rfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
            fail(c, "creating the mount point", dst);
        if (fd >= 0)
            close(fd);
    } else if (pass == 1 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        bind_path(c, src, dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                  S_ISDIR(st.st_mode));
    } /* sockets, devices, FIFOs at the top level: never */
}

static void image_walk(const struct lcl_child *c, int pass, int dfd, int rfd, const char *root)
{
    if (lseek(dfd, 0, SEEK_SET) < 0)
        fail(c, "rewinding the image directory", c->sb->rootfs);
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
        if (n < 0)
            fail(c, "reading the image directory", c->sb->rootfs);
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
static void image_root(const struct lcl_child *c, const char *root)
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
        fail(c, "mount tmpfs on", root);
    int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        fail(c, "open", root);
    int dfd = open(c->sb->rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        fail(c, "opening the image", c->sb->rootfs);
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid < 0)
        fail(c, "fork to build the root of", c->sb->rootfs);
    if (pid == 0) {
        syscall(SYS_setfsgid, LCL_SANDBOX_GID);
        syscall(SYS_setfsuid, LCL_SANDBOX_UID);
        for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
            if (mkdirat(rfd, dirs[i], 0755) < 0)
                fail(c, "mkdir", dirs[i]);
        for (size_t i = 0; i < sizeof dev_nodes / sizeof *dev_nodes; i++) {
            int fd;
            if (!s_cat3(rel, sizeof rel, "dev/", dev_nodes[i], NULL) ||
                (fd = openat(rfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
                fail(c, "creating the mount point", dev_nodes[i]);
            close(fd);
        }
        for (size_t i = 0; i < sizeof links / sizeof *links; i++)
            if (symlinkat(links[i][1], rfd, links[i][0]) < 0)
                fail(c, "symlink", links[i][0]);
        image_walk(c, 0, dfd, rfd, root);
        _exit(0);
    }
    int st;
    while (waitpid((pid_t)pid, &st, 0) < 0)
        if (errno != EINTR)
            fail(c, "waitpid", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        _exit(125); /* it reported the failing step */
    image_walk(c, 1, dfd, rfd, root);
    close(dfd);
    close(rfd);
}

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
        fail(c, "setfsuid to build the root", NULL);
    for (size_t i = 0; i < p->n_skel; i++) {
        const struct lcl_skel_ent *e = &p->skel_ents[i];
        int fd;
        switch (e->kind) {
        case LCL_SK_DIR:
            if (mkdirat(j->rfd, e->path, 0755) < 0 && errno != EEXIST)
                fail(c, "creating the mount point", e->path);
            break;
        case LCL_SK_LINK:
            if (symlinkat(e->data, j->rfd, e->path) < 0)
                fail(c, "symlink", e->path);
            break;
        default:
            if (!e->data) { /* a mount point: one call, not open + close */
                if (mknodat(j->rfd, e->path, S_IFREG | 0644, 0) < 0)
                    fail(c, "creating the mount point", e->path);
                break;
            }
            fd = openat(j->rfd, e->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
            if (fd < 0)
                fail(c, "creating", e->path);
            if (write(fd, e->data, s_len(e->data)) != (ssize_t)s_len(e->data))
                fail(c, "writing", e->path);
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
        fail(c, "mount tmpfs on", root);
    struct skel_job j = {c, open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (j.rfd < 0)
        fail(c, "open", root);
    /* A stack of its own: it shares our memory (CLONE_VM), and we sleep
     * until it exits (CLONE_VFORK), as posix_spawn does. */
    const size_t stack_size = 64 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        fail(c, "mmap of a stack to build the root", NULL);
    int pid = clone(skel_fill, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &j);
    if (pid < 0)
        fail(c, "clone to build the root", NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            fail(c, "waitpid", NULL);
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

static void skel_tree(const struct lcl_child *c, const char *root)
{
    const struct lcl_prov *p = c->prov;
    char dst[LCL_PATH_MAX];
    const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

    if (!c->skel_src)
        skel_root(c, root);
    else if (mount(c->skel_src, root, NULL, MS_BIND, NULL) < 0)
        fail(c, "bind mount of the root skeleton", c->skel_src);
    for (size_t i = 0; i < p->n_binds; i++) {
        const struct lcl_bind *b = &p->binds[i];
        if (b->link || gone(b))
            continue; /* a symlink in the skeleton already, or gone */
        if (!s_cat3(dst, sizeof dst, root, b->path, NULL))
            fail(c, "path too long", b->path);
        bind_path(c, b->path, dst, 0, true);
    }
    /* Our own directories below those trees (configuration, state,
     * modules under /usr/local): one empty tmpfs, bound over the others;
     * made read-only with the rest below. */
    char first[LCL_PATH_MAX] = "";
    for (size_t i = 0; i < p->n_masks; i++) {
        if (!s_cat3(dst, sizeof dst, root, p->masks[i], NULL))
            fail(c, "path too long", p->masks[i]);
        if (*first ? mount(first, dst, NULL, MS_BIND, NULL) < 0
                   : mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           "size=4k,nr_inodes=2,mode=0555") < 0)
            fail(c, "covering our own directory", p->masks[i]);
        if (!*first)
            memcpy(first, dst, sizeof first);
    }
    struct lcl_mount_attr ma = {.attr_set = ro};
    if (syscall(SYS_mount_setattr, AT_FDCWD, root, AT_RECURSIVE, &ma, sizeof ma) < 0) {
        if (errno != ENOSYS)
            fail(c, "making read-only the root", NULL);
        /* Before 5.12: one remount per mount (not recursive; the
         * system directories' own submounts keep the host's flags). */
        for (size_t i = 0; i < p->n_binds; i++) {
            const struct lcl_bind *b = &p->binds[i];
            if (b->link || gone(b))
                continue;
            if (!s_cat3(dst, sizeof dst, root, b->path, NULL) || set_attr(dst, ro, false) < 0)
                fail(c, "making read-only the bind mount of", b->path);
        }
        if (set_attr(root, ro, false) < 0)
            fail(c, "making read-only the root", NULL);
    }
}

static void build_root(const struct lcl_child *c)
{
    const struct lcl_prov *p = c->prov;
    const char *root = p->skel;
    char dst[LCL_PATH_MAX];
    const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        fail(c, "making mounts private", "/");
    if (c->sb->rootfs)
        image_root(c, root);
    else
        skel_tree(c, root);

    /* A prepared sandbox (daemon/spare.c) gets /work attached later. */
    if (c->sb->work) {
        if (!s_cat3(dst, sizeof dst, root, "/work", NULL))
            fail(c, "path too long", "/work");
        if (work_from_go >= 0) {
            if (syscall(SYS_move_mount, work_from_go, "", AT_FDCWD, dst,
                        MOVE_MOUNT_F_EMPTY_PATH) < 0)
                fail(c, "attaching the work directory on", "/work");
            close(work_from_go);
            work_from_go = -1;
        } else {
            bind_work(c, dst);
        }
    }

    if (!s_cat3(dst, sizeof dst, root, "/tmp", NULL) ||
        mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) < 0)
        fail(c, "mount tmpfs on", "/tmp");

    mount_dev(c, root);
    mount_proc(c, root);
    if (c->sb->rootfs && set_attr(root, ro, false) < 0)
        fail(c, "making read-only the root of", c->sb->rootfs);

    if (chdir(root) < 0)
        fail(c, "chdir", root);
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        fail(c, "pivot_root", root);
    /* The old root, stacked on "/" now, is detached by lcl_child_main
     * while the payload gets ready (an unmount waits out an RCU grace
     * period); absolute paths already resolve in the new root. */
}

static void loopback_up(const struct lcl_child *c)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        fail(c, "socket for bringing up", "lo");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        fail(c, "SIOCGIFFLAGS", "lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        fail(c, "SIOCSIFFLAGS", "lo");
    close(s);
}

/* After the go: groups, cgroup namespace, the root, host name, loopback.
 * Every init does this: in-process and prepared ones (lcl_child_setup)
 * and a zygote's (zygote/helper.c). */
void lcl_child_root(const struct lcl_child *c)
{
    if (c->drop_groups && syscall(SYS_setgroups, 0, NULL) < 0)
        fail(c, "setgroups", NULL);
    if (c->new_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
        fail(c, "unshare", "CLONE_NEWCGROUP");
    build_root(c);
    if (sethostname("sandbox", 7) < 0)
        fail(c, "sethostname", NULL);
    if (c->net_none)
        loopback_up(c);
}

/* ---- a zygote's root, built once (zygote/helper.c) ---- */

/* In the zygote, just entered into a user and mount namespace of its
 * own: the read-only tree every exec's root shares (the skeleton, the
 * system binds, the /dev nodes), pivoted into, the old root detached.
 * The host's /proc goes along, bound at /proc (moved to /tmp by
 * lcl_child_zroot_ready): the kernel lets a user namespace mount a proc
 * only where one is fully visible already, and each init mounts its own
 * beside it before detaching it (lcl_child_zroot_tmp). */
void lcl_child_zroot_build(const struct lcl_child *c)
{
    const char *root = c->prov->skel;
    char dst[LCL_PATH_MAX];
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        fail(c, "making mounts private", "/");
    skel_tree(c, root);
    dev_nodes_bind(c, root);
    if (!s_cat3(dst, sizeof dst, root, "/proc", NULL) ||
        mount("/proc", dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        fail(c, "bind mount of the host's", "/proc");
    if (chdir(root) < 0)
        fail(c, "chdir", root);
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        fail(c, "pivot_root", root);
    if (umount2(".", MNT_DETACH) < 0)
        fail(c, "detaching the old root", NULL);
    if (chdir("/") < 0)
        fail(c, "chdir", "/");
}

/* The zygote's imports are done: its /proc goes to /tmp, which every
 * init replaces, so no init's /proc has one beneath it. */
void lcl_child_zroot_ready(const struct lcl_child *c)
{
    if (mount("/proc", "/tmp", NULL, MS_MOVE, NULL) < 0)
        fail(c, "moving the host's /proc to", "/tmp");
}

/* An init forked from such a zygote (its mount namespace a copy of the
 * zygote's), after the go: what lcl_child_root does on a root built
 * already: groups, cgroup namespace, /proc (its pid namespace's, masked
 * as usual), /dev/shm, devpts, host name, loopback.  /work and /tmp are
 * the caller's (zygote/helper.c). */
void lcl_child_zroot_exec(const struct lcl_child *c)
{
    if (c->drop_groups && syscall(SYS_setgroups, 0, NULL) < 0)
        fail(c, "setgroups", NULL);
    if (c->new_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
        fail(c, "unshare", "CLONE_NEWCGROUP");
    mount_proc(c, "");
    dev_fresh(c, "");
    if (sethostname("sandbox", 7) < 0)
        fail(c, "sethostname", NULL);
    if (c->net_none)
        loopback_up(c);
}

/* The zygote's /proc off /tmp (an unmount: an RCU grace period, while the
 * payload gets ready), and the exec's fresh /tmp in its place. */
void lcl_child_zroot_tmp(const struct lcl_child *c)
{
    if (umount2("/tmp", MNT_DETACH) < 0)
        fail(c, "detaching the host's /proc from", "/tmp");
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) < 0)
        fail(c, "mount tmpfs on", "/tmp");
}

_Noreturn void lcl_child_fail(const struct lcl_child *c, const char *step, const char *path)
{
    fail(c, step, path);
}

/* ---- the payload ---- */

static void set_limit(const struct lcl_child *c, int res, uint64_t soft, uint64_t hard,
                      const char *name)
{
    struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
    if (setrlimit(res, &rl) < 0)
        fail(c, "setrlimit", name);
}

static void drop_privileges(const struct lcl_child *c)
{
    for (int cap = 0; cap <= c->prov->cap_last; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            fail(c, "dropping the capability bounding set", NULL);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        fail(c, "clearing ambient capabilities", NULL);
    /* Raw calls: glibc's wrappers broadcast to the threads it believes
     * exist (those of the host process) and take its locks. */
    if (syscall(SYS_setresgid, LCL_SANDBOX_GID, LCL_SANDBOX_GID, LCL_SANDBOX_GID) < 0)
        fail(c, "setresgid", NULL);
    if (syscall(SYS_setresuid, LCL_SANDBOX_UID, LCL_SANDBOX_UID, LCL_SANDBOX_UID) < 0)
        fail(c, "setresuid", NULL);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) < 0)
        fail(c, "clearing capabilities", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        fail(c, "PR_SET_NO_NEW_PRIVS", NULL);
}

static void close_others(void)
{
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    for (int fd = 3; fd < 4096; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Returns only when the command could not be executed (reported).  Not
 * _Noreturn: a sanitizer build would instrument the call on the payload's
 * own stack, which it warns about on the program's stderr. */
static void payload_exec(const struct lcl_child *c);

/* The payload's view of the init: detached = the init's end saying the
 * old root is gone (one byte; EOF: the init failed). */
struct payload_arg {
    const struct lcl_child *c;
    int detached;           /* read end */
    int detach_w;           /* the init's write end: ours is closed */
    int execd_r;            /* the init's read end of "we executed" */
};

_Noreturn static void payload(const struct lcl_child *c, const struct payload_arg *a)
{
    close(a->detach_w);
    close(a->execd_r);
    lcl_payload_prepare(c);

    /* Not before the host's mount tree is gone from our namespace.  EOF
     * means the init failed (and reported why): it closes its files
     * before the kernel ends the pid namespace, so we must not go on. */
    char done = 0;
    ssize_t got;
    while ((got = read(a->detached, &done, 1)) < 0)
        ;
    if (got != 1 || done != 'd')
        _exit(125);
    payload_exec(c);
    _exit(127);
}

/* The payload's stdio: the pipes moved out of the way first, in case
 * one is 0..2. */
static void payload_stdio(const struct lcl_child *c)
{
    int in = fcntl(c->fd_in, F_DUPFD, 10), out = fcntl(c->fd_out, F_DUPFD, 10),
        err = fcntl(c->fd_err, F_DUPFD, 10);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        fail(c, "setting up stdin/stdout/stderr", NULL);
}

/* Host dispositions and mask must not leak in (e.g. SIGPIPE ignored);
 * a session of its own. */
static void payload_signals(const struct lcl_child *c)
{
    lcl_signals_default();
    if (setsid() < 0)
        fail(c, "setsid", NULL);
}

/* The exec's rlimits (lowering them needs no privilege). */
static void payload_limits(const struct lcl_child *c)
{
    const sbx_limits_v1 *l = &c->sb->limits;
    uint64_t cpu_s = (l->cpu_ns + 999999999u) / 1000000000u;
    /* The CPU rlimit is a per-process backstop one second above the
     * limit; the supervisor's cgroup accounting decides first. */
    set_limit(c, RLIMIT_CPU, cpu_s + 1, cpu_s + 2, "RLIMIT_CPU");
    set_limit(c, RLIMIT_NOFILE, l->nofile, l->nofile, "RLIMIT_NOFILE");
    set_limit(c, RLIMIT_FSIZE, l->fsize_bytes, l->fsize_bytes, "RLIMIT_FSIZE");
    set_limit(c, RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    /* Floors where no cgroup holds the limit (jail/limits.c). */
    if (c->rl_data)
        set_limit(c, RLIMIT_DATA, c->rl_data, c->rl_data, "RLIMIT_DATA");
    if (c->rl_nproc)
        set_limit(c, RLIMIT_NPROC, c->rl_nproc, c->rl_nproc, "RLIMIT_NPROC");
}

static void payload_oom_first(void)
{
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = write(fd, "1000", 4);
        (void)r;
        close(fd);
    }
}

static void payload_seccomp(const struct lcl_child *c)
{
    if (c->prov->bpf) {
        struct sock_fprog prog = {(unsigned short)c->prov->bpf_len, c->prov->bpf};
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
            fail(c, "loading the seccomp filter", NULL);
    }
}

/* The payload up to the command: stdio, signals, session, limits, working
 * directory, privileges, the seccomp filter (also the zygote's, in
 * zygote/helper.c). */
void lcl_payload_prepare(const struct lcl_child *c)
{
    payload_stdio(c);
    payload_signals(c);
    payload_limits(c);
    payload_oom_first();
    if (chdir(c->cwd) < 0)
        fail(c, LCL_STEP_CWD, c->cwd);
    drop_privileges(c);
    close_others();
    payload_seccomp(c);
}

static void payload_exec(const struct lcl_child *c)
{
    /* execvp by hand: our PATH, our environment, no allocation. */
    const char *file = c->argv[0];
    int e = ENOENT;
    if (strchr(file, '/')) {
        execve(file, c->argv, c->envp);
        e = errno;
    } else {
        bool eacces = false;
        char buf[LCL_PATH_MAX];
        for (char **d = c->path_dirs; *d; d++) {
            if (!s_cat3(buf, sizeof buf, *d, "/", file))
                continue;
            execve(buf, c->argv, c->envp);
            if (errno == EACCES)
                eacces = true;
            else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV) {
                eacces = false;
                e = errno;
                break;
            }
        }
        if (eacces)
            e = EACCES;
    }
    report(c->fd_report, LCL_MSG_EXEC, e, "execve", file);
}

/* 0-2 are free in the init (close_host_fds): move a new pipe's ends
 * above them, or the payload's stdio would replace them. */
static int above_stdio(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] < 3) {
            int fd = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                return -1;
            close(p[i]);
            p[i] = fd;
        }
    return 0;
}

static int payload_main(void *arg)
{
    const struct payload_arg *a = arg;
    payload(a->c, a);
}

/* ---- init ---- */

/* Close every descriptor the host process had except ours: the other
 * ends of our pipes (or stdin would never see EOF), other sandboxes'
 * pipes, the host's files and sockets. */
static void close_host_fds(const struct lcl_child *c)
{
    int keep[6] = {c->fd_in, c->fd_out, c->fd_err, c->fd_sync, c->fd_report, c->fd_status};
    for (int i = 1; i < 6; i++) /* insertion sort, six entries */
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    unsigned int from = 0;
    for (int i = 0; i <= 6; i++) {
        unsigned int to = i < 6 ? (unsigned int)keep[i] : ~0u;
        if (to > from) {
            unsigned int last = i < 6 ? to - 1 : ~0u;
            if (syscall(SYS_close_range, from, last, 0) < 0) {
                unsigned int stop = last > 65536 ? 65536 : last;
                for (unsigned int fd = from; fd <= stop; fd++)
                    close((int)fd);
            }
        }
        if (i < 6)
            from = (unsigned int)keep[i] + 1;
    }
}

/* Up to a built root and network: the init of a prepared sandbox
 * (daemon/spare.c) stops here and waits for its request. */
void lcl_child_setup(const struct lcl_child *c)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    /* Join our cgroups first: everything after, the payload included,
     * is accounted and limited there. */
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        if (c->fd_tasks[i] >= 0 && write(c->fd_tasks[i], "0", 1) != 1)
            fail(c, "joining the cgroup", NULL);
    close_host_fds(c);
    if (!read_go(c))
        _exit(125); /* the supervisor gave up */
    if (!c->keep_sync)
        close(c->fd_sync);
    lcl_child_root(c);
}

/* The payload, then reaping until it exits. */
_Noreturn void lcl_child_start(const struct lcl_child *c)
{

    /* The payload shares our memory until it executes the command
     * (CLONE_VM on a stack of its own, as posix_spawn does): no copy of
     * the page tables of the process that cloned us.  Its descriptors,
     * credentials, signal handlers and limits are its own.  While it gets
     * ready we detach the old root (an RCU grace period); it executes the
     * command only once we say that is done.  Until it has executed it
     * (EOF on execd: its end is close-on-exec) we touch nothing it uses,
     * errno included (shared), and read no errno. */
    int det[2], execd[2];
    if (pipe2(det, O_CLOEXEC) < 0 || pipe2(execd, O_CLOEXEC) < 0 || above_stdio(det) < 0 ||
        above_stdio(execd) < 0)
        fail(c, "pipe", NULL);
    struct payload_arg pa = {c, det[0], det[1], execd[0]};
    const size_t stack_size = 256 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        fail(c, "mmap of the payload's stack", NULL);
    int pid = clone(payload_main, stack + stack_size, CLONE_VM | SIGCHLD, &pa);
    if (pid < 0)
        fail(c, "clone of the payload", NULL);
    close(execd[1]);
    /* (A failure here reports an errno the payload may have changed: the
     * step named is right, the number may not be.) */
    if (!c->root_detached && umount2(".", MNT_DETACH) < 0)
        fail(c, "detaching the old root", NULL);
    if (write(det[1], "d", 1) != 1)
        fail(c, "releasing the payload", NULL);
    char b;
    while (read(execd[0], &b, 1) != 0)
        ; /* -1: interrupted; 0: it executed the command, or is gone */
    close(det[0]);
    close(det[1]);
    close(execd[0]);
    munmap(stack, stack_size);
    lcl_signal_forward_to(pid);
    /* EOF on the report pipe now means "the payload exec'd". */
    close(c->fd_report);
    close(c->fd_in);
    close(c->fd_out);
    close(c->fd_err);
    lcl_child_reap(c, pid);
}

/* ---- a payload made before its request (daemon/spare.c) ---- */

void lcl_payload_early(const struct lcl_child *c)
{
    payload_signals(c);
    payload_oom_first();
    drop_privileges(c);
    payload_seccomp(c);
}

void lcl_payload_late(const struct lcl_child *c)
{
    payload_stdio(c);
    payload_limits(c);
    close_others();
}

void lcl_payload_exec(const struct lcl_child *c)
{
    payload_exec(c);
}

/* pid 1's duty: reap whatever ends until @payload does, then send its
 * wait status on fd_status and exit. */
_Noreturn void lcl_child_reap(const struct lcl_child *c, pid_t payload)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            _exit(125);
        if (w == payload) {
            if (c->empty_before_status) {
                /* Nothing of the sandbox left once the status is out: the
                 * supervisor takes it as the end, and our own exit
                 * (tearing the namespaces down) is off its path. */
                kill(-1, SIGKILL);
                while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
                    ;
                /* A zygote's init (v1) leaves the exec's cgroups too:
                 * they are empty for the supervisor once the status is
                 * out.  Should a move fail, the supervisor's wait for an
                 * empty cgroup (and its kill) ends us all the same. */
                for (int i = 0; c->leave_cgroup && i < LCL_CG_NCTRL; i++)
                    if (c->fd_leave[i] >= 0 && write(c->fd_leave[i], "0", 1) != 1)
                        break;
            }
            ssize_t r = write(c->fd_status, &st, sizeof st);
            _exit(r == (ssize_t)sizeof st ? 0 : 125);
        }
    }
}

_Noreturn void lcl_child_main(const struct lcl_child *c)
{
    lcl_child_setup(c);
    lcl_child_start(c);
}
