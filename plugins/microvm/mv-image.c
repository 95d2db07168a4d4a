/* plugins/microvm/mv-image.c - a root directory as the guest's disk
 *
 * A sandbox given an image (the core hands over the image's unpacked
 * root from its store: SBX_PROVIDER_F_IMAGE_ROOT) boots with that root
 * as a read-only drive; the agent lays a tmpfs over it (overlay) and
 * runs every command in it.  The disk is built once per root, by
 * mkfs.erofs (erofs) or, where that is missing, mke2fs -d (ext4), named
 * by the root's identity (its path, device, inode and times: a store
 * root is named by its digest and never changes), written beside and
 * renamed into place under the key's lock, so that every VM of the
 * image, and every process that builds it at the same time, sees a
 * whole file.  Both builds are reproducible (a fixed UUID, hash seed
 * and build time: the same root, the same bytes), and each disk has a
 * record beside it (KEY.FS.sum: its BLAKE2b, size, inode and times, and
 * the root it was made of) that every use checks: a disk whose times
 * or size changed is hashed again, and one that no longer matches is
 * rebuilt, logged naming the file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "mv-int.h"

extern char **environ;

#define MV_MKFS "mkfs.erofs"
#define MV_MKE2FS "mke2fs"
/* mkfs.erofs's build time (the superblock's, and what file times are
 * clamped to): later than any file's, so that none is clamped and the
 * bytes do not depend on when the disk was made. */
#define MV_EROFS_EPOCH "SOURCE_DATE_EPOCH=2147483647"
/* mke2fs's clock, for the file system's own times (file times are the
 * root's). */
#define MV_EXT4_TIME "E2FSPROGS_FAKE_TIME=1"
#define MV_SUM_VERSION "v1"

const char *mv_image_fstype(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && !strcmp(path + n - 5, ".ext4") ? "ext4" : "erofs";
}

/* The environment of a mkfs: ours, with @extra in place of any value of
 * its name.  NULL when out of memory. */
static char **mkfs_env(const char *extra)
{
    size_t n = 0, k = 0, name = strcspn(extra, "=") + 1;
    char **env;

    while (environ[n])
        n++;
    if (!(env = calloc(n + 2, sizeof *env)))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], extra, name))
            env[k++] = environ[i];
    env[k] = (char *)extra;
    return env;
}

/* Runs @argv with @extra in its environment, its messages into @log: 0,
 * or its wait status (or -1, errno) when it failed. */
static int run_mkfs(const char *const *argv, const char *extra, const char *log)
{
    posix_spawn_file_actions_t fa;
    char **env = mkfs_env(extra);
    pid_t pid;
    int st = 0, rc;

    if (!env) {
        errno = ENOMEM;
        return -1;
    }
    if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
        free(env);
        errno = rc;
        return -1;
    }
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (rc == 0)
        rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

/* The most a root's files may add up to, counted as their sizes (a
 * sparse file counts whole: mkfs.erofs writes it out and the disk's hash
 * reads it).  A hostile image's 1 TiB sparse file is refused, named,
 * before any disk is made. */
#define MV_IMAGE_MAX_BYTES (64ull << 30)
#define MV_IMAGE_MAX_WORDS "64 GiB"

/* What a disk of a root needs: its blocks (allocated, as st_blocks
 * counts them) and inodes, and its files' sizes, counted by nftw (which
 * takes no argument: one walk per thread at a time); the file that took
 * the sizes over MV_IMAGE_MAX_BYTES stops the walk. */
static _Thread_local uint64_t walk_blocks, walk_inodes, walk_bytes;
static _Thread_local char walk_over[512];

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)type, (void)ftw;
    walk_inodes++;
    if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode))
        walk_blocks += ((uint64_t)st->st_blocks * 512 + 4095) / 4096 + 1;
    if (S_ISREG(st->st_mode)) {
        walk_bytes += (uint64_t)st->st_size;
        if ((uint64_t)st->st_size > MV_IMAGE_MAX_BYTES || walk_bytes > MV_IMAGE_MAX_BYTES) {
            snprintf(walk_over, sizeof walk_over, "%s", path);
            return 1;
        }
    }
    return 0;
}

