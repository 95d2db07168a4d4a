/* plugins/microvm/mv-seal.c - a snapshot's files out of QEMU's write reach
 *
 * QEMU 7.2 opens a memory-backend-file's mem-path read-write whatever
 * share= says (its readonly= maps the RAM read-only, which a guest
 * cannot run on; 8.2's rom=off is what would map a read-only file
 * private).  So a restored VM is not given the snapshot's files: it is
 * given sealed memfd copies of them (F_SEAL_WRITE, _GROW, _SHRINK,
 * _SEAL).  QEMU opens the RAM's through /proc/self/fd read-write, as it
 * must, and maps it private (copy-on-write, shared by every VM this
 * process restores from it), but no write(2) and no shared writable
 * mapping of it can succeed, whoever QEMU runs as; the stream it reads
 * through an fd of its own (a new open file description each, so two
 * restores never share an offset).  The copy skips the pages that are
 * all zeros (the guest never touched most of its RAM), so it takes no
 * more memory than the data; it is kept here by the file's identity and
 * rebuilt when the snapshot is.  Made once per snapshot for all of this
 * user's processes: a process asks the snapshot's holder (mv-hold.c)
 * first, and the one that had to copy (one at a time, MV_HOLD_LOCK)
 * starts a holder of its copies.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mv-int.h"

#define CHUNK (1u << 20)

struct sealed {
    struct mv_hold_id id; /* of the file it is a copy of */
    int fd;               /* the sealed memfd, or -1 */
};

struct mv_seals {
    pthread_mutex_t lock;
    struct sealed s[2]; /* the stream's, the RAM's */
};

int mv_seal_init(struct mv_prov *p)
{
    struct mv_seals *m = calloc(1, sizeof *m);

    if (!m || pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return -1;
    }
    m->s[0].fd = m->s[1].fd = -1;
    p->seals = m;
    return 0;
}

void mv_seal_fini(struct mv_prov *p)
{
    struct mv_seals *m = p->seals;

    if (!m)
        return;
    for (int i = 0; i < 2; i++)
        if (m->s[i].fd >= 0)
            close(m->s[i].fd);
    pthread_mutex_destroy(&m->lock);
    free(m);
    p->seals = NULL;
}

static int all_zero(const unsigned char *b, size_t n)
{
    return n == 0 || (b[0] == 0 && !memcmp(b, b + 1, n - 1));
}

