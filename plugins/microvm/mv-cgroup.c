/* plugins/microvm/mv-cgroup.c - one cgroup per VMM: its memory and CPU
 *
 * Each jailed QEMU joins a cgroup of its own, made here before it
 * starts and removed after it ends:
 *   v2: <top>/polysandbox-microvm/<name> with memory.max, memory.swap.max
 *       = 0 and cpu.max; <top> is /sys/fs/cgroup as root, else the top
 *       of the subtree delegated to us (the highest ancestor of our own
 *       cgroup that we own and may move processes in), as the local
 *       provider's cgroup/cgroup.c finds it;
 *   v1: /sys/fs/cgroup/{memory,cpu}/polysandbox-microvm/<name> with
 *       memory.limit_in_bytes (and memsw, no swap) and the CFS quota.
 * The local provider's primitives are not reused: a plugin includes no
 * other plugin's folder (HACKING.md), and those are bound to its
 * provider's state (struct lcl_prov, its slots).  A limit that cannot be
 * written fails the start with the file and the reason: never a VMM
 * without its limits.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "mv-int.h"

#define CG_MOUNT "/sys/fs/cgroup"
#define CG_ROOT "polysandbox-microvm"

/* Writes @val to @dir/@leaf: 0, or -1 with @err set. */
static int knob(const char *dir, const char *leaf, const char *val, char *err, size_t errlen)
{
    char path[4400];
    int fd, rc = 0;
    size_t len = strlen(val);

    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, val, len) != (ssize_t)len)
        rc = -1;
    if (rc)
        snprintf(err, errlen, "the VMM's cgroup: writing \"%s\" to %s: %s", val, path,
                 strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The top of the v2 subtree we may make cgroups in, into @buf. */
static int v2_top(char *buf, size_t n)
{
    char line[4200], dir[4400], procs[4500];
    FILE *f;
    int found = 0;

    if (geteuid() == 0) {
        snprintf(buf, n, CG_MOUNT);
        return 0;
    }
    if (!(f = fopen("/proc/self/cgroup", "re")))
        return -1;
    while (!found && fgets(line, sizeof line, f))
        found = !strncmp(line, "0::/", 4);
    fclose(f);
    if (!found)
        return -1;
    line[strcspn(line, "\n")] = '\0';
    snprintf(dir, sizeof dir, CG_MOUNT "%s", line + 3);
    buf[0] = '\0';
    /* Up from our own cgroup while it is ours and movable-in. */
    while (strlen(dir) > strlen(CG_MOUNT)) {
        struct stat st;
        snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
        if (stat(dir, &st) != 0 || st.st_uid != geteuid() ||
            faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) != 0)
            break;
        snprintf(buf, n, "%s", dir);
        *strrchr(dir, '/') = '\0';
    }
    return buf[0] ? 0 : -1;
}

/* mkdir @path, there already is fine. */
static int mkdir_ok(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    int e = errno;
    snprintf(err, errlen, "the VMM's cgroup: mkdir %s: %s%s", path, strerror(e),
             e == EACCES && geteuid() != 0
                 ? " (not root: a cgroup v2 subtree delegated to us, or root, or "
                   "vmm_jail = off to run QEMU unjailed)"
                 : "");
    return -1;
}

