/* plugins/microvm/mv-jail.c - Firecracker started through its jailer
 *
 * With a `jailer` setting, firecracker is not run directly: the jailer
 * (Firecracker's own program) is, as its documentation gives:
 *
 *   jailer --id ID --exec-file FIRECRACKER --uid UID --gid GID
 *          --chroot-base-dir DIR --cgroup-version 2
 *          --cgroup memory.max=BYTES --cgroup cpu.max=QUOTA PERIOD
 *          -- --api-sock api.sock
 *
 * It makes the chroot DIR/<exec file's name>/ID/root, joins the cgroups,
 * drops to UID:GID, chroots there and execs firecracker.  The chroot's
 * base is the VM's own directory, so the jail goes with it; the kernel,
 * initrd and root drive are linked (or, for another uid, copied and
 * given to it) into the chroot under fixed names the API is then given,
 * relative to firecracker's working directory, the chroot's root.  A
 * symbolic link `jail` in the VM's directory names the chroot's root:
 * where the API and vsock sockets are, for whoever finds the VM later
 * (a persistent sandbox's attach), whatever the settings say by then.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mv-int.h"

/* An id the jailer takes (alphanumerics and hyphens, at most 64): the
 * VM's name, else its directory's ("vm.XXXXXX" -> "vm-XXXXXX"). */
static void jail_id(const struct mv_vm_config *cfg, char id[65])
{
    const char *src = cfg->name;
    const char *slash = strrchr(cfg->dir, '/');
    size_t j = 0;

    if (!src)
        src = slash ? slash + 1 : cfg->dir;
    for (; *src && j < 64; src++)
        id[j++] = (*src >= 'a' && *src <= 'z') || (*src >= 'A' && *src <= 'Z') ||
                          (*src >= '0' && *src <= '9') ? *src : '-';
    id[j] = '\0';
}

/* @src as @root/@leaf: a hard link when the jail runs as us, else a copy
 * owned by the jail's uid and gid (0400), which it alone then reads. */
static int jail_place(const struct mv_vm_config *cfg, const char *root, const char *src,
                      const char *leaf, char *err, size_t errlen)
{
    char dst[4400];
    int in = -1, out = -1, rc = -1;
    struct stat st;

    snprintf(dst, sizeof dst, "%s/%s", root, leaf);
    (void)unlink(dst);
    if (cfg->jail_uid == geteuid() && cfg->jail_gid == getegid() && link(src, dst) == 0)
        return 0;
    if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0 || fstat(in, &st) != 0 ||
        (out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400)) < 0)
        goto out;
    for (off_t off = 0; off < st.st_size;) {
        ssize_t n = sendfile(out, in, &off, (size_t)(st.st_size - off));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto out;
    }
    if ((cfg->jail_uid != geteuid() || cfg->jail_gid != getegid()) &&
        fchown(out, cfg->jail_uid, cfg->jail_gid) != 0)
        goto out;
    rc = 0;
