/* plugins/common/retry-hints.h - telling the core how a failure may be
 * retried
 *
 * Since provider ABI 1.12 an exec's hints are fields of its outcome
 * (not_started, retry_after_ms).  The network providers find them deep
 * in a request (a 429's Retry-After, a Start refused before anything
 * ran), so they keep them in a pc_hints of the sandbox the exec runs on
 * (the core serialises the calls on one sandbox), reset it when the exec
 * begins, and copy it into the outcome when the exec fails.  Create has
 * no outcome: its Retry-After goes through host->retry_after, as does
 * that of every op but exec (doc/plugin-guide.md).
 */
#ifndef PC_RETRY_HINTS_H
#define PC_RETRY_HINTS_H

#include <polysandbox/provider.h>

/* What a failed request said about trying it again. */
typedef struct pc_hints {
    long retry_after_ms; /* the service's Retry-After; -1: it said nothing */
    int not_started;     /* non-zero: the command was refused before it ran */
} pc_hints;

/* Nothing said yet: what an exec starts from. */
void pc_hints_reset(pc_hints *hn);

/* The service asked to wait @ms before trying again (a negative @ms: it
 * said nothing, the record is left as it is). */
void pc_hints_retry_after(pc_hints *hn, long ms);

/* The command was refused before anything of it ran: safe to run again. */
void pc_hints_not_started(pc_hints *hn);

/* A failed exec's hints into @out (ABI 1.12).  A core older than 1.12
 * hands an outcome without the slots, and reads host->not_started and
 * host->retry_after instead: they are given there then (a core older
 * than 1.1 has neither, and then they do nothing). */
void pc_hints_to_outcome(const pc_hints *hn, const sbx_host_v1 *host, sbx_host_handle *h,
                         sbx_exec_outcome_v1 *out);

/* The Retry-After of a failed request (a negative @ms: it said nothing,
 * nothing is given): to host->retry_after, where the core reads that of
 * every op but an exec (create, destroy, the file ops...), and, when @hn
 * is not NULL (the request was made on a sandbox), into @hn too, for the
 * exec that may be running on it. */
void pc_retry_after(const sbx_host_v1 *host, sbx_host_handle *h, pc_hints *hn, long ms);

#endif
