/* core/image/pull.c - sbx_image_pull: reference -> manifest -> blobs -> root
 *
 * Every document and blob is checked against the digest that named it
 * before it is used; what follows (the index's pick, the manifest's
 * blobs, the root) is manifest.c's, shared with import.  The store is
 * held shared for the whole pull, so that prune and rm (exclusive) never
 * remove a blob between its check and its use.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <polysandbox/image.h>

#include "error.h"
#include "platform.h"
#include "image-int.h"

/* Fetch manifest @what, check it against @digest (or, fetched by tag,
 * compute it into @digest). */
static int manifest(img_client *c, const char *ref_text, const char *what, char *digest,
                    json_t **out, char *type, size_t type_len, char **body, size_t *len)
{
    int rc = img_get_manifest(c, what, body, len, type, type_len);
    if (rc != SBX_OK)
        return rc;
    char got[IMG_DIGEST_LEN + 1];
    img_digest_of(*body, *len, got);
    if (digest[0] && strcmp(got, digest) != 0) {
        free(*body);
        *body = NULL;
        return core_error_set(SBX_E_BACKEND, NULL, "image '%s': manifest %s does not match "
                              "its digest (the registry sent %s): refused", ref_text, digest,
                              got);
    }
    memcpy(digest, got, sizeof got);
    if ((rc = img_manifest_parse(*body, *len, ref_text, what, out)) != SBX_OK) {
        free(*body);
        *body = NULL;
    }
    return rc;
}

typedef struct fetching {
    const img_store *s;
    img_client *c;
    const char *ref_text;
} fetching;

static int fetch_one(void *arg, const char *digest, int64_t size)
{
    fetching *f = arg;
    return img_store_fetch(f->s, f->c, f->ref_text, digest, size);
}

/* A single-platform image: its config (fetched first, before any layer)
 * must name the wanted platform. */
static int check_platform(const img_store *s, img_client *c, json_t *m, const char *ref_text,
                          const core_platform *want)
{
    const char *d;
    int64_t size;
    char *cfg = NULL;
    size_t len = 0;
    int rc = img_descriptor(json_object_get(m, "config"), ref_text, &d, &size);
    if (rc != SBX_OK)
        return SBX_OK; /* img_manifest_blobs says what is wrong */
    if ((rc = img_store_fetch(s, c, ref_text, d, size)) == SBX_OK &&
        (rc = img_store_read(s, d, IMG_MANIFEST_MAX, &cfg, &len)) == SBX_OK)
        rc = img_config_platform(cfg, len, want, ref_text);
    free(cfg);
    return rc;
}

static int pull(const img_store *s, img_client *c, const img_ref *r, const char *ref_text,
                const core_platform *want, char *digest)
{
    char type[128], *body = NULL;
    size_t len;
    json_t *m = NULL;
    memcpy(digest, r->digest, sizeof r->digest);
    int rc = manifest(c, ref_text, r->digest[0] ? r->digest : r->tag, digest, &m, type,
                      sizeof type, &body, &len);
    if (rc == SBX_OK && img_is_index(type, m)) {
        rc = img_index_pick(m, want, ref_text, digest);
        json_decref(m);
        m = NULL;
        free(body);
        body = NULL;
        if (rc == SBX_OK) {
            char what[IMG_DIGEST_LEN + 1];
            memcpy(what, digest, sizeof what);
            rc = manifest(c, ref_text, what, digest, &m, type, sizeof type, &body, &len);
            if (rc == SBX_OK && img_is_index(type, m))
                rc = core_error_set(SBX_E_BACKEND, NULL, "image '%s': an index inside an "
                                    "index", ref_text);
        }
    }
    else if (rc == SBX_OK)
        rc = check_platform(s, c, m, ref_text, want);
    fetching f = { s, c, ref_text };
    if (rc == SBX_OK)
        rc = img_manifest_blobs(m, ref_text, digest, type, fetch_one, &f);
    if (rc == SBX_OK)
        rc = img_store_image(s, m, body, len, ref_text, digest);
    json_decref(m);
    free(body);
    return rc;
}

SBX_API int sbx_image_pull(sbx_ctx *ctx, const char *ref, char **digest_out)
{
    core_error_clear();
    if (digest_out)
        *digest_out = NULL;
    img_ref r;
    char text[IMG_REF_TEXT_MAX];
    img_store s;
    int rc = img_begin(ctx, ref, "sbx_image_pull", &r, text, &s);
    if (rc != SBX_OK)
        return rc;
    img_client *c = (rc = img_store_lock(&s, false)) == SBX_OK ? img_client_new(ctx, &r, text)
                                                                : NULL;
    char digest[IMG_DIGEST_LEN + 1] = "";
    core_platform want;
    img_platform_want(ctx, &want);
    rc = c ? pull(&s, c, &r, text, &want, digest) : rc == SBX_OK ? SBX_E_NOMEM : rc;
    img_client_free(c);
    if (rc == SBX_OK)
        rc = img_store_set_ref(&s, text, digest);
    img_store_close(&s);
    if (rc == SBX_OK && digest_out && !(*digest_out = strdup(digest)))
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return rc;
}
