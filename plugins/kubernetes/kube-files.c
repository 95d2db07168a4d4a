/* plugins/kubernetes/kube-files.c - files in and out of a sandbox, by exec and tar
 *
 * A file goes in as a one-entry tar (libarchive) on the stdin of an exec
 * of `tar -x`, and comes out as the stdout of `tar -c`, read back with
 * libarchive.  Both run inside a small sh script that walks the path from
 * the work directory one component at a time: a component that is a link
 * is refused (the sandbox may have planted it), a missing parent is made
 * (upload) or is "not found" (download), and after the walk the physical
 * directory (pwd -P) must be the one the walk meant, so that a link
 * swapped in meanwhile is caught.  The last component is never followed:
 * an upload removes a link or file there first (tar then makes a new
 * file), a download refuses a link, and the tar header says again what was
 * archived (anything but a regular file is refused).  The path itself is
 * checked here first: relative, no "..", no empty or "." parts, no control
 * characters.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube-int.h"
#include "tar-mem.h"


/* Exit codes of the scripts. */
enum { X_PATH = 3, X_MISSING = 4, X_NOWORK = 5, X_MKDIR = 6 };

/* The walk of the uploads and downloads: with w the work directory, p the
 * parent's relative path ("" for the work directory itself), u 1 to make
 * missing parents, b the file's name; it leaves the shell in the parent. */
#define WALK                                                                                \
    "cd -P -- \"$w\" 2>/dev/null || exit 5\n"                                               \
    "e=$(pwd -P)\n"                                                                         \
    "set -f; o=$IFS; IFS=/\n"                                                               \
    "for c in $p; do\n"                                                                     \
    "  [ -n \"$c\" ] || continue\n"                                                         \
    "  if [ -L \"$c\" ]; then echo \"'$c' is a link\" >&2; exit 3; fi\n"                    \
    "  if [ ! -e \"$c\" ]; then\n"                                                          \
    "    [ \"$u\" = 1 ] || exit 4\n"                                                        \
    "    mkdir -- \"$c\" 2>/dev/null || { [ -d \"$c\" ] && [ ! -L \"$c\" ]; } || exit 6\n"  \
    "  elif [ ! -d \"$c\" ]; then echo \"'$c' is not a directory\" >&2; exit 3; fi\n"       \
    "  cd -P -- \"$c\" || exit 3\n"                                                         \
    "  e=$e/$c\n"                                                                           \
    "done\n"                                                                                \
    "IFS=$o; set +f\n"                                                                      \
    "[ \"$(pwd -P)\" = \"$e\" ] || { echo 'a directory was swapped for a link' >&2; exit 3; }\n"

/* put W DIR NAME MODE LEN: the next LEN bytes of stdin (a one-entry tar)
 * become the file DIR/NAME of the work directory W, with MODE. */
const char kube_put_fn[] =
    "put() { (w=$1 p=$2 b=$3 u=1\n"
    WALK
    "if [ -d \"$b\" ] && [ ! -L \"$b\" ]; then echo \"'$b' is a directory\" >&2; exit 3; fi\n"
    "rm -f -- \"$b\" || exit 3\n"
    "head -c \"$5\" | tar -x -o -f - || exit 2\n"
    "[ -f \"$b\" ] && [ ! -L \"$b\" ] || exit 3\n"
    "chmod \"$4\" -- \"$b\" || exit 2); }\n";

static const char download_script[] =
    "w=$1 p=$2 b=$3 u=0\n"
    WALK
    "if [ -L \"$b\" ]; then echo \"'$b' is a link\" >&2; exit 3; fi\n"
    "[ -e \"$b\" ] || exit 4\n"
    "[ -f \"$b\" ] || { echo \"'$b' is not a regular file\" >&2; exit 3; }\n"
    "exec tar -c -f - -- \"$b\"\n";

/* The rule every provider applies (host->path_check, ABI 1.10). */
int kube_path_check(struct kube_prov *p, const char *path)
{
    return p->host->path_check(p->h, path);
}

