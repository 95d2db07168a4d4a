/* core/image/store.c - the image store on disk
 *
 * IMAGES is [core] image_dir, or STATE_DIR/images:
 *
 *   IMAGES/blobs/sha256/HEX   every blob, manifest and config, written
 *                             only once its digest was checked
 *   IMAGES/roots/HEX/         the unpacked root of manifest HEX
 *   IMAGES/refs/HEX.json      {"ref", "digest"}: a reference (HEX: the
 *                             sha256 of its text)
 *
 *   IMAGES/lock               flock(2)ed: shared by pull and import,
 *                             exclusive for rm and prune
 *
 * Each file appears by rename(2) of a finished temporary, so a killed
 * pull leaves a temporary (".tmp-*", which prune sweeps), never a blob
 * or root that is not whole.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "context.h"
#include "image-int.h"

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return core_error_set(SBX_E_IO, NULL, "image store: path too long: %s", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return core_error_set(SBX_E_IO, NULL, "image store: cannot create %s: %s",
                                      buf, strerror(errno));
            *p = c;
            if (c == '\0')
                return SBX_OK;
        }
    }
}

int img_store_open(img_store *s, const char *state_dir, const char *image_dir)
{
    s->dir = NULL;
    s->lock_fd = -1;
    char base[PATH_MAX], want[PATH_MAX];
    if (image_dir && *image_dir)
        snprintf(base, sizeof base, "%s", image_dir);
    else if (!state_dir || !*state_dir)
        return core_error_set(SBX_E_CONFIG, NULL, "image store: no state directory "
                              "([core] state_dir) and no [core] image_dir");
    else if (snprintf(base, sizeof base, "%s/images", state_dir) >= (int)sizeof base)
        return core_error_set(SBX_E_IO, NULL, "image store: path too long under %s", state_dir);
    static const char *const subs[] = { "/blobs/sha256", "/roots", "/refs" };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (snprintf(want, sizeof want, "%s%s", base, subs[i]) >= (int)sizeof want)
            return core_error_set(SBX_E_IO, NULL, "image store: path too long: %s", base);
        int rc = mkdir_p(want);
        if (rc != SBX_OK)
            return rc;
    }
    /* Resolved, so that the path of every root holds no symbolic link. */
    s->dir = realpath(base, NULL);
    if (!s->dir)
        return core_error_set(SBX_E_IO, NULL, "image store: %s: %s", base, strerror(errno));
    return SBX_OK;
}

int img_begin(const sbx_ctx *ctx, const char *ref, const char *fn, img_ref *r, char *text,
              img_store *s)
{
    char why[160];
    if (!ctx || !ref)
        return core_error_set(SBX_E_INVAL, NULL, "%s: no context or reference", fn);
    if (!img_ref_parse(ref, r, why, sizeof why))
        return core_error_set(SBX_E_INVAL, NULL, "image '%.300s': %s", ref, why);
    if (!img_ref_format(r, text, IMG_REF_TEXT_MAX))
        return core_error_set(SBX_E_INVAL, NULL, "image '%.300s': too long", ref);
    return img_store_open(s, ctx->cfg.state_dir, ctx->cfg.image_dir);
}

void img_store_close(img_store *s)
{
    if (s->lock_fd >= 0)
        close(s->lock_fd);              /* releases the flock */
    s->lock_fd = -1;
    free(s->dir);
    s->dir = NULL;
}

int img_store_lock(img_store *s, bool exclusive)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/lock", s->dir) >= (int)sizeof path)
        return core_error_set(SBX_E_IO, NULL, "image store: path too long: %s", s->dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return core_error_set(SBX_E_IO, NULL, "image store: cannot open %s: %s", path,
                              strerror(errno));
    int r;
    while ((r = flock(fd, exclusive ? LOCK_EX : LOCK_SH)) != 0 && errno == EINTR)
        ;
    if (r != 0) {
        int e = errno;
        close(fd);
        return core_error_set(SBX_E_IO, NULL, "image store: cannot lock %s: %s", path,
                              strerror(e));
    }
    s->lock_fd = fd;
    return SBX_OK;
}

