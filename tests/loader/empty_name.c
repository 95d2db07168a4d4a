/* tests/loader/empty_name.c - empty name string (SBX_E_LOAD_STRING) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    FAKE_HEADER,
    .name = "", /* the defect */
    FAKE_STRINGS, .ops = &fake_ops,
};
