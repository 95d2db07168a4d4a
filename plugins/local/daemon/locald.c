/* plugins/local/daemon/locald.c - polysandbox-locald, prepared sandboxes per user
 *
 * Started by the local provider on first use (launch/daemon.c), one per
 * user and state directory: the lock file in the run directory decides
 * which of concurrent starts stays.  It makes the local provider as the
 * CLI would (the same sources, the settings it was started with), keeps
 * K sandboxes prepared for each of the last limits asked for
 * (daemon/spare.c), and answers on <run dir>/locald.sock, to processes
 * of its own uid only:
 *
 *   request (argv, env, cwd, limits; stdio, report and status pipes and
 *   the work directory's mount as descriptors)
 *     -> the key differs (another build or settings): MISMATCH, and we
 *        retire (let go of the socket and lock; end with our last exec)
 *     -> no prepared sandbox of those limits: FALLBACK (the client runs
 *        it in-process; we prepare some for next time)
 *     -> else the request goes to that sandbox, whose pidfd and cgroup
 *        slot go back: OK.  The client supervises; when it says done, or
 *        goes away (then we kill the exec first), we reap, give the slot
 *        back to the pool and prepare another.
 *
 * A prepared sandbox serves one exec only.  After the idle time without
 * requests (60 s, --idle) or on SIGTERM it kills its prepared sandboxes
 * and exits.  Single-threaded: its clones may allocate.
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

/* ---- events ---- */

void lcl_d_on_ready(struct daemon *d, struct spare *z)
{
    char b;
    ssize_t n = recv(z->ctl, &b, 1, MSG_DONTWAIT);
    if (n == 1 && b == LCL_LD_READY) {
        z->ready = true;
        d->wants[z->want].fails = 0;
        /* Its user namespace, for the request's work directory: opened
         * now, off the request's path. */
        if (d->p->ids_per_exec)
            lcl_id_userns(&z->id, z->pid);
    } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        lcl_d_close_fd(&z->ctl); /* its end is gone: the pidfd tells the rest */
    }
}

/* The client is done (or gone): kill what is left; the end is reaped
 * when its pidfd says so, so the namespaces' teardown holds up no
 * request. */
static void spare_finish(struct daemon *d, struct spare *z)
{
    lcl_d_close_fd(&z->client);
    if (z->exited) {
        lcl_d_spare_end(d, z);
        return;
    }
    lcl_cg_kill(d->p, &z->cg);
    syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
    z->finishing = true;
}

void lcl_d_on_exit(struct daemon *d, struct spare *z)
{
    z->exited = true;
    if (z->finishing) {
        lcl_d_spare_end(d, z);
        return;
    }
    if (z->serving) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        while (waitid((idtype_t)P_PIDFD, (id_t)z->pidfd, &si, WEXITED | __WALL) < 0 &&
               errno == EINTR)
            ;
        return; /* the slot waits for the client's "done" */
    }
    struct lcl_msg m;
    if (z->rep >= 0 && read(z->rep, &m, sizeof m) == (ssize_t)sizeof m) {
        m.what[sizeof m.what - 1] = '\0';
        lcl_d_log(SBX_LOG_WARNING, "preparing a sandbox failed: %s: %s", m.what,
              strerror(m.err));
    }
    if (!z->ready)
        d->wants[z->want].fails++;
    lcl_d_spare_end(d, z);
}

/* Preparing a sandbox (a clone into new namespaces, a root: a few ms of
 * CPU) competes with an exec that is starting for the same cores: while
 * one is served and each limits asked for has another ready, the refill
 * waits for its "done", at most REFILL_HOLD_NS after the request.
 * Returns when to fill at the latest, or 0: now. */
#define REFILL_HOLD_NS 100000000u
static uint64_t refill_hold(const struct daemon *d, uint64_t now)
{
    if (now - d->last_req >= REFILL_HOLD_NS)
        return 0;
    bool starting = false;
    for (int i = 0; i < SPARE_MAX; i++)
        starting = starting || (d->z[i].live && d->z[i].serving && d->z[i].client >= 0);
    if (!starting)
        return 0;
    for (int wi = 0; wi < WMAX; wi++) {
        const struct want *w = &d->wants[wi];
        if (!w->used || w->fails >= MAX_FAILS)
            continue;
        int ready = 0;
        for (int i = 0; i < SPARE_MAX; i++)
            ready += d->z[i].live && d->z[i].ready && !d->z[i].serving && d->z[i].want == wi;
        if (!ready)
            return 0;
    }
    return d->last_req + REFILL_HOLD_NS;
}

