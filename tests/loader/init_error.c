/* tests/loader/init_error.c - init fails and says why
 * (SBX_E_LOAD_INIT carrying the provider's message) */
#include "fake.h"

static int error_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    (void)prov;
    return host->set_error(h, SBX_E_BACKEND,
                           "backend daemon unreachable at %s", "/run/fake.sock");
}

static const sbx_provider_ops_v1 ops = {
    .init = error_init, .fini = fake_fini, .create = fake_create,
    .exec = fake_exec, .destroy = fake_destroy,
};

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "init_error", FAKE_STRINGS, .ops = &ops,
};
