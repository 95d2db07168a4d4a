/* plugins/local/daemon/stock.c - the daemon's spares, started and ended
 *
 * K spares for each of the last limits asked for (struct want): a spare
 * is cloned as an in-process exec's init would be (its own host id, its
 * cgroup slot joined first), runs lcl_spare_main (spare.c) and says it is
 * ready; ended, it is killed, reaped and its slot given back.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "locald.h"


void lcl_d_close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

bool lcl_d_key_eq(const struct key *a, const struct key *b)
{
    return a->mem == b->mem && a->pids == b->pids && a->disk == b->disk && a->net == b->net &&
           !memcmp(a->img, b->img, sizeof a->img) && !strcmp(a->rootfs, b->rootfs);
}

/* The image directory's identity now; false if it is not one. */
bool lcl_d_image_id(const char *dir, uint64_t img[5])
{
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return false;
    img[0] = (uint64_t)st.st_dev;
    img[1] = (uint64_t)st.st_ino;
    img[2] = (uint64_t)st.st_mtim.tv_sec;
    img[3] = (uint64_t)st.st_mtim.tv_nsec ^ ((uint64_t)st.st_ctim.tv_nsec << 32);
    img[4] = (uint64_t)st.st_ctim.tv_sec;
    return true;
}



struct lcl_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};

