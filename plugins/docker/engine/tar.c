/* plugins/docker/engine/tar.c - the tar bodies of Docker's archive API
 * (libarchive), in memory
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/engine.h"
#include "tar-mem.h"

static int add_entry(struct archive *a, struct archive_entry *e, const char *name,
                     mode_t type, uint32_t perm, const void *data, size_t len)
{
    archive_entry_clear(e);
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_size(e, type == AE_IFREG ? (la_int64_t)len : 0);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_mtime(e, time(NULL), 0);
    if (archive_write_header(a, e) != ARCHIVE_OK)
        return -1;
    if (type == AE_IFREG && len && archive_write_data(a, data, len) != (la_ssize_t)len)
        return -1;
    return 0;
}

int dk_tar_file(const char *path, const void *data, size_t len, uint32_t mode,
                void **out, size_t *out_len, char *err, size_t errlen)
{
    pc_membuf m = {0};
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    char *dir = strdup(path);
    int ret = SBX_OK;
    *out = NULL;
    *out_len = 0;
    if (!a || !e || !dir) {
        snprintf(err, errlen, "out of memory");
        ret = SBX_E_NOMEM;
        goto done;
    }
    if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
        archive_write_open2(a, &m, NULL, pc_tar_mem_write, NULL, NULL) != ARCHIVE_OK)
        goto fail;
    /* The parents first, as directories, so the daemon creates them. */
    for (char *s = strchr(dir, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        if (add_entry(a, e, dir, AE_IFDIR, 0755, NULL, 0) < 0)
            goto fail;
        *s = '/';
    }
    if (add_entry(a, e, path, AE_IFREG, mode & 07777, data, len) < 0 ||
        archive_write_close(a) != ARCHIVE_OK)
        goto fail;
    *out = m.p;
    *out_len = m.len;
    m.p = NULL;
    goto done;
fail:
    snprintf(err, errlen, "making the tar of '%s': %s", path,
             archive_error_string(a) ? archive_error_string(a) : "failed");
    ret = archive_errno(a) == ENOMEM ? SBX_E_NOMEM : SBX_E_IO;
done:
    /* Freeing an archive that was not closed closes it, which writes its
     * end blocks into m: free the archive before the buffer. */
    if (a)
        archive_write_free(a);
    free(m.p);
    free(dir);
    if (e)
        archive_entry_free(e);
    return ret;
}

int dk_tar_extract_one(const void *tar, size_t tar_len, size_t max, void *(*alloc)(size_t),
                       void (*dfree)(void *), void **data, size_t *len, char *err, size_t errlen)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    unsigned char *buf = NULL;
    int ret = SBX_OK;
    *data = NULL;
    *len = 0;
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return SBX_E_NOMEM;
    }
    if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
        archive_read_open_memory(a, tar, tar_len) != ARCHIVE_OK ||
        archive_read_next_header(a, &e) != ARCHIVE_OK) {
        snprintf(err, errlen, "the daemon's archive is not a readable tar: %s",
                 archive_error_string(a) ? archive_error_string(a) : "no entry");
        ret = SBX_E_BACKEND;
        goto done;
    }
    if (archive_entry_filetype(e) != AE_IFREG) {
        snprintf(err, errlen, "not a regular file (a %s); refused",
                 archive_entry_filetype(e) == AE_IFLNK ? "symbolic link"
                 : archive_entry_filetype(e) == AE_IFDIR ? "directory" : "special file");
        ret = SBX_E_PATH;
        goto done;
    }
    la_int64_t size = archive_entry_size(e);
    if (size < 0 || (uint64_t)size > max) {
        snprintf(err, errlen, "the file is %lld bytes, more than the %zu allowed",
                 (long long)size, max);
        ret = SBX_E_LIMIT;
        goto done;
    }
    if (!(buf = alloc((size_t)size + 1))) {
        snprintf(err, errlen, "out of memory for %lld bytes", (long long)size);
        ret = SBX_E_NOMEM;
        goto done;
    }
    size_t got = 0;
    while (got < (size_t)size) {
        la_ssize_t n = archive_read_data(a, buf + got, (size_t)size - got);
        if (n < 0) {
            snprintf(err, errlen, "reading the daemon's archive: %s", archive_error_string(a));
            ret = SBX_E_BACKEND;
            goto done;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    buf = NULL;
done:
    archive_read_free(a);
    if (buf)
        dfree(buf);
    return ret;
}
