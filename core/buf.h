/* core/buf.h - a growable byte buffer (core/buf.c)
 *
 * Ground floor: a result's output (run/result-int.h) and the judged
 * runner's reports (eval/eval-judge-batch.c) are kept in one.
 */
#ifndef POLYSANDBOX_BUF_H
#define POLYSANDBOX_BUF_H

#include <stddef.h>

typedef struct core_buf {
    unsigned char *data;
    size_t len, cap;
} core_buf;

/* Append @len bytes; SBX_E_NOMEM on failure. */
int core_buf_append(core_buf *b, const void *data, size_t len);
void core_buf_free(core_buf *b);

#endif /* POLYSANDBOX_BUF_H */
