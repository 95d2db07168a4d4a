/* tests/loader/op_no_cap.c - has op list without claiming SBX_CAP_LIST
 * (SBX_E_LOAD_CAPS) */
#include "fake.h"

static const sbx_provider_ops_v1 ops = {
    FAKE_MANDATORY_OPS,
    .list = fake_list, /* the defect: no SBX_CAP_LIST below */
};

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "op_no_cap", FAKE_STRINGS, .capabilities = 0,
    .ops = &ops,
};
