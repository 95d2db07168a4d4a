/* plugins/local/launch/request.c - an exec request's common part
 *
 * What every launcher that hands an exec to an init it did not clone
 * (daemon.c: a spare; zygote.c: a zygote's child) puts in the one
 * request (wire/exec-req.h): the command, environment, working
 * directory, limits and the init's pipes, from the init's view.
 */
#include "config.h"

#include <string.h>

#include "launch.h"

void lcl_launch_xreq(const struct lcl_child *c, int work_fd, struct lcl_xreq *r)
{
    memset(r, 0, sizeof *r);
    r->limits = c->sb->limits;
    r->argv = (char **)c->argv;
    r->envp = c->envp;
    r->cwd = c->cwd;
    r->fd[LCL_XR_FD_IN] = c->fd_in;
    r->fd[LCL_XR_FD_OUT] = c->fd_out;
    r->fd[LCL_XR_FD_ERR] = c->fd_err;
    r->fd[LCL_XR_FD_REPORT] = c->fd_report;
    r->fd[LCL_XR_FD_STATUS] = c->fd_status;
    r->fd[LCL_XR_FD_WORK] = work_fd;
    r->fd_sync = -1;
    for (int i = 0; i < LCL_XR_CG_MAX; i++)
        r->fd_tasks[i] = r->fd_leave[i] = -1;
}