out:
    if (rc)
        snprintf(err, errlen, "the jailer's chroot: placing %s as %s: %s", src, dst,
                 strerror(errno));
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && !rc) {
        snprintf(err, errlen, "the jailer's chroot: writing %s: %s", dst, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* mkdir -p @path (its parents under the VM's directory). */
static int mkdirs(char *path)
{
    for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = '\0';
        int r = mkdir(path, 0700);
        if (s)
            *s = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
        if (!s)
            return 0;
    }
}

int mv_jail_prepare(const struct mv_vm_config *cfg, struct mv_jail *j, char *err, size_t errlen)
{
    char root[4400], link_to[4400], tmp[4200], *exe;

    memset(j, 0, sizeof *j);
    if (!mv_vmm_path(cfg->binary, j->exec_file, sizeof j->exec_file)) {
        snprintf(err, errlen, "no firecracker program at %s", cfg->binary);
        return -1;
    }
    /* The jailer refuses an exec file whose name lacks "firecracker". */
    snprintf(tmp, sizeof tmp, "%s", j->exec_file);
    exe = basename(tmp);
    if (!strstr(exe, "firecracker")) {
        snprintf(err, errlen, "the jailer runs only a program whose name holds \"firecracker\","
                 " not %s", exe);
        return -1;
    }
    jail_id(cfg, j->id);
    snprintf(j->uid, sizeof j->uid, "%u", cfg->jail_uid);
    snprintf(j->gid, sizeof j->gid, "%u", cfg->jail_gid);
    /* The VMM's memory beside the guest's, and one CPU for its one vCPU. */
    snprintf(j->memory_max, sizeof j->memory_max, "memory.max=%llu",
             (unsigned long long)(cfg->memory_mib + MV_JAIL_OVERHEAD_MIB) << 20);
    snprintf(j->cpu_max, sizeof j->cpu_max, "cpu.max=100000 100000");
    if ((size_t)snprintf(root, sizeof root, "%s/%s/%s/root", cfg->dir, exe, j->id) >=
            sizeof j->root ||
        mkdirs(root) != 0) {
        snprintf(err, errlen, "the jailer's chroot %s: %s", root, strerror(errno));
        return -1;
    }
    snprintf(j->root, sizeof j->root, "%s", root);
    /* Stale sockets refuse firecracker's binds. */
    char sock[4500];
    snprintf(sock, sizeof sock, "%s/api.sock", root);
    (void)unlink(sock);
    snprintf(sock, sizeof sock, "%s/vsock.sock", root);
    (void)unlink(sock);
    if (jail_place(cfg, root, cfg->kernel, MV_JAIL_KERNEL, err, errlen) ||
        jail_place(cfg, root, cfg->initrd, MV_JAIL_INITRD, err, errlen) ||
        (cfg->rootfs && jail_place(cfg, root, cfg->rootfs, MV_JAIL_ROOTFS, err, errlen)))
        return -1;
    /* Firecracker, as the jail's uid, makes its sockets there. */
    if ((cfg->jail_uid != geteuid() || cfg->jail_gid != getegid()) &&
        chown(root, cfg->jail_uid, cfg->jail_gid) != 0) {
        snprintf(err, errlen, "the jailer's chroot %s: chown: %s", root, strerror(errno));
        return -1;
    }
    snprintf(link_to, sizeof link_to, "%s/%s/root", exe, j->id);
    snprintf(tmp, sizeof tmp, "%s/" MV_JAIL_LINK, cfg->dir);
    (void)unlink(tmp);
    if (symlink(link_to, tmp) != 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

void mv_jail_argv(const struct mv_vm_config *cfg, const struct mv_jail *j,
                  const char *argv[MV_JAIL_ARGC])
{
    const char *a[] = { cfg->jailer, "--id", j->id, "--exec-file", j->exec_file,
                        "--uid", j->uid, "--gid", j->gid, "--chroot-base-dir", cfg->dir,
                        "--cgroup-version", "2", "--cgroup", j->memory_max,
                        "--cgroup", j->cpu_max, "--", "--api-sock", "api.sock", NULL };

    _Static_assert(sizeof a / sizeof *a <= MV_JAIL_ARGC, "MV_JAIL_ARGC");
    memset(argv, 0, MV_JAIL_ARGC * sizeof *argv);
    memcpy(argv, a, sizeof a);
}

int mv_jail_sock(const char *dir, const char *leaf, char *buf, size_t n)
{
    char link[4200];
    struct stat st;

    snprintf(link, sizeof link, "%s/" MV_JAIL_LINK, dir);
    size_t len = (size_t)snprintf(buf, n, lstat(link, &st) == 0 && S_ISLNK(st.st_mode)
                                              ? "%s/" MV_JAIL_LINK "/%s" : "%s/%s", dir, leaf);
    return len < n ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP ? rmdir(path) : unlink(path))
        return errno == ENOENT ? 0 : -1;
    return 0;
}

void mv_jail_remove(const char *dir)
{
    char link[4200], target[4200], tree[8500];
    ssize_t n;

    snprintf(link, sizeof link, "%s/" MV_JAIL_LINK, dir);
    if ((n = readlink(link, target, sizeof target - 1)) <= 0)
        return;
    target[n] = '\0';
    /* Its first component, a plain name in @dir (the link is ours, but
     * whatever is read back is checked). */
    char *slash = strchr(target, '/');
    if (slash)
        *slash = '\0';
    if (target[0] && strcmp(target, ".") && strcmp(target, "..")) {
        snprintf(tree, sizeof tree, "%s/%s", dir, target);
        (void)nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    (void)unlink(link);
}
