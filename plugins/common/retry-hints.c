/* plugins/common/retry-hints.c - telling the core how a failure may be
 * retried, shared by the network providers */
#include "config.h"

#include <stddef.h>

#include "retry-hints.h"

void pc_hints_reset(pc_hints *hn)
{
    hn->retry_after_ms = -1;
    hn->not_started = 0;
}

void pc_hints_retry_after(pc_hints *hn, long ms)
{
    if (ms >= 0)
        hn->retry_after_ms = ms;
}

void pc_hints_not_started(pc_hints *hn)
{
    hn->not_started = 1;
}

void pc_hints_to_outcome(const pc_hints *hn, const sbx_host_v1 *host, sbx_host_handle *h,
                         sbx_exec_outcome_v1 *out)
{
    if (SBX_OUTCOME_HAS(out, retry_after_ms)) {
        out->not_started = hn->not_started;
        out->retry_after_ms = hn->retry_after_ms > 0 ? (uint64_t)hn->retry_after_ms : 0;
        return;
    }
    pc_retry_after(host, h, NULL, hn->retry_after_ms);
    if (hn->not_started && SBX_HOST_HAS(host, not_started))
        host->not_started(h);
}

void pc_retry_after(const sbx_host_v1 *host, sbx_host_handle *h, pc_hints *hn, long ms)
{
    if (hn)
        pc_hints_retry_after(hn, ms);
    if (ms >= 0 && SBX_HOST_HAS(host, retry_after))
        host->retry_after(h, (uint64_t)ms);
}
