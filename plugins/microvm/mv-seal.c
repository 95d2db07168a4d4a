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
 * more memory than the data; it is made once per provider process and
 * snapshot (kept here by the file's identity) and rebuilt when the
 * snapshot is.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mv-int.h"

#define CHUNK (1u << 20)

struct sealed {
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    off_t size;
    int fd; /* the sealed memfd, or -1 */
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

int mv_seal_get(struct mv_prov *p, int which, int fd)
{
    struct mv_seals *m = p->seals;
    struct sealed *s = &m->s[which ? 1 : 0];
    struct stat st;
    char self[64];
    int out = -1;

    if (fstat(fd, &st) != 0)
        return -1;
    pthread_mutex_lock(&m->lock);
    if (s->fd < 0 || s->dev != st.st_dev || s->ino != st.st_ino || s->size != st.st_size ||
        s->mtime.tv_sec != st.st_mtim.tv_sec || s->mtime.tv_nsec != st.st_mtim.tv_nsec) {
        int64_t t0 = mv_now_ms();
        int n = seal_copy(fd, st.st_size, which ? "polysandbox-vm-ram" : "polysandbox-vm-snap");
        if (n < 0)
            goto out;
        struct stat ms;
        p->host->log(p->h, SBX_LOG_INFO,
                     "microvm: sealed a copy of the snapshot's %s (%lld of"
                     " %lld MiB held) in %lld ms",
                     which ? "RAM" : "stream",
                     fstat(n, &ms) == 0 ? (long long)(ms.st_blocks >> 11) : -1LL,
                     (long long)(st.st_size >> 20), (long long)(mv_now_ms() - t0));
        if (s->fd >= 0)
            close(s->fd);
        *s = (struct sealed){st.st_dev, st.st_ino, st.st_mtim, st.st_size, n};
    }
    /* Its own open file description: its own offset. */
    snprintf(self, sizeof self, "/proc/self/fd/%d", s->fd);
    out = open(self, O_RDONLY | O_CLOEXEC);
out:
    pthread_mutex_unlock(&m->lock);
    return out;
}
