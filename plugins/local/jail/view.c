/* plugins/local/jail/view.c - the exec's part of an init's view
 *
 * Filled the same way by every launcher (launch/exec.c for an
 * in-process clone or a zygote's fork, daemon/spare.c for a spare), so
 * the init sees one shape whoever started it.
 */
#include "config.h"

#include "jail.h"

void lcl_child_exec_view(struct lcl_child *c, const struct lcl_sb *sb, char *const *argv,
                         char **envp, char **path_dirs, const char *cwd,
                         const int fds[LCL_CHILD_NFD])
{
    c->sb = sb;
    c->argv = argv;
    c->envp = envp;
    c->path_dirs = path_dirs;
    c->cwd = cwd;
    c->fd_in = fds[LCL_CHILD_FD_IN];
    c->fd_out = fds[LCL_CHILD_FD_OUT];
    c->fd_err = fds[LCL_CHILD_FD_ERR];
    c->fd_report = fds[LCL_CHILD_FD_REPORT];
    c->fd_status = fds[LCL_CHILD_FD_STATUS];
}
