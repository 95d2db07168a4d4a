/* polysandbox/image.h - OCI images pulled into a local store
 *
 * The first slice of images on the local provider (issue 19): pull an
 * image from a registry (the Docker Registry HTTP API v2, anonymous,
 * with a Bearer token from the registry's WWW-Authenticate challenge, or
 * with the user name and password of the context's [registry HOST]),
 * verify the sha256 digest of every blob, keep the blobs by digest and
 * unpack the layers into one root directory per image, under
 * STATE_DIR/images/ ([core] state_dir, POLYSANDBOX_STATE_DIR):
 *
 *     char *digest;
 *     sbx_image_pull(ctx, "127.0.0.1:5000/team/tool:v1", &digest);
 *     sbx_image_list(ctx, on_image, state);
 *     sbx_image_root(ctx, "127.0.0.1:5000/team/tool:v1", &root);
 *     sbx_image_rm(ctx, "127.0.0.1:5000/team/tool:v1");
 *     sbx_image_import(ctx, "tool.tar", "team/tool:v2", NULL, NULL);
 *     sbx_image_prune(ctx, &blobs, &roots, &bytes);
 *
 * A reference is [REGISTRY/]PATH[:TAG][@sha256:HEX], as docker takes it:
 * no registry means Docker Hub (and "library/" for a one-word path), no
 * tag and no digest means ":latest".  Loopback registries (127.0.0.0/8,
 * localhost, [::1]) are spoken to over plain HTTP, every other over HTTPS.
 *
 * Errors are sbx_status values; the message (naming the reference, the
 * registry or the layer) is read with sbx_ctx_last_error(ctx).
 *
 * Since: 0.3
 */
#ifndef POLYSANDBOX_IMAGE_H
#define POLYSANDBOX_IMAGE_H

#include <stdint.h>

