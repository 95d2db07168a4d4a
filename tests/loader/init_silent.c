/* tests/loader/init_silent.c - init fails without setting an error
 * (SBX_E_LOAD_INIT, generic message) */
#include "fake.h"

static int silent_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    (void)host;
    (void)h;
    (void)prov;
    return SBX_E_BACKEND; /* the defect: no host->set_error */
}

static const sbx_provider_ops_v1 ops = {
    .init = silent_init, .fini = fake_fini, .create = fake_create,
    .exec = fake_exec, .destroy = fake_destroy,
};

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "init_silent", FAKE_STRINGS, .ops = &ops,
};
