/* tests/loader/global_syms.c - asks for global symbol scope
 *
 * A valid provider with SBX_PROVIDER_F_GLOBAL_SYMBOLS.  It also exports a
 * marker variable the test looks up with dlsym(RTLD_DEFAULT) to prove the
 * loader honoured the flag.
 */
#include "fake.h"

SBX_PROVIDER_EXPORT extern int sbx_test_global_marker;
SBX_PROVIDER_EXPORT int sbx_test_global_marker = 1;

FAKE_DESCRIPTOR = {
    FAKE_HEADER, .name = "global_syms", FAKE_STRINGS,
    .flags = SBX_PROVIDER_F_GLOBAL_SYMBOLS,
    .ops = &fake_ops,
};
