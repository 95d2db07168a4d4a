/* tests/loader/no_license.c - NULL license (SBX_E_LOAD_STRING) */
#include "fake.h"

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "no_license", .version = "1.0",
    .description = "loader test module",
    .license = NULL, /* the defect */
    .ops = &fake_ops,
};