/* Walks @root: 0, 1 when its files are too large (walk_over names the
 * one that took them over), -1 on an error (errno). */
static int walk_root(const char *root)
{
    walk_blocks = walk_inodes = walk_bytes = 0;
    walk_over[0] = '\0';
    int rc = nftw(root, walk_one, 32, FTW_PHYS);
    return rc == 1 && walk_over[0] ? 1 : rc != 0 ? -1 : 0;
}

/* mkfs.erofs or mke2fs -d @root into @tmp with the fixed UUID @uuid. */
static int mkfs(const char *fs, const char *root, const char *tmp, const char *log,
                const char *uuid)
{
    char uopt[48], eopt[160], nopt[32], size[32];

    if (!strcmp(fs, "erofs")) {
        snprintf(uopt, sizeof uopt, "-U%s", uuid);
        const char *argv[] = {MV_MKFS, "--quiet", uopt, "-x-1", tmp, root, NULL};
        return run_mkfs(argv, MV_EROFS_EPOCH, log);
    }
    /* walk_root(@root) has counted (build). */
    /* A quarter more than the files' blocks for the metadata, and room
     * for the inode tables; no journal (the disk is read-only). */
    uint64_t kib = (walk_blocks * 5 / 4) * 4 + walk_inodes / 4 + 8192;
    snprintf(size, sizeof size, "%" PRIu64 "k", kib);
    snprintf(nopt, sizeof nopt, "%" PRIu64, walk_inodes + 64);
    snprintf(eopt, sizeof eopt, "hash_seed=%s,root_owner=0:0,lazy_itable_init=0,nodiscard", uuid);
    const char *argv[] = {MV_MKE2FS,
                          "-q",
                          "-F",
                          "-t",
                          "ext4",
                          "-b",
                          "4096",
                          "-m",
                          "0",
                          "-I",
                          "256",
                          "-N",
                          nopt,
                          "-U",
                          uuid,
                          "-E",
                          eopt,
                          "-O",
                          "^has_journal,^resize_inode",
                          "-d",
                          root,
                          tmp,
                          size,
                          NULL};
    return run_mkfs(argv, MV_EXT4_TIME, log);
}

/* The BLAKE2b-256 of @fd's bytes, in hex, into @hex (65 bytes). */
static int hash_fd(int fd, char hex[65])
{
    crypto_generichash_state hs;
    unsigned char buf[65536], out[32];
    ssize_t n;

    if (sodium_init() < 0 || crypto_generichash_init(&hs, NULL, 0, sizeof out) != 0) {
        errno = EIO;
        return -1;
    }
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        crypto_generichash_update(&hs, buf, (size_t)n);
    }
    crypto_generichash_final(&hs, out, sizeof out);
    sodium_bin2hex(hex, 65, out, sizeof out);
    return 0;
}

int mv_image_sum_read(const char *sum_path, struct mv_image_sum *v)
{
    FILE *f = fopen(sum_path, "re");
    char ver[8];
    int ok;

    if (!f)
        return -1;
    ok = fscanf(f, "%7s blake2b %64s %llu %llu %lld.%lld %lld.%lld", ver, v->hash, &v->size,
                &v->ino, &v->mtime, &v->mtime_ns, &v->ctime, &v->ctime_ns) == 8 &&
         !strcmp(ver, MV_SUM_VERSION) && strlen(v->hash) == 64 && fgetc(f) == '\n' &&
         fgets(v->root, sizeof v->root, f) != NULL;
    fclose(f);
    if (!ok) {
        errno = EINVAL;
        return -1;
    }
    v->root[strcspn(v->root, "\n")] = '\0';
    return 0;
}

/* Writes @disk's record (its hash @hex, its stat @st, @root) as @sum_path,
 * through a temporary file renamed into place. */
