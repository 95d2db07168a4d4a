/* plugins/common/noimage.h - an image a provider cannot run: refused when
 * asked for, ignored when only a template's default */
#ifndef PC_NOIMAGE_H
#define PC_NOIMAGE_H

#include <polysandbox/provider.h>

/* From ops->create of provider @name (transfer none) when it cannot run
 * @spec's image; @why (transfer none) says what it runs instead ("its
 * VMs boot the one guest that polysandbox-microvm-image built").  An
 * asked image (spec->image_explicit, ABI 1.7) is refused: SBX_E_NOTSUP,
 * the thread's error naming @name and the image.  A template's plain
 * image, a default meant for other providers, is ignored (logged at
 * debug level): SBX_OK, as with no image at all.  Call it before the
 * provider starts anything. */
int pc_image_cannot_run(const sbx_host_v1 *host, sbx_host_handle *h, const char *name,
                        const sbx_create_spec_v1 *spec, const char *why);

#endif
