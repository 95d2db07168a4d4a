/* plugins/local/launch/launchers.c - which launcher starts an exec's init
 *
 * In order of preference: a zygote's exec is the zygote's; else a spare
 * of the daemon when it takes the exec (egress is attached to an init we
 * clone here, never the daemon's); else our own init, sharing our memory
 * (vfork) unless switched off, or a copy of it (clone).  launch.h says
 * how to add one.
 */
#include "config.h"

#include <stddef.h>

#include "launch.h"

static const struct lcl_launcher *const order[] = {
    &lcl_launch_zygote,
    &lcl_launch_daemon,
    &lcl_launch_vfork,
    &lcl_launch_clone,
};

int lcl_launch_prepare(struct lcl_launch *l, const struct lcl_launcher **used)
{
    int ret = LCL_LAUNCH_NO;
    for (size_t i = 0; ret == LCL_LAUNCH_NO && i < sizeof order / sizeof *order; i++) {
        if (!order[i]->fits(l))
            continue;
        ret = order[i]->prepare(l);
        *used = order[i];
    }
    return ret;
}

int lcl_launch_own_cgroup(struct lcl_launch *l)
{
    /* The filter only a payload of ours loads (the daemon's payloads
     * have theirs): not read on the daemon's path. */
    int ret = lcl_seccomp_ensure(l->p);
    if (!ret)
        ret = lcl_cg_create(l->p, l->sb, l->cg);
    if (!ret)
        ret = lcl_cg_open_tasks(l->p, l->cg, l->c->fd_tasks);
    return ret;
}
