/* plugins/local/jail/jail.h - what runs inside a sandbox
 *
 * The init of a sandbox and its payload (child.c), whichever launcher
 * started them: an in-process clone (launch/exec.c), a spare sandbox of
 * polysandbox-locald (daemon/spare.c) or a zygote's fork
 * (zygote/helper.c).  Everything a launcher hands over is in struct
 * lcl_child, computed before the clone or fork; this folder includes no
 * launcher's header, and the launchers include this one.
 */
#ifndef LCL_JAIL_H
#define LCL_JAIL_H

#include "../local-int.h"

/* The step whose failure is the caller's mistake (a --cwd that is not
 * there), not the sandbox's: reported as SBX_E_INVAL. */
#define LCL_STEP_CWD "chdir to the working directory"

/* Message on the report pipe (child -> supervisor). */
enum { LCL_MSG_SETUP = 1, LCL_MSG_EXEC = 2 };
struct lcl_msg {
    int kind;
    int err;
    char what[480];
};

/* Everything the child needs, computed by the supervisor before clone so
 * the child makes system calls only (the process may be multi-threaded:
 * no malloc, no locks after clone). */
struct lcl_child {
    const struct lcl_prov *prov;
    const struct lcl_sb *sb;
    char *const *argv;
    char **envp;            /* "K=V", NULL-terminated */
    char **path_dirs;       /* PATH search list for argv[0] */
    const char *cwd;        /* absolute, inside the sandbox */
    int fd_in, fd_out, fd_err;   /* child ends of the stdio pipes */
    int fd_sync;            /* read end: supervisor says "go" */
    int fd_report;          /* write end, CLOEXEC: struct lcl_msg */
    int fd_status;          /* write end: payload's wait status (int) */
    int fd_tasks[LCL_CG_NCTRL]; /* v1: <cgroup>/tasks opened by the supervisor, or -1 */
    bool drop_groups;       /* setgroups(0, NULL): root's groups must go */
    bool new_cgroup_ns;     /* unshare(CLONE_NEWCGROUP) after the go */
    bool net_none;
    const char *skel_src;   /* the shared skeleton to bind as the root, or NULL: make one */
    bool work_by_sync;      /* the go carries /work (idmapped: local-ids.c), not bound by path */
    char tmp_opts[96];      /* tmpfs options of /tmp and /dev/shm */
    bool keep_sync;         /* prepared sandbox: fd_sync is its request socket */
    bool root_detached;     /* prepared sandbox: the old root is gone already */
    bool empty_before_status; /* prepared sandbox: kill and reap all before the status */
    bool leave_cgroup;      /* then, before the status, write "0" to each fd_leave >= 0 */
    uint64_t rl_data;       /* RLIMIT_DATA of the payload, or 0: none (local-limits.c) */
    uint64_t rl_nproc;      /* RLIMIT_NPROC of the payload, or 0: none */
    int fd_leave[LCL_CG_NCTRL]; /* v1: a parent cgroup's tasks file, or -1 */
    bool shared_mm;         /* on the caller's memory (launch/vfork.c): the init stays out
                             * of the exec's cgroups, the payload is a vfork child that
                             * joins them (fd_tasks) and unshares the cgroup namespace */
    bool redumpable;        /* shared_mm: PR_SET_DUMPABLE 1 again once the payload executed
                             * (its setresuid cleared the flag of the memory we share) */
    /* A zygote's init keeping eval's pass line (sdk/inside/seal.h): once
     * the payload is reaped (and the rest, before the status), @seal goes
     * to fd_out if "1" came on fd_said; fd_out is then closed. */
    bool sealed;
    int fd_said;            /* the read end of the payload's pipe, O_NONBLOCK */
    const char *seal;
    size_t seal_len;
};

/* The child's ends of an exec's pipes, in this order (also the first
 * descriptors of an exec request, wire/exec-req.h). */
enum { LCL_CHILD_FD_IN, LCL_CHILD_FD_OUT, LCL_CHILD_FD_ERR, LCL_CHILD_FD_REPORT,
       LCL_CHILD_FD_STATUS, LCL_CHILD_NFD };
/* The exec's part of an init's view: its sandbox, command, environment,
 * PATH search list, working directory and pipes (borrowed, not owned;
 * view.c). */
void lcl_child_exec_view(struct lcl_child *c, const struct lcl_sb *sb, char *const *argv,
                         char **envp, char **path_dirs, const char *cwd,
                         const int fds[LCL_CHILD_NFD]);

_Noreturn void lcl_child_main(const struct lcl_child *c);
/* lcl_child_main in two halves, for prepared sandboxes (daemon/spare.c). */
void lcl_child_setup(const struct lcl_child *c);
_Noreturn void lcl_child_start(const struct lcl_child *c);

/* ---- for the spare sandboxes of polysandbox-locald (daemon/spare.c) ---- */
/* The payload of a prepared sandbox, made before its request
 * (jail/payload.c; the in-process payload runs the same steps, in
 * lcl_payload_prepare): early, what no request changes (signals,
 * session, OOM score, privileges, the seccomp filter); late, what the
 * request brings (stdio, rlimits, descriptors closed on exec), all of
 * it allowed by the filter and needing no privilege; then the command
 * (returns only when it could not be executed, reported). */
void lcl_payload_early(const struct lcl_child *c);
void lcl_payload_late(const struct lcl_child *c);
void lcl_payload_exec(const struct lcl_child *c);

/* ---- for a zygote's init and payload (zygote/helper.c) ---- */
/* The parts of jail/ a zygote's init and payload run
 * (zygote/helper.c): the payload's up to the command (the seccomp filter
 * loaded last), the init's reaping, and a failure report to the
 * supervisor. */
void lcl_payload_prepare(const struct lcl_child *c);
_Noreturn void lcl_child_reap(const struct lcl_child *c, pid_t payload);
/* A zygote's shared root (jail/root.c): built once in the zygote's own
 * user and mount namespaces (failures go to c->fd_report, then _exit),
 * its /proc moved aside once its imports are done; per exec, the init's
 * fresh parts on it, and its /tmp (once the payload is forked). */
void lcl_child_zroot_build(const struct lcl_child *c);
void lcl_child_zroot_ready(const struct lcl_child *c);
void lcl_child_zroot_exec(const struct lcl_child *c);
void lcl_child_zroot_tmp(const struct lcl_child *c);
_Noreturn void lcl_child_fail(const struct lcl_child *c, const char *step, const char *path);

#endif /* LCL_JAIL_H */
