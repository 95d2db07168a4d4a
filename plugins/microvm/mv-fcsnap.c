/* plugins/microvm/mv-fcsnap.c - Firecracker VMs restored from a snapshot
 *
 * With `vmm = firecracker` and `snapshot = auto`, the first create boots a
 * VM, waits for its agent and has Firecracker save it (the VMM's
 * snapshot op: pause, /snapshot/create, resume) into STATE/fc-snapshot/
 * (vm.state and vm.mem, then `key`, each renamed into place); every
 * create then starts a fresh firecracker with /snapshot/load (the memory
 * file mapped private: each VM's writes are its own) and sends its agent
 * a SEED, as mv-snap.c does for QEMU.  `key` names what the snapshot was
 * built from (protocol version, memory, the firecracker program, kernel,
 * initrd and rootfs by path, inode, size and mtime): any change rebuilds
 * it.  An flock on `lock` keeps two processes from building at once.
 * A failure falls back to booting (mv_create), logged; one that could
 * not be built is recorded (`failed`: its key) and not tried again for
 * those settings for an hour, each try costing a boot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

/* /work's size on the builder's command line; each restore's comes in
 * its SEED. */
#define FCSNAP_DISK (64ull << 20)
#define FCSNAP_RETRY_S 3600
/* A key: four file ids (each a path of up to 4200 bytes and numbers) and settings. */
#define FCSNAP_KEY_MAX 18432

static void fcsnap_file_id(const char *path, char *buf, size_t n)
{
    struct stat st;

    if (!path)
        snprintf(buf, n, "-");
    else if (stat(path, &st) != 0)
        snprintf(buf, n, "%s:missing", path);
    else
        snprintf(buf, n, "%s:%llu:%lld:%lld", path, (unsigned long long)st.st_ino,
                 (long long)st.st_size, (long long)st.st_mtime);
}

/* The key of the snapshot these settings would build, into @buf. */
static void fcsnap_key(struct mv_prov *p, char *buf, size_t n)
{
    char fc[4200], bin[4400], kernel[4400], initrd[4400], rootfs[4400];

    fcsnap_file_id(mv_vmm_path(p->binary, fc, sizeof fc) ? fc : p->binary, bin, sizeof bin);
    fcsnap_file_id(p->kernel, kernel, sizeof kernel);
    fcsnap_file_id(p->initrd, initrd, sizeof initrd);
    fcsnap_file_id(p->rootfs, rootfs, sizeof rootfs);
    snprintf(buf, n, "firecracker v%d memory=%llu vmm=%s kernel=%s initrd=%s rootfs=%s\n",
             MV_PROTO_VERSION, (unsigned long long)p->memory_mib, bin, kernel, initrd, rootfs);
}

/* STATE/fc-snapshot into @buf, made (0700) when @make: 0, or -1. */
static int fcsnap_dir(struct mv_prov *p, int make, char *buf, size_t n)
{
    const char *state = p->host->state_dir(p->h);

    if (!state || (size_t)snprintf(buf, n, "%s/fc-snapshot", state) >= n)
        return -1;
    if (make && (mkdir(state, 0700) != 0 && errno != EEXIST))
        return -1;
    if (make && (mkdir(buf, 0700) != 0 && errno != EEXIST))
        return -1;
    return 0;
}

/* Whether @dir/@leaf holds @key (and is younger than @max_age_s, 0: any age). */
static int fcsnap_has_key(const char *dir, const char *leaf, const char *key, long max_age_s)
{
    char path[4300], have[FCSNAP_KEY_MAX];
    struct stat st;
    ssize_t got = -1;

    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 && max_age_s && (fstat(fd, &st) != 0 || time(NULL) - st.st_mtime > max_age_s)) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0) {
        got = read(fd, have, sizeof have - 1);
        close(fd);
    }
    if (got < 0)
        return 0;
    have[got] = '\0';
    return !strcmp(have, key);
}

/* Whether @dir holds a snapshot built for @key. */
static int fcsnap_current(const char *dir, const char *key)
{
    char path[4300];

    if (!fcsnap_has_key(dir, "key", key, 0))
        return 0;
    snprintf(path, sizeof path, "%s/vm.state", dir);
    if (access(path, R_OK))
        return 0;
    snprintf(path, sizeof path, "%s/vm.mem", dir);
    return access(path, R_OK) == 0;
}

