/* plugins/common/retry-hints.c - telling the core how a failure may be
 * retried, shared by the network providers */
#include "config.h"

#include <stddef.h>

#include "retry-hints.h"

/* A slot the host table has: within its size and filled in. */
#define HOST_HAS(host, f) \
    ((host)->struct_size >= offsetof(sbx_host_v1, f) + sizeof((host)->f) && (host)->f)

void pc_retry_after(const sbx_host_v1 *host, sbx_host_handle *h, long ms)
{
    if (ms >= 0 && HOST_HAS(host, retry_after))
        host->retry_after(h, (uint64_t)ms);
}

void pc_not_started(const sbx_host_v1 *host, sbx_host_handle *h)
{
    if (HOST_HAS(host, not_started))
        host->not_started(h);
}
