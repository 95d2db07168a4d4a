/* plugins/common/unenforced.c - telling the core a limit goes unenforced
 * (host->limits_unenforced, ABI 1.5), shared by the providers */
#include "config.h"

#include <stddef.h>

#include "unenforced.h"

int pc_limits_unenforced(const sbx_host_v1 *host, sbx_host_handle *h, uint64_t bits,
                         const char *why)
{
    if (!bits)
        return SBX_OK;
    if (host->struct_size < offsetof(sbx_host_v1, limits_unenforced) +
                            sizeof host->limits_unenforced || !host->limits_unenforced)
        return host->set_error(h, SBX_E_PERM, "some limits cannot be enforced here (%s), and "
                               "this polysandbox is too old to be told so: nothing was run",
                               why);
    return host->limits_unenforced(h, bits, why);
}
