/* plugins/common/retry-hints.h - telling the core how a failure may be
 * retried (host->retry_after, host->not_started: ABI 1.1)
 *
 * Both are hints for the core's retry of the current call, on the calling
 * thread; a core older than ABI 1.1 has neither, and then they do nothing.
 */
#ifndef PC_RETRY_HINTS_H
#define PC_RETRY_HINTS_H

#include <polysandbox/provider.h>

/* The service asked to wait @ms before trying again (a negative @ms: it
 * said nothing, no hint is given). */
void pc_retry_after(const sbx_host_v1 *host, sbx_host_handle *h, long ms);

/* The command was refused before anything of it ran: safe to run again. */
void pc_not_started(const sbx_host_v1 *host, sbx_host_handle *h);

#endif
