/* tests/loader/zygote_old_abi.c - claims SBX_CAP_ZYGOTE without
 * exec_zygote while declaring ABI 1.11: before 1.12 the capability needs
 * the op (SBX_E_LOAD_CAPS); a 1.12 provider claims it without one */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = SBX_PROVIDER_MAGIC,
    .abi_major = SBX_ABI_MAJOR,
    .abi_minor = 11, /* the defect, with the capability and the NULL op below */
    .struct_size = sizeof(sbx_provider_v1),
    .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "zygote_old_abi",
    FAKE_STRINGS,
    .capabilities = SBX_CAP_ZYGOTE,
    .ops = &fake_ops,
};
