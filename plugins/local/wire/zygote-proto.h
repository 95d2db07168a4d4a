/* plugins/local/wire/zygote-proto.h - a zygote's start
 *
 * Shared by the supervisor (launch/zygote.c), which writes it, and the
 * zygote's helper library (zygote/helper.c), which reads it.  Once,
 * when the zygote starts, before its imports: the layout of the root it
 * builds and keeps (one SOCK_SEQPACKET message):
 *
 *   struct lcl_zyg_layout
 *   the strings skel (where the root is built), skel_src (the shared
 *   skeleton), then n_binds bind paths, then n_masks paths of ours to
 *   cover (lcl_prov.masks), NUL-terminated each
 *
 * then LCL_ZYG_HELLO once it is ready.  Each exec is then one exec
 * request (wire/exec-req.h, with its init's part) in one message, with
 * its descriptors; the zygote answers with its child's pid and pidfd.
 * Native byte order: both ends are this host.
 */
#ifndef LOCAL_ZYGOTE_H
#define LOCAL_ZYGOTE_H

#include <stdint.h>

#define LCL_ZYG_LAYOUT_MAGIC UINT32_C(0x5a594c32) /* "ZYL2" */
#define LCL_ZYG_HELLO "polysandbox-zygote-ready"

struct lcl_zyg_layout {
    uint32_t magic;
    uint32_t n_binds;
    uint32_t n_masks;
    uint32_t pad;
};

#endif /* LOCAL_ZYGOTE_H */
