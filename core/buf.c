/* core/buf.c - a growable byte buffer (buf.h) */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "buf.h"

int core_buf_append(core_buf *b, const void *data, size_t len)
{
    if (len == 0)
        return SBX_OK;
    if (len > SIZE_MAX - b->len)
        return SBX_E_NOMEM;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        unsigned char *p;
        while (cap < b->len + len)
            cap = cap > SIZE_MAX / 2 ? b->len + len : cap * 2;
        if (!(p = realloc(b->data, cap)))
            return SBX_E_NOMEM;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return SBX_OK;
}

void core_buf_free(core_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
