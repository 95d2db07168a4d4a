/* plugins/microvm/mv-image.c - a root directory as the guest's disk
 *
 * A sandbox given an image (the core hands over the image's unpacked
 * root from its store: SBX_PROVIDER_F_IMAGE_ROOT) boots with that root
 * as a read-only erofs drive; the agent lays a tmpfs over it (overlay)
 * and runs every command in it.  The erofs file is built once per root
 * by mkfs.erofs, named by the root's identity (its path, device, inode
 * and times: a store root is named by its digest and never changes),
 * written beside and renamed into place so that every VM of the image,
 * and every process that builds it at the same time, sees a whole file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mv-int.h"

extern char **environ;

#define MV_MKFS "mkfs.erofs"

/* Runs mkfs.erofs @root into @tmp, its messages into @log: 0, or its
 * wait status (or -1, errno) when it failed. */
static int mkfs(const char *root, const char *tmp, const char *log, uint64_t key)
{
    char uuid[40], uopt[48];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st = 0, rc;

    /* A fixed UUID of the key: the same root, the same bytes. */
    snprintf(uuid, sizeof uuid, "%08" PRIx32 "-%04x-4%03x-8%03x-%012" PRIx64,
             (uint32_t)(key >> 32), (unsigned)(key >> 16) & 0xffff, (unsigned)key & 0xfff,
             (unsigned)(key >> 20) & 0xfff, (uint64_t)(key & 0xffffffffffffull));
    snprintf(uopt, sizeof uopt, "-U%s", uuid);
    const char *argv[] = { MV_MKFS, "--quiet", uopt, "-x-1", tmp, root, NULL };
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (rc == 0)
        rc = posix_spawnp(&pid, MV_MKFS, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

int mv_image_for(struct mv_prov *p, const char *root, char **path)
{
    const char *state = p->host->state_dir(p->h);
    char dir[4200], file[4300], tmp[4400], log[4300], ident[4400], full[4200], words[200];
    struct stat st;
    int rc;

    *path = NULL;
    if (root[0] != '/' || stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
        return p->host->set_error(p->h, SBX_E_INVAL, "microvm: image %s: not a root directory"
                                  " (this core passed an image name: it is older than the"
                                  " provider)", root);
    if (!mv_vmm_path(MV_MKFS, full, sizeof full))
        return p->host->set_error(p->h, SBX_E_NOTSUP, "microvm: no " MV_MKFS " to make the"
                                  " image's disk (apt-get install erofs-utils)");
    snprintf(ident, sizeof ident, "%s\n%ju %ju %lld.%ld %lld.%ld", root, (uintmax_t)st.st_dev,
             (uintmax_t)st.st_ino, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
             (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
    uint64_t key = mv_snap_hash(ident);
    if (!state || (size_t)snprintf(dir, sizeof dir, "%s/images", state) >= sizeof dir)
        return p->host->set_error(p->h, SBX_E_IO, "microvm: no state directory for images");
    snprintf(file, sizeof file, "%s/%016" PRIx64 ".erofs", dir, key);
    if (access(file, R_OK) == 0)
        return (*path = strdup(file)) ? SBX_OK
                                      : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if ((mkdir(state, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST))
        return p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", dir, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s.%ld.%d.tmp", file, (long)getpid(), (int)gettid());
    snprintf(log, sizeof log, "%s/%016" PRIx64 ".log", dir, key);
    p->host->log(p->h, SBX_LOG_INFO, "microvm: building the disk of image %s", root);
    int64_t t0 = mv_now_ms();
    rc = mkfs(root, tmp, log, key);
    if (rc != 0) {
        int e = errno;
        FILE *f = fopen(log, "re");
        words[0] = '\0';
        if (f) {
            char line[200];
            while (fgets(line, sizeof line, f))
                if (line[0] != '\n')
                    snprintf(words, sizeof words, "%.*s", (int)strcspn(line, "\n"), line);
            fclose(f);
        }
        (void)unlink(tmp);
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: " MV_MKFS " %s: %s%s%s",
                                  root, rc < 0 ? strerror(e) : "failed",
                                  words[0] ? ": " : "", words);
    }
    /* Readable by the jailed QEMU's own uid (vmm_uid), never written. */
    if (chmod(tmp, 0444) != 0 || rename(tmp, file) != 0) {
        int e = errno;
        (void)unlink(tmp);
        return p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", file, strerror(e));
    }
    (void)unlink(log);
    p->host->log(p->h, SBX_LOG_INFO, "microvm: built %s in %lld ms", file,
                 (long long)(mv_now_ms() - t0));
    return (*path = strdup(file)) ? SBX_OK
                                  : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}
