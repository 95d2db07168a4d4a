/* core/image/image-int.h - internals of the image store (prefix img_)
 *
 * Split by purpose: ref.c (the reference grammar), challenge.c (the
 * WWW-Authenticate header), registry.c (HTTP with libcurl, the token
 * dance), store.c (blobs by digest, the reference records), unpack.c
 * (layers with libarchive), manifest.c (what pull and import share once
 * they hold the documents), pull.c, import.c, prune.c and image.c (the
 * public calls).  The
 * two parsers are hand-written and fuzzed (tests/fuzz/fuzz-image.c).
 */
#ifndef CORE_IMAGE_INT_H
#define CORE_IMAGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sodium.h>

#include <polysandbox/image.h>

#include "platform.h"

/* ---- references (ref.c) ----------------------------------------------- */

#define IMG_DIGEST_LEN 71       /* "sha256:" + 64 hex */

typedef struct img_ref {
    char domain[256];           /* as written, "docker.io" by default */
    char path[256];             /* "library/debian", "team/tool" */
    char tag[129];              /* "" when only a digest was given */
    char digest[IMG_DIGEST_LEN + 1]; /* "" or "sha256:<64 lower hex>" */
} img_ref;

/* Parse @s; on failure returns false with a reason (naming the part) in
 * @why.  Fills in "docker.io", "library/" and "latest" as docker does. */
bool img_ref_parse(const char *s, img_ref *r, char *why, size_t why_len);
/* "DOMAIN/PATH:TAG", "DOMAIN/PATH@DIGEST" or both; false when too long. */
bool img_ref_format(const img_ref *r, char *out, size_t len);
/* "sha256:<64 lower hex>" exactly. */
bool img_digest_valid(const char *d);

/* ---- WWW-Authenticate (challenge.c) ---------------------------------- */

enum { IMG_AUTH_NONE = 0, IMG_AUTH_BASIC, IMG_AUTH_BEARER };

typedef struct img_challenge {
    int scheme;                 /* IMG_AUTH_* */
    char realm[1024];
    char service[256];
    char scope[512];
} img_challenge;

/* Parse one header value (@len bytes, not NUL-terminated): the first
 * challenge of scheme Basic or Bearer with its realm, service and scope.
 * Returns false for anything else (an unknown scheme, a broken quoted
 * string, a parameter too long). */
bool img_challenge_parse(const char *v, size_t len, img_challenge *c);

/* ---- the registry (registry.c) ----------------------------------------- */

typedef struct img_client img_client;

/* A client of @r's registry, with the [registry DOMAIN] credentials of
 * @ctx's configuration (may be NULL: none); NULL with the error set. */
struct sbx_ctx;
img_client *img_client_new(const struct sbx_ctx *ctx, const img_ref *r, const char *ref_text);
void img_client_free(img_client *c);
/* GET the manifest @what (a tag or digest) into @body (malloc'd, owned by
 * the caller) with its Content-Type in @type.  Errors set, as sbx_status. */
int img_get_manifest(img_client *c, const char *what, char **body, size_t *len,
                     char *type, size_t type_len);
/* GET the blob @digest into the open file @fd, at most @size bytes; the
 * running hash in @st.  Errors set. */
int img_get_blob(img_client *c, const char *digest, int64_t size, int fd,
                 crypto_hash_sha256_state *st);

/* ---- the store (store.c) ------------------------------------------------ */

typedef struct img_store {
    char *dir;                  /* image_dir or STATE_DIR/images (absolute, resolved) */
    int lock_fd;                /* IMAGES/lock while held, else -1 */
} img_store;

#define IMG_MANIFEST_MAX (4u << 20)
#define IMG_LAYERS_MAX 256

#define IMG_REF_TEXT_MAX 600

/* The start of each public call on a reference: check @ctx and @ref
 * (errors name @fn), parse and normalise it into @r and @text
 * (IMG_REF_TEXT_MAX bytes), open the context's store into @s. */
int img_begin(const struct sbx_ctx *ctx, const char *ref, const char *fn, img_ref *r, char *text,
              img_store *s);
/* Open (creating) the store: @image_dir ([core] image_dir), or else
 * @state_dir/images. */
int img_store_open(img_store *s, const char *state_dir, const char *image_dir);
/* Also drops the lock. */
void img_store_close(img_store *s);
/* Hold the store's lock (flock(2) on IMAGES/lock) until img_store_close:
 * shared for pull and import (which only add), @exclusive for rm and
 * prune (which remove what no reference names, and so must not run
 * while an image is half added).  Waits.  Errors set. */
int img_store_lock(img_store *s, bool exclusive);
/* "sha256:HEX" of @len bytes at @p into @out (IMG_DIGEST_LEN + 1). */
void img_digest_of(const void *p, size_t len, char *out);
/* "sha256:HEX" of a finished hash state. */
void img_digest_final(crypto_hash_sha256_state *st, char *out);
/* The path of blob @digest (malloc'd). */
char *img_blob_path(const img_store *s, const char *digest);
/* The path of the root of manifest @digest (malloc'd). */
char *img_root_path(const img_store *s, const char *digest);
/* Make sure blob @digest of @size bytes is in the store, fetching it
 * through @c and checking both.  Errors set (naming @ref_text). */
