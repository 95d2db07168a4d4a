/* plugins/microvm/mv-imagegc.c - image disks whose image is gone
 *
 * An image's disk (mv-image.c) is named by its root's identity and kept
 * under STATE/images/ with its record, which names the root.  Once the
 * image is removed from the store (`polysandbox image rm`, `prune`), or
 * pulled again into a new root, nothing would use that disk again: it
 * is as large as the image.  So list (what `polysandbox gc` runs) also
 * reads that directory and removes a disk, its record, its build log
 * and its lock when the root its record names is gone or is another
 * directory now (its identity no longer the disk's key), and nobody
 * holds the key's lock (no create is building or checking it).  A disk
 * with no record (made before records, or whose build was killed) and
 * leftovers of a killed build are removed once a day old.  Only names
 * mv-image.c makes are touched.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mv-int.h"

/* A disk with no record, or a build's leftover, is removed this old. */
#define UNRECORDED_AGE_S (24 * 3600)

/* The key of a name mv-image.c makes ("<16 hex>.erofs", ".ext4", with
 * @suffix after): 1 and *key, else 0. */
static int disk_name(const char *name, const char *suffix, uint64_t *key, const char **fs)
{
    char hex[17];
    size_t n = strlen(name), sl = strlen(suffix);

    if (n < 17 + sl || strcmp(name + n - sl, suffix) || name[16] != '.' ||
        strspn(name, "0123456789abcdef") != 16)
        return 0;
    n -= sl;
    if (n == 22 && !strncmp(name + 17, "erofs", 5))
        *fs = "erofs";
    else if (n == 21 && !strncmp(name + 17, "ext4", 4))
        *fs = "ext4";
    else
        return 0;
    memcpy(hex, name, 16);
    hex[16] = '\0';
    *key = strtoull(hex, NULL, 16);
    return 1;
}

/* Whether the disk of @key, made of the record's @root, is an orphan. */
static int orphan(const char *root, uint64_t key)
{
    struct stat st;

    if (stat(root, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR;
    return !S_ISDIR(st.st_mode) || mv_image_key(root, &st) != key;
}

/* Removes the disk @base (".../KEY.FS") and what goes with it, holding
 * the key's lock @lock; 0, or -1 when a create holds it. */
static int remove_disk(struct mv_prov *p, const char *base, const char *lock, const char *why)
{
    char path[4500];
    int lk = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

    if (lk >= 0 && flock(lk, LOCK_EX | LOCK_NB) != 0) {
        close(lk);
        return -1;
    }
    if (unlink(base) != 0 && errno != ENOENT)
        p->host->log(p->h, SBX_LOG_WARNING, "microvm: gc: %s: %s", base, strerror(errno));
    snprintf(path, sizeof path, "%s" MV_IMAGE_SUM, base);
    (void)unlink(path);
    snprintf(path, sizeof path, "%s.log", base);
    (void)unlink(path);
    if (lk >= 0) {
        (void)unlink(lock);
        close(lk);
    }
    p->host->log(p->h, SBX_LOG_INFO, "microvm: gc: removed the image disk %s (%s)", base, why);
    return 0;
}

void mv_image_sweep(struct mv_prov *p)
{
    const char *state = p->host->state_dir(p->h), *fs;
    char dir[4096], path[4400], lock[4400], sum[4500], why[4200];
    struct mv_image_sum v;
    struct dirent *e;
    struct stat st;
    uint64_t key;
    DIR *d;
    time_t now = time(NULL);

    if (!state || (size_t)snprintf(dir, sizeof dir, "%s/" MV_IMAGE_DIR, state) >= sizeof dir ||
        !(d = opendir(dir)))
        return;
    while ((e = readdir(d))) {
        int rec = disk_name(e->d_name, MV_IMAGE_SUM, &key, &fs);
        if (!rec && !disk_name(e->d_name, "", &key, &fs)) {
            /* A killed build's temporary file, once old. */
            size_t n = strlen(e->d_name);
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (n > 4 && !strcmp(e->d_name + n - 4, ".tmp") &&
                strspn(e->d_name, "0123456789abcdef") == 16 && lstat(path, &st) == 0 &&
                S_ISREG(st.st_mode) && now - st.st_mtime > UNRECORDED_AGE_S)
                (void)unlink(path);
            continue;
        }
        snprintf(path, sizeof path, "%s/%016" PRIx64 ".%s", dir, key, fs);
        snprintf(lock, sizeof lock, "%s/%016" PRIx64 MV_IMAGE_LOCK, dir, key);
        if (rec) {
            snprintf(sum, sizeof sum, "%s" MV_IMAGE_SUM, path);
            if (mv_image_sum_read(sum, &v) == 0 && orphan(v.root, key)) {
                snprintf(why, sizeof why, "its image's root %.4000s is gone", v.root);
                (void)remove_disk(p, path, lock, why);
            }
            continue;
        }
        /* A disk: one whose record is missing, once old. */
        snprintf(sum, sizeof sum, "%s" MV_IMAGE_SUM, path);
        if (access(sum, F_OK) != 0 && errno == ENOENT && lstat(path, &st) == 0 &&
            S_ISREG(st.st_mode) && now - st.st_mtime > UNRECORDED_AGE_S)
            (void)remove_disk(p, path, lock, "no record, a day old");
    }
    closedir(d);
}