/* A sealed memfd holding @fd's bytes (sparse where they are zeros). */
static int seal_copy(int fd, off_t size, const char *name)
{
    unsigned char *buf = malloc(CHUNK);
    int m = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int rc = -1;

    if (!buf || m < 0 || ftruncate(m, size) != 0)
        goto out;
    for (off_t off = 0; off < size;) {
        /* Only the file's data: a hole (a page the guest never wrote to
         * the file's tmpfs) is not even read. */
        off_t data = lseek(fd, off, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break;      /* holes to the end */
        if (data > off) /* off is CHUNK-aligned: this stays at or after it */
            off = data & ~(off_t)(CHUNK - 1);
        ssize_t got = pread(fd, buf, CHUNK, off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            errno = got ? errno : EIO;
            goto out;
        }
        for (ssize_t done = 0; !all_zero(buf, (size_t)got) && done < got;) {
            ssize_t w = pwrite(m, buf + done, (size_t)(got - done), off + done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                goto out;
            done += w;
        }
        off += got;
    }
    if (fcntl(m, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
        goto out;
    rc = 0;
out:
    free(buf);
    if (rc && m >= 0) {
        int e = errno;
        close(m);
        errno = e;
    }
    return rc ? -1 : m;
}

/* The identity of each present fd's file (@fds[i] >= 0) into @want. */
static int fstat_pair(const int fds[2], struct mv_hold_id want[2])
{
    for (int i = 0; i < 2; i++) {
        struct stat st;
        memset(&want[i], 0, sizeof want[i]);
        if (fds[i] < 0)
            continue;
        if (fstat(fds[i], &st) != 0)
            return -1;
        mv_hold_id_of(&st, &want[i]);
    }
    return 0;
}

/* Whether the copies kept in @m are of the files @want names. */
static int kept(const struct mv_seals *m, const int fds[2], const struct mv_hold_id want[2])
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0 && (m->s[i].fd < 0 || memcmp(&m->s[i].id, &want[i], sizeof want[i])))
            return 0;
    return 1;
}

static void keep(struct sealed *s, const struct mv_hold_id *id, int fd)
{
    if (s->fd >= 0)
        close(s->fd);
    s->id = *id;
    s->fd = fd;
}

/* The copies from the snapshot's holder in @dir (mv-hold.c): 0 kept in
 * @m, or -1 (none there, or its answer refused: logged). */
static int from_holder(struct mv_prov *p, struct mv_seals *m, const char *dir, const int fds[2],
                       const struct mv_hold_id want[2])
{
    int got[2] = {-1, -1};
    pid_t pid = 0;
    char why[160];

    for (int i = 0; i < 2; i++) {
        if (fds[i] < 0)
            continue;
        if ((got[i] = mv_hold_fetch(dir, i, &want[i], &pid, why, sizeof why)) >= 0)
            continue;
        if (why[0])
            p->host->log(p->h, SBX_LOG_INFO,
                         "microvm: refused the answer of the holder of %s (pid %d): %s: making"
                         " a copy",
                         dir, (int)pid, why);
        if (i && got[0] >= 0)
            close(got[0]);
        return -1;
    }
    for (int i = 0; i < 2; i++)
        if (got[i] >= 0)
            keep(&m->s[i], &want[i], got[i]);
    p->host->log(p->h, SBX_LOG_INFO,
                 "microvm: the snapshot's sealed copies from its holder (pid %d)", (int)pid);
    return 0;
}

/* Copies what @m lacks of @fds' files (@which's name for each). */
static int copy_missing(struct mv_prov *p, struct mv_seals *m, const int fds[2],
                        const struct mv_hold_id want[2])
{
    for (int which = 0; which < 2; which++) {
        struct sealed *s = &m->s[which];
        if (fds[which] < 0 || (s->fd >= 0 && !memcmp(&s->id, &want[which], sizeof want[which])))
            continue;
        int64_t t0 = mv_now_ms();
        int n = seal_copy(fds[which], (off_t)want[which].size,
                          which ? "polysandbox-vm-ram" : "polysandbox-vm-snap");
        if (n < 0)
            return -1;
        struct stat ms;
        p->host->log(p->h, SBX_LOG_INFO,
                     "microvm: sealed a copy of the snapshot's %s (%lld of"
                     " %lld MiB held) in %lld ms",
                     which ? "RAM" : "stream",
                     fstat(n, &ms) == 0 ? (long long)(ms.st_blocks >> 11) : -1LL,
                     (long long)(want[which].size >> 20), (long long)(mv_now_ms() - t0));
        keep(s, &want[which], n);
    }
    return 0;
}

/* The copies, made here when the holder has none; then a holder of them
 * started.  One process at a time (MV_HOLD_LOCK): the second waits and
 * gets the first one's from its holder. */
static int copy_and_hold(struct mv_prov *p, struct mv_seals *m, const char *dir, const int fds[2],
                         const struct mv_hold_id want[2])
{
    char path[4300];
    int lock = -1, rc = -1;

    if ((size_t)snprintf(path, sizeof path, "%s/" MV_HOLD_LOCK, dir) < sizeof path &&
        (lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0)
        while (flock(lock, LOCK_EX) != 0 && errno == EINTR)
            ;
    if (lock >= 0 && from_holder(p, m, dir, fds, want) == 0) {
        close(lock);
        return 0;
    }
    if (copy_missing(p, m, fds, want) != 0)
        goto out;
    rc = 0;
    if (lock >= 0) { /* no lock, no holder: two could race for its socket */
        int held[2] = {fds[0] >= 0 ? m->s[0].fd : -1, fds[1] >= 0 ? m->s[1].fd : -1};
        pid_t pid = mv_hold_start(dir, held, want);
        if (pid > 0)
            p->host->log(p->h, SBX_LOG_INFO,
                         "microvm: started the holder of the snapshot's sealed copies"
                         " (pid %d, %s/" MV_HOLD_SOCK ")",
                         (int)pid, dir);
        else
            p->host->log(p->h, SBX_LOG_WARNING,
                         "microvm: no holder of the snapshot's sealed copies (%s): each"
                         " process copies them",
                         strerror(errno));
    }
out:
    if (lock >= 0) {
        int e = errno;
        close(lock);
        errno = e;
    }
    return rc;
}

int mv_seal_pair(struct mv_prov *p, const char *dir, int *fd, int *ram_fd)
{
    struct mv_seals *m = p->seals;
    int fds[2] = {*fd, *ram_fd}, out[2] = {-1, -1}, rc = -1;
    struct mv_hold_id want[2];

    if (fstat_pair(fds, want) != 0)
        return -1;
    pthread_mutex_lock(&m->lock);
    if (!kept(m, fds, want) && from_holder(p, m, dir, fds, want) != 0 &&
        copy_and_hold(p, m, dir, fds, want) != 0)
        goto out;
    /* Each its own open file description: its own offset. */
    for (int i = 0; i < 2; i++) {
        char self[64];
        if (fds[i] < 0)
            continue;
        snprintf(self, sizeof self, "/proc/self/fd/%d", m->s[i].fd);
        if ((out[i] = open(self, O_RDONLY | O_CLOEXEC)) < 0)
            goto out;
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    *fd = out[0];
    *ram_fd = out[1];
    out[0] = out[1] = -1;
    rc = 0;
out:
    for (int i = 0; i < 2; i++)
        if (out[i] >= 0)
            close(out[i]);
    pthread_mutex_unlock(&m->lock);
    return rc;
}
