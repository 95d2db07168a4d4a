/* core/config/unenforced.c - limits a provider cannot enforce: refused, or run
 * without where the administrator allowed it, and then said
 *
 * A provider reports the limits a sandbox will run without through
 * host->limits_unenforced while it creates or opens it (ABI 1.5).  What
 * it reports is gathered per thread between core_unenforced_begin and
 * _end around the op.  The decision is the core's, from unenforced_limits
 * ([provider] of providers.d/NAME.ini, else [core] of polysandbox.ini;
 * default: refuse), so every provider refuses or allows alike.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "config/config-load.h"
#include "config/unenforced.h"
#include "context.h"
#include "provider-int.h"

#define ALL_LIMITS (((UINT64_C(1) << SBX_LIMIT_COUNT) - 1) | SBX_LIMIT_BIT_NETWORK)

/* What host->limits_unenforced gathered during the current op. */
static _Thread_local struct {
    bool active, attach;
    const uint64_t *values;
    uint64_t bits;
    char why[768];
} op;

int core_unenforced_parse(const char *s, uint64_t *bits, const char **why)
{
    char *copy, *save = NULL;
    uint64_t b = 0;

    if (!strcmp(s, "refuse")) {
        *bits = 0;
        return SBX_OK;
    }
    if (!strcmp(s, "allow")) {
        *bits = ALL_LIMITS;
        return SBX_OK;
    }
    if (!(copy = strdup(s))) {
        *why = "out of memory";
        return SBX_E_CONFIG;
    }
    for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
        int i = 0;
        while (i < 64 && !(sbx_unenforced_name(i) && !strcmp(w, sbx_unenforced_name(i))))
            i++;
        if (i == 64) {
            free(copy);
            *why = "use refuse, allow, or the limits that may go unenforced (wall, cpu, "
                   "memory, pids, nofile, fsize, disk, stdout, stderr, network)";
            return SBX_E_CONFIG;
        }
        b |= UINT64_C(1) << i;
    }
    free(copy);
    if (!b) {
        *why = "empty: use refuse, allow or limit names";
        return SBX_E_CONFIG;
    }
    *bits = b;
    return SBX_OK;
}

void core_limits_text(uint64_t bits, const uint64_t *values, char *buf, size_t size)
{
    size_t off = 0;

    buf[0] = '\0';
    for (int i = 0; i < 64 && off < size; i++) {
        char v[32] = "";
        if (!(bits & (UINT64_C(1) << i)) || !sbx_unenforced_name(i))
            continue;
        if (values && i < SBX_LIMIT_COUNT)
            core_limit_format((sbx_limit)i, values[i], v, sizeof v);
        else if (values && (UINT64_C(1) << i) == SBX_LIMIT_BIT_NETWORK)
            snprintf(v, sizeof v, "none");  /* the only policy it stands for */
        off += (size_t)snprintf(buf + off, size - off, "%s%s%s%s%s", off ? ", " : "",
                                sbx_unenforced_name(i), *v ? " (" : "", v, *v ? ")" : "");
    }
}

void core_unenforced_begin(const uint64_t *values, bool attach)
{
    op.active = true;
    op.attach = attach;
    op.values = values;
    op.bits = 0;
    op.why[0] = '\0';
}

uint64_t core_unenforced_end(char **why)
{
    uint64_t bits = op.bits;

    *why = bits && op.why[0] ? strdup(op.why) : NULL;
    op.active = false;
    op.values = NULL;
    op.bits = 0;
    op.why[0] = '\0';
    return bits;
}

uint64_t core_unenforced_ok(const struct sbx_ctx *ctx, const struct sbx_provider *p)
{
    if (p && p->conf && p->conf->unenforced_from)
        return p->conf->unenforced_ok;
    return ctx ? ctx->cfg.unenforced_ok : 0;
}

int core_unenforced_refuse(const struct sbx_provider *p, uint64_t bits, const uint64_t *values,
                           const char *why)
{
    char lim[384], names[160];
    bool many = (bits & (bits - 1)) != 0;

    core_limits_text(bits, values, lim, sizeof lim);
    core_limits_text(bits, NULL, names, sizeof names);
    return core_error_set(SBX_E_PERM, p->name,
                          "provider '%s' cannot enforce the %s limit%s here: %s.  Nothing was "
                          "run.  To run without %s anyway, an administrator sets "
                          "unenforced_limits = allow (or = %s) in [provider] of "
                          "providers.d/%s.ini, or in [core] of polysandbox.ini; each result "
                          "then names the limits it ran without", p->name, lim,
                          many ? "s" : "", why && *why ? why : "no reason given",
                          many ? "them" : "it", names, p->name);
}

/* @p's sandbox of the current op runs without @limits for @why: gathered,
 * and refused (in create) unless allowed. */
static int report(const struct sbx_ctx *ctx, const struct sbx_provider *p, uint64_t limits,
                  const char *why)
{
    size_t off = strlen(op.why);
    char names[160];
    uint64_t refused;

    limits &= ALL_LIMITS;
    if (!p || !op.active || !limits)
        return SBX_OK;      /* outside create and attach: nothing to decide */
    op.bits |= limits;
    core_limits_text(limits, NULL, names, sizeof names);
    if (off < sizeof op.why)
        snprintf(op.why + off, sizeof op.why - off, "%s%s: %s", off ? "; " : "", names,
                 why && *why ? why : "no reason given");
    refused = limits & ~core_unenforced_ok(ctx, p);
    if (!refused || op.attach)
        return SBX_OK;
    return core_unenforced_refuse(p, refused, op.values, why);
}

int core_host_limits_unenforced(sbx_host_handle *h, uint64_t limits, const char *why)
{
    return h ? report(h->ctx, h->prov, limits, why) : SBX_OK;
}

int core_unenforced_network(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                            sbx_network net)
{
    const char *why = "the provider has no network policy (no network_policy capability): "
                      "its sandboxes reach the network whatever is asked";

    if (net != SBX_NET_NONE || (p->desc.capabilities & SBX_CAP_NETWORK_POLICY))
        return SBX_OK;
    return report(ctx, p, SBX_LIMIT_BIT_NETWORK, why);
}