static bool state_gone(const struct daemon *d)
{
    struct stat st;
    return stat(lcl_d_conf.state_dir, &st) < 0 ? errno == ENOENT || errno == ENOTDIR
                                       : st.st_dev != d->state_dev || st.st_ino != d->state_ino;
}

static void loop(struct daemon *d)
{
    while (!d->stop) {
        uint64_t hold = refill_hold(d, lcl_now_mono());
        if (!hold)
            lcl_d_fill(d);
        struct pollfd pf[2 + 2 * SPARE_MAX];
        struct spare *who[2 + 2 * SPARE_MAX];
        int what[2 + 2 * SPARE_MAX];
        nfds_t n = 0;
        int serving = 0, live = 0;
        pf[n] = (struct pollfd){d->sig_fd, POLLIN, 0};
        who[n] = NULL;
        what[n++] = 0;
        if (d->listen_fd >= 0) {
            pf[n] = (struct pollfd){d->listen_fd, POLLIN, 0};
            who[n] = NULL;
            what[n++] = 1;
        }
        for (int i = 0; i < SPARE_MAX; i++) {
            struct spare *z = &d->z[i];
            if (!z->live)
                continue;
            live++;
            serving += z->serving;
            if (!z->exited) {
                pf[n] = (struct pollfd){z->pidfd, POLLIN, 0};
                who[n] = z;
                what[n++] = 2;
            }
            if (z->serving && z->client >= 0) {
                pf[n] = (struct pollfd){z->client, POLLIN, 0};
                who[n] = z;
                what[n++] = 3;
            } else if (!z->ready && z->ctl >= 0) {
                pf[n] = (struct pollfd){z->ctl, POLLIN, 0};
                who[n] = z;
                what[n++] = 4;
            }
        }
        uint64_t now = lcl_now_mono();
        if (!serving && (d->retiring || now - d->last_req >= d->idle_ns))
            break;
        uint64_t left = d->last_req + d->idle_ns > now ? d->last_req + d->idle_ns - now : 0;
        int ms = left / 1000000 + 1 > 1000 ? 1000 : (int)(left / 1000000 + 1);
        int timeout = serving || d->retiring ? 1000 : ms;
        if (hold) /* wake to refill at the latest then */
            timeout = hold > now ? (int)((hold - now) / 1000000 + 1) : 0;
        int pr = poll(pf, n, timeout);
        if (pr < 0 && errno != EINTR)
            break;
        /* Our state directory removed (a test's, say): nobody can ask
         * for us any more; we go with our last exec, not an idle minute
         * later.  Looked at only when nothing happened. */
        if (pr == 0 && !d->retiring && state_gone(d))
            lcl_d_retire(d);
        for (nfds_t i = 0; pr > 0 && i < n; i++) {
            if (!pf[i].revents)
                continue;
            struct spare *z = who[i];
            if (z && !z->live)
                continue; /* ended by an earlier event of this round */
            switch (what[i]) {
            case 0: {
                struct signalfd_siginfo si;
                ssize_t r = read(d->sig_fd, &si, sizeof si);
                (void)r;
                d->stop = true;
                break;
            }
            case 1: {
                int c = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (c >= 0)
                    lcl_d_serve(d, c);
                break;
            }
            case 2:
                lcl_d_on_exit(d, z);
                break;
            case 3: /* "done", or the client went away: either way it ends */
                spare_finish(d, z);
                break;
            case 4:
                lcl_d_on_ready(d, z);
                break;
            }
        }
    }
    for (int i = 0; i < SPARE_MAX; i++)
        lcl_d_spare_end(d, &d->z[i]);
}

/* ---- start ---- */

static int usage(FILE *to, int code)
{
    fprintf(to, "usage: polysandbox-locald --state-dir DIR --run-dir DIR --key KEY "
            "[--idle SECONDS] [--pool K] [--strict] [--warm MEM,PIDS,DISK] [--set KEY=VALUE]... "
            "[--hide PATH]... "
            "[--foreground] [--verbose]\n"
            "Started by the local provider (daemon = auto); not meant to be run by hand.\n"
            "See polysandbox-locald(8).\n");
    return code;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *v = x;
    return true;
}

