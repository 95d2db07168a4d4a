/* plugins/common/randhex.h - random hex strings (multipart boundaries,
 * scratch names, tokens) for the network providers
 */
#ifndef SBX_PLUGINS_COMMON_RANDHEX_H
#define SBX_PLUGINS_COMMON_RANDHEX_H

#include <stddef.h>

/* @nbytes (at most 32; more are cut to 32) random bytes from getrandom(2)
 * as 2 * @nbytes lower-case hex digits and a NUL into @out, which has room
 * for them.  Returns 0, or -1 (errno set) when the kernel gives no
 * randomness; @out is then left empty. */
int pc_random_hex(char *out, size_t nbytes);

#endif
