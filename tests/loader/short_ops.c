/* tests/loader/short_ops.c - ops_size below the ABI 1.0 ops table
 * (SBX_E_LOAD_SIZE) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = SBX_ABI_MINOR, .struct_size = sizeof(sbx_provider_v1),
    .ops_size = 2 * sizeof(void (*)(void)), /* the defect */
    .name = "short_ops", FAKE_STRINGS, .ops = &fake_ops,
};
