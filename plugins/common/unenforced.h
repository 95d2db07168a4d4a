/* plugins/common/unenforced.h - telling the core a limit goes unenforced */
#ifndef PC_UNENFORCED_H
#define PC_UNENFORCED_H

#include <stdint.h>

#include <polysandbox/provider.h>

/* From ops->create or ops->attach: the sandbox runs without the limits of
 * @bits (SBX_LIMIT_BIT_*) because of @why.  SBX_OK when the core allows
 * it (unenforced_limits), else its refusal (the thread's error set): a
 * core before ABI 1.5 cannot be told, and that is a refusal too. */
int pc_limits_unenforced(const sbx_host_v1 *host, sbx_host_handle *h, uint64_t bits,
                         const char *why);

/* What a cloud that sizes its sandboxes itself (by template, function or
 * instance type, for their life) leaves unenforced: every limit but the
 * wall clock and the output caps, which the provider applies itself. */
#define PC_LIMITS_SIZED_BY_BACKEND                                                          \
    (SBX_LIMIT_BIT_CPU | SBX_LIMIT_BIT_MEMORY | SBX_LIMIT_BIT_PIDS | SBX_LIMIT_BIT_NOFILE | \
     SBX_LIMIT_BIT_FSIZE | SBX_LIMIT_BIT_DISK)

/* pc_limits_unenforced of PC_LIMITS_SIZED_BY_BACKEND for such a cloud:
 * @how (transfer none) says how the backend sizes its sandboxes, and the
 * reason adds that only the wall clock and the output caps are applied. */
int pc_limits_sized_by_backend(const sbx_host_v1 *host, sbx_host_handle *h, const char *how);

#endif