static int sum_write(const char *sum_path, const char *hex, const struct stat *st, const char *root)
{
    char tmp[4400];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.%ld.%d.tmp", sum_path, (long)getpid(), (int)gettid());
    if (!(f = fopen(tmp, "wxe")))
        return -1;
    fprintf(f, MV_SUM_VERSION " blake2b %s %llu %llu %lld.%09ld %lld.%09ld\n%s\n", hex,
            (unsigned long long)st->st_size, (unsigned long long)st->st_ino,
            (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
            st->st_ctim.tv_nsec, root);
    if (fclose(f) != 0 || rename(tmp, sum_path) != 0) {
        int e = errno;
        (void)unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

static int same_stat(const struct mv_image_sum *v, const struct stat *st)
{
    return v->size == (unsigned long long)st->st_size && v->ino == (unsigned long long)st->st_ino &&
           v->mtime == st->st_mtim.tv_sec && v->mtime_ns == st->st_mtim.tv_nsec &&
           v->ctime == st->st_ctim.tv_sec && v->ctime_ns == st->st_ctim.tv_nsec;
}

/* Whether the disk @file is the one its record @sum_path describes: 1
 * yes (the record refreshed when only its times changed), 0 no (@why
 * says how), -1 an error (errno). */
static int disk_checked(const char *file, const char *sum_path, char *why, size_t n)
{
    struct mv_image_sum v;
    struct stat st;
    char hex[65];
    int fd, rc;

    if (mv_image_sum_read(sum_path, &v) != 0) {
        snprintf(why, n, "its record %.200s is missing or damaged", sum_path);
        return 0;
    }
    if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(why, n, "not a regular file");
        return 0;
    }
    if (same_stat(&v, &st)) {
        close(fd);
        return 1;
    }
    rc = hash_fd(fd, hex);
    close(fd);
    if (rc != 0)
        return -1;
    if (strcmp(hex, v.hash)) {
        snprintf(why, n, "its BLAKE2b is %.16s..., its record %.200s says %.16s...", hex, sum_path,
                 v.hash);
        return 0;
    }
    return sum_write(sum_path, hex, &st, v.root) == 0 ? 1 : -1;
}

/* The last non-empty line of @log into @words. */
static void last_line(const char *log, char *words, size_t n)
{
    FILE *f = fopen(log, "re");
    char line[200];

    words[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n')
            snprintf(words, n, "%.*s", (int)strcspn(line, "\n"), line);
    fclose(f);
}

/* Builds @root's disk @file of @fs and its record @sum_path. */
static int build(struct mv_prov *p, const char *fs, const char *root, const char *file,
                 const char *sum_path, uint64_t key)
{
    char tmp[4400], log[4400], uuid[40], words[200], hex[65];
    struct stat st;
    int rc, fd;

    /* A fixed UUID (and ext4's hash seed) of the key: the same root, the
     * same bytes. */
    snprintf(uuid, sizeof uuid, "%08" PRIx32 "-%04x-4%03x-8%03x-%012" PRIx64, (uint32_t)(key >> 32),
             (unsigned)(key >> 16) & 0xffff, (unsigned)key & 0xfff, (unsigned)(key >> 20) & 0xfff,
             (uint64_t)(key & 0xffffffffffffull));
    snprintf(tmp, sizeof tmp, "%s.%ld.%d.tmp", file, (long)getpid(), (int)gettid());
    snprintf(log, sizeof log, "%s.log", file);
    int w = walk_root(root);
    if (w != 0)
        return w > 0 ? p->host->set_error(p->h, SBX_E_INVAL,
                                          "microvm: image %s: its files add up to more than the cap"
                                          " MV_IMAGE_MAX_BYTES (%s, sparse files counted whole)"
                                          " at %s: no disk is built",
                                          root, MV_IMAGE_MAX_WORDS, walk_over)
                     : p->host->set_error(p->h, SBX_E_IO, "microvm: reading image %s: %s", root,
                                          strerror(errno));
    p->host->log(p->h, SBX_LOG_INFO, "microvm: building the %s disk of image %s", fs, root);
    int64_t t0 = mv_now_ms();
    (void)unlink(tmp);
    rc = mkfs(fs, root, tmp, log, uuid);
    if (rc != 0) {
        int e = errno;
        last_line(log, words, sizeof words);
        (void)unlink(tmp);
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: %s %s: %s%s%s",
                                  strcmp(fs, "erofs") ? MV_MKE2FS : MV_MKFS, root,
                                  rc < 0 ? strerror(e) : "failed", words[0] ? ": " : "", words);
    }
    /* Readable by the jailed QEMU's own uid (vmm_uid), never written. */
    rc = chmod(tmp, 0444);
    if (rc == 0 && (fd = open(tmp, O_RDONLY | O_CLOEXEC)) >= 0) {
        rc = hash_fd(fd, hex);
        close(fd);
    } else if (rc == 0) {
        rc = -1;
    }
    /* The record describes the file as renamed (a rename keeps its
     * inode and times); under the key's lock nobody reads it between. */
    if (rc == 0 && stat(tmp, &st) == 0 && sum_write(sum_path, hex, &st, root) == 0 &&
        rename(tmp, file) == 0) {
        (void)unlink(log);
        p->host->log(p->h, SBX_LOG_INFO,
                     "microvm: built %s (%llu KiB, BLAKE2b %.16s...) in"
                     " %lld ms",
                     file, (unsigned long long)st.st_size / 1024, hex,
                     (long long)(mv_now_ms() - t0));
        return SBX_OK;
    }
    int e = errno;
    (void)unlink(tmp);
    (void)unlink(sum_path);
    return p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", file, strerror(e));
}

/* Which file system the disks are: setting image_fs (auto, erofs or
 * ext4); auto is erofs where mkfs.erofs is, else ext4.  NULL when the
 * one asked for cannot be made, @why then says why. */
static const char *pick_fs(struct mv_prov *p, char *why, size_t n)
{
    const char *v = p->host->config_get(p->h, "image_fs");
    char full[4200];

    if (v && strcmp(v, "auto") && strcmp(v, "erofs") && strcmp(v, "ext4")) {
        snprintf(why, n, "setting image_fs = \"%.100s\": not auto, erofs or ext4", v);
        return NULL;
    }
    if ((!v || strcmp(v, "ext4")) && mv_vmm_path(MV_MKFS, full, sizeof full)) {
        snprintf(why, n, "erofs (%.200s)", full);
        return "erofs";
    }
    if ((!v || strcmp(v, "erofs")) && mv_vmm_path(MV_MKE2FS, full, sizeof full)) {
        snprintf(why, n, "ext4 (%.200s%s)", full, v ? "" : ": no " MV_MKFS);
        return "ext4";
    }
    snprintf(why, n, "no %s to make the image's disk (apt-get install %s)",
             v && !strcmp(v, "erofs")  ? MV_MKFS
             : v && !strcmp(v, "ext4") ? MV_MKE2FS
                                       : MV_MKFS " or " MV_MKE2FS,
             v && !strcmp(v, "ext4") ? "e2fsprogs" : "erofs-utils");
    return NULL;
}

int mv_image_describe(struct mv_prov *p, char *buf, size_t n)
{
    const char *state = p->host->state_dir(p->h);
    char why[300], dir[4200], sum[4400];
    const char *fs = pick_fs(p, why, sizeof why);
    struct mv_image_sum v;
    size_t len;
    DIR *d;
    struct dirent *e;
    int count = 0;

    snprintf(dir, sizeof dir, "%s/" MV_IMAGE_DIR, state ? state : ".");
    len = (size_t)snprintf(buf, n,
                           "%s: --image and a template's image.microvm boot with the"
                           " pulled image as a read-only %s%sdisk (cached under %s), a"
                           " template's plain image is ignored",
                           why, fs ? fs : "", fs ? " " : "", dir);
    if (state && (d = opendir(dir))) {
        while ((e = readdir(d)) && len < n) {
            size_t l = strlen(e->d_name);
            if (l < 5 || strcmp(e->d_name + l - 4, MV_IMAGE_SUM))
                continue;
            int w = snprintf(sum, sizeof sum, "%s/%s", dir, e->d_name);
            if (w < 0 || (size_t)w >= sizeof sum || mv_image_sum_read(sum, &v) != 0)
                continue;
            len += (size_t)snprintf(buf + len, n - len, "%s %s/%.*s of %s", count++ ? ";" : ":",
                                    dir, (int)(l - 4), e->d_name, v.root);
        }
        closedir(d);
    }
    return fs != NULL;
}

uint64_t mv_image_key(const char *root, const struct stat *st)
{
    char ident[4400];

    snprintf(ident, sizeof ident, "%s\n%ju %ju %lld.%ld %lld.%ld", root, (uintmax_t)st->st_dev,
             (uintmax_t)st->st_ino, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
             (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
    return mv_snap_hash(ident);
}

int mv_image_for(struct mv_prov *p, const char *root, char **path)
{
    const char *state = p->host->state_dir(p->h), *fs;
    char dir[4200], file[4300], sum[4400], lock[4400], why[400];
    struct stat st;
    int rc, lk;

    *path = NULL;
    if (root[0] != '/' || stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
        return p->host->set_error(p->h, SBX_E_INVAL,
                                  "microvm: image %s: not a root directory"
                                  " (this core passed an image name: it is older than the"
                                  " provider)",
                                  root);
    if (!(fs = pick_fs(p, why, sizeof why)))
        return p->host->set_error(p->h, strncmp(why, "setting", 7) ? SBX_E_NOTSUP : SBX_E_CONFIG,
                                  "microvm: %s", why);
    uint64_t key = mv_image_key(root, &st);
    if (!state || (size_t)snprintf(dir, sizeof dir, "%s/" MV_IMAGE_DIR, state) >= sizeof dir)
        return p->host->set_error(p->h, SBX_E_IO, "microvm: no state directory for images");
    snprintf(file, sizeof file, "%s/%016" PRIx64 ".%s", dir, key, fs);
    snprintf(sum, sizeof sum, "%s" MV_IMAGE_SUM, file);
    snprintf(lock, sizeof lock, "%s/%016" PRIx64 MV_IMAGE_LOCK, dir, key);
    if ((mkdir(state, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST))
        return p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", dir, strerror(errno));
    /* One builder or checker of a key at a time. */
    if ((lk = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", lock, strerror(errno));
    while ((rc = flock(lk, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        rc = p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", lock, strerror(errno));
        close(lk);
        return rc;
    }
    rc = SBX_OK;
    if (access(file, F_OK) == 0) {
        int ok = disk_checked(file, sum, why, sizeof why);
        if (ok < 0)
            rc = p->host->set_error(p->h, SBX_E_IO, "microvm: checking %s: %s", file,
                                    strerror(errno));
        else if (ok == 0) {
            p->host->log(p->h, SBX_LOG_WARNING,
                         "microvm: the image disk %s is damaged (%s):"
                         " building it again",
                         file, why);
            if (unlink(file) != 0 && errno != ENOENT)
                rc = p->host->set_error(p->h, SBX_E_IO,
                                        "microvm: the image disk %s is damaged"
                                        " (%s) and cannot be removed: %s",
                                        file, why, strerror(errno));
            else
                rc = build(p, fs, root, file, sum, key);
        } else {
            p->host->log(p->h, SBX_LOG_INFO, "microvm: %s checked", file);
        }
    } else {
        rc = build(p, fs, root, file, sum, key);
    }
    close(lk);
    if (rc != SBX_OK)
        return rc;
    return (*path = strdup(file)) ? SBX_OK : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}
