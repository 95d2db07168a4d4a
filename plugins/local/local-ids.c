/* plugins/local/local-ids.c - host ids of sandboxes' processes
 *
 * As root, the sandbox user (1000 inside) maps to a host uid and gid.
 * One id shared by every sandbox (65534, as before) lets any host
 * process of that id (nobody's daemons) signal or trace every
 * sandbox's processes, and each sandbox another's.  So, as isolate's
 * box ids, each init (an in-process exec's, a prepared sandbox's of
 * the daemon, a zygote's) takes its own id from the range of the
 * settings `uid`, `gid` and `ids`, and gives it back when it ends.
 *
 * Taken without collisions across every process of the host (the
 * library's threads, other processes, the daemon, other state
 * directories): id k is held by an open file description's lock
 * (F_OFD_SETLK, non-blocking) on byte uid+k of one root-only file,
 * which the kernel drops when its holder goes, however it goes.
 *
 * What persists is the work directory: its files belong to the sandbox
 * user whatever id an exec runs as, so they are stored as host id 1000
 * (the tmpfs's uid=/gid=, the owner given to uploads) and each exec sees
 * them through an idmapped mount (mount_setattr MOUNT_ATTR_IDMAP, tmpfs
 * since Linux 6.3) made with its init's own user namespace: stored 1000
 * reads as the exec's 1000 inside, and what it creates is stored as 1000.
 * Host 1000 is never a sandbox's process id, and the work directory lies
 * in the root-only state directory.  Where idmapped tmpfs mounts are not
 * to be had, every sandbox shares the range's first id, as before.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "local-int.h"

/* The lock file: one for the host, since ids are the host's. */
#define IDS_DIR "/run/polysandbox"
#define IDS_FILE IDS_DIR "/ids.lock"

/* Idmapped tmpfs mounts: Linux 6.3. */
static bool kernel_idmaps_tmpfs(void)
{
    struct utsname u;
    unsigned maj = 0, min = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &maj, &min) != 2)
        return false;
    return maj > 6 || (maj == 6 && min >= 3);
}

void lcl_ids_probe(struct lcl_prov *p)
{
    p->ids_per_exec = p->root && p->id_count > 1 && kernel_idmaps_tmpfs();
    if (p->ids_per_exec) {
        p->host_uid = LCL_SANDBOX_UID;
        p->host_gid = LCL_SANDBOX_GID;
    } else if (p->root) {
        p->host_uid = p->id_uid;
        p->host_gid = p->id_gid;
    }
}

/* The lock file, root's and private: nobody else may hold its bytes. */
static int open_lock(struct lcl_prov *p)
{
    if (mkdir(IDS_DIR, 0755) < 0 && errno != EEXIST)
        return p->host->set_error(p->h, lcl_err_code(errno), "host ids: creating %s: %s", IDS_DIR,
                                  strerror(errno)), -1;
    int fd = open(IDS_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 022)) {
        int e = fd < 0 ? errno : EPERM;
        if (fd >= 0)
            close(fd);
        p->host->set_error(p->h, lcl_err_code(e), "host ids: %s: %s", IDS_FILE,
                           e == EPERM ? "not a root-only regular file: refused" : strerror(e));
        return -1;
    }
    return fd;
}

int lcl_id_take(struct lcl_prov *p, struct lcl_id *id)
{
    id->fd = -1;
    id->uid = p->host_uid;
    id->gid = p->host_gid;
    id->userns = -1;
    if (!p->ids_per_exec)
        return 0;
    int fd = open_lock(p);
    if (fd < 0)
        return SBX_E_IO;
    /* From a random place: concurrent takers rarely try the same first. */
    uint32_t start = 0;
    if (getrandom(&start, sizeof start, GRND_NONBLOCK) != (ssize_t)sizeof start)
        start = (uint32_t)getpid();
    for (uint64_t i = 0; i < p->id_count; i++) {
        uint64_t k = (start + i) % p->id_count;
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                           .l_start = (off_t)p->id_uid + (off_t)k, .l_len = 1};
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
            id->fd = fd;
            id->uid = p->id_uid + (uid_t)k;
            id->gid = p->id_gid + (gid_t)k;
            return 0;
        }
        if (errno != EAGAIN && errno != EACCES) {
            int e = errno;
            close(fd);
            return p->host->set_error(p->h, SBX_E_IO, "host ids: locking in %s: %s", IDS_FILE,
                                      strerror(e));
        }
    }
    close(fd);
    return p->host->set_error(p->h, SBX_E_BUSY, "host ids: all %llu of uids %lu-%llu are in use "
                              "(providers.d/local.ini: raise ids)",
                              (unsigned long long)p->id_count, (unsigned long)p->id_uid,
                              (unsigned long long)p->id_uid + p->id_count - 1);
}

void lcl_id_give(struct lcl_id *id)
{
    if (id->userns >= 0)
        close(id->userns);
    if (id->fd >= 0)
        close(id->fd); /* the lock goes with its open file description */
    id->fd = id->userns = -1;
}

int lcl_id_maps(const struct lcl_id *id, pid_t pid)
{
    char path[64], map[64];
    snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)pid);
    snprintf(map, sizeof map, "%u %lu 1\n", LCL_SANDBOX_UID, (unsigned long)id->uid);
    int e = lcl_write_file(path, map);
    if (e < 0)
        return e;
    snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)pid);
    snprintf(map, sizeof map, "%u %lu 1\n", LCL_SANDBOX_GID, (unsigned long)id->gid);
    return lcl_write_file(path, map);
}

int lcl_id_userns(struct lcl_id *id, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)pid);
    if (id->userns < 0)
        id->userns = open(path, O_RDONLY | O_CLOEXEC);
    return id->userns;
}

int lcl_mount_idmap(int mfd, int userns)
{
    struct { uint64_t set, clr, prop, userns; } ma = {LCL_MOUNT_ATTR_IDMAP, 0, 0, (uint64_t)userns};
    return (int)syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH, &ma, sizeof ma);
}
