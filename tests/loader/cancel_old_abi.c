/* tests/loader/cancel_old_abi.c - claims SBX_CAP_CANCEL but was built
 * against ABI 1.2, whose exec spec has no cancel_fd (SBX_E_LOAD_CAPS) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = 2, /* the defect, with the capability below */
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "cancel_old_abi", FAKE_STRINGS,
    .capabilities = SBX_CAP_CANCEL,
    .ops = &fake_ops,
};