/* Opens @dir/cgroup.procs for the VMM to write itself into. */
static int open_procs(const char *dir, int *fd, char *err, size_t errlen)
{
    char path[4400];

    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    if ((*fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0)
        return 0;
    snprintf(err, errlen, "the VMM's cgroup: %s: %s", path, strerror(errno));
    return -1;
}

static int make_v2(const char *name, uint64_t mem, int procs[2], char *err, size_t errlen)
{
    char top[4200], base[4300], dir[4400], val[48];

    if (v2_top(top, sizeof top) != 0) {
        snprintf(err, errlen,
                 "the VMM's cgroup: no cgroup v2 subtree is delegated to us"
                 " (not root, and none of our cgroup's ancestors is ours)");
        return -1;
    }
    snprintf(base, sizeof base, "%s/" CG_ROOT, top);
    snprintf(dir, sizeof dir, "%s/%s", base, name);
    /* Controllers are enabled one at a time (one missing must not stop
     * the other); memory.max and cpu.max then exist or the knob fails. */
    (void)knob(top, "cgroup.subtree_control", "+memory", err, errlen);
    (void)knob(top, "cgroup.subtree_control", "+cpu", err, errlen);
    if (mkdir_ok(base, err, errlen))
        return -1;
    (void)knob(base, "cgroup.subtree_control", "+memory", err, errlen);
    (void)knob(base, "cgroup.subtree_control", "+cpu", err, errlen);
    if (mkdir_ok(dir, err, errlen))
        return -1;
    snprintf(val, sizeof val, "%" PRIu64, mem);
    if (knob(dir, "memory.max", val, err, errlen) ||
        knob(dir, "cpu.max", MV_QJAIL_CPU_QUOTA " " MV_QJAIL_CPU_PERIOD, err, errlen))
        return -1;
    char swap[4500];
    snprintf(swap, sizeof swap, "%s/memory.swap.max", dir);
    if (access(swap, F_OK) == 0 && knob(dir, "memory.swap.max", "0", err, errlen))
        return -1;
    return open_procs(dir, &procs[0], err, errlen);
}

static int make_v1(const char *name, uint64_t mem, int procs[2], char *err, size_t errlen)
{
    static const char *const ctrl[2] = {"memory", "cpu"};
    char dir[2][4400], val[48];

    for (int i = 0; i < 2; i++) {
        struct statfs sf;
        snprintf(dir[i], sizeof dir[i], CG_MOUNT "/%s", ctrl[i]);
        if (statfs(dir[i], &sf) != 0 || sf.f_type != CGROUP_SUPER_MAGIC) {
            snprintf(err, errlen, "the VMM's cgroup: no cgroup v1 %s controller at %s", ctrl[i],
                     dir[i]);
            return -1;
        }
        snprintf(dir[i], sizeof dir[i], CG_MOUNT "/%s/" CG_ROOT, ctrl[i]);
        if (mkdir_ok(dir[i], err, errlen))
            return -1;
        snprintf(dir[i], sizeof dir[i], CG_MOUNT "/%s/" CG_ROOT "/%s", ctrl[i], name);
        if (mkdir_ok(dir[i], err, errlen))
            return -1;
    }
    snprintf(val, sizeof val, "%" PRIu64, mem);
    if (knob(dir[0], "memory.limit_in_bytes", val, err, errlen))
        return -1;
    char memsw[4500];
    snprintf(memsw, sizeof memsw, "%s/memory.memsw.limit_in_bytes", dir[0]);
    if (access(memsw, F_OK) == 0 && knob(dir[0], "memory.memsw.limit_in_bytes", val, err, errlen))
        return -1;
    if (knob(dir[1], "cpu.cfs_period_us", MV_QJAIL_CPU_PERIOD, err, errlen) ||
        knob(dir[1], "cpu.cfs_quota_us", MV_QJAIL_CPU_QUOTA, err, errlen))
        return -1;
    return open_procs(dir[0], &procs[0], err, errlen) || open_procs(dir[1], &procs[1], err, errlen)
               ? -1
               : 0;
}

static int is_v2(void)
{
    struct statfs sf;

    return statfs(CG_MOUNT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

int mv_cg_make(const char *name, uint64_t mem_bytes, int procs[2], char *err, size_t errlen)
{
    int rc;

    procs[0] = procs[1] = -1;
    rc = is_v2() ? make_v2(name, mem_bytes, procs, err, errlen)
                 : make_v1(name, mem_bytes, procs, err, errlen);
    if (rc) {
        for (int i = 0; i < 2; i++)
            if (procs[i] >= 0)
                close(procs[i]);
        procs[0] = procs[1] = -1;
        mv_cg_remove(name);
    }
    return rc;
}

/* rmdir @path, retried briefly: a VMM just reaped may not have left yet. */
static void rmdir_wait(const char *path)
{
    for (int i = 0; i < 50 && rmdir(path) != 0 && errno == EBUSY; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void mv_cg_remove(const char *name)
{
    char top[4200], path[4500];

    if (!name || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return;
    if (is_v2()) {
        if (v2_top(top, sizeof top) == 0) {
            snprintf(path, sizeof path, "%s/" CG_ROOT "/%s", top, name);
            rmdir_wait(path);
        }
        return;
    }
    snprintf(path, sizeof path, CG_MOUNT "/memory/" CG_ROOT "/%s", name);
    rmdir_wait(path);
    snprintf(path, sizeof path, CG_MOUNT "/cpu/" CG_ROOT "/%s", name);
    rmdir_wait(path);
}

/* How old an empty VMM cgroup must be before gc removes it: older than
 * any start's window between its mkdir and its VMM joining it. */
#define SWEEP_AGE_S 600

/* Removes the empty cgroups under @base older than SWEEP_AGE_S. */
static void sweep_dir(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *de;
    time_t now = time(NULL);

    while (d && (de = readdir(d))) {
        char path[4500];
        struct stat st;
        if (de->d_name[0] == '.' || de->d_type != DT_DIR)
            continue;
        snprintf(path, sizeof path, "%s/%s", base, de->d_name);
        /* A VMM still in it (a persistent VM, a running one) makes
         * rmdir fail with EBUSY: kept. */
        if (stat(path, &st) == 0 && st.st_mtime + SWEEP_AGE_S < now)
            (void)rmdir(path);
    }
    if (d)
        closedir(d);
}

void mv_cg_sweep(void)
{
    char top[4200], base[4300];

    if (is_v2()) {
        if (v2_top(top, sizeof top) == 0) {
            snprintf(base, sizeof base, "%s/" CG_ROOT, top);
            sweep_dir(base);
        }
        return;
    }
    sweep_dir(CG_MOUNT "/memory/" CG_ROOT);
    sweep_dir(CG_MOUNT "/cpu/" CG_ROOT);
}
