/* plugins/common/noimage.c - an image a provider cannot run: refused when
 * asked for (sbx_create_spec_v1.image_explicit, ABI 1.7), ignored when
 * only a template's default, shared by the providers */
#include "config.h"

#include "noimage.h"

int pc_image_cannot_run(const sbx_host_v1 *host, sbx_host_handle *h, const char *name,
                        const sbx_create_spec_v1 *spec, const char *why)
{
    if (!spec->image || !spec->image[0])
        return SBX_OK;
    if (!spec->image_explicit) {
        host->log(h, SBX_LOG_DEBUG, "%s: the template's image '%s' is ignored: %s", name,
                  spec->image, why);
        return SBX_OK;
    }
    return host->set_error(h, SBX_E_NOTSUP,
                           "%s cannot run image '%s' (asked for by the "
                           "request or the template's image.%s): %s; nothing was started",
                           name, spec->image, name, why);
}
