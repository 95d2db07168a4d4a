/* tests/loader/no_symbol.c - a shared object that is not a provider:
 * it exports no sandbox_provider_v1 (SBX_E_LOAD_NO_SYMBOL). */
#include <polysandbox/provider.h>

SBX_PROVIDER_EXPORT extern int not_a_provider;
SBX_PROVIDER_EXPORT int not_a_provider = 42;
