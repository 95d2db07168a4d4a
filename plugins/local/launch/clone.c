/* plugins/local/launch/clone.c - the in-process launcher: our own clone
 *
 * The init is a clone3 of the calling process into new user, mount, pid,
 * ipc, uts (and, unless network = host, net) namespaces, straight into
 * its v2 cgroup (CLONE_INTO_CGROUP) or joining the v1 ones through the
 * tasks files; it runs lcl_child_main and waits for the supervisor's go.
 * Its host id is its own (local-ids.c).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_LINUX_SCHED_H
#include <linux/sched.h>
#endif

#include "launch.h"

/* Our own copy: <linux/sched.h> may predate the cgroup field. */
struct lcl_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};

static bool clone_fits(const struct lcl_launch *l)
{
    return !l->sp;
}

int lcl_launch_take_id(struct lcl_launch *l)
{
    struct lcl_prov *p = l->p;
    struct lcl_sb *sb = l->sb;
    /* Our init's own host id (the daemon's and a zygote's have theirs);
     * a sandbox made before ids were per exec keeps the one its files
     * belong to. */
    if (p->ids_per_exec && sb->work_tmpfs && sb->work_uid != LCL_SANDBOX_UID) {
        l->id->uid = sb->work_uid;
        l->id->gid = sb->work_gid;
        return 0;
    }
    return lcl_id_take(p, l->id);
}

uint64_t lcl_launch_ns_flags(const struct lcl_launch *l)
{
    uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    if (l->sb->network != SBX_NET_HOST)
        flags |= CLONE_NEWNET;
    return flags;
}

static int clone_start(struct lcl_launch *l)
{
    struct lcl_prov *p = l->p;
    int ret = lcl_launch_take_id(l);
    if (ret)
        return ret;
    uint64_t flags = lcl_launch_ns_flags(l) | CLONE_PIDFD;
    int pidfd = -1;
    struct lcl_clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
    ca.exit_signal = 0; /* no SIGCHLD: the host's handlers never see it */
    bool joined = false;
    if (l->cg->v2fd >= 0) {
        ca.flags = flags | CLONE_INTO_CGROUP | CLONE_NEWCGROUP;
        ca.cgroup = (uint64_t)l->cg->v2fd;
        joined = true;
    } else {
        ca.flags = flags;
        l->c->new_cgroup_ns = true;
        /* v1: the child joins through the tasks files before anything else. */
        for (int i = 0; i < LCL_CG_NCTRL; i++)
            joined = joined || l->c->fd_tasks[i] >= 0;
    }
    long pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid < 0 && errno == ENOSYS) {
        joined = l->cg->v2fd < 0 && joined;
        l->c->new_cgroup_ns = true;
        pid = syscall(SYS_clone, (unsigned long)flags, 0, &pidfd, 0, 0);
    }
    if (pid == 0)
        lcl_child_main(l->c);
    if (pid < 0)
        return p->host->set_error(p->h, errno == EPERM || errno == EACCES ? SBX_E_PERM : SBX_E_IO,
                                  "clone into new namespaces: %s", strerror(errno));
    *l->pid = (pid_t)pid;
    *l->pidfd = pidfd;
    return lcl_cg_attach(p, l->cg, *l->pid, joined);
}

const struct lcl_launcher lcl_launch_clone = {
    .name = "clone",
    .fits = clone_fits,
    .prepare = lcl_launch_own_cgroup,
    .start = clone_start,
};
