/* plugins/local/local-rundir.c - where non-persistent sandboxes live
 *
 * A sandbox that dies with its process needs its directory only while
 * it lives: creating and removing it (and writing meta.json) on the
 * state directory's disk file system costs about 0.5 ms of a one-shot
 * run (ext4 journal), on a tmpfs a few microseconds.  So non-persistent
 * sandboxes live in /dev/shm/polysandbox-<euid>-<16 random hex digits>,
 * a 0700 directory we own, created on demand and removed when its last
 * sandbox goes.  Persistent sandboxes stay in the state directory.  list
 * and attach look in both.
 *
 * /dev/shm is everyone's: a name there that anybody can compute, anybody
 * can make first.  So the name is random, drawn once per state directory
 * and kept in it as the symbolic link <state>/run-dir (the state
 * directory is ours and private: nobody else can read or change it).
 * The directory is trusted only when it is a directory of ours with no
 * access for others; a name squatted meanwhile (seen while it existed,
 * made by someone else while it did not) is never used: this process
 * keeps its sandboxes in the state directory and the link gets a new
 * random name for the next.  When /dev/shm is not a tmpfs, everything
 * stays in the state directory.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "local-int.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

#define LINK_NAME LCL_RUN_DIR_LINK

/* Ours and private: a real directory, owned by us, no group/other bits.
 * /dev/shm is sticky, so nobody else can rename or remove it once it is. */
static bool run_dir_ok(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

/* The name the link holds, if it is one of ours (a random one); *out
 * is at least 64 bytes.  *absent: there is no link. */
static bool read_link_why(const char *link, char *out, size_t size, bool *absent)
{
    ssize_t n = readlink(link, out, size - 1);
    *absent = n < 0 && errno == ENOENT;
    if (n <= 0)
        return false;
    out[n] = '\0';
    char prefix[64];
    int pl = snprintf(prefix, sizeof prefix, LCL_SHM "/polysandbox-%lu-",
                      (unsigned long)geteuid());
    if (strncmp(out, prefix, (size_t)pl) || strlen(out + pl) != 16)
        return false;
    for (const char *s = out + pl; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static bool read_link(const char *link, char *out, size_t size)
{
    bool absent;
    return read_link_why(link, out, size, &absent);
}

/* A new random name in the link (replacing @old, or made afresh: a
 * concurrent first use may make it first, then its name is taken). */
static bool new_name(const char *link, const char *old, char *out, size_t size)
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return false;
    char name[64], tmp[LCL_PATH_MAX];
    int n = snprintf(name, sizeof name, LCL_SHM "/polysandbox-%lu-", (unsigned long)geteuid());
    for (size_t i = 0; i < sizeof rnd; i++)
        n += snprintf(name + n, sizeof name - (size_t)n, "%02x", rnd[i]);
    if (!old) {
        if (symlink(name, link) < 0 && errno != EEXIST)
            return false;
        return read_link(link, out, size);
    }
    /* Replacing: only if it still names the squatted one. */
    if (snprintf(tmp, sizeof tmp, "%s.%s", link, name + n - 16) >= (int)sizeof tmp ||
        symlink(name, tmp) < 0)
        return false;
    char now[128];
    if (read_link(link, now, sizeof now) && strcmp(now, old)) {
        unlink(tmp); /* another process replaced it already */
    } else if (rename(tmp, link) < 0) {
        unlink(tmp);
        return false;
    }
    return read_link(link, out, size);
}

void lcl_run_dir_probe(struct lcl_prov *p)
{
    struct statfs sf;
    char link[LCL_PATH_MAX], name[128];
    /* Recorded in meta.json: the state directory of a sandbox left
     * behind (local-orphans.c).  NULL (out of memory): not recorded,
     * gc then goes by the expiry alone. */
    p->state_abs = realpath(p->state_dir, NULL);
    if (statfs(LCL_SHM, &sf) < 0 || sf.f_type != TMPFS_MAGIC ||
        snprintf(link, sizeof link, "%s/" LINK_NAME, p->state_dir) >= (int)sizeof link)
        return;
    bool absent;
    if (!read_link_why(link, name, sizeof name, &absent)) {
        /* None yet, or not one of ours (damaged): a fresh name.  Never
         * unlink an absent one: a concurrent first use may make it. */
        if (!absent && unlink(link) < 0)
            return;
        if (!new_name(link, NULL, name, sizeof name))
            return;
    }
    struct stat st;
    if (lstat(name, &st) == 0 && !run_dir_ok(name)) {
        p->host->log(p->h, SBX_LOG_WARNING, "%s is not ours (made by uid %lu?): not used; a "
                     "new run directory name is drawn", name, (unsigned long)st.st_uid);
        char old[128];
        snprintf(old, sizeof old, "%s", name);
        if (!new_name(link, old, name, sizeof name) || lstat(name, &st) == 0)
            return; /* the state dir only */
    }
    p->run_dir = strdup(name); /* NULL (out of memory): the state dir only */
}
const char *lcl_sb_base(struct lcl_prov *p, bool persistent)
{
    if (persistent || !p->run_dir)
        return p->state_dir;
    if (mkdir(p->run_dir, 0700) == 0 || (errno == EEXIST && run_dir_ok(p->run_dir)))
        return p->run_dir;
    /* Squatted since init: never trusted; the next process draws a new
     * name. */
    p->host->log(p->h, SBX_LOG_WARNING, "%s is not a private directory of ours: non-persistent "
                 "sandboxes go to %s", p->run_dir, p->state_dir);
    char link[LCL_PATH_MAX], name[128];
    if (snprintf(link, sizeof link, "%s/" LINK_NAME, p->state_dir) < (int)sizeof link)
        new_name(link, p->run_dir, name, sizeof name);
    return p->state_dir;
}

void lcl_run_dir_tidy(struct lcl_prov *p, const char *sb_dir)
{
    size_t n = p->run_dir ? strlen(p->run_dir) : 0;
    /* Fails while other sandboxes live there (ENOTEMPTY): fine. */
    if (n && !strncmp(sb_dir, p->run_dir, n) && sb_dir[n] == '/')
        rmdir(p->run_dir);
}
