/* plugins/local/local-orphans.c - sandboxes of killed runs nobody would find
 *
 * A non-persistent sandbox lives in its state directory's run dir
 * (local-rundir.c), found through <state>/run-dir.  When its process is
 * killed mid-run (SIGKILL, OOM killer, a crashed daemon), the sandbox
 * stays: its directory, and as root its work tmpfs mounted in the host's
 * mount namespace.  `polysandbox gc` from that state directory reaps it
 * once it expired; but when the state directory is removed too (a test's
 * temporary one, a container's), nothing ever lists it again and the
 * memory and the mount stay until reboot.
 *
 * So list (what gc runs) also looks at this euid's other run dirs, one
 * readdir of /dev/shm: a sandbox there whose time-to-live passed and
 * whose recorded state directory is gone or names another run dir (or,
 * written before the state directory was recorded, simply expired) is
 * unmounted and removed, as destroy would; an emptied run dir goes.  A
 * sandbox a live state directory still finds is left to that one's gc.
 * meta.json is our own file in a private directory of ours, but is read
 * as hostile all the same: anything unexpected keeps the sandbox.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "local-int.h"

/* Far more than any meta.json we write (labels and environment). */
#define META_MAX (1024 * 1024)

/* polysandbox-<euid>-<16 hex digits> after @prefix (the -skel- ones and
 * other users' never match). */
static bool run_dir_name(const char *name, const char *prefix, size_t pl)
{
    if (strncmp(name, prefix, pl) || strlen(name + pl) != 16)
        return false;
    for (const char *s = name + pl; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

/* A directory of ours with no access for others (0700 as we make it). */
static bool private_ours(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

/* meta.json in the sandbox directory @sfd: NULL when absent, a link,
 * not a regular file, larger than META_MAX or not JSON. */
static json_t *meta_read(int sfd)
{
    int fd = openat(sfd, LCL_META_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    json_t *root = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= META_MAX &&
        (buf = malloc((size_t)st.st_size))) {
        size_t len = 0;
        ssize_t n;
        while (len < (size_t)st.st_size &&
               ((n = read(fd, buf + len, (size_t)st.st_size - len)) > 0 ||
                (n < 0 && errno == EINTR)))
            len += n > 0 ? (size_t)n : 0;
        json_error_t err;
        if (len == (size_t)st.st_size)
            root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    }
    free(buf);
    close(fd);
    return root;
}

/* Is the sandbox @m describes, in run dir @run (its path), one nobody
 * will collect?  *why says why it is. */
static bool orphaned(json_t *m, const char *run, uint64_t now, const char **why)
{
    uint64_t created = lcl_meta_u64(m, "created_ns"), ttl = lcl_meta_u64(m, "ttl_ns");
    /* Persistent ones never live here: not ours to judge. */
    if (!json_is_object(m) || !json_is_false(json_object_get(m, "persistent")) || !created ||
        !ttl || created > UINT64_MAX - ttl || created + ttl > now)
        return false;
    json_t *sd = json_object_get(m, "state_dir");
    if (!sd) {
        *why = "expired, written before its state directory was recorded";
        return true;
    }
    const char *state = json_string_value(sd);
    if (!state || strlen(state) != json_string_length(sd) || state[0] != '/')
        return false;
    char link[LCL_PATH_MAX], name[LCL_PATH_MAX];
    if (snprintf(link, sizeof link, "%s/" LCL_RUN_DIR_LINK, state) >= (int)sizeof link)
        return false;
    ssize_t n = readlink(link, name, sizeof name - 1);
    if (n < 0) {
        /* Only a state directory (or link) certainly gone: not one we
         * cannot read just now. */
        *why = "expired, its state directory is gone";
        return errno == ENOENT || errno == ENOTDIR;
    }
    name[n] = '\0';
    *why = "expired, its state directory uses another run directory";
    return strcmp(name, run) != 0;
}

/* Unmounts and removes sandbox @id of run dir @run, as destroy does. */
static bool collect(struct lcl_prov *p, const char *run, const char *id, const char *why)
{
    char dir[LCL_PATH_MAX], work[LCL_PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s/%s", run, id) >= (int)sizeof dir ||
        snprintf(work, sizeof work, "%s/work", dir) >= (int)sizeof work)
        return false;
    /* UMOUNT_NOFOLLOW: work/ swapped for a link must not unmount its
     * target.  EINVAL: nothing mounted there (not root, or never was). */
    if (p->root && umount2(work, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL &&
        errno != ENOENT) {
        p->host->log(p->h, SBX_LOG_WARNING, "orphaned sandbox %s: unmounting %s: %s", dir, work,
                     strerror(errno));
        return false;
    }
    int e = lcl_rm_tree(dir);
    if (e < 0) {
        p->host->log(p->h, SBX_LOG_WARNING, "orphaned sandbox %s: removing it: %s", dir,
                     strerror(-e));
        return false;
    }
    p->host->log(p->h, SBX_LOG_INFO, "collected orphaned sandbox %s (%s)", dir, why);
    return true;
}

/* The sandboxes of run dir @name (in /dev/shm, open as @shm); removes it
 * when it is left empty.  Returns how many went. */
static int sweep_run_dir(struct lcl_prov *p, int shm, const char *name, uint64_t now)
{
    char run[LCL_PATH_MAX];
    snprintf(run, sizeof run, LCL_SHM "/%s", name);
    int rfd = openat(shm, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rfd < 0)
        return 0;
    DIR *d = private_ours(rfd) ? fdopendir(rfd) : NULL;
    if (!d) {
        p->host->log(p->h, SBX_LOG_DEBUG, "%s: not a private directory of ours: left alone", run);
        close(rfd);
        return 0;
    }
    int collected = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!lcl_id_valid(de->d_name))
            continue;
        int sfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
            continue;
        json_t *m = private_ours(sfd) ? meta_read(sfd) : NULL;
        close(sfd);
        const char *why = NULL;
        if (m && orphaned(m, run, now, &why) && collect(p, run, de->d_name, why))
            collected++;
        json_decref(m);
    }
    closedir(d);
    /* ENOTEMPTY while sandboxes live there; a run dir emptied under a
     * live process is made again on its next create (local-rundir.c). */
    if (unlinkat(shm, name, AT_REMOVEDIR) == 0)
        p->host->log(p->h, SBX_LOG_DEBUG, "removed empty run directory %s", run);
    return collected;
}

int lcl_orphans_sweep(struct lcl_prov *p)
{
    char prefix[64];
    int pl = snprintf(prefix, sizeof prefix, "polysandbox-%lu-", (unsigned long)geteuid());
    int shm = open(LCL_SHM, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = shm < 0 ? NULL : fdopendir(shm);
    if (!d) {
        if (shm >= 0)
            close(shm);
        return 0;
    }
    const char *own = p->run_dir ? strrchr(p->run_dir, '/') + 1 : NULL;
    uint64_t now = lcl_now_unix();
    int collected = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        /* Our own run dir's sandboxes are the core gc's to reap. */
        if ((de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) &&
            run_dir_name(de->d_name, prefix, (size_t)pl) && !(own && !strcmp(own, de->d_name)))
            collected += sweep_run_dir(p, dirfd(d), de->d_name, now);
    closedir(d);
    if (collected)
        p->host->log(p->h, SBX_LOG_INFO, "collected %d orphaned sandbox%s in " LCL_SHM, collected,
                     collected == 1 ? "" : "es");
    return collected;
}
