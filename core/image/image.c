/* core/image/image.c - sbx_image_list and sbx_image_rm
 *
 * The references are the records of refs/; rm forgets one and, when no
 * other record names its image, removes the root and every blob that no
 * remaining image's manifest names (blobs are shared between images by
 * digest).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
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

#define IMG_RECORD_MAX 4096

typedef img_rec rec;

static int by_ref(const void *a, const void *b)
{
    return strcmp(((const rec *)a)->ref, ((const rec *)b)->ref);
}

void img_recs_free(img_rec *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].ref);
    free(v);
}

/* Every readable record, sorted; a broken one is skipped (it names no
 * image a user could ask for). */
int img_records(const img_store *s, img_rec **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/refs", s->dir);
    DIR *d = opendir(dir);
    if (!d)
        return core_error_set(SBX_E_IO, NULL, "image store: %s: %s", dir, strerror(errno));
    rec *v = NULL;
    size_t n = 0, cap = 0;
    int rc = SBX_OK;
    struct dirent *de;
    while (rc == SBX_OK && (de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        if (nl != 64 + 5 || strcmp(de->d_name + 64, ".json") != 0)
            continue;
        char path[4400];
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
            continue;
        json_t *j = json_load_file(path, 0, NULL);
        const char *ref = json_string_value(json_object_get(j, "ref"));
        const char *dg = json_string_value(json_object_get(j, "digest"));
        if (ref && dg && img_digest_valid(dg)) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                rec *nv = realloc(v, cap * sizeof *nv);
                if (!nv)
                    rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
                else
                    v = nv;
            }
            if (rc == SBX_OK) {
                if (!(v[n].ref = strdup(ref)))
                    rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
                else
                    memcpy(v[n++].digest, dg, IMG_DIGEST_LEN + 1);
            }
        }
        json_decref(j);
    }
    closedir(d);
    if (rc != SBX_OK) {
        img_recs_free(v, n);
        return rc;
    }
    if (n)
        qsort(v, n, sizeof *v, by_ref);
    *out = v;
    *n_out = n;
    return SBX_OK;
}

SBX_API int sbx_image_list(sbx_ctx *ctx, sbx_image_visit_fn fn, void *arg)
{
    core_error_clear();
    if (!ctx || !fn)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_image_list: no context or callback");
    img_store s;
    int rc = img_store_open(&s, ctx->cfg.state_dir, ctx->cfg.image_dir);
    rec *v = NULL;
    size_t n = 0;
    if (rc == SBX_OK)
        rc = img_records(&s, &v, &n);
    for (size_t i = 0; rc == SBX_OK && i < n; i++) {
        char *root = img_root_path(&s, v[i].digest);
        if (!root) {
            rc = SBX_E_NOMEM;
            break;
        }
        fn(v[i].ref, v[i].digest, root, arg);
        free(root);
    }
    img_recs_free(v, n);
    img_store_close(&s);
    return rc;
}

/* Is blob @d named by manifest @digest (the manifest itself, its config,
 * a layer)? */
static bool names(const img_store *s, const char *digest, const char *d)
{
    if (strcmp(digest, d) == 0)
        return true;
    char *body;
    size_t len;
    if (img_store_read(s, digest, IMG_MANIFEST_MAX, &body, &len) != SBX_OK) {
        core_error_clear();
        return true;                    /* unreadable: keep what it may need */
    }
    json_t *m = json_loadb(body, len, 0, NULL);
    free(body);
    bool hit = strcmp(json_string_value(json_object_get(json_object_get(m, "config"),
                                                        "digest")) ?: "", d) == 0;
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(m, "layers"), i, l)
        hit = hit || strcmp(json_string_value(json_object_get(l, "digest")) ?: "", d) == 0;
    json_decref(m);
    return hit;
}

/* Remove the root and the blobs of manifest @digest that no image of
 * @v (the remaining records) names. */
