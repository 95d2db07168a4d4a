/* tests/loader/typed_settings.c - an ABI 1.9 provider whose init reads its
 * [settings] through host->settings_read: a bad value makes init fail with
 * the core's message (file, line, key), so the provider is unavailable */
#include <stddef.h>

#include "fake.h"

struct typed_conf {
    uint64_t timeout_ns;
    int verbose;
};

static const char *const keys[] = {"timeout", "verbose", NULL};

static const sbx_setting_v1 table[] = {
    {.key = "timeout", .type = SBX_SETTING_DURATION, .def = "60s", .min = "1s", .max = "1h",
     .offset = offsetof(struct typed_conf, timeout_ns)},
    {.key = "verbose", .type = SBX_SETTING_BOOL, .def = "false",
     .offset = offsetof(struct typed_conf, verbose)},
    {.key = NULL},
};

static struct typed_conf conf;

static int typed_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    int rc;

    if (!SBX_HOST_HAS(host, settings_read))
        return host->set_error(h, SBX_E_INTERNAL, "the core has no settings_read");
    if ((rc = host->settings_read(h, table, sizeof table[0], &conf)) != SBX_OK)
        return rc;
    *prov = &conf;
    return SBX_OK;
}

static const sbx_provider_ops_v1 ops = {
    .init = typed_init, .fini = fake_fini, .create = fake_create,
    .exec = fake_exec, .destroy = fake_destroy,
};

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "typed_settings", FAKE_STRINGS, .config_keys = keys, .ops = &ops,
};
