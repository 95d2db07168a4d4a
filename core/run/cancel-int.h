/* core/run/cancel-int.h - the insides of a cancel handle (core/run/cancel.c)
 */
#ifndef POLYSANDBOX_RUN_CANCEL_INT_H
#define POLYSANDBOX_RUN_CANCEL_INT_H

#include <polysandbox/sandbox.h>

/* The eventfd of a cancel handle (readable once fired), or -1 for NULL.
 * (core/run/cancel.c) */
int core_cancel_fd(const sbx_cancel *c);

#endif /* POLYSANDBOX_RUN_CANCEL_INT_H */
