/* core/image/prune.c - sbx_image_prune: what no reference needs
 *
 * With the store held exclusive (no pull or import is half way, so every
 * temporary is a killed one's), keep the blobs the referenced manifests
 * name and the roots of the referenced manifests; remove every other
 * entry of blobs/sha256/ and roots/, and temporaries of refs/.  A
 * referenced manifest that cannot be read keeps every blob (we cannot
 * know which it needs).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <polysandbox/image.h>

#include "error.h"
#include "context.h"
#include "image-int.h"

typedef struct keep {
    char (*v)[IMG_DIGEST_LEN + 1];
    size_t n, cap;
    bool all_blobs;             /* a manifest could not be read */
} keep;

static int keep_add(keep *k, const char *d)
{
    if (!d || !img_digest_valid(d))
        return SBX_OK;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        void *v = realloc(k->v, cap * sizeof *k->v);
        if (!v)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        k->v = v;
        k->cap = cap;
    }
    memcpy(k->v[k->n++], d, IMG_DIGEST_LEN + 1);
    return SBX_OK;
}

static bool kept(const keep *k, const char *hex)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->v[i] + 7, hex) == 0)
            return true;
    return false;
}

static int add_blob(void *arg, const char *digest, int64_t size)
{
    (void)size;
    return keep_add(arg, digest);
}

/* The blobs manifest @digest names (itself, its config, its layers). */
static int keep_image(const img_store *s, keep *k, const char *digest)
{
    int rc = keep_add(k, digest);
    char *body = NULL;
    size_t len;
    json_t *m = NULL;
    if (rc == SBX_OK && (img_store_read(s, digest, IMG_MANIFEST_MAX, &body, &len) != SBX_OK ||
                         img_manifest_parse(body, len, digest, digest, &m) != SBX_OK ||
                         img_manifest_blobs(m, digest, digest, "", add_blob, k) != SBX_OK)) {
        core_error_clear();
        k->all_blobs = true;
    }
    json_decref(m);
    free(body);
    return rc;
}

/* nftw(3) passes no argument: the walk of this thread. */
static _Thread_local uint64_t tree_bytes;

static int count_one(const char *p, const struct stat *st, int type, struct FTW *f)
{
    (void)p, (void)type, (void)f;
    if (!S_ISDIR(st->st_mode))
        tree_bytes += (uint64_t)st->st_size;
    return 0;
}

enum { SWEEP_BLOBS, SWEEP_ROOTS, SWEEP_TMPS };

/* Remove what @dir (under the store) holds but @k does not name (for
 * SWEEP_TMPS: only temporaries), counting into @count and @bytes. */
static int sweep(const img_store *s, const char *dir, const keep *k, int how,
                 unsigned *count, uint64_t *bytes)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", s->dir, dir);
    DIR *d = opendir(path);
    if (!d)
        return core_error_set(SBX_E_IO, NULL, "image store: %s: %s", path, strerror(errno));
    int rc = SBX_OK;
    struct dirent *de;
    while (rc == SBX_OK && (de = readdir(d))) {
        const char *n = de->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        bool digest_name = strlen(n) == 64 && strspn(n, "0123456789abcdef") == 64;
        if (how == SWEEP_TMPS ? !strstr(n, ".tmp-")
                              : digest_name && (kept(k, n) || (how == SWEEP_BLOBS &&
                                                               k->all_blobs)))
            continue;
        char full[4500];
        if (snprintf(full, sizeof full, "%s/%s", path, n) >= (int)sizeof full)
            continue;
        struct stat st;
        if (lstat(full, &st) != 0)
            continue;
        uint64_t size = (uint64_t)st.st_size;
        if (S_ISDIR(st.st_mode)) {
            tree_bytes = 0;
            nftw(full, count_one, 16, FTW_PHYS);
            size = tree_bytes;
        }
        if ((rc = img_rmtree(full)) == SBX_OK) {
            *count += 1;
            *bytes += size;
        }
    }
    closedir(d);
    return rc;
}

SBX_API int sbx_image_prune(sbx_ctx *ctx, unsigned *blobs_out, unsigned *roots_out,
                            uint64_t *bytes_out)
{
    core_error_clear();
    unsigned blobs = 0, roots = 0;
    uint64_t bytes = 0;
    if (blobs_out)
        *blobs_out = 0;
    if (roots_out)
        *roots_out = 0;
    if (bytes_out)
        *bytes_out = 0;
    if (!ctx)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_image_prune: no context");
    img_store s;
    int rc = img_store_open(&s, ctx->cfg.state_dir, ctx->cfg.image_dir);
    if (rc != SBX_OK)
        return rc;
    img_rec *v = NULL;
    size_t n = 0;
    keep blob_keep = { 0 }, root_keep = { 0 };
    if ((rc = img_store_lock(&s, true)) == SBX_OK)
        rc = img_records(&s, &v, &n);
    for (size_t i = 0; rc == SBX_OK && i < n; i++)
        if ((rc = keep_add(&root_keep, v[i].digest)) == SBX_OK)
            rc = keep_image(&s, &blob_keep, v[i].digest);
    if (rc == SBX_OK)
        rc = sweep(&s, "blobs/sha256", &blob_keep, SWEEP_BLOBS, &blobs, &bytes);
    if (rc == SBX_OK)
        rc = sweep(&s, "roots", &root_keep, SWEEP_ROOTS, &roots, &bytes);
    /* refs/: only killed writers' temporaries. */
    unsigned tmps = 0;
    uint64_t tmp_bytes = 0;
    keep none = { 0 };
    if (rc == SBX_OK)
        rc = sweep(&s, "refs", &none, SWEEP_TMPS, &tmps, &tmp_bytes);
    free(blob_keep.v);
    free(root_keep.v);
    img_recs_free(v, n);
    img_store_close(&s);
    if (blobs_out)
        *blobs_out = blobs;
    if (roots_out)
        *roots_out = roots;
    if (bytes_out)
        *bytes_out = bytes;
    return rc;
}
