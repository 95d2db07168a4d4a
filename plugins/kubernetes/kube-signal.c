/* plugins/kubernetes/kube-signal.c - signals for a running command
 *
 * The exec protocol has no signal channel.  So the exec wrapper
 * (kube-exec.c) runs the command in a process group of its own, records
 * its id in /tmp/.polysandbox-<token>.g (the token is random per exec),
 * and then says on stdout that the command runs (the record g:0).  Each
 * signal signal_fd carries is then a second exec of the short script
 * below, `kill -s SIG -- -PGID` with the id from that file; no file, and
 * the command has ended: nothing is sent.  An image without perl has no
 * process group of the command's own: the file says "m", and the signal
 * goes to every process that carries the exec's marker (as the sweep
 * finds them).
 *
 * A thread per exec reads signal_fd, once the command runs (what came
 * before waits in the pipe: a signal written before the command started
 * reaches it when it does), and runs those execs one after the other, in
 * order, while the exec streams.  Once the exec ended it is stopped, and
 * a kill exec under way is cut short: a signal after the end goes
 * nowhere.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "kube-int.h"

/* $1 the exec's token, $2 the signal's name. */
static const char kill_body[] =
    KUBE_SWEEP_FN
    "f=/tmp/.polysandbox-$1.g\n"
    "[ -r \"$f\" ] && read -r g <\"$f\" || exit 0\n"
    "case $g in m) sweep \"$1\" \"$2\";; ''|*[!0-9]*) ;;"
    " *) kill -s \"$2\" -- \"-$g\" 2>/dev/null;; esac\n"
    "exit 0\n";

/* kill's name of a deliverable signal (the pod may number them otherwise). */
static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGHUP: return "HUP";
    case SIGINT: return "INT";
    case SIGQUIT: return "QUIT";
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    case SIGTERM: return "TERM";
    case SIGALRM: return "ALRM";
    case SIGWINCH: return "WINCH";
    default: return NULL;
    }
}

static bool stopped(const struct kube_signals *s)
{
    return kube_ws_cancelled(s->stop[0]);
}

static void deliver(struct kube_signals *s, int sig)
{
    const char *name = signal_name(sig);
    if (!name || !sbx_signal_deliverable(sig))
        return;     /* not a signal to deliver: dropped, as provider.h says */
    const char *args[] = {s->token, name, NULL};
    if (kube_run_quiet(s->p, s->sb, kill_body, args, s->deadline_ns, s->stop[0]) && !stopped(s))
        s->p->host->log(s->p->h, SBX_LOG_WARNING, "sandbox %s: could not deliver SIG%s to "
                        "the running command", s->sb->id, name);
}

/* Until @fd is readable: false once the exec ended (or poll failed). */
static bool wait_for(struct kube_signals *s, int fd)
{
    for (;;) {
        struct pollfd pf[2] = {{.fd = s->stop[0], .events = POLLIN},
                               {.fd = fd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (pf[0].revents)
            return false;
        if (pf[1].revents)
            return true;
    }
}

static void *run(void *arg)
{
    struct kube_signals *s = arg;
    if (!wait_for(s, s->go[0]))
        return NULL;
    while (wait_for(s, s->fd)) {
        unsigned char b[64];
        ssize_t n = read(s->fd, b, sizeof b);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;      /* end of file: no more signals */
        for (ssize_t i = 0; i < n && !stopped(s); i++)
            deliver(s, b[i]);
    }
    return NULL;
}

static void close_pair(int *fds)
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    fds[0] = fds[1] = -1;
}

/* One byte into @fd, an empty pipe's write end (only EINTR can get in
 * the way). */
static void poke(int fd)
{
    while (write(fd, "x", 1) < 0 && errno == EINTR)
        ;
}

int kube_signals_start(struct kube_signals *s, struct kube_prov *p, struct kube_sb *sb,
                       const char *token, int fd, uint64_t deadline_ns)
{
    *s = (struct kube_signals){.p = p, .sb = sb, .token = token, .fd = fd,
                               .deadline_ns = deadline_ns, .stop = {-1, -1}, .go = {-1, -1}};
    if (fd < 0)
        return SBX_OK;
    if (pipe2(s->stop, O_CLOEXEC) != 0 || pipe2(s->go, O_CLOEXEC) != 0) {
        int e = errno;
        close_pair(s->stop);
        close_pair(s->go);
        return p->host->set_error(p->h, SBX_E_IO, "exec: no pipe for its signals: %s",
                                  strerror(e));
    }
    int e = pthread_create(&s->thread, NULL, run, s);
    if (e) {
        close_pair(s->stop);
        close_pair(s->go);
        return p->host->set_error(p->h, SBX_E_NOMEM, "exec: no thread for its signals: %s",
                                  strerror(e));
    }
    s->running = true;
    return SBX_OK;
}

void kube_signals_go(struct kube_signals *s)
{
    if (!s->running || s->went)
        return;
    s->went = true;
    poke(s->go[1]);
}

void kube_signals_stop(struct kube_signals *s)
{
    if (!s->running)
        return;
    poke(s->stop[1]);
    pthread_join(s->thread, NULL);
    close_pair(s->stop);
    close_pair(s->go);
    s->running = false;
}
