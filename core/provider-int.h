/* core/provider-int.h - a provider as the core holds it, struct sbx_provider
 *
 * Ground floor, like the context that holds them (context.h): every wing
 * reads a provider's name, state, descriptor and configuration.
 * core/loader/ fills it (loader/loader.h).
 */
#ifndef POLYSANDBOX_PROVIDER_INT_H
#define POLYSANDBOX_PROVIDER_INT_H

#include <stdbool.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "conf.h"

struct sbx_ctx;

struct sbx_host_handle {
    struct sbx_ctx *ctx;
    struct sbx_provider *prov;
};

struct sbx_provider {
    char *name;
    char *path; /* the .so, or NULL when not found */
    sbx_provider_state state;
    int reason_code; /* SBX_E_LOAD_* etc. when unavailable */
    char *reason;    /* message naming file and field */
    int priority;
    const core_provider_conf *conf; /* its ini, or NULL */
    sbx_provider_v1 desc;           /* zeroed core copy */
    sbx_provider_ops_v1 ops;        /* zeroed core copy */
    void *lib;                      /* lt_dlhandle, never closed */
    void *pctx;                     /* what ops.init returned */
    struct sbx_host_handle handle;  /* ctx set at discovery; prov = this entry */
    char *state_dir;
    /* Loading is lazy (core_provider_ensure).  Until @loaded is true (read
     * with __atomic acquire), state, reason, desc, ops and pctx are not
     * final; once it is they never change again. */
    bool loaded;
    bool hidden;       /* optional and failed: not listed, not found */
    unsigned init_seq; /* 1, 2, ... in the order of init; 0: none */
    /* core_provider_credential_keys's, under ctx->load_lock: copies of the
     * descriptor's secret_keys (NULL-terminated), once @peeked. */
    bool peeked;
    char **credential_keys;
};

#endif /* POLYSANDBOX_PROVIDER_INT_H */
