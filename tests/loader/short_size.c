/* tests/loader/short_size.c - struct_size below the ABI 1.0 descriptor
 * (SBX_E_LOAD_SIZE) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = SBX_ABI_MINOR,
    .struct_size = 16, /* the defect: the header only */
    .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "short_size", FAKE_STRINGS, .ops = &fake_ops,
};
