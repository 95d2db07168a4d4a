/* tests/loader/abi_major.c - built for a future ABI major
 * (SBX_E_LOAD_ABI_MAJOR) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC,
    .abi_major = SBX_ABI_MAJOR + 1, /* the defect */
    .abi_minor = 0,
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "abi_major", FAKE_STRINGS, .ops = &fake_ops,
};
