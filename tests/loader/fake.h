/* tests/loader/fake.h - trivial ops shared by the loader's test modules
 *
 * Each test module includes this, then writes its descriptor by hand
 * (not with SBX_PROVIDER_DEFINE) so that it can get exactly one field
 * wrong.  The ops do nothing: the loader must reject most modules before
 * any of them runs.
 */
#ifndef SBX_TESTS_LOADER_FAKE_H
#define SBX_TESTS_LOADER_FAKE_H

#include <string.h>

#include <polysandbox/provider.h>

#define FAKE_UNUSED __attribute__((unused))

/* Fields every test descriptor shares unless it breaks one of them. */
#define FAKE_HEADER                                                       \
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,              \
    .abi_minor = SBX_ABI_MINOR,                                           \
    .struct_size = (uint32_t)sizeof(sbx_provider_v1),                     \
    .ops_size = (uint32_t)sizeof(sbx_provider_ops_v1)
#define FAKE_STRINGS                                                      \
    .version = "1.0", .description = "loader test module", .license = "MIT"

/* The exported descriptor's declaration (modules build with hidden
 * visibility, as real providers do). */
#define FAKE_DESCRIPTOR                                                   \
    SBX_PROVIDER_EXPORT extern const sbx_provider_v1 sandbox_provider_v1; \
    SBX_PROVIDER_EXPORT const sbx_provider_v1 sandbox_provider_v1

static int fake_token;

FAKE_UNUSED static int fake_init(const sbx_host_v1 *host, sbx_host_handle *h,
                                 void **prov)
{
    (void)host;
    (void)h;
    *prov = &fake_token;
    return 0;
}

FAKE_UNUSED static void fake_fini(void *prov)
{
    (void)prov;
}

FAKE_UNUSED static int fake_create(void *prov, const sbx_create_spec_v1 *spec,
                                   void **sb, char id[SBX_ID_MAX])
{
    (void)prov;
    (void)spec;
    *sb = &fake_token;
    strcpy(id, "fake-1");
    return 0;
}

FAKE_UNUSED static int fake_exec(void *prov, void *sb,
                                 const sbx_exec_spec_v1 *spec,
                                 const sbx_output_sink_v1 *sink,
                                 sbx_exec_outcome_v1 *out)
{
    (void)prov;
    (void)sb;
    (void)spec;
    (void)sink;
    out->status = SBX_RUN_OK;
    out->exit_code = 0;
    return 0;
}

FAKE_UNUSED static int fake_destroy(void *prov, void *sb)
{
    (void)prov;
    (void)sb;
    return 0;
}

FAKE_UNUSED static int fake_upload(void *prov, void *sb, const char *path,
                                   const void *data, size_t len, uint32_t mode)
{
    (void)prov, (void)sb, (void)path, (void)data, (void)len, (void)mode;
    return 0;
}

FAKE_UNUSED static int fake_list(void *prov, const sbx_kv_v1 *filter,
                                 size_t n_filter, sbx_list_cb_v1 cb, void *ud)
{
    (void)prov, (void)filter, (void)n_filter, (void)cb, (void)ud;
    return 0;
}

/* The mandatory five: what most modules use. */
#define FAKE_MANDATORY_OPS                                                \
    .init = fake_init, .fini = fake_fini, .create = fake_create,          \
    .exec = fake_exec, .destroy = fake_destroy

FAKE_UNUSED static const sbx_provider_ops_v1 fake_ops = {FAKE_MANDATORY_OPS};

#endif
