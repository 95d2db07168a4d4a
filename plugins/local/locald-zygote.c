/* plugins/local/locald-zygote.c - a prepared sandbox of polysandbox-locald
 *
 * The daemon clones it as the in-process path clones an exec's init
 * (local-child.c: same namespaces, cgroup slot joined first, same root),
 * but before anyone asked: it builds the root without /work, pivots,
 * detaches the old root, says it is ready and waits.  The one request it
 * ever gets brings the exec's argv, environment, working directory,
 * limits, the client's stdio, report and status pipes, and the sandbox's
 * work directory as a detached mount, attached on /work; from there it
 * is the in-process init exactly (lcl_child_start).  It is a fork of the
 * single-threaded daemon: allocation is allowed here.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "local-int.h"
#include "locald-proto.h"
#include "locald.h"

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

static void report_to(int fd, int err, const char *what)
{
    struct lcl_msg m;
    memset(&m, 0, sizeof m);
    m.kind = LCL_MSG_SETUP;
    m.err = err;
    strncpy(m.what, what, sizeof m.what - 1);
    ssize_t n = write(fd, &m, sizeof m);
    (void)n;
}

/* Pointers to @n NUL-ended strings from *@pos on; NULL if they overrun. */
static char **take(char **pos, const char *end, uint32_t n)
{
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        char *nul = memchr(*pos, '\0', (size_t)(end - *pos));
        if (!nul) {
            free(v);
            return NULL;
        }
        v[i] = *pos;
        *pos = nul + 1;
    }
    return v;
}

_Noreturn void lcl_zygote_main(struct lcl_child *c)
{
    int ctl = c->fd_sync;
    lcl_child_setup(c);
    /* cwd is the new root, with the old one stacked on it. */
    if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
        report_to(c->fd_report, errno, "detaching the old root");
        _exit(125);
    }
    char r = LCL_LD_READY;
    if (write(ctl, &r, 1) != 1)
        _exit(0);

    /* The request (EOF: the daemon retired us). */
    struct lcl_ld_req q;
    int fds[LCL_LD_NFDS];
    if (lcl_ld_recv(ctl, &q, sizeof q, fds, LCL_LD_NFDS) < 0)
        _exit(0);
    for (int i = 0; i < LCL_LD_NFDS; i++) {
        if (fds[i] < 0)
            _exit(125);
        /* 0-2 are free here (as in an in-process init): what the init or
         * the sanitizers write there must not reach the client's pipes. */
        if (fds[i] < 3) {
            int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (fd < 0)
                _exit(125);
            close(fds[i]);
            fds[i] = fd;
        }
    }
    struct lcl_child x = *c;
    x.fd_in = fds[LCL_LD_FD_IN];
    x.fd_out = fds[LCL_LD_FD_OUT];
    x.fd_err = fds[LCL_LD_FD_ERR];
    x.fd_report = fds[LCL_LD_FD_REPORT];
    x.fd_status = fds[LCL_LD_FD_STATUS];
    close(c->fd_report); /* the daemon's: from now on the client hears us */
    char *blob = q.blob_len <= LCL_LD_BLOB_MAX ? malloc((size_t)q.blob_len + 1) : NULL;
    if (!blob || lcl_ld_recv(ctl, blob, q.blob_len, NULL, 0) < 0) {
        report_to(x.fd_report, blob ? EPROTO : ENOMEM, "reading the exec request");
        _exit(125);
    }
    blob[q.blob_len] = '\0';
    char *pos = blob, *end = blob + q.blob_len;
    char **argv = take(&pos, end, q.n_argv), **envp = take(&pos, end, q.n_env),
         **dirs = take(&pos, end, q.n_path);
    if (!argv || !envp || !dirs || pos >= end || !argv[0]) {
        report_to(x.fd_report, EPROTO, "reading the exec request");
        _exit(125);
    }
    /* The limits the payload sets itself (rlimits); the cgroup's were
     * written when the slot was made for these same limits. */
    struct lcl_sb sb = *c->sb;
    sb.limits = q.limits;
    memcpy(sb.id, q.id, sizeof sb.id);
    sb.id[sizeof sb.id - 1] = '\0';
    x.sb = &sb;
    x.argv = argv;
    x.envp = envp;
    x.path_dirs = dirs;
    x.cwd = pos;
    x.root_detached = true;
    x.empty_before_status = true;
    x.keep_sync = false;
    /* What the payload inherits in-process (the daemon checked the rest). */
    umask((mode_t)(q.umask & 0777));
    if (syscall(SYS_move_mount, fds[LCL_LD_FD_WORK], "", AT_FDCWD, "/work",
                MOVE_MOUNT_F_EMPTY_PATH) < 0) {
        report_to(x.fd_report, errno, "attaching the work directory on /work");
        _exit(125);
    }
    close(fds[LCL_LD_FD_WORK]);
    close(ctl);
    lcl_child_start(&x);
}
