/* tests/loader/bad_name.c - name with characters outside [a-z0-9_]
 * (SBX_E_LOAD_BAD_NAME) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    FAKE_HEADER,
    .name = "Bad-Name", /* the defect */
    FAKE_STRINGS, .ops = &fake_ops,
};
