/* plugins/common/randhex.c - random hex strings (see randhex.h) */
#include "config.h"

#include <errno.h>
#include <sys/random.h>

#include "randhex.h"

int pc_random_hex(char *out, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char rnd[32];
    size_t got = 0;

    out[0] = '\0';
    if (nbytes > sizeof rnd)
        nbytes = sizeof rnd;
    while (got < nbytes) {
        ssize_t n = getrandom(rnd + got, nbytes - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = hex[rnd[i] >> 4];
        out[2 * i + 1] = hex[rnd[i] & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}