int img_store_fetch(const img_store *s, img_client *c, const char *ref_text,
                    const char *digest, int64_t size);
/* A new temporary in IMAGES/blobs/sha256 (a name with ".tmp-", which
 * prune sweeps), open for writing into @fd; @tmp malloc'd. */
int img_store_tmp(const img_store *s, char **tmp, int *fd);
/* Close @fd and rename the temporary @tmp into place as blob @digest, or
 * on @rc (or a failure) unlink it; frees @tmp.  Returns the outcome. */
int img_store_keep(const img_store *s, int rc, int fd, char *tmp, const char *digest);
/* Read file @path whole (at most @max bytes, NUL-terminated) into @out
 * (malloc'd).  Errors set: SBX_E_NOT_FOUND, SBX_E_IO (too big too). */
int img_read_file(const char *path, size_t max, char **out, size_t *len);
/* Write @len bytes as blob @digest (already checked by the caller). */
int img_store_put(const img_store *s, const char *digest, const void *p, size_t len);
/* Read blob @digest whole (at most @max bytes) into @out (malloc'd). */
int img_store_read(const img_store *s, const char *digest, size_t max, char **out,
                   size_t *len);
/* Record that @ref_text names manifest @digest. */
int img_store_set_ref(const img_store *s, const char *ref_text, const char *digest);
/* The record's file name of @ref_text (malloc'd). */
char *img_ref_record_path(const img_store *s, const char *ref_text);
/* A reference record of refs/. */
typedef struct img_rec {
    char *ref;
    char digest[IMG_DIGEST_LEN + 1];
} img_rec;
/* Every readable record, sorted by reference; a broken one is skipped.
 * @out malloc'd, freed with img_recs_free.  (image.c) */
int img_records(const img_store *s, img_rec **out, size_t *n_out);
void img_recs_free(img_rec *v, size_t n);
/* Remove a directory tree without following links; SBX_OK when absent. */
int img_rmtree(const char *path);

/* ---- manifests (manifest.c), shared by pull and import ---------------- */

/* An OCI index or a Docker manifest list (by @type, or by its shape). */
bool img_is_index(const char *type, json_t *j);
/* Parse @len bytes as a JSON object into @out.  Errors set (naming
 * @ref_text and @what). */
int img_manifest_parse(const char *body, size_t len, const char *ref_text, const char *what,
                       json_t **out);
/* The platform an index's entry is picked for: @ctx's [core]
 * image_platform, or else this machine's. */
void img_platform_want(const struct sbx_ctx *ctx, core_platform *p);
/* The digest of @idx's entry for platform @want into @digest
 * (IMG_DIGEST_LEN + 1).  SBX_E_NOT_FOUND when none, listing the
 * platforms it has. */
int img_index_pick(json_t *idx, const core_platform *want, const char *ref_text, char *digest);
/* A single-platform image's config (@cfg, @len bytes) names @want's
 * platform, or none: else SBX_E_NOT_FOUND naming both. */
int img_config_platform(const char *cfg, size_t len, const core_platform *want,
                        const char *ref_text);
/* A descriptor's sha256 digest and size, checked. */
int img_descriptor(json_t *d, const char *ref_text, const char **digest, int64_t *size);
typedef int (*img_blob_fn)(void *arg, const char *digest, int64_t size);
/* Check that @m (of @digest, Content-Type @type or "") is an image
 * manifest with a config and at most IMG_LAYERS_MAX layers, then call
 * @fn on the config's and each layer's checked descriptor, stopping at
 * the first error it returns. */
int img_manifest_blobs(json_t *m, const char *ref_text, const char *digest, const char *type,
                       img_blob_fn fn, void *arg);
/* With every blob of manifest @m in the store: store the manifest
 * (@len bytes at @body, whose digest @digest the caller checked) and
 * unpack its layers into its root, unless that root is there. */
int img_store_image(const img_store *s, json_t *m, const char *body, size_t len,
                    const char *ref_text, const char *digest);

/* ---- import (import.c) ---------------------------------------------------- */

/* Import the docker save or OCI layout tarball @file ("-": standard
 * input) into @s (held shared): with @name (normalised), its only image
 * or the one of its images the tarball names so, recorded as @name;
 * without, every image under the names the tarball gives; an index's
 * entry for platform @want.  Calls @fn
 * (may be NULL) for each reference recorded.  Errors set. */
int img_import(const img_store *s, const char *file, const char *name,
               const core_platform *want, sbx_image_visit_fn fn, void *arg);

/* ---- layers (unpack.c) --------------------------------------------------- */

/* Apply the layer in file @layer (tar, gzip or zstd) onto directory
 * @root (absolute, no symbolic link in it).  Errors set, naming @what. */
int img_unpack_layer(const char *layer, const char *root, const char *what);
/* Normalise @name in place ("./a//b/" -> "a/b"); false for an absolute
 * name or one with a ".." component. */
bool img_clean_name(char *name);

#endif