static int drop_image(const img_store *s, const char *digest, const rec *v, size_t n)
{
    char *root = img_root_path(s, digest);
    int rc = root ? img_rmtree(root) : SBX_E_NOMEM;
    free(root);
    char *body = NULL;
    size_t len;
    if (rc != SBX_OK || img_store_read(s, digest, IMG_MANIFEST_MAX, &body, &len) != SBX_OK) {
        core_error_clear();
        return rc;                      /* no manifest: its blobs stay for prune */
    }
    json_t *m = json_loadb(body, len, 0, NULL);
    free(body);
    const char *mine[IMG_RECORD_MAX];
    size_t k = 0;
    mine[k++] = digest;
    const char *cd = json_string_value(json_object_get(json_object_get(m, "config"), "digest"));
    if (cd)
        mine[k++] = cd;
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(m, "layers"), i, l) {
        const char *ld = json_string_value(json_object_get(l, "digest"));
        if (ld && k < IMG_RECORD_MAX)
            mine[k++] = ld;
    }
    for (size_t b = 0; rc == SBX_OK && b < k; b++) {
        if (!img_digest_valid(mine[b]))
            continue;
        bool used = false;
        for (size_t r = 0; !used && r < n; r++)
            used = names(s, v[r].digest, mine[b]);
        char *path = used ? NULL : img_blob_path(s, mine[b]);
        if (path && unlink(path) != 0 && errno != ENOENT)
            rc = core_error_set(SBX_E_IO, NULL, "image store: cannot remove %s: %s", path,
                                strerror(errno));
        free(path);
    }
    json_decref(m);
    return rc;
}

/* The digest @text's record names into @digest (IMG_DIGEST_LEN + 1), or ""
 * when there is none or it is broken (it names nothing a user could ask
 * for); the record's path into @path (malloc'd) when @path is not NULL. */
static int lookup(const img_store *s, const char *text, char *digest, char **path)
{
    digest[0] = '\0';
    char *p = img_ref_record_path(s, text);
    if (!p)
        return SBX_E_NOMEM;
    json_t *j = json_load_file(p, 0, NULL);
    const char *dg = json_string_value(json_object_get(j, "digest"));
    if (dg && img_digest_valid(dg))
        memcpy(digest, dg, IMG_DIGEST_LEN + 1);
    json_decref(j);
    if (path)
        *path = p;
    else
        free(p);
    return SBX_OK;
}

SBX_API int sbx_image_root(const sbx_ctx *ctx, const char *ref, char **root_out)
{
    core_error_clear();
    if (!root_out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_image_root: no root_out");
    *root_out = NULL;
    img_ref r;
    char text[IMG_REF_TEXT_MAX];
    img_store s;
    int rc = img_begin(ctx, ref, "sbx_image_root", &r, text, &s);
    if (rc != SBX_OK)
        return rc;
    char digest[IMG_DIGEST_LEN + 1];
    rc = lookup(&s, text, digest, NULL);
    /* NAME@DIGEST: the root is the digest's, whichever reference pulled it. */
    if (!digest[0] && r.digest[0])
        memcpy(digest, r.digest, sizeof digest);
    char *root = digest[0] ? img_root_path(&s, digest) : NULL;
    struct stat st;
    if (rc != SBX_OK || (digest[0] && !root))
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    else if (!root)
        rc = core_error_set(SBX_E_NOT_FOUND, NULL, "image '%s' is not pulled (not in the "
                            "store %s): run polysandbox image pull %s", ref, s.dir, ref);
    else if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = core_error_set(SBX_E_NOT_FOUND, NULL, "image '%s' is not pulled (its root %s is "
                            "gone): run polysandbox image pull %s", ref, root, ref);
    img_store_close(&s);
    if (rc != SBX_OK) {
        free(root);
        return rc;
    }
    *root_out = root;
    return SBX_OK;
}

SBX_API int sbx_image_rm(sbx_ctx *ctx, const char *ref)
{
    core_error_clear();
    img_ref r;
    char text[IMG_REF_TEXT_MAX];
    img_store s;
    int rc = img_begin(ctx, ref, "sbx_image_rm", &r, text, &s);
    if (rc != SBX_OK)
        return rc;
    /* Exclusive: a pull adding a blob this image shares must not see it go. */
    if ((rc = img_store_lock(&s, true)) != SBX_OK) {
        img_store_close(&s);
        return rc;
    }
    char *path = NULL;
    char digest[IMG_DIGEST_LEN + 1];
    if (lookup(&s, text, digest, &path) != SBX_OK)
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    else if (!digest[0])
        rc = core_error_set(SBX_E_NOT_FOUND, NULL, "image '%s' was never pulled "
                            "(see polysandbox image list)", text);
    else if (unlink(path) != 0)
        rc = core_error_set(SBX_E_IO, NULL, "image store: cannot remove %s: %s", path,
                            strerror(errno));
    free(path);
    rec *v = NULL;
    size_t n = 0;
    if (rc == SBX_OK)
        rc = img_records(&s, &v, &n);
    bool shared = false;
    for (size_t i = 0; rc == SBX_OK && i < n; i++)
        shared = shared || strcmp(v[i].digest, digest) == 0;
    if (rc == SBX_OK && !shared)
        rc = drop_image(&s, digest, v, n);
    img_recs_free(v, n);
    img_store_close(&s);
    return rc;
}
