/* plugins/local/wire/exec-req.h - one exec request, to a spare or a zygote
 *
 * The one encoding of an exec handed to an init the caller did not
 * clone: a spare of polysandbox-locald (launch/daemon.c writes it,
 * daemon/serve.c reads it and passes it on as it came, daemon/spare.c
 * reads it) or a zygote's child (launch/zygote.c writes it,
 * zygote/helper.c reads it).  Layout, in native byte order and struct
 * layout (both ends are one build on this host: a daemon of another
 * build answers MISMATCH on the version or the key):
 *
 *   header (magic, version, length, parts, counts, limits)   always
 *   struct lcl_xr_inherit       LCL_XR_INHERIT: the daemon's part
 *   struct lcl_xr_init          LCL_XR_INIT: the zygote's part
 *   n_argv + n_env + n_path strings, then cwd, NUL-ended each
 *   the image root ("" for none), NUL-ended          INHERIT only
 *   tmp_opts, NUL-ended                               INIT only
 *   bpf_len struct sock_filter (8 bytes each)         INIT only
 *
 * and the header's length is all of it, exactly.  Descriptors go with it
 * (SCM_RIGHTS): enum lcl_xr_fd, then with INIT the sync pipe, one tasks
 * file per bit of tasks_mask, one per bit of leave_mask.  To the daemon
 * and on to a spare, over a stream (lcl_fds_send, the descriptors on
 * the first byte; lcl_xr_recv reads it); to a zygote, one
 * SOCK_SEQPACKET datagram.  The decoder takes every byte as hostile.
 */
#ifndef LCL_EXEC_REQ_H
#define LCL_EXEC_REQ_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <polysandbox/provider.h>

#define LCL_XR_MAGIC 0x444c434cu /* "LCLD", as version 2's daemon request had */
#define LCL_XR_VERSION 3u        /* 3: one request for the daemon and the zygote */
#define LCL_XR_MAX (4u << 20)    /* bytes of a request, at most */
#define LCL_XR_KEY_MAX 40
#define LCL_XR_CG_MAX 8        /* v1 controllers a request may carry tasks files of */
#define LCL_XR_TMP_OPTS_MAX 96 /* tmp_opts, its NUL included */
#define LCL_XR_BPF_MAX 4096    /* filter instructions (BPF_MAXINSNS) */

enum { LCL_XR_INHERIT = 1, LCL_XR_INIT = 2 };

/* The descriptors every request carries, in the order of an init's
 * pipes (LCL_CHILD_FD_*, jail/jail.h), then the work directory as a
 * detached mount.  With INIT, LCL_XR_NFD is the sync pipe's read end. */
enum lcl_xr_fd {
    LCL_XR_FD_IN,
    LCL_XR_FD_OUT,
    LCL_XR_FD_ERR,
    LCL_XR_FD_REPORT,
    LCL_XR_FD_STATUS,
    LCL_XR_FD_WORK,
    LCL_XR_NFD
};
#define LCL_XR_MAX_FDS (LCL_XR_NFD + 1 + 2 * LCL_XR_CG_MAX)

/* The daemon's part: whose exec, for which daemon, and what the payload
 * would inherit from the client in-process (the daemon serves only the
 * clients it can match). */
struct lcl_xr_inherit {
    char key[LCL_XR_KEY_MAX]; /* the daemon's build and settings (client's view) */
    char id[SBX_ID_MAX];      /* the sandbox */
    uint64_t mnt_ns, net_ns;  /* the client's mount and network namespaces (inodes) */
    uint32_t network;         /* sbx_network: none or host */
    uint32_t umask;
    int32_t nice;
    uint32_t pad; /* 0 */
    struct rlimit rl[RLIM_NLIMITS];
    cpu_set_t cpus;
};

enum { LCL_XR_F_DROP_GROUPS = 1, LCL_XR_F_NET_NONE = 2 };

/* The zygote's part: what an init with no provider of its own needs. */
struct lcl_xr_init {
    uint32_t flags; /* LCL_XR_F_* */
    int32_t cap_last;
    uint64_t rl_data, rl_nproc; /* the payload's floors, or 0 (jail/limits.c) */
    uint32_t bpf_len;           /* instructions of the seccomp filter */
    uint32_t tasks_mask;        /* bit i: a tasks file of controller i follows */
    uint32_t leave_mask;        /* 0 or tasks_mask: then each one's parent's tasks file, for
                                * the init to leave the exec's cgroups before the status */
    uint32_t pad;               /* 0 */
};

/* A request, as the launcher fills it for lcl_xr_encode and as
 * lcl_xr_decode gives it back (pointing into the decoded buffer). */
struct lcl_xreq {
    uint32_t parts; /* LCL_XR_INHERIT, LCL_XR_INIT */
    sbx_limits_v1 limits;
    char **argv, **envp, **path; /* NULL-terminated; path may be NULL (none) */
    const char *cwd;             /* absolute, inside the sandbox */
    const char *rootfs;          /* INHERIT: the image root, or NULL */
    const char *tmp_opts;        /* INIT */
    const void *bpf;             /* INIT: init.bpf_len instructions, maybe unaligned */
    struct lcl_xr_inherit inh;
    struct lcl_xr_init init;
    int fd[LCL_XR_NFD];
    int fd_sync;                                          /* INIT */
    int fd_tasks[LCL_XR_CG_MAX], fd_leave[LCL_XR_CG_MAX]; /* INIT: per mask bit, else -1 */
    char **strv_;                                         /* decode's allocation */
};

/* @r into a new buffer (*@buf, *@len; the caller frees it) and the
 * descriptors to send with it, in order (*@nfds of @fds).  0, -ENOMEM,
 * or -E2BIG (over LCL_XR_MAX, or a part's string or filter too long). */
int lcl_xr_encode(const struct lcl_xreq *r, char **buf, size_t *len, int fds[LCL_XR_MAX_FDS],
                  int *nfds);
/* @len bytes of @buf and the @nfds descriptors that came with them
 * (borrowed) into @r, whose pointers point into @buf; lcl_xr_free(@r)
 * afterwards, even on failure.  0, -EPROTONOSUPPORT (another version: a
 * daemon of another build), or -EPROTO (*@why says what was wrong). */
int lcl_xr_decode(const void *buf, size_t len, const int *fds, int nfds, struct lcl_xreq *r,
                  const char **why);
void lcl_xr_free(struct lcl_xreq *r);
/* The next NUL-ended string of [*@pos, @end), *@pos moved past it; or
 * NULL when it does not end there (also for a zygote's layout). */
const char *lcl_xr_next_str(const char **pos, const char *end);
/* A request from stream @sock (the descriptors on its first byte, into
 * @fds: up to LCL_XR_MAX_FDS, unused slots -1, *@nfds received) into a
 * new *@buf of *@len bytes (the caller frees it, also on failure).
 * 0, -errno, -EPIPE at EOF, -EPROTONOSUPPORT (another version: nothing
 * read past its header), -EPROTO (a bad header). */
int lcl_xr_recv(int sock, char **buf, size_t *len, int fds[LCL_XR_MAX_FDS], int *nfds);

#endif /* LCL_EXEC_REQ_H */
