/* tests/loader/settings_old_abi.c - a provider built against ABI 1.8,
 * before host->settings_read: it reads its key with config_get and still
 * loads (the core copies what the descriptor's sizes cover) */
#include "fake.h"

static const char *const keys[] = {"timeout", NULL};

static int old_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    const char *v = host->config_get(h, "timeout");

    if (!v || strcmp(v, "whatever 1.8 took"))
        return host->set_error(h, SBX_E_CONFIG, "timeout is '%s'", v ? v : "(unset)");
    *prov = &fake_token;
    return SBX_OK;
}

static const sbx_provider_ops_v1 ops = {
    .init = old_init, .fini = fake_fini, .create = fake_create,
    .exec = fake_exec, .destroy = fake_destroy,
};

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = 8, /* before settings_read */
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "settings_old_abi", FAKE_STRINGS, .config_keys = keys, .ops = &ops,
};
