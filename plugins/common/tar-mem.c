/* plugins/common/tar-mem.c - a libarchive writer into memory */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tar-mem.h"

la_ssize_t pc_tar_mem_write(struct archive *a, void *ud, const void *buf, size_t n)
{
    pc_membuf *m = ud;

    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap : 16384;
        unsigned char *np;

        while (cap < m->len + n)
            cap *= 2;
        if (!(np = realloc(m->p, cap))) {
            archive_set_error(a, ENOMEM, "out of memory");
            return -1;
        }
        m->p = np;
        m->cap = cap;
    }
    memcpy(m->p + m->len, buf, n);
    m->len += n;
    return (la_ssize_t)n;
}
