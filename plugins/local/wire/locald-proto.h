/* plugins/local/wire/locald-proto.h - what the provider, polysandbox-locald and
 * its prepared sandboxes say to each other
 *
 * One exec, over a stream socket: the provider (client) sends a request
 * (header, then the strings), with LCL_LD_NFDS descriptors on its first
 * byte; the daemon answers with a reply, with the prepared sandbox's
 * pidfd when it took the exec; the client sends LCL_LD_DONE once it has
 * read the outcome (or goes away, which kills the exec).  The daemon
 * passes the same request and descriptors on to the prepared sandbox.
 * Both ends come from one build (the key says so), so structs go as
 * they are.  See README.md, "The daemon".
 */
#ifndef LOCALD_PROTO_H
#define LOCALD_PROTO_H

#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <polysandbox/provider.h>

#include "fdpass.h"

#define LCL_LD_MAGIC 0x444c434cu   /* "LCLD" */
#define LCL_LD_VERSION 2u   /* 2: network, net_ns, rootfs_len */
#define LCL_LD_SOCK "locald.sock"
#define LCL_LD_LOCK "locald.lock"
#define LCL_LD_KEY_MAX 40
#define LCL_LD_BLOB_MAX (4u << 20)  /* argv + environment + PATH + cwd */
#define LCL_LD_DONE 'D'
#define LCL_LD_READY 'r'
/* The sandbox id in a prepared sandbox's cgroup slot mark while no exec
 * of a sandbox runs there (cgroup/slots.c). */
#define LCL_LD_IDLE_OWNER "lcl-locald"

/* The request's descriptors, in this order: an exec's pipes as the
 * init takes them (LCL_CHILD_FD_*, jail/jail.h), then the work mount. */
enum { LCL_LD_FD_IN, LCL_LD_FD_OUT, LCL_LD_FD_ERR, LCL_LD_FD_REPORT, LCL_LD_FD_STATUS,
       LCL_LD_FD_WORK, LCL_LD_NFDS };

struct lcl_ld_req {
    uint32_t magic, version;
    char key[LCL_LD_KEY_MAX];      /* the daemon's build and settings (client's view) */
    char id[SBX_ID_MAX];           /* the sandbox */
    uint64_t mnt_ns;               /* the client's mount namespace (inode) */
    uint64_t net_ns;               /* and network namespace (network = host) */
    sbx_limits_v1 limits;
    uint32_t network;              /* sbx_network: none or host */
    uint32_t rootfs_len;           /* image root: its path (NUL-ended) ends the blob; 0: none */
    /* What the payload would inherit from the client in-process: the
     * daemon serves only clients it can match (FALLBACK otherwise). */
    uint32_t umask;
    int32_t nice;
    struct rlimit rl[RLIM_NLIMITS];
    cpu_set_t cpus;
    uint32_t n_argv, n_env, n_path;
    uint32_t blob_len;             /* then: argv, env, PATH dirs, cwd, each NUL-ended */
};

enum { LCL_LD_OK, LCL_LD_FALLBACK, LCL_LD_MISMATCH };

struct lcl_ld_rep {
    uint32_t magic;
    int32_t code;                  /* LCL_LD_* */
    char slot[96];                 /* OK: the cgroup pool slot (a name under each controller) */
};

#endif /* LOCALD_PROTO_H */
