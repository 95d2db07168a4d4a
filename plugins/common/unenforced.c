/* plugins/common/unenforced.c - telling the core a limit goes unenforced
 * (host->limits_unenforced, ABI 1.5), shared by the providers */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

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

int pc_limits_sized_by_backend(const sbx_host_v1 *host, sbx_host_handle *h, const char *how)
{
    char *why = NULL;
    int rc;

    if (asprintf(&why, "%s; only the wall clock and the output caps are applied", how) < 0)
        return pc_limits_unenforced(host, h, PC_LIMITS_SIZED_BY_BACKEND, how);
    rc = pc_limits_unenforced(host, h, PC_LIMITS_SIZED_BY_BACKEND, why);
    free(why);
    return rc;
}
