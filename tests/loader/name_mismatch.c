/* tests/loader/name_mismatch.c - a valid name that is not the file's
 * (SBX_E_LOAD_NAME_MISMATCH) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    FAKE_HEADER,
    .name = "someone_else", /* the defect */
    FAKE_STRINGS, .ops = &fake_ops,
};
