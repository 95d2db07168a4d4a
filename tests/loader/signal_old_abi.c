/* tests/loader/signal_old_abi.c - claims SBX_CAP_SIGNAL but was built
 * against ABI 1.7, whose exec spec has no signal_fd (SBX_E_LOAD_CAPS) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR,
    .abi_minor = 7, /* the defect, with the capability below */
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "signal_old_abi", FAKE_STRINGS,
    .capabilities = SBX_CAP_SIGNAL,
    .ops = &fake_ops,
};
