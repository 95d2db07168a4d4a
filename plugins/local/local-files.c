/* plugins/local/local-files.c - files in and out of a sandbox's work dir
 *
 * The work directory is written by untrusted code, so every path is
 * walked one component at a time from a descriptor of the work dir,
 * never following a link: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) where the kernel has it, else openat(O_NOFOLLOW)
 * per component (equivalent because no component is resolved as a path).
 * Ownership and mode are set through the descriptor, never by path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "local-int.h"


static int open_beneath(int dfd, const char *name, int flags, mode_t mode)
{
    static int have_openat2 = 1; /* benign race: every value is correct */
    if (have_openat2) {
        struct open_how how = {
            .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
            .mode = (flags & O_CREAT) ? mode : 0,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        long fd = syscall(SYS_openat2, dfd, name, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS)
            return (int)fd;
        have_openat2 = 0;
    }
    return openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

/* Checks @path (host->path_check: the rule every provider applies) and
 * copies it into @buf split at '/' (NULs).  Returns the number of
 * components or -1 with an error set. */
static int split_path(struct lcl_prov *p, const char *path, char *buf, size_t size)
{
    if (p->host->path_check(p->h, path) != SBX_OK)
        return -1;
    size_t len = strlen(path);
    if (len >= size)
        return p->host->set_error(p->h, SBX_E_PATH, "file path too long (%zu bytes)", len), -1;
    memcpy(buf, path, len + 1);
    int n = 1;
    for (char *s = buf; *s; s++)
        if (*s == '/') {
            *s = '\0';
            n++;
        }
    return n;
}

static int path_error(struct lcl_prov *p, const char *path, const char *comp, int err)
{
    if (err == ELOOP || err == EXDEV || err == ENOTDIR)
        return p->host->set_error(p->h, SBX_E_PATH,
                                  "file path '%s': '%s' is a link or not a directory; refused",
                                  path, comp);
    if (err == ENOENT)
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "file '%s': '%s' does not exist", path, comp);
    return p->host->set_error(p->h, lcl_err_code(err), "file '%s': opening '%s': %s",
                              path, comp, strerror(err));
}

/* Walks to the directory holding the last component; returns its fd and
 * sets *leaf, or minus the sbx_status with the error set. */
static int walk_parents(struct lcl_prov *p, struct lcl_sb *sb, const char *path,
                        char *buf, size_t size, bool create, const char **leaf)
{
    int n = split_path(p, path, buf, size);
    if (n < 0)
        return -SBX_E_PATH;
    int dfd = lcl_work_open(sb, O_RDONLY);
    if (dfd < 0)
        return -p->host->set_error(p->h, errno == ELOOP || errno == ENOTDIR ? SBX_E_PATH
                                   : lcl_err_code(errno), "opening work directory %s: %s",
                                   sb->work, errno == ELOOP || errno == ENOTDIR
                                   ? "it or its sandbox directory is a link or not a "
                                     "directory: refused" : strerror(errno));
    char *comp = buf;
    for (int i = 0; i < n - 1; i++, comp += strlen(comp) + 1) {
        bool made = false;
        if (create) {
            if (mkdirat(dfd, comp, 0755) == 0)
                made = true;
            else if (errno != EEXIST) {
                int code = path_error(p, path, comp, errno);
                close(dfd);
                return -code;
            }
        }
        int next = open_beneath(dfd, comp, O_RDONLY | O_DIRECTORY, 0);
        if (next < 0) {
            int code = path_error(p, path, comp, errno);
            close(dfd);
            return -code;
        }
        close(dfd);
        dfd = next;
        if (made && p->root && fchown(dfd, p->host_uid, p->host_gid) < 0) {
            int code = p->host->set_error(p->h, SBX_E_IO, "file '%s': chown of '%s': %s", path,
                                          comp, strerror(errno));
            close(dfd);
            return -code;
        }
    }
    *leaf = comp;
    return dfd;
}

int lcl_file_write(struct lcl_prov *p, struct lcl_sb *sb, const char *path,
                   const void *data, size_t len, uint32_t mode)
{
    char buf[LCL_PATH_MAX];
    const char *leaf;
    int dfd = walk_parents(p, sb, path, buf, sizeof buf, true, &leaf);
    if (dfd < 0)
        return -dfd;
    /* O_NONBLOCK: a FIFO planted by the sandbox must not hang us. */
    int fd = open_beneath(dfd, leaf, O_WRONLY | O_CREAT | O_NONBLOCK, mode & 0777);
    int err = errno;
    close(dfd);
    if (fd < 0)
        return path_error(p, path, leaf, err);
    struct stat st;
    int ret = SBX_OK;
    if (fstat(fd, &st) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "file '%s': fstat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
        ret = p->host->set_error(p->h, SBX_E_PATH,
                                 "file '%s' exists and is not a plain regular file; refused", path);
    else if (ftruncate(fd, 0) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "file '%s': truncate: %s", path, strerror(errno));
    else if (p->root && fchown(fd, p->host_uid, p->host_gid) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "file '%s': chown: %s", path, strerror(errno));
    else if (fchmod(fd, mode & 0777) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "file '%s': chmod: %s", path, strerror(errno));
    const char *d = data;
    size_t off = 0;
    while (!ret && off < len) {
        ssize_t n = write(fd, d + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            ret = p->host->set_error(p->h, errno == ENOSPC ? SBX_E_LIMIT : SBX_E_IO,
                                     "writing file '%s' in the sandbox: %s", path,
                                     n < 0 ? strerror(errno) : "short write");
        else
            off += (size_t)n;
    }
    if (close(fd) < 0 && !ret)
        ret = p->host->set_error(p->h, SBX_E_IO, "closing file '%s': %s", path, strerror(errno));
    return ret;
}

int lcl_file_read(struct lcl_prov *p, struct lcl_sb *sb, const char *path,
                  size_t max, void **data, size_t *len)
{
    char buf[LCL_PATH_MAX];
    const char *leaf;
    *data = NULL;
    *len = 0;
    int dfd = walk_parents(p, sb, path, buf, sizeof buf, false, &leaf);
    if (dfd < 0)
        return -dfd;
    int fd = open_beneath(dfd, leaf, O_RDONLY | O_NONBLOCK, 0);
    int err = errno;
    close(dfd);
    if (fd < 0)
        return path_error(p, path, leaf, err);
    struct stat st;
    int ret = SBX_OK;
    char *out = NULL;
    size_t off = 0;
    if (fstat(fd, &st) < 0)
        ret = p->host->set_error(p->h, SBX_E_IO, "file '%s': fstat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        ret = p->host->set_error(p->h, SBX_E_PATH, "file '%s' is not a regular file; refused", path);
    else if ((uint64_t)st.st_size > max)
        ret = p->host->set_error(p->h, SBX_E_LIMIT, "file '%s' is %lld bytes, more than the %zu allowed",
                                 path, (long long)st.st_size, max);
    else if (!(out = p->host->alloc((size_t)st.st_size + 1)))
        ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory reading '%s'", path);
    size_t want = ret ? 0 : (size_t)st.st_size;
    while (!ret && off < want) {
        ssize_t n = read(fd, out + off, want - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            ret = p->host->set_error(p->h, SBX_E_IO, "reading file '%s': %s", path, strerror(errno));
        else if (n == 0)
            break; /* shrank meanwhile: return what is there */
        else
            off += (size_t)n;
    }
    close(fd);
    if (ret) {
        if (out)
            p->host->free(out);
        return ret;
    }
    out[off] = '\0';
    *data = out;
    *len = off;
    return SBX_OK;
}
