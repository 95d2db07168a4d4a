/* plugins/microvm/mv-snap.c - sandboxes restored from a snapshot
 *
 * With `snapshot = auto` (the default) the first create boots one VM,
 * waits for its agent and saves it (QEMU migration, over a QMP monitor,
 * to a file: fd: migration, so QEMU's -sandbox spawn=deny stays on);
 * every create then restores a VM from that file (-incoming fd:) instead
 * of booting, and sends its agent a SEED (fresh entropy, the clock,
 * /work's size) before anything else, so no two VMs restored from one
 * snapshot share random state.
 *
 * The guest's RAM (snapshot_memory = shared, the default) is a file
 * beside the stream, MV_SNAP_RAM: the builder's QEMU maps it shared
 * (memory-backend-file, share=on) so the guest's memory is written
 * there, and migrates with x-ignore-shared (the stream then holds the
 * devices' state alone); each restore maps it private (share=off) and
 * starts its migration over QMP (-incoming defer: QEMU 7.2 has no
 * command-line switch for the capability), so every VM restored from
 * one snapshot shares the pages none of them changed, copy-on-write.
 * With snapshot_memory = copy the RAM is in the stream and each VM
 * loads its own copy.  The plain guest has no disk: its / and /work are
 * in that memory.  A VM with an image (mv-image.c) has one snapshot per
 * image disk: built with the disk attached (so the saved devices and
 * the guest's mounts are that disk's), in a directory of its own named
 * after the state directory and the disk's path, its key holding the
 * disk's path and BLAKE2b, so that it is never restored for another
 * image, nor for a disk that changed.
 *
 * The file lives under /dev/shm (RAM: a restore reads it at memory
 * speed) in a directory of ours named after the state directory, or in
 * the state directory where /dev/shm has too little room.  Beside it a
 * record (snap.json) says what it was built from: the key (QEMU's,
 * the kernel's and the initrd's identity, memory, accelerator, protocol
 * version)
 * and the TSC rate and /work size its kernel was started with.  A key
 * that differs from the settings' now gets it rebuilt.  An flock on
 * `lock` there keeps two processes from building at once (the second
 * waits, then restores from the first one's).  A snapshot that cannot
 * be built, or a VM that does not restore from it, is recorded as
 * failed for those settings: creates boot their VMs without trying it
 * again for a minute, doubled at each failure in a row up to an hour,
 * or until a setting changes; the count (MV_SNAP_FAILS) outlives the
 * rebuilds between, until a VM restores.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

#define SNAP_FILE MV_SNAP_FILE
#define SNAP_REC MV_SNAP_REC
/* /work's size on the builder's command line; each restore's comes in
 * its SEED. */
#define SNAP_DISK (64ull << 20)
/* How long saving may take (a few hundred MiB at memory speed). */
#define SAVE_TIMEOUT_MS 120000

/* Sets the error and logs it: a create falls back to booting, so the
 * reason would be lost otherwise. */
