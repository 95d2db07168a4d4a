/* plugins/local/locald.h - internals of polysandbox-locald (the program) */
#ifndef LOCALD_H
#define LOCALD_H

#include "local-int.h"

/* The init of a prepared sandbox: @c as for lcl_child_main, fd_sync its
 * end of the daemon's socket (keep_sync), fd_report the daemon's pipe
 * (until a request brings the client's). */
_Noreturn void lcl_zygote_main(struct lcl_child *c);

/* The payload of a prepared sandbox, made before its request
 * (local-child.c; the in-process payload runs the same steps, in
 * lcl_payload_prepare): early, what no request changes (signals,
 * session, OOM score, privileges, the seccomp filter); late, what the
 * request brings (stdio, rlimits, descriptors closed on exec), all of
 * it allowed by the filter and needing no privilege; then the command
 * (returns only when it could not be executed, reported). */
void lcl_payload_early(const struct lcl_child *c);
void lcl_payload_late(const struct lcl_child *c);
void lcl_payload_exec(const struct lcl_child *c);

#endif /* LOCALD_H */