/* "a/b/c" into "a/b" and "c" (both malloc'd). */
static int split(const char *path, char **dir, char **base)
{
    const char *slash = strrchr(path, '/');
    *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup("");
    *base = strdup(slash ? slash + 1 : path);
    if (!*dir || !*base) {
        free(*dir);
        free(*base);
        *dir = *base = NULL;
        return SBX_E_NOMEM;
    }
    return SBX_OK;
}

/* ---- tar ---- */

/* A tar of one regular file @name (padded to whole 10 KiB records, so that
 * a tar reading a stream that does not end stops at the end marker). */
static int tar_one(const char *name, const void *data, size_t len, uint32_t mode,
                   pc_membuf *out, char *err, size_t errlen)
{
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    int ret = SBX_OK;
    if (!a || !e) {
        snprintf(err, errlen, "out of memory");
        ret = SBX_E_NOMEM;
        goto done;
    }
    if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        archive_write_open2(a, out, NULL, pc_tar_mem_write, NULL, NULL) != ARCHIVE_OK)
        goto fail;
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, mode & 07777);
    archive_entry_set_size(e, (la_int64_t)len);
    archive_entry_set_mtime(e, time(NULL), 0);
    if (archive_write_header(a, e) != ARCHIVE_OK ||
        (len && archive_write_data(a, data, len) != (la_ssize_t)len) ||
        archive_write_close(a) != ARCHIVE_OK)
        goto fail;
    goto done;
fail:
    snprintf(err, errlen, "making the tar: %s",
             archive_error_string(a) ? archive_error_string(a) : "failed");
    ret = archive_errno(a) == ENOMEM ? SBX_E_NOMEM : SBX_E_IO;
done:
    if (e)
        archive_entry_free(e);
    if (a)
        archive_write_free(a);
    return ret;
}