static int snap_fail(struct mv_prov *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int snap_fail(struct mv_prov *p, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->host->log(p->h, SBX_LOG_WARNING, "%s", msg);
    return p->host->set_error(p->h, code, "%s", msg);
}

/* FNV-1a: a short, stable name for a state directory (the full key is
 * compared from the record, never trusted to the hash). */
static uint64_t fnv_more(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

uint64_t mv_snap_hash(const char *s)
{
    return fnv_more(1469598103934665603ull, s);
}

uint64_t mv_snap_dir_hash(const char *state, const char *image)
{
    uint64_t h = mv_snap_hash(state);
    return image ? fnv_more(fnv_more(h, "\nimage="), image) : h;
}

/* An image's snapshot: the disk the VM gets, and its BLAKE2b (hex). */
struct snap_img {
    const char *disk;
    char sum[65];
};

/* A directory of ours: made 0700, or already there as a directory (not
 * a link) owned by us that nobody else can write. */
static int own_dir(const char *path)
{
    struct stat st;

    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return -1;
    if (lstat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

/* The directory the snapshot lives in into @buf (when @make, made or
 * checked to be ours), or -1 (errno). */
static int snap_dir(struct mv_prov *p, int make, const struct snap_img *img, char *buf,
                    size_t n)
{
    const char *state = p->host->state_dir(p->h);
    struct statvfs vfs;

    if (!state) {
        errno = ENOENT;
        return -1;
    }
    /* /dev/shm when it can hold a VM's whole memory twice (the file and
     * a rebuild's) beside what is there. */
    if (statvfs("/dev/shm", &vfs) == 0 &&
        (uint64_t)vfs.f_bavail * vfs.f_frsize >= 2 * (p->memory_mib << 20) &&
        (size_t)snprintf(buf, n, MV_SNAP_SHM "/" MV_SNAP_PREFIX "%lu-%016" PRIx64,
                         (unsigned long)geteuid(),
                         mv_snap_dir_hash(state, img ? img->disk : NULL)) < n &&
        (!make || own_dir(buf) == 0))
        return 0;
    if ((size_t)(img ? snprintf(buf, n, "%s/snapshot-%016" PRIx64, state,
                                mv_snap_dir_hash(state, img->disk))
                     : snprintf(buf, n, "%s/snapshot", state)) >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!make)
        return 0;
    if (mkdir(state, 0700) && errno != EEXIST)
        return -1;
    return own_dir(buf);
}

/* "path:inode:size:mtime" of @path into @buf: what tells a file's
 * content changed (a package upgrade, a rebuilt image) without reading it. */
static int file_id(const char *path, char *buf, size_t n)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return -1;
    return (size_t)snprintf(buf, n, "%s:%ju:%ju:%jd.%09ld", path, (uintmax_t)st.st_ino,
                            (uintmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
                            st.st_mtim.tv_nsec) < n ? 0 : -1;
}

/* What the snapshot depends on; a change in any of it rebuilds it (QEMU's
 * migration format and devices, the guest's memory, the VM's settings). */
static char *snap_key(struct mv_prov *p, const char *accel, const struct snap_img *img)
{
    char qemu[4200], kernel[4400], initrd[4400], vmm[4200];
    char *key = NULL;

    if (!mv_vmm_path(p->binary, vmm, sizeof vmm)) {
        errno = ENOENT;
        return NULL;
    }
    if (file_id(vmm, qemu, sizeof qemu) || file_id(p->kernel, kernel, sizeof kernel) ||
        file_id(p->initrd, initrd, sizeof initrd))
        return NULL;
    /* ram=file: the RAM in MV_SNAP_RAM, not the stream */
    if (asprintf(&key, "proto=%d accel=%s memory=%" PRIu64 " qemu=%s kernel=%s initrd=%s"
                 " ram=%s%s%s%s%s", MV_PROTO_VERSION, accel, p->memory_mib, qemu, kernel, initrd,
                 p->snap_shared ? "file" : "stream", img ? " image=" : "", img ? img->disk : "",
                 img ? ":" : "", img ? img->sum : "") < 0)
        return NULL;
    return key;
}

/* What the record in a snapshot's directory says about @key. */
enum rec_state {
    REC_NONE,   /* no record for @key (none, another key's, damaged) */
    REC_OK,     /* a snapshot for @key */
    REC_FAILED, /* building or restoring one for @key failed, not long ago */
};

/* Reads the record in @dir (a file we wrote, checked all the same): for
 * REC_OK the TSC rate and /work size its kernel was started with; for
 * REC_FAILED why, into @why. */
static enum rec_state rec_read(const char *dir, const char *key, unsigned long *tsc,
                               uint64_t *disk, char *why, size_t whylen)
{
    char path[4200];
    json_error_t jerr;
    enum rec_state st = REC_NONE;

    snprintf(path, sizeof path, "%s/" SNAP_REC, dir);
    json_t *r = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    json_t *k = json_object_get(r, "key"), *t = json_object_get(r, "tsc_khz"),
           *d = json_object_get(r, "disk_bytes"), *f = json_object_get(r, "failed"),
           *until = json_object_get(r, "retry_after");
    if (!json_is_string(k) || strcmp(json_string_value(k), key)) {
        st = REC_NONE;
    } else if (json_is_string(f) && json_is_integer(until)) {
        if (json_integer_value(until) > (json_int_t)time(NULL)) {
            snprintf(why, whylen, "%s", json_string_value(f));
            st = REC_FAILED;
        }
    } else if (json_is_integer(t) && json_integer_value(t) >= 0 && json_is_integer(d) &&
               json_integer_value(d) >= 0) {
        *tsc = (unsigned long)json_integer_value(t);
        *disk = (uint64_t)json_integer_value(d);
        st = REC_OK;
    }
    json_decref(r);
    return st;
}

/* Replaces the file @name in @dir by @rec (a temporary file renamed).
 * Every writer holds the snapshot's lock (exclusive), so one temporary
 * name per file cannot be raced. */
static int rec_write(const char *dir, const char *name, json_t *rec)
{
    char tmp[4300], path[4300];

    snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!rec || json_dump_file(rec, tmp, 0) != 0 || rename(tmp, path) != 0) {
        (void)unlink(tmp);
        return -1;
    }
    return 0;
}

/* How long a snapshot that failed for some settings is not tried again
 * (each try costs a boot before the VM that is booted anyway): a minute
 * after the first failure, doubled at each failure in a row, at most an
 * hour.  One failed restore (a loaded host, a VMM killed) no longer
 * turns snapshots off for an hour; one that keeps failing costs a boot
 * an hour at most.  The count is kept in MV_SNAP_FAILS, not the record:
 * a snapshot that builds but never restores is rebuilt after each wait
 * (its record then says OK), and its next failure must count as one
 * more in a row.  Only a VM restored from it clears the count. */
#define RETRY_FIRST_S 60
#define RETRY_MAX_S 3600

/* The failures in a row of a record (or count file) @r for @key: its
 * "failures", or 1 for a failed record from before the count. */
static int rec_count(json_t *r, const char *key)
{
    json_t *k = json_object_get(r, "key"), *f = json_object_get(r, "failures");

    if (!json_is_string(k) || strcmp(json_string_value(k), key))
        return 0;
    if (json_is_integer(f) && json_integer_value(f) > 0 && json_integer_value(f) < 64)
        return (int)json_integer_value(f);
    return json_is_string(json_object_get(r, "failed")) ? 1 : 0;
}

/* The failures in a row @dir counts for @key (0: none), and until when
 * it is not tried again (0: not waiting). */
static int rec_failures(const char *dir, const char *key, time_t *until)
{
    char path[4200];
    int n;

    snprintf(path, sizeof path, "%s/" SNAP_REC, dir);
    json_t *r = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
    json_t *u = json_object_get(r, "retry_after");
    n = rec_count(r, key);
    *until = n && json_is_integer(u) ? (time_t)json_integer_value(u) : 0;
    json_decref(r);
    snprintf(path, sizeof path, "%s/" MV_SNAP_FAILS, dir);
    r = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
    int c = rec_count(r, key);
    json_decref(r);
    return c > n ? c : n;
}

/* Records that the snapshot for @key failed (@why): creates boot their
 * VMs without trying for the backoff's seconds (returned), or until a
 * setting changes.  The caller holds the lock (exclusive). */
static int rec_failed(struct mv_prov *p, const char *dir, const char *key, const char *why,
                      const struct snap_img *img)
{
    time_t until;
    int n = rec_failures(dir, key, &until) + 1;
    int wait = n > 7 ? RETRY_MAX_S : RETRY_FIRST_S << (n - 1);
    if (wait > RETRY_MAX_S)
        wait = RETRY_MAX_S;
    json_t *rec = json_pack("{s:s, s:s, s:I, s:i, s:s?, s:s?}", "key", key, "failed", why,
                            "retry_after", (json_int_t)time(NULL) + wait, "failures", n,
                            "state_dir", p->host->state_dir(p->h), "image",
                            img ? img->disk : NULL);
    json_t *count = json_pack("{s:s, s:i}", "key", key, "failures", n);

    if (rec_write(dir, MV_SNAP_FAILS, count) != 0 || rec_write(dir, SNAP_REC, rec) != 0)
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: recording in %s that the snapshot failed:"
                     " %s", dir, strerror(errno));
    json_decref(count);
    json_decref(rec);
    return wait;
}

/* The same, for a VM that did not restore: under the lock (a builder
 * may be writing the record). */
static int rec_failed_locked(struct mv_prov *p, const char *dir, const char *key,
                             const char *why, const struct snap_img *img)
{
    char path[4300];
    int lock, wait;

    snprintf(path, sizeof path, "%s/" MV_SNAP_LOCK, dir);
    if ((lock = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return 0;
    while (flock(lock, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(lock);
            return 0;
        }
    wait = rec_failed(p, dir, key, why, img);
    close(lock);
    return wait;
}

/* --- QMP, just enough to save: line-delimited JSON over a socket. --- */

struct qmp {
    int fd;
    char buf[65536];
    size_t len;
};

/* The next JSON object QEMU sends that is not an event (into *out). */
static int qmp_read(struct qmp *q, int64_t deadline, json_t **out)
{
    for (;;) {
        char *nl = memchr(q->buf, '\n', q->len);
        if (nl) {
            json_t *j = json_loadb(q->buf, (size_t)(nl - q->buf), 0, NULL);
            size_t used = (size_t)(nl - q->buf) + 1;
            memmove(q->buf, q->buf + used, q->len - used);
            q->len -= used;
            if (j && !json_object_get(j, "event")) {
                *out = j;
                return 0;
            }
            json_decref(j);
            continue;
        }
        if (q->len == sizeof q->buf) {
            errno = EMSGSIZE;
            return -1;
        }
        int64_t left = deadline - mv_now_ms();
        struct pollfd pfd = { q->fd, POLLIN, 0 };
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        int r = poll(&pfd, 1, left > 0x7fffffff ? 0x7fffffff : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read(q->fd, q->buf + q->len, sizeof q->buf - q->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            errno = got ? errno : ECONNRESET;
            return -1;
        }
        q->len += (size_t)got;
    }
}

/* Runs @cmd (JSON text), @fd passed along (SCM_RIGHTS) when >= 0: its
 * "return" (transfer full) in *ret, or -1 with @err set. */
static int qmp_cmd(struct qmp *q, const char *cmd, int fd, int64_t deadline, json_t **ret,
                   char *err, size_t errlen)
{
    json_t *r = NULL;

    if (mv_send_fd(q->fd, cmd, strlen(cmd), fd) != (ssize_t)strlen(cmd) ||
        qmp_read(q, deadline, &r) != 0) {
        snprintf(err, errlen, "QMP %s: %s", cmd, strerror(errno));
        return -1;
    }
    json_t *e = json_object_get(r, "error");
    if (e || !json_object_get(r, "return")) {
        const char *d = json_string_value(json_object_get(e, "desc"));
        snprintf(err, errlen, "QMP %.40s: %s", cmd, d ? d : "no return");
        json_decref(r);
        return -1;
    }
    *ret = json_incref(json_object_get(r, "return"));
    json_decref(r);
    return 0;
}

/* The RAM is a file both sides map (the builder shared, a restore
 * private): the stream leaves it out, and the destination must agree. */
#define IGNORE_SHARED                                                                   \
    "{\"execute\":\"migrate-set-capabilities\",\"arguments\":{\"capabilities\":"      \
    "[{\"capability\":\"x-ignore-shared\",\"state\":true}]}}\n"

/* Saves the running VM behind @qfd into @out (a file, at its start). */
static int qmp_save(int qfd, int out, int shared, char *err, size_t errlen)
{
    struct qmp *q = calloc(1, sizeof *q);
    int64_t deadline = mv_now_ms() + SAVE_TIMEOUT_MS;
    json_t *r = NULL;
    int rc = -1;

    if (!q) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    q->fd = qfd;
    if (qmp_read(q, deadline, &r) != 0) { /* the greeting */
        snprintf(err, errlen, "QMP greeting: %s", strerror(errno));
        goto out;
    }
    json_decref(r);
    r = NULL;
    /* Migrated live, not stopped first: a VM saved stopped is restored
     * stopped. */
    if (qmp_cmd(q, "{\"execute\":\"qmp_capabilities\"}\n", -1, deadline, &r, err, errlen) ||
        (json_decref(r), r = NULL,
         shared && qmp_cmd(q, IGNORE_SHARED, -1, deadline, &r, err, errlen)) ||
        (json_decref(r), r = NULL,
         qmp_cmd(q, "{\"execute\":\"getfd\",\"arguments\":{\"fdname\":\"snap\"}}\n", out,
                 deadline, &r, err, errlen)) ||
        (json_decref(r), r = NULL,
         qmp_cmd(q, "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"fd:snap\"}}\n", -1,
                 deadline, &r, err, errlen)))
        goto out;
    for (;;) {
        json_decref(r);
        r = NULL;
        if (qmp_cmd(q, "{\"execute\":\"query-migrate\"}\n", -1, deadline, &r, err, errlen))
            goto out;
        const char *st = json_string_value(json_object_get(r, "status"));
        if (st && !strcmp(st, "completed"))
            break;
        if (st && (!strcmp(st, "failed") || !strcmp(st, "cancelled"))) {
            const char *d = json_string_value(json_object_get(r, "error-desc"));
            snprintf(err, errlen, "migration %s: %s", st, d ? d : "no reason given");
            goto out;
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    rc = 0;
out:
    json_decref(r);
    free(q);
    return rc;
}

/* Boots a VM, saves it into @dir (the file, then the record naming @key:
 * both renamed into place, so a reader sees the old pair or the new). */
static int snap_build(struct mv_prov *p, const char *accel, const char *dir, const char *key,
                      const struct snap_img *img)
{
    char tmp[4300], path[4300], err[512];
    unsigned long tsc = mv_host_tsc_khz();
    int qv[2] = { -1, -1 }, out = -1, ram_fd = -1, rc;
    struct mv_sandbox *s = NULL;
    int64_t t0 = mv_now_ms();
    json_t *rec = NULL;

    char ram_tmp[4300], ram[4300];
    snprintf(tmp, sizeof tmp, "%s/" SNAP_FILE ".tmp", dir);
    snprintf(path, sizeof path, "%s/" SNAP_FILE, dir);
    snprintf(ram_tmp, sizeof ram_tmp, "%s/" MV_SNAP_RAM ".tmp", dir);
    snprintf(ram, sizeof ram, "%s/" MV_SNAP_RAM, dir);
    (void)unlink(ram_tmp);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qv) != 0 ||
        (out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
        rc = snap_fail(p, SBX_E_IO, "microvm: snapshot %s: %s", tmp, strerror(errno));
        goto out;
    }
    /* The guest's RAM, mapped shared: QEMU is handed it open (its
     * directory is not in a jailed QEMU's root), the jail's uid its
     * owner while it writes (QEMU opens it again read-write). */
    char ram_self[64];
    if (p->snap_shared &&
        ((ram_fd = open(ram_tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 ||
         (p->vmm_jail && geteuid() == 0 && fchown(ram_fd, p->vmm_uid, p->vmm_gid) != 0))) {
        rc = snap_fail(p, SBX_E_IO, "microvm: snapshot %s: %s", ram_tmp, strerror(errno));
        goto out;
    }
    snprintf(ram_self, sizeof ram_self, "/proc/self/fd/%d", ram_fd);
    struct mv_boot_from from = { .qmp_fd = qv[1], .incoming_fd = -1, .tsc_khz = tsc,
                                 .cmdline_disk = SNAP_DISK,
                                 .mem_path = p->snap_shared ? ram_self : NULL,
                                 .mem_share = 1, .mem_fd = ram_fd, .qmp_host = -1,
                                 .image = img ? img->disk : NULL };
    if ((rc = mv_boot(p, accel, p->boot_timeout_ms, SNAP_DISK, NULL, &from, &s))) {
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: the snapshot's VM did not boot");
        rec_failed(p, dir, key, "its VM did not boot", img);
        goto out;
    }
    close(qv[1]);
    qv[1] = -1;
    if (qmp_save(qv[0], out, p->snap_shared, err, sizeof err) != 0) {
        rc = snap_fail(p, SBX_E_BACKEND, "microvm: saving the snapshot: %s", err);
        rec_failed(p, dir, key, err, img);
        goto out;
    }
    /* state_dir: whose it is, so that gc knows it an orphan once that
     * directory is gone (mv-snapgc.c). */
    /* Its builder gone (saved, not yet freed: stopped first), the RAM
     * is ours again before anyone restores from it. */
    mv_sandbox_free(s);
    s = NULL;
    if (ram_fd >= 0 && (fchown(ram_fd, geteuid(), getegid()) != 0 || fchmod(ram_fd, 0600) != 0)) {
        rc = snap_fail(p, SBX_E_IO, "microvm: snapshot %s: %s", ram_tmp, strerror(errno));
        goto out;
    }
    rec = json_pack("{s:s, s:I, s:I, s:s?, s:s?}", "key", key, "tsc_khz", (json_int_t)tsc,
                    "disk_bytes", (json_int_t)SNAP_DISK, "state_dir", p->host->state_dir(p->h),
                    "image", img ? img->disk : NULL);
    /* The RAM first: a reader holding the old stream has the old RAM's
     * fd (mv_snap_restore opens both under the lock). */
    if (!rec || (p->snap_shared && rename(ram_tmp, ram) != 0) || rename(tmp, path) != 0 ||
        rec_write(dir, SNAP_REC, rec) != 0) {
        rc = snap_fail(p, SBX_E_IO, "microvm: snapshot record in %s: %s", dir,
                       strerror(errno));
        goto out;
    }
    struct stat st;
    p->host->log(p->h, SBX_LOG_INFO, "microvm: built the snapshot %s (%s, %jd MiB) in %" PRId64
                 " ms", path, accel, stat(path, &st) == 0 ? (intmax_t)(st.st_size >> 20) : -1,
                 mv_now_ms() - t0);
out:
    json_decref(rec);
    mv_sandbox_free(s);
    if (qv[0] >= 0)
        close(qv[0]);
    if (qv[1] >= 0)
        close(qv[1]);
    if (out >= 0)
        close(out);
    if (ram_fd >= 0)
        close(ram_fd);
    (void)unlink(tmp);
    (void)unlink(ram_tmp);
    return rc;
}

/* Opens the snapshot's stream @path and its RAM file in @dir (under the
 * lock, so the two are one build's): 0, or -1 with neither open. */
static int open_pair(const char *dir, const char *path, int shared, int *fd, int *ram_fd)
{
    char ram[4300];

    snprintf(ram, sizeof ram, "%s/" MV_SNAP_RAM, dir);
    if ((*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return -1;
    if (!shared)
        return 0; /* the RAM is in the stream */
    /* Read-write: QEMU opens it again through /proc/self/fd that way
     * (mapped private, it never writes the file). */
    if ((*ram_fd = open(ram, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0) {
        int e = errno;
        close(*fd);
        *fd = -1;
        errno = e;
        return -1;
    }
    return 0;
}

/* The snapshot for @accel, built first when missing or stale: its stream
 * and RAM file open (*fd, *ram_fd) and its record's numbers. */
static int snap_get(struct mv_prov *p, const char *accel, const struct snap_img *img, char *dir,
                    size_t dirlen, int *fd, int *ram_fd, unsigned long *tsc, uint64_t *disk)
{
    char path[4300], why[512];
    char *key = snap_key(p, accel, img);
    int lock = -1, rc = SBX_OK;
    enum rec_state st;

    *fd = *ram_fd = -1;
    if (!key)
        return snap_fail(p, SBX_E_IO, "microvm: the VMM or the guest image: %s",
                         strerror(errno));
    if (snap_dir(p, 1, img, dir, dirlen) != 0 ||
        (size_t)snprintf(path, sizeof path, "%s/lock", dir) >= sizeof path ||
        (lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
        rc = snap_fail(p, SBX_E_IO, "microvm: the snapshot's directory: %s",
                       strerror(errno));
        goto out;
    }
    snprintf(path, sizeof path, "%s/" SNAP_FILE, dir);
    /* Shared to read a current one; exclusive (the only builder) to
     * build, checking again once it is ours. */
    for (int op = LOCK_SH;; op = LOCK_EX) {
        while (flock(lock, op) != 0)
            if (errno != EINTR) {
                rc = snap_fail(p, SBX_E_IO, "microvm: flock %s/lock: %s", dir,
                               strerror(errno));
                goto out;
            }
        st = rec_read(dir, key, tsc, disk, why, sizeof why);
        if (st == REC_OK && open_pair(dir, path, p->snap_shared, fd, ram_fd) == 0)
            break;
        if (st == REC_FAILED) {
            rc = p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the snapshot for these "
                                    "settings failed not long ago (%s): not tried again yet",
                                    why);
            goto out;
        }
        if (op == LOCK_EX) {
            if ((rc = snap_build(p, accel, dir, key, img)))
                goto out;
            if (rec_read(dir, key, tsc, disk, why, sizeof why) != REC_OK ||
                open_pair(dir, path, p->snap_shared, fd, ram_fd) != 0) {
                rc = snap_fail(p, SBX_E_IO, "microvm: the snapshot %s: %s", path,
                               strerror(errno));
                goto out;
            }
            break;
        }
    }
out:
    if (lock >= 0)
        close(lock); /* and its lock */
    free(key);
    return rc;
}

int mv_snap_incoming(struct mv_prov *p, int qmp, int fd)
{
    struct qmp *q = calloc(1, sizeof *q);
    int64_t deadline = mv_now_ms() + SAVE_TIMEOUT_MS;
    char cmd[160], err[512];
    json_t *r = NULL;
    int rc = SBX_OK;

    if (!q)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    q->fd = qmp;
    snprintf(cmd, sizeof cmd,
             "{\"execute\":\"migrate-incoming\",\"arguments\":{\"uri\":\"fd:%d\"}}\n", fd);
    if (qmp_read(q, deadline, &r) != 0) { /* the greeting */
        snprintf(err, sizeof err, "QMP greeting: %s", strerror(errno));
        goto fail;
    }
    json_decref(r);
    r = NULL;
    if (qmp_cmd(q, "{\"execute\":\"qmp_capabilities\"}\n", -1, deadline, &r, err, sizeof err) ||
        (json_decref(r), r = NULL, qmp_cmd(q, IGNORE_SHARED, -1, deadline, &r, err, sizeof err)) ||
        (json_decref(r), r = NULL, qmp_cmd(q, cmd, -1, deadline, &r, err, sizeof err)))
        goto fail;
    /* The VM runs once the stream is in (the device state: the RAM is
     * the file's); the agent's hello follows its SEED. */
    for (;;) {
        json_decref(r);
        r = NULL;
        if (qmp_cmd(q, "{\"execute\":\"query-status\"}\n", -1, deadline, &r, err,
                    sizeof err))
            goto fail;
        const char *st = json_string_value(json_object_get(r, "status"));
        if (st && !strcmp(st, "running"))
            break;
        if (st && strcmp(st, "inmigrate")) {
            snprintf(err, sizeof err, "the VM is %s, not running, after its migration", st);
            goto fail;
        }
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    goto out;
fail:
    rc = snap_fail(p, SBX_E_BACKEND, "microvm: restoring a VM: %s", err);
out:
    json_decref(r);
    free(q);
    return rc;
}

int mv_snap_seed(struct mv_prov *p, struct mv_sandbox *s, uint64_t disk_bytes,
                 int64_t deadline_ms, struct mv_hello *hl, int *answered)
{
    struct mv_seed sd;
    struct timespec now;
    uint8_t pl[MV_SEED_LEN];
    int rc;

    *answered = 0;
    if (getrandom(sd.entropy, sizeof sd.entropy, 0) != (ssize_t)sizeof sd.entropy)
        return snap_fail(p, SBX_E_IO, "microvm: getrandom: %s", strerror(errno));
    clock_gettime(CLOCK_REALTIME, &now);
    sd.sec = (int64_t)now.tv_sec;
    sd.nsec = now.tv_nsec;
    sd.disk_bytes = disk_bytes;
    mv_seed_encode(pl, &sd);
    if ((rc = mv_chan_send(p, s->chan, MV_T_SEED, pl, sizeof pl, NULL, 0)))
        return rc;
    return mv_chan_hello(p, s->chan, deadline_ms, hl, answered);
}

int mv_snap_restore(struct mv_prov *p, const char *accel, uint64_t disk_bytes,
                    const char *persist_id, struct mv_sandbox **out)
{
    return mv_snap_restore_image(p, accel, disk_bytes, persist_id, NULL, out);
}

int mv_snap_restore_image(struct mv_prov *p, const char *accel, uint64_t disk_bytes,
                          const char *persist_id, const char *image, struct mv_sandbox **out)
{
    char dir[4200], ram[64], sum[4400];
    unsigned long tsc = 0;
    uint64_t disk = 0;
    int fd = -1, ram_fd = -1, qv[2] = { -1, -1 }, rc;
    struct snap_img si, *img = NULL;
    struct mv_image_sum rec;

    *out = NULL;
    if (image) {
        /* The disk's identity is its record's hash (mv-image.c checked
         * it against the disk just before). */
        snprintf(sum, sizeof sum, "%s" MV_IMAGE_SUM, image);
        if (mv_image_sum_read(sum, &rec) != 0)
            return snap_fail(p, SBX_E_IO, "microvm: the image disk's record %s: %s", sum,
                             strerror(errno));
        si.disk = image;
        memcpy(si.sum, rec.hash, sizeof si.sum);
        img = &si;
    }
    if ((rc = snap_get(p, accel, img, dir, sizeof dir, &fd, &ram_fd, &tsc, &disk)))
        return rc;
    /* A jailed QEMU gets sealed copies, never the files (mv-seal.c). */
    if (p->vmm_jail && mv_seal_pair(p, dir, &fd, &ram_fd) != 0) {
        int e = errno;
        close(fd);
        if (ram_fd >= 0)
            close(ram_fd);
        return snap_fail(p, SBX_E_IO, "microvm: sealing a copy of the snapshot in %s: %s", dir,
                         strerror(e));
    }
    if (p->snap_shared && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qv) != 0) {
        close(fd);
        close(ram_fd);
        return snap_fail(p, SBX_E_IO, "microvm: socketpair: %s", strerror(errno));
    }
    /* The RAM: the snapshot's file mapped private, through the fd opened
     * with the stream (another build may rename a new one in meanwhile). */
    snprintf(ram, sizeof ram, "/proc/self/fd/%d", ram_fd);
    struct mv_boot_from from = { .qmp_fd = qv[1], .incoming_fd = fd, .tsc_khz = tsc,
                                 .cmdline_disk = disk, .mem_path = p->snap_shared ? ram : NULL,
                                 .mem_share = 0, .mem_fd = ram_fd, .qmp_host = qv[0],
                                 .image = image };
    rc = mv_boot(p, accel, p->boot_timeout_ms, disk_bytes, persist_id, &from, out);
    close(fd);
    if (ram_fd >= 0)
        close(ram_fd);
    if (qv[0] >= 0) {
        close(qv[0]);
        close(qv[1]);
    }
    if (rc != SBX_OK) {
        char *key = snap_key(p, accel, img);
        int wait = key ? rec_failed_locked(p, dir, key, "a VM did not restore from it", img) : 0;
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: no VM restored from %s/" SNAP_FILE
                     ": not tried again for these settings for %d s", dir, wait);
        free(key);
        return rc;
    }
    p->host->log(p->h, SBX_LOG_INFO, "microvm: a VM restored from %s/" SNAP_FILE, dir);
    /* It restores: the failures in a row are over. */
    char fails[4300];
    snprintf(fails, sizeof fails, "%s/" MV_SNAP_FAILS, dir);
    (void)unlink(fails);
    return SBX_OK;
}

void mv_snap_describe(struct mv_prov *p, const char *accel, char *buf, size_t n)
{
    char dir[4200];
    unsigned long tsc;
    uint64_t disk;
    char *key;

    if (!p->snapshot) {
        snprintf(buf, n, "off: every VM boots");
        return;
    }
    if (snap_dir(p, 0, NULL, dir, sizeof dir) != 0) {
        snprintf(buf, n, "auto: no directory for it (%s): every VM boots", strerror(errno));
        return;
    }
    char why[300];
    key = snap_key(p, accel, NULL);
    enum rec_state st = key ? rec_read(dir, key, &tsc, &disk, why, sizeof why) : REC_NONE;
    time_t until;
    int failures = key ? rec_failures(dir, key, &until) : 0;
    if (st == REC_FAILED)
        snprintf(buf, n, "auto: %s/" SNAP_FILE " (failed for these settings: %s; VMs boot, "
                 "tried again in %lld s (failure %d in a row: %d s after the first, doubled"
                 " each time, at most %d s) or when a setting changes)", dir, why,
                 (long long)(until - time(NULL)), failures, RETRY_FIRST_S, RETRY_MAX_S);
    else
        snprintf(buf, n, "auto: %s/" SNAP_FILE " (%s)", dir,
                 st == REC_OK ? "built for these settings"
                              : "not built for these settings yet: the next create builds it");
    free(key);
}
