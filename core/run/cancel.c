/* core/run/cancel.c - sbx_cancel: stop a run or exec from another thread
 *
 * A handle is a flag and an eventfd.  Firing sets the flag and makes the
 * eventfd readable, which is all a provider needs: it polls the fd (the
 * exec spec's cancel_fd) beside the command's pipes and kills the command
 * when it turns readable.  Firing is one atomic store and one write(2),
 * so it is safe from a signal handler.  A fired handle stays fired.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "run/cancel-int.h"

struct sbx_cancel {
    atomic_bool fired;
    int fd;
};

sbx_cancel *sbx_cancel_new(void)
{
    sbx_cancel *c = calloc(1, sizeof *c);

    core_error_clear();
    if (!c)
        return NULL;
    atomic_init(&c->fired, false);
    c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->fd < 0) {
        core_error_set(errno == ENOMEM ? SBX_E_NOMEM : SBX_E_IO, NULL,
                       "sbx_cancel_new: eventfd: %s", strerror(errno));
        free(c);
        return NULL;
    }
    return c;
}

void sbx_cancel_fire(sbx_cancel *c)
{
    uint64_t one = 1;

    if (!c || atomic_exchange(&c->fired, true))
        return;
    while (write(c->fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

bool sbx_cancel_fired(const sbx_cancel *c)
{
    return c && atomic_load(&((sbx_cancel *)c)->fired);
}

void sbx_cancel_free(sbx_cancel *c)
{
    if (!c)
        return;
    close(c->fd);
    free(c);
}

int core_cancel_fd(const sbx_cancel *c)
{
    return c ? c->fd : -1;
}
