/* tests/provider/unenf.c - the "unenf" flavour: a provider that cannot
 * enforce some limits, for tests/limits/core.sh (the core's side of
 * host->limits_unenforced)
 *
 * Built twice:
 *   unenf    ABI 1.5: create (and attach) report the limits of the
 *            setting `lacks` (limit names separated by commas, default
 *            "memory,pids") as unenforced, with the reason "the test says
 *            so"; with `obey = no`, create goes on after a refusal.  Each
 *            exec writes "ran" on stdout.  Its one sandbox, "unenf-1",
 *            can be opened (attach) by any process.
 *   minor2   (-DTP_MINOR2) built as a 1.2 provider (abi_minor 2, the 1.2
 *            ops table): it must keep loading, and never sees the 1.5
 *            slot.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "testprov.h"

struct unenf {
    uint64_t lacks;
    bool obey;
};

static const char *const names[] = {"wall", "cpu", "memory", "pids", "nofile", "fsize",
                                    "disk", "stdout", "stderr"};

int tp_setup(struct tp *t)
{
    struct unenf *u = calloc(1, sizeof *u);
    const char *lacks = t->host->config_get(t->h, "lacks");
    const char *obey = t->host->config_get(t->h, "obey");

    if (!u)
        return t->host->set_error(t->h, SBX_E_NOMEM, "out of memory");
    u->obey = !obey || strcmp(obey, "no");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *at = strstr(lacks ? lacks : "memory,pids", names[i]);
        size_t n = strlen(names[i]);
        if (at && (at[n] == '\0' || at[n] == ','))
            u->lacks |= UINT64_C(1) << i;
    }
    t->own = u;
    return SBX_OK;
}

void tp_teardown(struct tp *t)
{
    free(t->own);
}

/* The 1.5 call, where the core has it. */
static int report(struct tp *t)
{
#ifdef TP_MINOR2
    (void)t;
    return SBX_OK;
#else
    const struct unenf *u = t->own;
    const sbx_host_v1 *h = t->host;
    if (h->struct_size < offsetof(sbx_host_v1, limits_unenforced) + sizeof h->limits_unenforced ||
        !h->limits_unenforced)
        return h->set_error(t->h, SBX_E_INTERNAL, "the core has no limits_unenforced");
    return h->limits_unenforced(t->h, u->lacks, "the test says so");
#endif
}

static int unenf_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                        char id[SBX_ID_MAX])
{
    struct tp *t = prov;
    const struct unenf *u = t->own;
    int rc = report(t);

    if (rc != SBX_OK && u->obey)
        return rc;
    return tp_create(prov, spec, sb, id);
}

static int unenf_attach(void *prov, const char *id, void **sb)
{
    int rc = tp_attach(prov, id, sb);

    if (rc == SBX_OK)
        report(prov);
    return rc;
}

static int unenf_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                      const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    (void)prov;
    (void)sb;
    (void)spec;
    tp_say(sink, "ran\n");
    tp_exited(out, 0);
    return SBX_OK;
}

static const char *const unenf_keys[] = {"lacks", "obey", NULL};

static const sbx_provider_ops_v1 unenf_ops = {
    .init = tp_init, .fini = tp_fini, .create = unenf_create, .exec = unenf_exec,
    .destroy = tp_destroy, .attach = unenf_attach, .release = tp_release,
};

#ifdef TP_MINOR2
/* What a 1.2 build of this provider had: no 1.5 slot anywhere. */
SBX_PROVIDER_EXPORT extern const sbx_provider_v1 sandbox_provider_v1;
SBX_PROVIDER_EXPORT const sbx_provider_v1 sandbox_provider_v1 = {
    SBX_PROVIDER_MAGIC, SBX_ABI_MAJOR, 2, (uint32_t)sizeof(sbx_provider_v1),
    (uint32_t)(offsetof(sbx_provider_ops_v1, exec_zygote) + sizeof(void (*)(void))),
    TP_NAME, "1.2.0", "a provider built against ABI 1.2", "MIT",
    SBX_CAP_PERSISTENT | SBX_CAP_NETWORK_POLICY /* runs nothing */, 0, unenf_keys,
    NULL, &unenf_ops, {0, 0}};
#else
SBX_PROVIDER_DEFINE(TP_NAME, "1.5.0", "a provider that cannot enforce some limits", "MIT",
                    SBX_CAP_PERSISTENT | SBX_CAP_NETWORK_POLICY /* runs nothing */,
                    unenf_keys, NULL, &unenf_ops);
#endif
