/* tests/loader/reserved.c - a reserved field is not zero
 * (SBX_E_LOAD_RESERVED) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "reserved", FAKE_STRINGS, .ops = &fake_ops,
    .reserved = {0, 7}, /* the defect */
};
