/* plugins/microvm/mv-snapgc.c - snapshots whose state directory is gone
 *
 * A snapshot lives in /dev/shm (mv-snap.c), in a directory named after
 * the state directory that made it: memory, hundreds of MiB each.  When
 * that state directory is removed (a test's temporary one, a
 * container's), nothing would ever use or remove the snapshot again and
 * its memory stays until reboot.
 *
 * So list (what `polysandbox gc` runs) also looks at this euid's other
 * snapshot directories, one readdir of /dev/shm.  One is removed when
 * nobody holds its lock (no create is building or opening it) and
 * either its record names the state directory it was built for (the
 * directory's name is that path's hash) and that path is gone, or it
 * names none (written before records did, or damaged) and it was last
 * written over a day ago.  A snapshot whose state directory is still
 * there is left to it: the next create there reuses or rebuilds it,
 * unless it is an image's (its record names the disk, whose path is
 * hashed into its name too) and that disk is gone (mv-imagegc.c).
 * An image's snapshot kept in the state directory (STATE/snapshot-<hash>,
 * where /dev/shm was too small) is read the same way: removed once its
 * disk is gone.
 * A snapshot removed has its holder of sealed copies, if any, killed
 * first (mv-hold.c's mv_hold_stop).
 * The directory and its record are our own, in a private place, but
 * are read as hostile all the same: a directory not ours, not 0700, a
 * link, or holding a file we do not make, is left alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

/* A snapshot that names no state directory is an orphan once this old. */
#define UNOWNED_AGE_S (24 * 3600)
/* Far more than any record we write. */
#define REC_MAX (64 * 1024)

/* The files mv-snap.c makes in a snapshot's directory, then its
 * holder's (mv-hold.c, not counted as written): nothing else is ever
 * removed. */
static const char *const leaves[] = {
    MV_SNAP_FAILS, MV_SNAP_FAILS ".tmp",
    MV_SNAP_FILE, MV_SNAP_FILE ".tmp", MV_SNAP_RAM, MV_SNAP_RAM ".tmp", MV_SNAP_REC, MV_SNAP_REC ".tmp", MV_SNAP_LOCK,
    MV_HOLD_SOCK, MV_HOLD_LOCK,
};
#define N_WRITTEN (sizeof leaves / sizeof leaves[0] - 2)

/* The hash in @name, a directory of this euid's snapshots, into *hash. */
static int snap_name(const char *name, uint64_t *hash)
{
    char prefix[64];
    size_t k = (size_t)snprintf(prefix, sizeof prefix, MV_SNAP_PREFIX "%lu-",
                                (unsigned long)geteuid());
    const char *hex = name + k;

    if (strncmp(name, prefix, k) || strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16)
        return -1;
    *hash = strtoull(hex, NULL, 16);
    return 0;
}

/* The state directory @dfd's record names, if its hash is @hash (a
 * record copied from elsewhere names another's): (transfer full) or NULL;
 * an image's snapshot's disk (its name hashed in too) into @image. */
static char *rec_owner(int dfd, uint64_t hash, char *image, size_t n)
{
    int fd = openat(dfd, MV_SNAP_REC, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    char *owner = NULL;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= REC_MAX) {
        json_t *r = json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL);
        const char *s = json_string_value(json_object_get(r, "state_dir"));
        const char *im = json_string_value(json_object_get(r, "image"));
        if (s && s[0] == '/' && (!im || im[0] == '/') && mv_snap_dir_hash(s, im) == hash &&
            (owner = strdup(s)) && im)
            snprintf(image, n, "%s", im);
        json_decref(r);
    }
    close(fd);
    return owner;
}

