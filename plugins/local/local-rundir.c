/* plugins/local/local-rundir.c - where non-persistent sandboxes live
 *
 * A sandbox that dies with its process needs its directory only while
 * it lives: creating and removing it (and writing meta.json) on the
 * state directory's disk file system costs about 0.5 ms of a one-shot
 * run (ext4 journal), on a tmpfs a few microseconds.  So non-persistent
 * sandboxes live in /dev/shm/polysandbox-<euid>-<hash of the state
 * directory> (one per state directory, so separate configurations never
 * see each other's), a 0700 directory we own, created on demand and
 * removed when its last sandbox goes.  Persistent sandboxes stay in the
 * state directory.  list and attach look in both.  When /dev/shm is not
 * a tmpfs, or the directory there is not ours and private, everything
 * stays in the state directory.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "local-int.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

#define LCL_SHM "/dev/shm"

/* FNV-1a, 64 bits, of the state directory's path: a name, not a secret
 * (tests/bench/bench-probe.c computes the same to count leftovers). */
static uint64_t path_hash(const char *s)
{
    return lcl_fnv(LCL_FNV_BASIS, s, strlen(s));
}

void lcl_run_dir_probe(struct lcl_prov *p)
{
    struct statfs sf;
    char path[128];
    if (statfs(LCL_SHM, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
        return;
    snprintf(path, sizeof path, LCL_SHM "/polysandbox-%lu-%016llx", (unsigned long)geteuid(),
             (unsigned long long)path_hash(p->state_dir));
    p->run_dir = strdup(path); /* NULL (out of memory): the state dir only */
}

/* Ours and private: a real directory, owned by us, no group/other bits.
 * /dev/shm is sticky, so nobody else can rename or remove it once it is. */
static bool run_dir_ok(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

const char *lcl_sb_base(struct lcl_prov *p, bool persistent)
{
    if (persistent || !p->run_dir)
        return p->state_dir;
    if (mkdir(p->run_dir, 0700) == 0 || (errno == EEXIST && run_dir_ok(p->run_dir)))
        return p->run_dir;
    p->host->log(p->h, SBX_LOG_DEBUG, "%s is not a private directory of ours: non-persistent "
                 "sandboxes go to %s", p->run_dir, p->state_dir);
    return p->state_dir;
}

void lcl_run_dir_tidy(struct lcl_prov *p, const char *sb_dir)
{
    size_t n = p->run_dir ? strlen(p->run_dir) : 0;
    /* Fails while other sandboxes live there (ENOTEMPTY): fine. */
    if (n && !strncmp(sb_dir, p->run_dir, n) && sb_dir[n] == '/')
        rmdir(p->run_dir);
}