/* Ends @z: kills what runs, reaps, gives the slot back; the entry is free. */
void lcl_d_spare_end(struct daemon *d, struct spare *z)
{
    if (!z->live)
        return;
    if (!z->exited) {
        lcl_cg_kill(d->p, &z->cg);
        syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    while (waitid((idtype_t)P_PIDFD, (id_t)z->pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
        ;
    if (z->cg.active)
        lcl_cg_destroy(d->p, &z->cg);
    lcl_d_close_fd(&z->pidfd);
    lcl_d_close_fd(&z->ctl);
    lcl_d_close_fd(&z->rep);
    lcl_d_close_fd(&z->client);
    lcl_id_give(&z->id);
    memset(z, 0, sizeof *z);
    z->pidfd = z->ctl = z->rep = z->client = z->id.fd = z->id.userns = -1;
}

/* Clones a sandbox init for limits @w and lets it build its root. */
bool lcl_d_spare_start(struct daemon *d, int wi)
{
    struct lcl_prov *p = d->p;
    struct want *w = &d->wants[wi];
    struct spare *z = NULL;
    for (int i = 0; i < SPARE_MAX && !z; i++)
        if (!d->z[i].live)
            z = &d->z[i];
    if (!z)
        return false;
    memset(z, 0, sizeof *z);
    z->pidfd = z->ctl = z->rep = z->client = z->id.fd = z->id.userns = -1;
    z->k = w->k;
    z->want = wi;

    /* What the init sees of "its sandbox" before a request: the limits
     * (cgroup slot, /tmp size) and no work directory. */
    static struct lcl_sb sb;
    memset(&sb, 0, sizeof sb);
    snprintf(sb.id, sizeof sb.id, "%s", LCL_LD_IDLE_OWNER);
    sb.limits.memory_bytes = w->k.mem;
    sb.limits.pids = w->k.pids;
    sb.limits.disk_bytes = w->k.disk;
    sb.network = w->k.net;
    sb.rootfs = w->k.rootfs[0] ? w->k.rootfs : NULL;
    /* An image changed since it was asked for: its top level is read again. */
    uint64_t img[5] = {0, 0, 0, 0, 0};
    if (sb.rootfs && (!lcl_d_image_id(sb.rootfs, img) || memcmp(img, w->k.img, sizeof img))) {
        w->fails = MAX_FAILS;
        return false;
    }
    const char *skel = sb.rootfs ? NULL : lcl_skel_shared(p);
    int tasks[LCL_CG_NCTRL], sv[2] = {-1, -1}, rep[2] = {-1, -1};
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        tasks[i] = -1;
    if ((!skel && !sb.rootfs) || lcl_id_take(p, &z->id) || lcl_cg_create(p, &sb, &z->cg) ||
        z->cg.pool_fd < 0 ||
        lcl_cg_open_tasks(p, &z->cg, tasks) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
        lcl_d_log(SBX_LOG_WARNING, "cannot prepare a sandbox (%s): executions go in-process",
              !skel && !sb.rootfs ? "no shared skeleton" : z->cg.active && z->cg.pool_fd < 0
                  ? "no cgroup pool slot" : strerror(errno));
        for (int i = 0; i < LCL_CG_NCTRL; i++)
            lcl_d_close_fd(&tasks[i]);
        for (int i = 0; i < 2; i++) {
            lcl_d_close_fd(&sv[i]);
            lcl_d_close_fd(&rep[i]);
        }
        if (z->cg.active)
            lcl_cg_destroy(p, &z->cg);
        lcl_id_give(&z->id);
        /* No skeleton: never; no free pool slot or id (all busy): not now. */
        w->fails = skel || sb.rootfs ? w->fails + 1 : MAX_FAILS;
        return false;
    }
    struct lcl_child c;
    memset(&c, 0, sizeof c);
    c.prov = p;
    c.sb = &sb;
    c.fd_in = c.fd_out = c.fd_err = c.fd_status = c.fd_sync = sv[1];
    c.keep_sync = true;
    c.fd_report = rep[1];
    memcpy(c.fd_tasks, tasks, sizeof tasks);
    c.drop_groups = true;
    c.new_cgroup_ns = z->cg.v2fd < 0; /* v2: cloned into its cgroup and namespace */
    c.net_none = sb.network != SBX_NET_HOST;
    c.skel_src = skel;
    snprintf(c.tmp_opts, sizeof c.tmp_opts, "size=%llu,nr_inodes=%llu,mode=1777",
             (unsigned long long)w->k.disk, (unsigned long long)p->work_inodes);

    int pidfd = -1;
    struct lcl_clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
               CLONE_PIDFD | (c.net_none ? CLONE_NEWNET : 0);
    if (z->cg.v2fd >= 0) {
        ca.flags |= CLONE_INTO_CGROUP | CLONE_NEWCGROUP;
        ca.cgroup = (uint64_t)z->cg.v2fd;
    }
    ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
    long pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid == 0)
        lcl_spare_main(&c);
    int e = errno;
    lcl_d_close_fd(&sv[1]);
    lcl_d_close_fd(&rep[1]);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        lcl_d_close_fd(&tasks[i]);
    z->live = true;
    z->ctl = sv[0];
    z->rep = rep[0];
    if (pid < 0) {
        lcl_d_log(SBX_LOG_WARNING, "clone of a prepared sandbox: %s", strerror(e));
        z->exited = true;
        z->pidfd = -1;
        lcl_cg_destroy(p, &z->cg);
        lcl_d_close_fd(&z->ctl);
        lcl_d_close_fd(&z->rep);
        lcl_id_give(&z->id);
        z->live = false;
        w->fails++;
        return false;
    }
    z->pid = (pid_t)pid;
    z->pidfd = pidfd;
    char go = 'g';
    if (lcl_id_maps(&z->id, z->pid) < 0 || send(z->ctl, &go, 1, MSG_NOSIGNAL) != 1) {
        lcl_d_log(SBX_LOG_WARNING, "starting a prepared sandbox: %s", strerror(errno));
        lcl_d_spare_end(d, z);
        w->fails++;
        return false;
    }
    fcntl(z->rep, F_SETFL, O_NONBLOCK);
    return true;
}

/* Keeps K prepared for each limits asked for lately. */
void lcl_d_fill(struct daemon *d)
{
    if (d->retiring || d->stop)
        return;
    for (int wi = 0; wi < WMAX; wi++) {
        struct want *w = &d->wants[wi];
        if (!w->used || w->fails >= MAX_FAILS)
            continue;
        int have = 0;
        for (int i = 0; i < SPARE_MAX; i++)
            have += d->z[i].live && !d->z[i].serving && d->z[i].want == wi;
        while (have < d->per_key && lcl_d_spare_start(d, wi))
            have++;
    }
}

int lcl_d_want_for(struct daemon *d, const struct key *k)
{
    int lru = 0;
    for (int i = 0; i < WMAX; i++) {
        if (d->wants[i].used && lcl_d_key_eq(&d->wants[i].k, k))
            return i;
        if (!d->wants[i].used || (d->wants[lru].used && d->wants[i].last < d->wants[lru].last))
            lru = i;
    }
    /* Others' prepared sandboxes go. */
    for (int i = 0; i < SPARE_MAX; i++)
        if (d->z[i].live && !d->z[i].serving && d->z[i].want == lru)
            lcl_d_spare_end(d, &d->z[i]);
    d->wants[lru] = (struct want){true, *k, lcl_now_mono(), 0};
    return lru;
}