static void hex_of(const unsigned char h[crypto_hash_sha256_BYTES], char *out)
{
    memcpy(out, "sha256:", 7);
    sodium_bin2hex(out + 7, 65, h, crypto_hash_sha256_BYTES);
}

void img_digest_of(const void *p, size_t len, char *out)
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, p, len);
    hex_of(h, out);
}

void img_digest_final(crypto_hash_sha256_state *st, char *out)
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(st, h);
    hex_of(h, out);
}

static char *join(const char *a, const char *b, const char *c)
{
    size_t len = strlen(a) + strlen(b) + strlen(c) + 1;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s%s%s", a, b, c);
    else
        core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return p;
}

char *img_blob_path(const img_store *s, const char *digest)
{
    return join(s->dir, "/blobs/sha256/", digest + 7);
}

char *img_root_path(const img_store *s, const char *digest)
{
    return join(s->dir, "/roots/", digest + 7);
}

char *img_ref_record_path(const img_store *s, const char *ref_text)
{
    char d[IMG_DIGEST_LEN + 1], name[80];
    img_digest_of(ref_text, strlen(ref_text), d);
    snprintf(name, sizeof name, "%s.json", d + 7);
    return join(s->dir, "/refs/", name);
}

/* A temporary beside @path, open for writing. */
static int open_tmp(const char *path, char **tmp, int *fd)
{
    *tmp = NULL;
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".tmp-%ld-XXXXXX", (long)getpid());
    if (!(*tmp = join(path, suffix, "")))
        return SBX_E_NOMEM;
    *fd = mkostemp(*tmp, O_CLOEXEC);
    if (*fd < 0) {
        int rc = core_error_set(SBX_E_IO, NULL, "image store: cannot create %s: %s", *tmp,
                                strerror(errno));
        free(*tmp);
        *tmp = NULL;
        return rc;
    }
    return SBX_OK;
}

