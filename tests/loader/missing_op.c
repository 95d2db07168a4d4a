/* tests/loader/missing_op.c - mandatory op exec is NULL
 * (SBX_E_LOAD_MISSING_OP) */
#include "fake.h"

static const sbx_provider_ops_v1 ops = {
    .init = fake_init, .fini = fake_fini, .create = fake_create,
    .exec = NULL, /* the defect */
    .destroy = fake_destroy,
};

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "missing_op", FAKE_STRINGS, .ops = &ops,
};
