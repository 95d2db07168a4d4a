/* core/image/image-none.c - the image calls in a build without libcurl
 * or libarchive: each says so, rather than being absent from the ABI. */
#include "config.h"

#include <stddef.h>

#include <polysandbox/image.h>

#include "error.h"

static int none(void)
{
    core_error_clear();
    return core_error_set(SBX_E_NOTSUP, NULL, "images: built without libcurl or libarchive "
                          "(install libcurl4-openssl-dev and libarchive-dev, configure again)");
}

SBX_API int sbx_image_pull(sbx_ctx *ctx, const char *ref, char **digest_out)
{
    (void)ctx, (void)ref;
    if (digest_out)
        *digest_out = NULL;
    return none();
}

SBX_API int sbx_image_list(sbx_ctx *ctx, sbx_image_visit_fn fn, void *arg)
{
    (void)ctx, (void)fn, (void)arg;
    return none();
}

SBX_API int sbx_image_rm(sbx_ctx *ctx, const char *ref)
{
    (void)ctx, (void)ref;
    return none();
}

SBX_API int sbx_image_root(const sbx_ctx *ctx, const char *ref, char **root_out)
{
    (void)ctx, (void)ref;
    if (root_out)
        *root_out = NULL;
    return none();
}

SBX_API int sbx_image_import(sbx_ctx *ctx, const char *file, const char *ref,
                             sbx_image_visit_fn fn, void *arg)
{
    (void)ctx, (void)file, (void)ref, (void)fn, (void)arg;
    return none();
}

SBX_API int sbx_image_prune(sbx_ctx *ctx, unsigned *blobs_out, unsigned *roots_out,
                            uint64_t *bytes_out)
{
    (void)ctx;
    if (blobs_out)
        *blobs_out = 0;
    if (roots_out)
        *roots_out = 0;
    if (bytes_out)
        *bytes_out = 0;
    return none();
}
