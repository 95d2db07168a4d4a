/* tests/loader/egress_old_abi.c - claims SBX_CAP_EGRESS but was built
 * against ABI 1.10, whose create spec has no egress (SBX_E_LOAD_CAPS) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = 10, /* the defect, with the capability below */
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "egress_old_abi", FAKE_STRINGS,
    .capabilities = SBX_CAP_EGRESS,
    .ops = &fake_ops,
};
