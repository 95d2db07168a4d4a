/* tests/loader/unresolved.c - needs a symbol nothing defines, so the
 * dynamic linker refuses it (SBX_E_LOAD_OPEN naming the symbol).  Built
 * without -no-undefined, unlike every other module. */
#include "fake.h"

extern int sbx_test_missing_symbol;
SBX_PROVIDER_EXPORT extern int *const unresolved_ref;
SBX_PROVIDER_EXPORT int *const unresolved_ref = &sbx_test_missing_symbol;

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "unresolved", FAKE_STRINGS, .ops = &fake_ops,
};
