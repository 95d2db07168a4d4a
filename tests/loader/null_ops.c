/* tests/loader/null_ops.c - no ops table at all (SBX_E_LOAD_MISSING_OP) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "null_ops", FAKE_STRINGS,
    .ops = NULL, /* the defect */
};