static int fcsnap_build(struct mv_prov *p, const char *dir, const char *key)
{
    char st_new[4300], mem_new[4300], key_new[4300], st[4300], mem[4300], kpath[4300];
    char err[512];
    struct mv_sandbox *b = NULL;
    int rc;

    snprintf(st_new, sizeof st_new, "%s/vm.state.new", dir);
    snprintf(mem_new, sizeof mem_new, "%s/vm.mem.new", dir);
    snprintf(key_new, sizeof key_new, "%s/key.new", dir);
    snprintf(st, sizeof st, "%s/vm.state", dir);
    snprintf(mem, sizeof mem, "%s/vm.mem", dir);
    snprintf(kpath, sizeof kpath, "%s/key", dir);
    if ((rc = mv_boot(p, "kvm", p->boot_timeout_ms, FCSNAP_DISK, NULL, NULL, &b)))
        return rc;
    rc = p->vmm->snapshot(b->dir, st_new, mem_new, err, sizeof err);
    mv_sandbox_free(b);
    if (rc != 0) {
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: firecracker snapshot: %s", err);
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: firecracker snapshot: %s", err);
    }
    int fd = open(key_new, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t klen = strlen(key);
    int ok = fd >= 0 && write(fd, key, klen) == (ssize_t)klen;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (!ok || rename(st_new, st) || rename(mem_new, mem) || rename(key_new, kpath)) {
        rc = p->host->set_error(p->h, SBX_E_IO, "microvm: saving the snapshot in %s: %s", dir,
                                strerror(errno));
        (void)unlink(key_new);
        return rc;
    }
    return SBX_OK;
}

/* Records that the snapshot for @key could not be built. */
static void fcsnap_failed(const char *dir, const char *key)
{
    char path[4300];

    snprintf(path, sizeof path, "%s/failed", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    if (write(fd, key, strlen(key)) < 0) {
        /* nothing recorded: the next create tries again */
    }
    close(fd);
}

int mv_fc_snap_restore(struct mv_prov *p, uint64_t disk_bytes, const char *persist_id,
                       struct mv_sandbox **out)
{
    char dir[4200], key[FCSNAP_KEY_MAX], path[4300], st[4300], mem[4300];
    int rc, lock;

    *out = NULL;
    if (fcsnap_dir(p, 1, dir, sizeof dir))
        return p->host->set_error(p->h, SBX_E_IO, "microvm: the snapshot's directory: %s",
                                  strerror(errno));
    fcsnap_key(p, key, sizeof key);
    snprintf(path, sizeof path, "%s/lock", dir);
    if ((lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", path, strerror(errno));
    if (flock(lock, LOCK_SH) != 0) {
        rc = p->host->set_error(p->h, SBX_E_IO, "microvm: flock %s: %s", path, strerror(errno));
        goto out;
    }
    if (!fcsnap_current(dir, key)) {
        /* Built under the exclusive lock, checked again once held. */
        if (flock(lock, LOCK_EX) != 0) {
            rc = p->host->set_error(p->h, SBX_E_IO, "microvm: flock %s: %s", path,
                                    strerror(errno));
            goto out;
        }
        if (!fcsnap_current(dir, key)) {
            if (fcsnap_has_key(dir, "failed", key, FCSNAP_RETRY_S)) {
                rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the snapshot failed for"
                                        " these settings within the hour: not tried again");
                goto out;
            }
            if ((rc = fcsnap_build(p, dir, key))) {
                fcsnap_failed(dir, key);
                goto out;
            }
        }
        (void)flock(lock, LOCK_SH);
    }
    snprintf(st, sizeof st, "%s/vm.state", dir);
    snprintf(mem, sizeof mem, "%s/vm.mem", dir);
    struct mv_boot_from from = { .qmp_fd = -1, .incoming_fd = -1, .cmdline_disk = FCSNAP_DISK,
                                 .snap_state = st, .snap_mem = mem };
    rc = mv_boot(p, "kvm", p->boot_timeout_ms, disk_bytes, persist_id, &from, out);
out:
    close(lock);
    return rc;
}

void mv_fc_snap_describe(struct mv_prov *p, char *buf, size_t n)
{
    char dir[4200], key[FCSNAP_KEY_MAX];

    if (!p->snapshot) {
        snprintf(buf, n, "off: every VM boots");
        return;
    }
    if (fcsnap_dir(p, 0, dir, sizeof dir)) {
        snprintf(buf, n, "auto: no state directory");
        return;
    }
    fcsnap_key(p, key, sizeof key);
    snprintf(buf, n, "auto: %s/vm.state (%s)", dir,
             fcsnap_current(dir, key) ? "current"
             : fcsnap_has_key(dir, "failed", key, FCSNAP_RETRY_S)
                 ? "failed for these settings: VMs boot, tried again after an hour"
                 : "built at the next create");
}
