/* tests/loader/bad_magic.c - wrong magic number (SBX_E_LOAD_BAD_MAGIC) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    .magic = UINT32_C(0xdeadbeef), /* the defect */
    .abi_major = SBX_ABI_MAJOR, .abi_minor = SBX_ABI_MINOR,
    .struct_size = sizeof(sbx_provider_v1), .ops_size = sizeof(sbx_provider_ops_v1),
    .name = "bad_magic", FAKE_STRINGS, .ops = &fake_ops,
};
