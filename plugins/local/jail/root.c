/* plugins/local/jail/root.c - the sandbox's new root
 *
 * The init's mounts after the go: the root (an image's, root-image.c, or
 * the skeleton with the host's system trees, root-skel.c), /work, /tmp,
 * a fresh /proc with its host-facing entries masked, a minimal /dev;
 * then the pivot.  A zygote builds its root once and its inits add their
 * fresh parts on it.  System calls only (child.c says why).
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


/* ---- the new root ---- */

/* The /dev nodes bound from the host (also the image root's mount points). */
const char *const lcl_j_dev_nodes[LCL_J_NDEV] = {"null", "zero", "full", "random", "urandom", "tty"};

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
    if (!lcl_j_cat3(proc, sizeof proc, root, "/proc", NULL) ||
        mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") < 0)
        lcl_j_fail(c, "mount proc on", "/proc");
    if (!lcl_j_cat3(null, sizeof null, root, "/dev/null", NULL))
        lcl_j_fail(c, "path too long", "/dev/null");
    /* The first mask is made read-only; the others are binds of it, which
     * copy its flags (one mount each instead of two). */
    /* No lstat first: an absent entry fails the mount with ENOENT, a
     * directory where a file was expected (or the reverse) with ENOTDIR
     * or EISDIR; both are skipped, one call each instead of two. */
    for (size_t i = 0; i < sizeof proc_masked_files / sizeof *proc_masked_files; i++) {
        if (!lcl_j_cat3(dst, sizeof dst, proc, "/", proc_masked_files[i]))
            lcl_j_fail(c, "path too long", proc_masked_files[i]);
        if (mount(*first ? first : null, dst, NULL, MS_BIND, NULL) < 0) {
            if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR)
                continue;
            lcl_j_fail(c, "masking /proc/", proc_masked_files[i]);
        }
        if (!*first) {
            if (lcl_j_set_attr(dst, ro, false) < 0)
                lcl_j_fail(c, "making read-only the mask of /proc/", proc_masked_files[i]);
            memcpy(first, dst, sizeof first);
        }
    }
    for (size_t i = 0; i < sizeof proc_masked_dirs / sizeof *proc_masked_dirs; i++) {
        if (!lcl_j_cat3(dst, sizeof dst, proc, "/", proc_masked_dirs[i]))
            lcl_j_fail(c, "path too long", proc_masked_dirs[i]);
        if (*first_dir ? mount(first_dir, dst, NULL, MS_BIND, NULL) < 0
                       : mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                               "size=4k,nr_inodes=2,mode=0555") < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue;
            lcl_j_fail(c, "masking /proc/", proc_masked_dirs[i]);
        }
        if (!*first_dir)
            memcpy(first_dir, dst, sizeof first_dir);
    }
    if (!lcl_j_cat3(dst, sizeof dst, proc, "/sys", NULL))
        lcl_j_fail(c, "path too long", "/proc/sys");
    lcl_j_bind(c, dst, dst, ro, true);
}

/* The minimal /dev: host nodes bound over the mount points, a tmpfs
 * /dev/shm and a private devpts instance (the skeleton or the image
 * root links /dev/ptmx to pts/ptmx), so programs can open a pty. */
static void dev_nodes_bind(const struct lcl_child *c, const char *root)
{
    char dst[LCL_PATH_MAX];
    for (size_t i = 0; i < sizeof lcl_j_dev_nodes / sizeof *lcl_j_dev_nodes; i++) {
        char src[32];
        lcl_j_cat3(src, sizeof src, "/dev/", lcl_j_dev_nodes[i], NULL);
        if (!lcl_j_cat3(dst, sizeof dst, root, src, NULL))
            lcl_j_fail(c, "path too long", src);
        /* No nosuid/noexec: a character device can be neither executed
         * nor set-id, so those flags would cost a call and mean nothing. */
        lcl_j_bind(c, src, dst, 0, false);
    }
}

