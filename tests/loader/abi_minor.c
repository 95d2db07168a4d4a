/* tests/loader/abi_minor.c - built against a newer minor than the core's
 * (SBX_E_LOAD_ABI_MINOR) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = 999, /* the defect: newer than any core (fixed, so the
                       * expected message survives minor bumps) */
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "abi_minor", FAKE_STRINGS, .ops = &fake_ops,
};