/* The one regular file of a tar named @name, into host->alloc'd memory. */
static int untar_one(struct kube_prov *p, const void *tar, size_t tar_len, const char *name,
                     size_t max, void **data, size_t *len, const char *path)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    unsigned char *buf = NULL;
    int ret = SBX_OK;
    if (!a)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
        archive_read_open_memory(a, tar, tar_len) != ARCHIVE_OK ||
        archive_read_next_header(a, &e) != ARCHIVE_OK) {
        ret = p->host->set_error(p->h, SBX_E_BACKEND, "download of '%s': the pod's tar is not "
                                 "readable: %s", path,
                                 archive_error_string(a) ? archive_error_string(a) : "no entry");
        goto done;
    }
    if (archive_entry_filetype(e) != AE_IFREG || !archive_entry_pathname(e) ||
        strcmp(archive_entry_pathname(e), name)) {
        ret = p->host->set_error(p->h, SBX_E_PATH, "download of '%s': not a regular file; "
                                 "refused", path);
        goto done;
    }
    la_int64_t size = archive_entry_size(e);
    if (size < 0 || (uint64_t)size > max) {
        ret = p->host->set_error(p->h, SBX_E_LIMIT, "download of '%s': the file is %lld bytes, "
                                 "more than the %zu allowed", path, (long long)size, max);
        goto done;
    }
    if (!(buf = p->host->alloc((size_t)size + 1))) {
        ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory for %lld bytes",
                                 (long long)size);
        goto done;
    }
    size_t got = 0;
    while (got < (size_t)size) {
        la_ssize_t n = archive_read_data(a, buf + got, (size_t)size - got);
        if (n < 0) {
            ret = p->host->set_error(p->h, SBX_E_BACKEND, "download of '%s': reading the tar: "
                                     "%s", path, archive_error_string(a));
            goto done;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    if (got != (size_t)size) {
        ret = p->host->set_error(p->h, SBX_E_BACKEND, "download of '%s': the tar ended after "
                                 "%zu of %lld bytes", path, got, (long long)size);
        goto done;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    buf = NULL;
done:
    archive_read_free(a);
    if (buf)
        p->host->free(buf);
    return ret;
}

int kube_file_error(struct kube_prov *p, struct kube_sb *sb, const char *op, const char *path,
                    int code, const char *errtext)
{
    char msg[400];
    snprintf(msg, sizeof msg, "%s", errtext);
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    switch (code) {
    case X_PATH:
        return p->host->set_error(p->h, SBX_E_PATH, "%s of '%s': refused: %s", op, path,
                                  msg[0] ? msg : "not a plain path");
    case X_MISSING:
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "%s of '%s': no such file in sandbox "
                                  "%s", op, path, sb->id);
    case X_NOWORK:
        return p->host->set_error(p->h, SBX_E_BACKEND, "%s of '%s': the work directory %s is "
                                  "missing in sandbox %s", op, path, sb->workdir, sb->id);
    default:
        return p->host->set_error(p->h, strstr(msg, "No space") || strstr(msg, "quota")
                                  ? SBX_E_LIMIT : SBX_E_IO,
                                  "%s of '%s' failed in sandbox %s (exit %d): %s", op, path,
                                  sb->id, code, msg[0] ? msg : "no message (is tar in the image?)");
    }
}

int kube_file_payload(struct kube_prov *p, const char *path, const void *data, size_t len,
                      uint32_t mode, char **dir, char **base, char mode_text[16],
                      unsigned char **tar, size_t *tar_len)
{
    *dir = *base = NULL;
    *tar = NULL;
    *tar_len = 0;
    int rc = kube_path_check(p, path);
    if (rc)
        return rc;
    if (split(path, dir, base))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    pc_membuf m = {0};
    char err[300];
    if ((rc = tar_one(*base, data, len, mode, &m, err, sizeof err))) {
        free(*dir);
        free(*base);
        *dir = *base = NULL;
        return p->host->set_error(p->h, rc, "upload of '%s': %s", path, err);
    }
    snprintf(mode_text, 16, "%o", (unsigned)(mode & 07777));
    *tar = m.p;
    *tar_len = m.len;
    return SBX_OK;
}

int kube_upload(struct kube_prov *p, struct kube_sb *sb, const char *path, const void *data,
                size_t len, uint32_t mode)
{
    char *dir, *base, m[16];
    unsigned char *tar;
    size_t tar_len;
    int rc = kube_file_payload(p, path, data, len, mode, &dir, &base, m, &tar, &tar_len);
    if (rc)
        return rc;
    static const char body[] = "put \"$1\" \"$2\" \"$3\" \"$4\" \"$L\"\n";
    char *script = NULL;
    if (asprintf(&script, "%s%s", kube_put_fn, body) < 0)
        script = NULL;
    const char *args[] = {sb->workdir, dir, base, m, NULL};
    int code = -1;
    char etext[400] = "";
    rc = script ? kube_run_helper(p, sb, "upload", script, args, tar, tar_len, 4096, NULL, NULL,
                                  &code, etext, sizeof etext)
                : p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    if (!rc && code != 0)
        rc = kube_file_error(p, sb, "upload", path, code, etext);
    free(script);
    free(tar);
    free(dir);
    free(base);
    return rc;
}

int kube_download(struct kube_prov *p, struct kube_sb *sb, const char *path, size_t max,
                  void **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int rc = kube_path_check(p, path);
    if (rc)
        return rc;
    char *dir, *base;
    if (split(path, &dir, &base))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    const char *args[] = {sb->workdir, dir, base, NULL};
    int code = -1;
    char etext[400] = "";
    unsigned char *tar = NULL;
    size_t tar_len = 0;
    /* The tar adds a header or two and pads to 10 KiB records. */
    size_t cap = max > SIZE_MAX - 64 * 1024 ? SIZE_MAX : max + 64 * 1024;
    rc = kube_run_helper(p, sb, "download", download_script, args, NULL, 0, cap, &tar, &tar_len,
                         &code, etext, sizeof etext);
    if (rc == SBX_E_LIMIT)
        rc = p->host->set_error(p->h, SBX_E_LIMIT, "download of '%s': the file is more than "
                                "the %zu bytes allowed", path, max);
    else if (!rc && code != 0)
        rc = kube_file_error(p, sb, "download", path, code, etext);
    else if (!rc)
        rc = untar_one(p, tar, tar_len, base, max, data, len, path);
    free(tar);
    free(dir);
    free(base);
    return rc;
}