#include <polysandbox/sandbox.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sbx_image_pull:
 * @ctx: the context (its state directory holds the store)
 * @ref: the image reference
 * @digest_out: (out) (transfer full) (nullable): the manifest's digest
 *   ("sha256:..."), free()d by the caller; may be NULL
 *
 * Fetches the manifest (an index or manifest list picks its entry of
 * the configuration's [core] image_platform, by default linux and the
 * host's machine), every blob not yet in the store, checks each
 * against its digest and size, and unpacks the layers in order into the
 * image's root: whiteouts (.wh.NAME) and opaque directories
 * (.wh..wh..opq) are applied, device nodes are skipped, setuid, setgid
 * and sticky bits dropped, and a name that is absolute, holds "..", or
 * would be written through a symbolic link refuses the whole pull.  The
 * reference then names that root (a pulled tag moves to the new image).
 *
 * Returns: SBX_OK; SBX_E_INVAL for a malformed reference; SBX_E_NOT_FOUND
 * when the registry has no such image or its index none of that
 * platform (the message lists the platforms it has); SBX_E_AUTH when
 * the registry refuses (or asks for a user name and password that
 * polysandbox.ini's [registry HOST] does not give); SBX_E_CONFIG when
 * that password cannot be opened (an unset env:, a value sealed to
 * another key); SBX_E_NETWORK when it cannot be reached; SBX_E_BACKEND
 * for a digest or size that does not match or a manifest that cannot be
 * read; SBX_E_PATH for a layer entry escaping the root; SBX_E_IO for the
 * store.  Nothing is left behind by a failed pull but verified blobs.
 * Since: 0.3
 */
SBX_API int sbx_image_pull(sbx_ctx *ctx, const char *ref, char **digest_out);

/**
 * sbx_image_visit_fn:
 * @ref: the full reference as pulled (REGISTRY/PATH:TAG or @DIGEST)
 * @digest: its manifest's digest
 * @root: the directory its layers were unpacked into
 * @arg: what sbx_image_list was given
 *
 * The strings live until the callback returns.  Since: 0.3
 */
typedef void (*sbx_image_visit_fn)(const char *ref, const char *digest, const char *root,
                                   void *arg);

/**
 * sbx_image_list:
 * @ctx: the context
 * @fn: called once per pulled reference, sorted by reference
 * @arg: passed to @fn
 *
 * Returns: SBX_OK (an empty or absent store too), SBX_E_IO.  Since: 0.3
 */
SBX_API int sbx_image_list(sbx_ctx *ctx, sbx_image_visit_fn fn, void *arg);

/**
 * sbx_image_rm:
 * @ctx: the context
 * @ref: a reference as given to sbx_image_pull (normalised the same way)
 *
 * Forgets the reference; the root and the blobs of an image that no
 * other reference names are removed.
 *
 * Returns: SBX_OK; SBX_E_INVAL for a malformed reference; SBX_E_NOT_FOUND
 * when it was never pulled; SBX_E_IO.  Since: 0.3
 */
SBX_API int sbx_image_rm(sbx_ctx *ctx, const char *ref);

/**
 * sbx_image_root:
 * @ctx: the context (its store: [core] image_dir or STATE_DIR/images)
 * @ref: a reference as given to sbx_image_pull (normalised the same way)
 * @root_out: (out) (transfer full): the directory the image was unpacked
 *   into (absolute, no symbolic link in it), free()d by the caller
 *
 * Where a pulled image's root is: what the local provider runs in for
 * `--image NAME` or a template's `image.local = NAME`.  Nothing is
 * fetched: an image not pulled is an error saying how to pull it.
 *
 * Returns: SBX_OK; SBX_E_INVAL for a malformed reference; SBX_E_NOT_FOUND
 * when it was not pulled (or its root is gone), the message naming @ref
 * and saying "polysandbox image pull @ref"; SBX_E_IO for the store;
 * SBX_E_NOTSUP in a build without images.  Since: 0.3
 */
SBX_API int sbx_image_root(const sbx_ctx *ctx, const char *ref, char **root_out);

/**
 * sbx_image_import:
 * @ctx: the context (its state directory holds the store)
 * @file: a tarball written by `docker save` (either form: manifest.json
 *   with HEX.json configs and ID/layer.tar layers, or, since Docker 25,
 *   an OCI layout) or an OCI image layout (oci-layout, index.json,
 *   blobs/sha256/), plain or compressed, holding one image or several;
 *   "-" reads it from standard input (a file named "-" is "./-")
 * @ref: (nullable): the reference to record an image as (normalised as
 *   for sbx_image_pull, no digest): the tarball's only image, or of
 *   several the one the tarball names @ref; NULL records every image
 *   under the names the tarball gives (docker save's RepoTags, or the
 *   index's image name annotations; entries naming one manifest, as
 *   docker save writes one per tag, are one image)
 * @fn: (nullable): called once per reference recorded, with the
 *   manifest's digest and the root, as sbx_image_list does
 * @arg: passed to @fn
 *
 * Reads the tarball once, streamed (none of its names is used as a path
 * to write, none of its sizes is trusted): a member named
 * blobs/sha256/HEX must hash to HEX, a docker save config HEX.json to
 * HEX, a docker save layer to its diff_id in the config, and every blob
 * an OCI manifest names must be there with the digest and size it gives.
 * The blobs go into the store as a pull's do (a docker save image gets
 * a Docker schema 2 manifest made for it, whose digest is the image's
 * digest here), and the layers are unpacked by the same code, with the
 * same refusals (see sbx_image_pull); an image index gives its entry of
 * [core] image_platform as a pull's does.  sbx_image_list then shows it.
 *
 * Returns: SBX_OK; SBX_E_INVAL for a malformed @ref, a tarball of one
 * image that names none when @ref is NULL, a tarball of several images
 * one of which has no name when @ref is NULL or none of which is named
 * @ref (the message lists the names), or "-" when standard input is a
 * terminal; SBX_E_NOT_FOUND when @file does not exist; SBX_E_PATH for a
 * member (or a layer entry) whose name is absolute or holds "..", or a
 * link leaving the tarball; SBX_E_BACKEND for a tarball that cannot be
 * read, is neither form, lists no image or more than 64, gives one name
 * to two images, or has a blob that does not match its digest or size;
 * SBX_E_NOT_FOUND too for an index without that platform;
 * SBX_E_IO for the store.  A failed import records no reference (what
 * it stored is prune's).
 * Since: 0.3
 */
SBX_API int sbx_image_import(sbx_ctx *ctx, const char *file, const char *ref,
                             sbx_image_visit_fn fn, void *arg);

/**
 * sbx_image_prune:
 * @ctx: the context
 * @blobs_out: (out) (nullable): how many blobs were removed
 * @roots_out: (out) (nullable): how many roots were removed
 * @bytes_out: (out) (nullable): the bytes they held (apparent sizes)
 *
 * Removes every blob that no recorded reference's manifest names, every
 * root of a manifest no reference names, and the temporaries of pulls
 * or imports that were killed.  It holds the store exclusively (as
 * sbx_image_rm does; pull and import hold it shared), so it waits for a
 * pull or import under way and never removes what one is adding.  A
 * referenced manifest that cannot be read keeps every blob.  The counts
 * are set on error too (what was removed before it).
 *
 * Returns: SBX_OK (nothing to remove too); SBX_E_IO.  Since: 0.3
 */
SBX_API int sbx_image_prune(sbx_ctx *ctx, unsigned *blobs_out, unsigned *roots_out,
                            uint64_t *bytes_out);

#ifdef __cplusplus
}
#endif

#endif
