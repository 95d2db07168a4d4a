/* plugins/local/launch/launch.h - the ways an exec's init is started
 *
 * The supervisor (exec.c) makes an exec ready (files, environment,
 * pipes, the init's view in struct lcl_child), then asks the launchers
 * of launchers.c in order; the first that fits and does not decline
 * starts the init, and the supervisor does the rest the same way for
 * all (the id maps and the go when the init is its own, supervision,
 * the verdict, cleanup).  Today's four:
 *
 *   zygote  a fork of a warm interpreter (zygote.c): when the exec came
 *           through ops->exec_zygote (l->sp set)
 *   daemon  a spare of polysandbox-locald (daemon.c): it hands the whole
 *           exec over, the cgroup being the spare's slot
 *   vfork   an in-process init sharing the caller's memory until it is
 *           gone, cloned from a nanny thread (vfork.c): no copy of the
 *           caller's page tables; cgroup v1 or none (else it hands over
 *           to clone)
 *   clone   an in-process clone3 into new namespaces (clone.c)
 *
 * Adding a fourth (a snapshot-restored microVM, say) is one new file:
 * launch/NAME.c defining `const struct lcl_launcher lcl_launch_NAME`
 * (fits, prepare, start), its declaration below, its place in the
 * order of launchers.c, and the file in local.mk.
 */
#ifndef LCL_LAUNCH_H
#define LCL_LAUNCH_H

#include "../jail/jail.h"
#include "../wire/exec-req.h"

/* prepare: not mine after all, let the next launcher try (nothing left
 * behind).  The same value as LCL_LOCALD_NO, and as SBX_E_NOMEM: an
 * allocation failure in prepare falls to the next launcher, as the
 * daemon's always did. */
#define LCL_LAUNCH_NO 1

/* One exec as a launcher sees it: the supervisor's, borrowed. */
struct lcl_launch {
    struct lcl_prov *p;
    struct lcl_sb *sb;
    struct lcl_child *c;           /* the init's view (its fd_tasks filled by prepare) */
    const struct lcl_spawn *sp;    /* a zygote's start (exec_zygote), or NULL */
    struct lcl_cg_run *cg;         /* the exec's cgroup */
    struct lcl_id *id;             /* the init's host id, when it is our own */
    pid_t *pid;                    /* out: the init, whose maps the supervisor writes */
    int *pidfd;                    /* out: its pidfd (ours) */
    int *conn;                     /* out: the daemon's connection, or -1 */
    struct lcl_nanny **nanny;      /* out: vfork's nanny thread, for lcl_nanny_end */
};

struct lcl_launcher {
    const char *name;
    /* May it take this exec?  Cheap, nothing made. */
    bool (*fits)(const struct lcl_launch *l);
    /* Before the SIGPIPE block: the cgroup and what the init needs, or
     * (the daemon) the whole exec handed over.  0, LCL_LAUNCH_NO, or an
     * sbx code (set). */
    int (*prepare)(struct lcl_launch *l);
    /* The init, waiting for the go: 0 or an sbx code (set).  NULL when
     * prepare started it already. */
    int (*start)(struct lcl_launch *l);
};

extern const struct lcl_launcher lcl_launch_zygote; /* zygote.c */
extern const struct lcl_launcher lcl_launch_daemon; /* daemon.c */
extern const struct lcl_launcher lcl_launch_vfork; /* vfork.c */
extern const struct lcl_launcher lcl_launch_clone;  /* clone.c */

/* clone.c, for vfork.c too: the init's host id into l->id (0 or an sbx
 * code, set), and the namespaces it is cloned into (CLONE_NEW*). */
int lcl_launch_take_id(struct lcl_launch *l);
uint64_t lcl_launch_ns_flags(const struct lcl_launch *l);

/* vfork.c: once the init is reaped (or never started), its nanny thread
 * joined and freed, *@n set to NULL; NULL: nothing to do. */
void lcl_nanny_end(struct lcl_nanny **n);

/* The first launcher that fits and takes @l, into *@used: prepare's
 * result (LCL_LAUNCH_NO never: the clone launcher always takes). */
int lcl_launch_prepare(struct lcl_launch *l, const struct lcl_launcher **used);
/* prepare of a launcher whose init is our own (clone, zygote): the
 * seccomp filter built, the exec's cgroup made, its v1 tasks files
 * opened into l->c->fd_tasks. */
int lcl_launch_own_cgroup(struct lcl_launch *l);

/* The common part of the request (wire/exec-req.h) of an init we do
 * not clone, from its view @c and the work directory's detached mount
 * @work_fd (request.c): command, environment, working directory,
 * limits, pipes; no part of its own, descriptors of no part -1. */
void lcl_launch_xreq(const struct lcl_child *c, int work_fd, struct lcl_xreq *r);

#endif /* LCL_LAUNCH_H */
