/* tests/limits/unenf.c - providers that cannot enforce some limits, for
 * tests/limits/core.sh: the core's side of host->limits_unenforced
 *
 * Built twice:
 *   unenf    ABI 1.5: create (and attach) report the limits of the
 *            setting `lacks` (limit names separated by commas, default
 *            "memory,pids") as unenforced, with the reason "the test says
 *            so"; with `obey = no`, create goes on after a refusal.  Each
 *            exec writes "ran" on stdout.  Its one sandbox, "unenf-1",
 *            can be opened (attach) by any process.
 *   minor2   built as a 1.2 provider (abi_minor 2, the 1.2 ops table):
 *            it must keep loading, and never sees the 1.5 slot.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>

struct unenf {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    uint64_t lacks;
    bool obey;
};

static const char *const names[] = {"wall", "cpu", "memory", "pids", "nofile", "fsize",
                                    "disk", "stdout", "stderr"};

static int unenf_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct unenf *u = calloc(1, sizeof *u);
    const char *lacks = host->config_get(h, "lacks"), *obey = host->config_get(h, "obey");

    if (!u)
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    u->host = host;
    u->h = h;
    u->obey = !obey || strcmp(obey, "no");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *at = strstr(lacks ? lacks : "memory,pids", names[i]);
        size_t n = strlen(names[i]);
        if (at && (at[n] == '\0' || at[n] == ','))
            u->lacks |= UINT64_C(1) << i;
    }
    *prov = u;
    return SBX_OK;
}

static void unenf_fini(void *prov)
{
    free(prov);
}

/* The 1.5 call, where the core has it. */
static int report(struct unenf *u)
{
#ifdef UNENF_MINOR2
    (void)u;
    return SBX_OK;
#else
    const sbx_host_v1 *h = u->host;
    if (h->struct_size < offsetof(sbx_host_v1, limits_unenforced) + sizeof h->limits_unenforced ||
        !h->limits_unenforced)
        return h->set_error(u->h, SBX_E_INTERNAL, "the core has no limits_unenforced");
    return h->limits_unenforced(u->h, u->lacks, "the test says so");
#endif
}

static int unenf_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                        char id[SBX_ID_MAX])
{
    struct unenf *u = prov;
    int rc = report(u);

    (void)spec;
    if (rc != SBX_OK && u->obey)
        return rc;
    *sb = u;
    snprintf(id, SBX_ID_MAX, "unenf-1");
    return SBX_OK;
}

static int unenf_attach(void *prov, const char *id, void **sb)
{
    struct unenf *u = prov;

    if (strcmp(id, "unenf-1"))
        return u->host->set_error(u->h, SBX_E_NOT_FOUND, "no sandbox '%s'", id);
    report(u);
    *sb = u;
    return SBX_OK;
}

static void unenf_release(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
}

static int unenf_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    (void)prov;
    (void)sb;
    (void)spec;
    if (sink && sink->write)
        sink->write(sink->ud, SBX_STREAM_STDOUT, "ran\n", 4);
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return SBX_OK;
}

static int unenf_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return SBX_OK;
}

static const char *const keys[] = {"lacks", "obey", NULL};

#ifdef UNENF_MINOR2
/* What a 1.2 build of this provider had: no 1.5 slot anywhere. */
static const sbx_provider_ops_v1 ops = {
    .init = unenf_init, .fini = unenf_fini, .create = unenf_create, .exec = unenf_exec,
    .destroy = unenf_destroy, .attach = unenf_attach, .release = unenf_release,
};
SBX_PROVIDER_EXPORT extern const sbx_provider_v1 sandbox_provider_v1;
SBX_PROVIDER_EXPORT const sbx_provider_v1 sandbox_provider_v1 = {
    SBX_PROVIDER_MAGIC, SBX_ABI_MAJOR, 2, (uint32_t)sizeof(sbx_provider_v1),
    (uint32_t)(offsetof(sbx_provider_ops_v1, exec_zygote) + sizeof(void (*)(void))),
    "minor2", "1.2.0", "a provider built against ABI 1.2", "MIT",
    SBX_CAP_PERSISTENT | SBX_CAP_NETWORK_POLICY /* runs nothing */, 0, keys,
    NULL, &ops, {0, 0}};
#else
static const sbx_provider_ops_v1 ops = {
    .init = unenf_init, .fini = unenf_fini, .create = unenf_create, .exec = unenf_exec,
    .destroy = unenf_destroy, .attach = unenf_attach, .release = unenf_release,
};
SBX_PROVIDER_DEFINE("unenf", "1.5.0", "a provider that cannot enforce some limits", "MIT",
                    SBX_CAP_PERSISTENT | SBX_CAP_NETWORK_POLICY /* runs nothing */, keys,
                    NULL, &ops);
#endif