/* The newest mtime of the files in @dfd (0 for none). */
static time_t last_written(int dfd)
{
    time_t t = 0;
    struct stat st;

    for (size_t i = 0; i < N_WRITTEN; i++)
        if (fstatat(dfd, leaves[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtime > t)
            t = st.st_mtime;
    return t;
}

/* Why the snapshot in @dfd (hash @hash) is an orphan, or NULL to keep it. */
static const char *orphan_why(int dfd, uint64_t hash, char *owner_out, size_t n)
{
    char image[4096] = "";
    char *owner = rec_owner(dfd, hash, image, sizeof image);
    struct stat st;
    const char *why = NULL;

    owner_out[0] = '\0';
    if (owner) {
        snprintf(owner_out, n, "%s", owner);
        if (stat(owner, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
            why = "its state directory is gone";
        else if (image[0] && stat(image, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
            why = "its image's disk is gone";
        free(owner);
        return why;
    }
    if (time(NULL) - last_written(dfd) > UNOWNED_AGE_S)
        why = "it names no state directory and was last written over a day ago";
    return why;
}

/* Removes the snapshot directory @name (open as @dfd) under @shm (the
 * path @parent), unless its lock is held.  Logs what it did. */
static void remove_snap(struct mv_prov *p, const char *parent, int shm, const char *name, int dfd,
                        const char *why, const char *owner)
{
    int lock = openat(dfd, MV_SNAP_LOCK, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

    /* Held: a create is building or opening it right now. */
    char dir[4200];

    if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) != 0) {
        close(lock);
        return;
    }
    /* Its holder (mv-hold.c) would keep the copies' memory until idle. */
    snprintf(dir, sizeof dir, "%s/%s", parent, name);
    if (mv_hold_stop(dir) > 0)
        p->host->log(p->h, SBX_LOG_INFO, "microvm: gc: stopped the holder of %s", dir);
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++)
        if (unlinkat(dfd, leaves[i], 0) != 0 && errno != ENOENT)
            p->host->log(p->h, SBX_LOG_WARNING, "microvm: gc: removing %s/%s/%s: %s",
                         parent, name, leaves[i], strerror(errno));
    if (unlinkat(shm, name, AT_REMOVEDIR) != 0)
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: gc: removing %s/%s: %s (left there)",
                     parent, name, strerror(errno));
    else
        p->host->log(p->h, SBX_LOG_INFO, "microvm: gc: removed the snapshot %s/%s%s%s: %s",
                     parent, name, owner[0] ? " of " : "", owner, why);
    if (lock >= 0)
        close(lock);
}

void mv_snap_sweep(struct mv_prov *p)
{
    const char *state = p->host->state_dir(p->h);
    uint64_t mine = state ? mv_snap_hash(state) : 0;
    DIR *d = opendir(MV_SNAP_SHM);
    int shm = d ? dirfd(d) : -1;
    struct dirent *de;

    while (shm >= 0 && (de = readdir(d))) {
        char owner[4096];
        uint64_t hash;
        struct stat st;
        const char *why;

        if (snap_name(de->d_name, &hash) != 0 || (state && hash == mine))
            continue;
        int dfd = openat(shm, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            continue;
        if (fstat(dfd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 077) &&
            (why = orphan_why(dfd, hash, owner, sizeof owner)))
            remove_snap(p, MV_SNAP_SHM, shm, de->d_name, dfd, why, owner);
        close(dfd);
    }
    if (d)
        closedir(d);
    /* An image's snapshot kept in the state directory (/dev/shm too
     * small): STATE/snapshot-<hash>, removed once its disk is gone. */
    if (!state || !(d = opendir(state)))
        return;
    while ((de = readdir(d))) {
        char owner[4096], *end;
        uint64_t hash;
        struct stat st;
        const char *why;

        if (strncmp(de->d_name, "snapshot-", 9) || strlen(de->d_name) != 25 ||
            strspn(de->d_name + 9, "0123456789abcdef") != 16)
            continue;
        hash = strtoull(de->d_name + 9, &end, 16);
        int dfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            continue;
        if (fstat(dfd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 077) &&
            (why = orphan_why(dfd, hash, owner, sizeof owner)))
            remove_snap(p, state, dirfd(d), de->d_name, dfd, why, owner);
        close(dfd);
    }
    closedir(d);
}
