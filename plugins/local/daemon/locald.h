/* plugins/local/daemon/locald.h - internals of polysandbox-locald (the program) */
#ifndef LOCALD_H
#define LOCALD_H

#include "../jail/jail.h"

/* The init of a prepared sandbox: @c as for lcl_child_main, fd_sync its
 * end of the daemon's socket (keep_sync), fd_report the daemon's pipe
 * (until a request brings the client's). */
_Noreturn void lcl_spare_main(struct lcl_child *c);

#endif /* LOCALD_H */
