/* tests/loader/cap_no_op.c - claims SBX_CAP_FILES with upload but no
 * download (SBX_E_LOAD_CAPS) */
#include "fake.h"

static const sbx_provider_ops_v1 ops = {
    FAKE_MANDATORY_OPS, .upload = fake_upload, /* download missing */
};

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "cap_no_op", FAKE_STRINGS,
    .capabilities = SBX_CAP_FILES, /* the defect */
    .ops = &ops,
};