/* Finish the temporary: close, then rename onto @path (or unlink on @rc). */
static int finish_tmp(int rc, int fd, char *tmp, const char *path)
{
    if (fd >= 0 && close(fd) != 0 && rc == SBX_OK)
        rc = core_error_set(SBX_E_IO, NULL, "image store: %s: %s", tmp, strerror(errno));
    if (rc == SBX_OK && rename(tmp, path) != 0)
        rc = core_error_set(SBX_E_IO, NULL, "image store: cannot rename %s: %s", tmp,
                            strerror(errno));
    if (rc != SBX_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

int img_store_fetch(const img_store *s, img_client *c, const char *ref_text,
                    const char *digest, int64_t size)
{
    if (!img_digest_valid(digest))
        return core_error_set(SBX_E_BACKEND, NULL, "image '%s': the manifest names a blob "
                              "'%.80s' that is not a sha256 digest", ref_text, digest);
    if (size < 0)
        return core_error_set(SBX_E_BACKEND, NULL, "image '%s': blob %s has a negative size",
                              ref_text, digest);
    char *path = img_blob_path(s, digest);
    if (!path)
        return SBX_E_NOMEM;
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size == size) {
        free(path);
        return SBX_OK;                  /* checked when it was stored */
    }
    char *tmp;
    int fd = -1;
    int rc = open_tmp(path, &tmp, &fd);
    if (rc == SBX_OK) {
        crypto_hash_sha256_state hs;
        crypto_hash_sha256_init(&hs);
        rc = img_get_blob(c, digest, size, fd, &hs);
        char got[IMG_DIGEST_LEN + 1];
        img_digest_final(&hs, got);
        if (rc == SBX_OK && strcmp(got, digest) != 0)
            rc = core_error_set(SBX_E_BACKEND, NULL, "image '%s': blob %s does not match its "
                                "digest (the registry sent %s): refused", ref_text, digest, got);
        rc = finish_tmp(rc, fd, tmp, path);
    }
    free(path);
    return rc;
}

int img_store_tmp(const img_store *s, char **tmp, int *fd)
{
    char *base = join(s->dir, "/blobs/sha256/import", "");
    int rc = base ? open_tmp(base, tmp, fd) : SBX_E_NOMEM;
    free(base);
    return rc;
}

int img_store_keep(const img_store *s, int rc, int fd, char *tmp, const char *digest)
{
    char *path = rc == SBX_OK ? img_blob_path(s, digest) : NULL;
    if (rc == SBX_OK && !path)
        rc = SBX_E_NOMEM;
    rc = finish_tmp(rc, fd, tmp, path);
    free(path);
    return rc;
}

int img_store_put(const img_store *s, const char *digest, const void *p, size_t len)
{
    char *path = img_blob_path(s, digest);
    if (!path)
        return SBX_E_NOMEM;
    char *tmp;
    int fd = -1;
    int rc = open_tmp(path, &tmp, &fd);
    if (rc == SBX_OK) {
        for (size_t off = 0; off < len && rc == SBX_OK;) {
            ssize_t w = write(fd, (const char *)p + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = core_error_set(SBX_E_IO, NULL, "image store: %s: %s", tmp,
                                    strerror(errno));
            else
                off += (size_t)w;
        }
        rc = finish_tmp(rc, fd, tmp, path);
    }
    free(path);
    return rc;
}

int img_read_file(const char *path, size_t max, char **out, size_t *len)
{
    *out = NULL;
    int rc = SBX_OK;
    FILE *f = fopen(path, "rbe");
    char *buf = f ? malloc(max + 1) : NULL;
    if (!f)
        rc = core_error_set(errno == ENOENT ? SBX_E_NOT_FOUND : SBX_E_IO, NULL,
                            "image store: %s: %s", path, strerror(errno));
    else if (!buf)
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (rc == SBX_OK) {
        /* cppcheck-suppress nullPointerRedundantCheck ; buf is NULL only when rc is an error */
        *len = fread(buf, 1, max + 1, f);
        if (ferror(f) || *len > max)
            rc = core_error_set(SBX_E_IO, NULL, "image store: cannot read %s (or it is over "
                                "%zu bytes)", path, max);
        else
            buf[*len] = '\0';
    }
    if (f)
        fclose(f);
    if (rc == SBX_OK)
        *out = buf;
    else
        free(buf);
    return rc;
}

int img_store_read(const img_store *s, const char *digest, size_t max, char **out, size_t *len)
{
    *out = NULL;
    char *path = img_blob_path(s, digest);
    int rc = path ? img_read_file(path, max, out, len) : SBX_E_NOMEM;
    free(path);
    return rc;
}

int img_store_set_ref(const img_store *s, const char *ref_text, const char *digest)
{
    char *path = img_ref_record_path(s, ref_text);
    if (!path)
        return SBX_E_NOMEM;
    json_t *j = json_pack("{s:s, s:s}", "ref", ref_text, "digest", digest);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int rc = text ? SBX_OK : core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    char *tmp = NULL;
    int fd = -1;
    if (rc == SBX_OK)
        rc = open_tmp(path, &tmp, &fd);
    if (rc == SBX_OK) {
        size_t n = strlen(text);
        if (write(fd, text, n) != (ssize_t)n)
            rc = core_error_set(SBX_E_IO, NULL, "image store: %s: %s", tmp, strerror(errno));
        rc = finish_tmp(rc, fd, tmp, path);
    }
    free(text);
    free(path);
    return rc;
}

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *f)
{
    (void)st, (void)f;
    int r = (type == FTW_DP) ? rmdir(p) : unlink(p);
    return r == 0 || errno == ENOENT ? 0 : -1;
}

int img_rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? SBX_OK
             : core_error_set(SBX_E_IO, NULL, "image store: %s: %s", path, strerror(errno));
    /* unpack.c keeps every directory writable by its owner: no chmod. */
    if (S_ISDIR(st.st_mode) && nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0)
        return SBX_OK;
    if (!S_ISDIR(st.st_mode) && unlink(path) == 0)
        return SBX_OK;
    return core_error_set(SBX_E_IO, NULL, "image store: cannot remove %s: %s", path,
                          strerror(errno));
}
