/* core/config/unenforced.h - the limits a provider may leave unenforced
 * (core/config/unenforced.c)
 */
#ifndef POLYSANDBOX_CONFIG_UNENFORCED_H
#define POLYSANDBOX_CONFIG_UNENFORCED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

struct sbx_ctx;
struct sbx_provider;

/* An unenforced_limits value: "refuse" (none may go unenforced), "allow"
 * (any) or limit names separated by commas or blanks; the set into
 * *bits.  SBX_E_CONFIG with *why (static) when bad. */
int core_unenforced_parse(const char *s, uint64_t *bits, const char **why);
/* "memory (64 MiB), pids (128)": the limits of @bits with their values
 * @values (indexed by sbx_limit; NULL: names alone). */
void core_limits_text(uint64_t bits, const uint64_t *values, char *buf, size_t size);
/* Around ops->create and ops->attach: what host->limits_unenforced
 * reports in between is gathered for the call (@values: the sandbox's
 * limits), then taken by _end: the bits, and *why (transfer full; NULL
 * when none). */
void core_unenforced_begin(const uint64_t *values, bool attach);
uint64_t core_unenforced_end(char **why);
/* The limits @p may run without: its unenforced_limits, else [core]'s. */
uint64_t core_unenforced_ok(const struct sbx_ctx *ctx, const struct sbx_provider *p);
/* Set the thread's error refusing a sandbox of @p that would run without
 * @bits (of @values) for @why; returns SBX_E_PERM. */
int core_unenforced_refuse(const struct sbx_provider *p, uint64_t bits, const uint64_t *values,
                           const char *why);
/* host->limits_unenforced. */
int core_host_limits_unenforced(sbx_host_handle *h, uint64_t limits, const char *why);
/* Between _begin and _end: network = none (@net) asked of @p, which has
 * no SBX_CAP_NETWORK_POLICY, is gathered as SBX_LIMIT_BIT_NETWORK and
 * refused (in create) unless allowed, as host->limits_unenforced. */
int core_unenforced_network(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                            sbx_network net);

#endif /* POLYSANDBOX_CONFIG_UNENFORCED_H */
