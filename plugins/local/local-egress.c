/* plugins/local/local-egress.c - a sandbox's outbound network
 *
 * A template with `network = egress` gets, in each exec's own network
 * namespace, a tap device of a user-mode stack: slirp4netns, attached to
 * the namespace of the exec's init before the command runs (tap0,
 * 10.0.2.100/24, default route 10.0.2.2, DNS 10.0.2.3) and killed with
 * the exec.  Nothing of the host's network is shared: connections leave
 * through slirp4netns's own sockets, as the host user.  The host's
 * loopback (10.0.2.2 inside) is cut off unless the provider's
 * egress_loopback setting says otherwise: the host's private services
 * listen there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local-int.h"

/* Looked for in the system's directories only: never the caller's PATH. */
static const char *const slirp_paths[] = {
    "/usr/bin/slirp4netns", "/usr/local/bin/slirp4netns", "/bin/slirp4netns", NULL,
};

/* How long the stack may take to come up before the exec is refused. */
#define READY_MS 10000

const char *lcl_egress_binary(void)
{
    for (size_t i = 0; slirp_paths[i]; i++)
        if (access(slirp_paths[i], X_OK) == 0)
            return slirp_paths[i];
    return NULL;
}

int lcl_egress_check(struct lcl_prov *p)
{
    if (lcl_egress_binary())
        return 0;
    return p->host->set_error(p->h, SBX_E_NOTSUP,
                              "provider local: network = egress needs slirp4netns, which is "
                              "not installed (looked for /usr/bin/slirp4netns, "
                              "/usr/local/bin/slirp4netns, /bin/slirp4netns; Debian: apt-get "
                              "install slirp4netns): refused rather than run without network");
}

/* In the fork: the ready and exit pipes as 3 and 4, nothing else open
 * but /dev/null.  System calls only (a fork of a threaded process). */
static void __attribute__((noreturn))
child(const char *bin, char *const argv[], int ready_w, int exit_r)
{
    lcl_signals_default();
    /* Dies with the thread that started it, should we die first. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int hi_ready = fcntl(ready_w, F_DUPFD, 10), hi_exit = fcntl(exit_r, F_DUPFD, 10);
    int null = open("/dev/null", O_RDWR);
    if (hi_ready < 0 || hi_exit < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
        dup2(null, 2) < 0 || dup2(hi_ready, 3) < 0 || dup2(hi_exit, 4) < 0)
        _exit(127);
    if (syscall(SYS_close_range, 5u, ~0u, 0u) < 0)
        for (int fd = 5; fd < 1024; fd++)
            close(fd);
    static char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(bin, argv, envp);
    _exit(127);
}

int lcl_egress_start(struct lcl_prov *p, pid_t init, struct lcl_egress *e)
{
    const char *bin = lcl_egress_binary();
    int ready[2] = {-1, -1}, ex[2] = {-1, -1};
    char pid_s[24], userns[64];
    int ret = 0;

    e->pid = -1;
    e->exit_w = -1;
    if (!bin)
        return lcl_egress_check(p);
    if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0) {
        ret = p->host->set_error(p->h, SBX_E_IO, "pipe: %s", strerror(errno));
        goto out;
    }
    snprintf(pid_s, sizeof pid_s, "%ld", (long)init);
    snprintf(userns, sizeof userns, "--userns-path=/proc/%ld/ns/user", (long)init);
    /* Root may make the tap in the init's namespace from ours; anyone
     * else does it as the init's namespace's root. */
    const char *argv[16];
    size_t n = 0;
    argv[n++] = "slirp4netns";
    argv[n++] = "--configure";
    argv[n++] = "--mtu=65520";
    argv[n++] = "--ready-fd=3";
    argv[n++] = "--exit-fd=4";
    /* It parses the sandbox's packets: in an empty root of its own, with
     * few capabilities and a system-call filter. */
    argv[n++] = "--enable-sandbox";
    argv[n++] = "--enable-seccomp";
    if (!p->egress_loopback)
        argv[n++] = "--disable-host-loopback";
    if (!p->root)
        argv[n++] = userns;
    argv[n++] = pid_s;
    argv[n++] = "tap0";
    argv[n] = NULL;

    /* A fork that sends no SIGCHLD: the embedding process's handlers and
     * reapers never see it (as the inits we clone). */
    pid_t pid = (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
    if (pid < 0) {
        ret = p->host->set_error(p->h, SBX_E_IO, "fork for slirp4netns: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        child(bin, (char *const *)argv, ready[1], ex[0]);
    e->pid = pid;
    close(ready[1]);
    ready[1] = -1;
    e->exit_w = ex[1];
    ex[1] = -1;

    /* It writes "1" once tap0 is up and configured; EOF: it died. */
    struct pollfd pf = {ready[0], POLLIN, 0};
    char c = 0;
    int pr;
    while ((pr = poll(&pf, 1, READY_MS)) < 0 && errno == EINTR)
        ;
    ssize_t got = pr > 0 ? read(ready[0], &c, 1) : 0;
    if (got != 1 || c != '1') {
        int st = 0;
        kill(pid, SIGKILL);
        while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
            ;
        e->pid = -1;
        ret = p->host->set_error(p->h, SBX_E_BACKEND,
                                 "slirp4netns (%s) did not bring up the sandbox's network: %s",
                                 bin, pr == 0 ? "not ready in 10s"
                                 : WIFEXITED(st) ? "it exited early (run it by hand to see why)"
                                 : "it was killed");
    }
out:
    for (int i = 0; i < 2; i++) {
        if (ready[i] >= 0)
            close(ready[i]);
        if (ex[i] >= 0)
            close(ex[i]);
    }
    if (ret)
        lcl_egress_stop(e);
    return ret;
}

void lcl_egress_stop(struct lcl_egress *e)
{
    if (e->exit_w >= 0) {
        close(e->exit_w);
        e->exit_w = -1;
    }
    if (e->pid > 0) {
        /* Closing its exit fd asks it to go; the namespace is gone anyway. */
        kill(e->pid, SIGKILL);
        while (waitpid(e->pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
        e->pid = -1;
    }
}