static int listen_on(struct daemon *d)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s/" LCL_LD_SOCK, d->run_dir) >=
        (int)sizeof sa.sun_path)
        return -ENAMETOOLONG;
    snprintf(d->sock_path, sizeof d->sock_path, "%s", sa.sun_path);
    /* We hold the lock: a socket there is a dead daemon's. */
    if (unlink(sa.sun_path) < 0 && errno != ENOENT)
        return -errno;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -errno;
    struct stat st;
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || chmod(sa.sun_path, 0600) < 0 ||
        listen(s, 64) < 0 || stat(sa.sun_path, &st) < 0) {
        int e = errno;
        close(s);
        return -e;
    }
    d->sock_dev = st.st_dev;
    d->sock_ino = st.st_ino;
    d->listen_fd = s;
    return 0;
}

static struct daemon d;

int main(int argc, char **argv)
{
    const char *run_dir = NULL, *key = NULL;
    uint64_t idle_s = 60, k = 2;
    /* Set-id: whoever runs us would choose the state directory and the
     * settings of a daemon with our privileges. */
    if (getauxval(AT_SECURE)) {
        fputs("polysandbox-locald: refusing to run set-user-ID, set-group-ID or with file "
              "capabilities\n", stderr);
        return 1;
    }
    static struct key warm;
    bool fg = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--foreground")) {
            fg = true;
            continue;
        }
        if (!strcmp(a, "--strict")) {
            d.strict = true;
            continue;
        }
        if (!strcmp(a, "--verbose")) {
            lcl_d_conf.verbose = true;
            continue;
        }
        if (!strcmp(a, "--help"))
            return usage(stdout, 0);
        if (!v)
            return usage(stderr, 2);
        i++;
        if (!strcmp(a, "--state-dir"))
            lcl_d_conf.state_dir = v;
        else if (!strcmp(a, "--run-dir"))
            run_dir = v;
        else if (!strcmp(a, "--key"))
            key = v;
        else if (!strcmp(a, "--idle")) {
            if (!parse_u64(v, &idle_s) || idle_s == 0 || idle_s > 86400) {
                fprintf(stderr, "polysandbox-locald: --idle '%s': seconds from 1 to 86400\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--pool")) {
            if (!parse_u64(v, &k) || k == 0 || k > 8) {
                fprintf(stderr, "polysandbox-locald: --pool '%s': a number from 1 to 8\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--warm")) {
            unsigned long long m, pi, di;
            char extra;
            if (sscanf(v, "%llu,%llu,%llu%c", &m, &pi, &di, &extra) != 3) {
                fprintf(stderr, "polysandbox-locald: --warm '%s': MEM,PIDS,DISK\n", v);
                return 2;
            }
            warm.mem = m;
            warm.pids = pi;
            warm.disk = di;
        } else if (!strcmp(a, "--hide")) {
            if (lcl_d_conf.n_hide >= LCL_MAX_HIDDEN || v[0] != '/') {
                fprintf(stderr, "polysandbox-locald: --hide '%s': an absolute path (%d at most)\n",
                        v, LCL_MAX_HIDDEN);
                return 2;
            }
            lcl_d_conf.hide[lcl_d_conf.n_hide++] = v;
        } else if (!strcmp(a, "--set")) {
            if (lcl_d_conf.n_sets >= 16 || !strchr(v, '=')) {
                fprintf(stderr, "polysandbox-locald: --set '%s': KEY=VALUE (16 at most)\n", v);
                return 2;
            }
            lcl_d_conf.sets[lcl_d_conf.n_sets++] = v;
        } else {
            return usage(stderr, 2);
        }
    }
    if (!lcl_d_conf.state_dir || !run_dir || !key || strlen(key) >= LCL_LD_KEY_MAX)
        return usage(stderr, 2);

    /* Nothing of the process that started us: descriptors, signals. */
    if (syscall(SYS_close_range, 3u, ~0u, 0) < 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || (!fg && dup2(null, 2) < 0))
        return 1;
    close(null);
    if (!fg) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid > 0)
            _exit(0); /* the provider waits for this one: no zombie of its own */
        setsid();
    }
    if (chdir("/") < 0)
        return 1;
    umask(077);
    signal(SIGPIPE, SIG_IGN);

    d.run_dir = run_dir;
    d.lock_fd = d.listen_fd = d.sig_fd = -1;
    snprintf(d.key, sizeof d.key, "%s", key);
    d.per_key = (int)k;
    d.idle_ns = idle_s * 1000000000u;
    for (int i = 0; i < SPARE_MAX; i++)
        d.z[i].pidfd = d.z[i].ctl = d.z[i].rep = d.z[i].client = d.z[i].id.fd =
            d.z[i].id.userns = -1;

    /* The run directory: ours and private, as the provider checks it. */
    struct stat st;
    if ((mkdir(run_dir, 0700) < 0 && errno != EEXIST) || lstat(run_dir, &st) < 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        lcl_d_log(SBX_LOG_ERROR, "%s is not a private directory of ours", run_dir);
        return 1;
    }
    snprintf(d.lock_path, sizeof d.lock_path, "%s/" LCL_LD_LOCK, run_dir);
    const char *lock = d.lock_path;
    for (int tries = 0;; tries++) {
        d.lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (d.lock_fd < 0)
            return 1;
        if (flock(d.lock_fd, LOCK_EX | LOCK_NB) < 0)
            return 0; /* another one runs, or is starting */
        /* A daemon ending removes the file while it holds the lock: ours
         * counts only if it is still the file of that name. */
        struct stat a, b;
        if (fstat(d.lock_fd, &a) == 0 && stat(lock, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            break;
        lcl_d_close_fd(&d.lock_fd);
        if (tries > 8)
            return 1;
    }
    /* Our pid, for people and tests (the lock is what counts). */
    char pid_text[24];
    int pl = snprintf(pid_text, sizeof pid_text, "%ld\n", (long)getpid());
    if (ftruncate(d.lock_fd, 0) < 0 || pwrite(d.lock_fd, pid_text, (size_t)pl, 0) != pl)
        lcl_d_log(SBX_LOG_WARNING, "writing our pid to %s: %s", lock, strerror(errno));

    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    d.sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);

    void *prov = NULL;
    const sbx_host_v1 *host = NULL;
    sbx_host_handle *hh = NULL;
    if (lcl_d_host_open(&host, &hh) < 0)
        return 1;
    int ret = sandbox_provider_v1.ops->init(host, hh, &prov);
    if (ret || !prov || d.sig_fd < 0) {
        lcl_d_log(SBX_LOG_ERROR, "the local provider did not start (%d): %s", ret,
                  lcl_d_host_error());
        lcl_d_host_close();
        return 1;
    }
    d.p = prov;
    d.p->cg_v2_slots = true; /* v2: our cgroups are one-shot slots (cgroup/slots.c) */
    if (!d.p->run_dir || strcmp(d.p->run_dir, run_dir) || !d.p->root ||
        lcl_seccomp_ensure(d.p)) {
        lcl_d_log(SBX_LOG_ERROR, "not usable here (run directory %s, root %d)",
              d.p->run_dir ? d.p->run_dir : "none", d.p->root);
        sandbox_provider_v1.ops->fini(prov);
        lcl_d_host_close();
        return 1;
    }
    if (stat("/proc/self/ns/mnt", &st) == 0)
        d.mnt_ns = st.st_ino;
    if (stat("/proc/self/ns/net", &st) == 0)
        d.net_ns = st.st_ino;
    if (stat(lcl_d_conf.state_dir, &st) == 0) {
        d.state_dev = st.st_dev;
        d.state_ino = st.st_ino;
    }
    int e = listen_on(&d);
    if (e) {
        lcl_d_log(SBX_LOG_ERROR, "listening on %s/" LCL_LD_SOCK ": %s", run_dir, strerror(-e));
        sandbox_provider_v1.ops->fini(prov);
        lcl_d_host_close();
        return 1;
    }
    d.last_req = lcl_now_mono();
    if (warm.disk)
        lcl_d_want_for(&d, &warm);
    loop(&d);
    lcl_d_retire(&d);
    sandbox_provider_v1.ops->fini(prov);
    lcl_d_host_close();
    rmdir(run_dir); /* if no sandbox lives there (as the provider does) */
    return 0;
}
