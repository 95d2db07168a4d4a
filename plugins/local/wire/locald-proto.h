/* plugins/local/wire/locald-proto.h - what the provider, polysandbox-locald and
 * its prepared sandboxes say to each other around an exec request
 *
 * One exec, over a stream socket: the provider (client) sends the exec
 * request (wire/exec-req.h, with its daemon's part, and its
 * descriptors); the daemon answers with a reply, with the prepared
 * sandbox's pidfd when it took the exec; the client sends LCL_LD_DONE
 * once it has read the outcome (or goes away, which kills the exec).
 * The daemon passes the same request and descriptors on to the prepared
 * sandbox.  Both ends come from one build (the key says so), so the
 * reply goes as it is.  See README.md, "The daemon".
 */
#ifndef LOCALD_PROTO_H
#define LOCALD_PROTO_H

#include <stdint.h>

#include "exec-req.h"
#include "fdpass.h"

#define LCL_LD_MAGIC LCL_XR_MAGIC  /* of the reply */
#define LCL_LD_SOCK "locald.sock"
#define LCL_LD_LOCK "locald.lock"
#define LCL_LD_KEY_MAX LCL_XR_KEY_MAX
#define LCL_LD_DONE 'D'
#define LCL_LD_READY 'r'
/* The sandbox id in a prepared sandbox's cgroup slot mark while no exec
 * of a sandbox runs there (cgroup/slots.c). */
#define LCL_LD_IDLE_OWNER "lcl-locald"

enum { LCL_LD_OK, LCL_LD_FALLBACK, LCL_LD_MISMATCH };

struct lcl_ld_rep {
    uint32_t magic;
    int32_t code;                  /* LCL_LD_* */
    char slot[96];                 /* OK: the cgroup pool slot (a name under each controller) */
};

#endif /* LOCALD_PROTO_H */