/* /dev's fresh parts: /dev/shm and the devpts instance. */
static void dev_fresh(const struct lcl_child *c, const char *root)
{
    char dst[LCL_PATH_MAX];
    if (!lcl_j_cat3(dst, sizeof dst, root, "/dev/shm", NULL) ||
        mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) < 0)
        lcl_j_fail(c, "mount tmpfs on", "/dev/shm");
    if (!lcl_j_cat3(dst, sizeof dst, root, "/dev/pts", NULL) ||
        mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=0620,max=64") < 0)
        lcl_j_fail(c, "mount devpts on", "/dev/pts");
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
static void build_root(const struct lcl_child *c, int work)
{
    const struct lcl_prov *p = c->prov;
    const char *root = p->skel;
    char dst[LCL_PATH_MAX];
    const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        lcl_j_fail(c, "making mounts private", "/");
    if (c->sb->rootfs)
        lcl_j_image_root(c, root);
    else
        lcl_j_skel_tree(c, root);

    /* A prepared sandbox (daemon/spare.c) gets /work attached later. */
    if (c->sb->work) {
        if (!lcl_j_cat3(dst, sizeof dst, root, "/work", NULL))
            lcl_j_fail(c, "path too long", "/work");
        if (work >= 0) {
            if (syscall(SYS_move_mount, work, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                lcl_j_fail(c, "attaching the work directory on", "/work");
            close(work);
        } else {
            lcl_j_bind_work(c, dst);
        }
    }

    if (!lcl_j_cat3(dst, sizeof dst, root, "/tmp", NULL) ||
        mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) < 0)
        lcl_j_fail(c, "mount tmpfs on", "/tmp");

    mount_dev(c, root);
    mount_proc(c, root);
    if (c->sb->rootfs && lcl_j_set_attr(root, ro, false) < 0)
        lcl_j_fail(c, "making read-only the root of", c->sb->rootfs);

    if (chdir(root) < 0)
        lcl_j_fail(c, "chdir", root);
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        lcl_j_fail(c, "pivot_root", root);
    /* The old root, stacked on "/" now, is detached by lcl_child_main
     * while the payload gets ready (an unmount waits out an RCU grace
     * period); absolute paths already resolve in the new root. */
}

static void loopback_up(const struct lcl_child *c)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        lcl_j_fail(c, "socket for bringing up", "lo");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        lcl_j_fail(c, "SIOCGIFFLAGS", "lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        lcl_j_fail(c, "SIOCSIFFLAGS", "lo");
    close(s);
}

/* After the go: groups, cgroup namespace, the root, host name, loopback.
 * Every init but a zygote's does this: in-process and prepared ones
 * (lcl_child_setup). */
void lcl_child_root(const struct lcl_child *c, int work)
{
    if (c->drop_groups && syscall(SYS_setgroups, 0, NULL) < 0)
        lcl_j_fail(c, "setgroups", NULL);
    /* (shared_mm: the payload's, in the exec's cgroups; we are not.) */
    if (c->new_cgroup_ns && !c->shared_mm && unshare(CLONE_NEWCGROUP) < 0)
        lcl_j_fail(c, "unshare", "CLONE_NEWCGROUP");
    build_root(c, work);
    if (sethostname("sandbox", 7) < 0)
        lcl_j_fail(c, "sethostname", NULL);
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
        lcl_j_fail(c, "making mounts private", "/");
    lcl_j_skel_tree(c, root);
    dev_nodes_bind(c, root);
    if (!lcl_j_cat3(dst, sizeof dst, root, "/proc", NULL) ||
        mount("/proc", dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        lcl_j_fail(c, "bind mount of the host's", "/proc");
    if (chdir(root) < 0)
        lcl_j_fail(c, "chdir", root);
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        lcl_j_fail(c, "pivot_root", root);
    if (umount2(".", MNT_DETACH) < 0)
        lcl_j_fail(c, "detaching the old root", NULL);
    if (chdir("/") < 0)
        lcl_j_fail(c, "chdir", "/");
}

/* The zygote's imports are done: its /proc goes to /tmp, which every
 * init replaces, so no init's /proc has one beneath it. */
void lcl_child_zroot_ready(const struct lcl_child *c)
{
    if (mount("/proc", "/tmp", NULL, MS_MOVE, NULL) < 0)
        lcl_j_fail(c, "moving the host's /proc to", "/tmp");
}

/* An init forked from such a zygote (its mount namespace a copy of the
 * zygote's), after the go: what lcl_child_root does on a root built
 * already: groups, cgroup namespace, /proc (its pid namespace's, masked
 * as usual), /dev/shm, devpts, host name, loopback.  /work and /tmp are
 * the caller's (zygote/helper.c). */
void lcl_child_zroot_exec(const struct lcl_child *c)
{
    if (c->drop_groups && syscall(SYS_setgroups, 0, NULL) < 0)
        lcl_j_fail(c, "setgroups", NULL);
    if (c->new_cgroup_ns && unshare(CLONE_NEWCGROUP) < 0)
        lcl_j_fail(c, "unshare", "CLONE_NEWCGROUP");
    mount_proc(c, "");
    dev_fresh(c, "");
    if (sethostname("sandbox", 7) < 0)
        lcl_j_fail(c, "sethostname", NULL);
    if (c->net_none)
        loopback_up(c);
}

/* The zygote's /proc off /tmp (an unmount: an RCU grace period, while the
 * payload gets ready), and the exec's fresh /tmp in its place. */
void lcl_child_zroot_tmp(const struct lcl_child *c)
{
    if (umount2("/tmp", MNT_DETACH) < 0)
        lcl_j_fail(c, "detaching the host's /proc from", "/tmp");
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) < 0)
        lcl_j_fail(c, "mount tmpfs on", "/tmp");
}

_Noreturn void lcl_child_fail(const struct lcl_child *c, const char *step, const char *path)
{
    lcl_j_fail(c, step, path);
}

