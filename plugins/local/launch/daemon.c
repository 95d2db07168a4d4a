/* plugins/local/launch/daemon.c - handing an exec to polysandbox-locald
 *
 * With `daemon = auto` (providers.d/local.ini, or POLYSANDBOX_LOCAL_DAEMON),
 * an exec the daemon can serve (root, cgroup v1 pool or cgroup v2, a
 * tmpfs work directory, the shared skeleton or an image root, network
 * none or host) goes to a sandbox it
 * prepared beforehand: this process still makes the pipes, supervises
 * (output, stdin, deadline, CPU, kills) and decides the outcome from the
 * same report and status pipes and cgroup counters; only the clone and
 * the building of the root were done before we asked.  The work directory
 * goes along as a detached mount (open_tree).  Whenever the daemon cannot
 * take the exec (not running: we start it for next time; busy; another
 * build or settings) the exec runs in this process as before.  See
 * README.md, "The daemon".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "../wire/exec-req.h"
#include "../wire/locald-proto.h"

#ifndef LCL_LOCALD_PATH
#define LCL_LOCALD_PATH "/usr/local/libexec/polysandbox/polysandbox-locald"
#endif

/* The settings the daemon's provider is made with (all but `daemon`). */
static const char *const passed_keys[] = {
    "cgroup_root", "uid", "gid", "ids", "network", "ro_binds", "cache_dir",
    "work_inodes", NULL,
};

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return lcl_fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* The core's private paths (ABI 1.6), which the daemon's provider hides
 * too (--hide): NULL-terminated, or NULL. */
static const char *const *host_private(const struct lcl_prov *p)
{
    const sbx_host_v1 *h = p->host;
    return h->struct_size >= offsetof(sbx_host_v1, private_paths) + sizeof h->private_paths &&
           h->private_paths ? h->private_paths(p->h) : NULL;
}

int lcl_locald_init(struct lcl_prov *p, const char *setting)
{
    const char *mode = secure_getenv("POLYSANDBOX_LOCAL_DAEMON");
    const char *from = "POLYSANDBOX_LOCAL_DAEMON";
    if (!mode || !*mode) {
        mode = setting;
        from = "providers.d/local.ini: daemon";
    }
    if (!strcmp(mode, "off"))
        p->locald = false;
    else if (!strcmp(mode, "auto"))
        p->locald = true;
    else
        return p->host->set_error(p->h, SBX_E_CONFIG, "%s = '%s': use 'auto' or 'off'", from, mode);
    if (!p->locald)
        return 0;
    const char *strict = secure_getenv("POLYSANDBOX_LOCALD_STRICT");
    p->locald_strict = strict && *strict && strcmp(strict, "0");
    const char *path = secure_getenv("POLYSANDBOX_LOCALD");
    if (!(p->locald_path = strdup(path && *path ? path : LCL_LOCALD_PATH)))
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    /* The key: protocol, release, the daemon's executable (so an upgrade
     * restarts it), the settings and the state directory. */
    uint64_t h = LCL_FNV_BASIS;
    h = fnv_str(h, "v" PACKAGE_VERSION);
    uint32_t v = LCL_XR_VERSION;
    h = lcl_fnv(h, &v, sizeof v);
    struct stat st;
    if (stat(p->locald_path, &st) < 0 || !S_ISREG(st.st_mode)) {
        p->host->log(p->h, SBX_LOG_DEBUG, "daemon: %s: %s; every exec runs in-process",
                     p->locald_path, strerror(errno ? errno : ENOEXEC));
        p->locald = false;
        return 0;
    }
    uint64_t id[5] = {(uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
                      (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec};
    h = lcl_fnv(h, id, sizeof id);
    for (size_t i = 0; passed_keys[i]; i++) {
        h = fnv_str(h, passed_keys[i]);
        h = fnv_str(h, p->host->config_get(p->h, passed_keys[i]));
    }
    h = fnv_str(h, p->state_dir);
    const char *const *hide = host_private(p);
    for (size_t i = 0; hide && hide[i]; i++)
        h = fnv_str(h, hide[i]);
    snprintf(p->locald_key, sizeof p->locald_key, "%016" PRIx64, h);
    return 0;
}

/* Starts the daemon for the next execs (this one runs in-process); at
 * most once a second per provider.  It forks at once and its first
 * process exits, which we wait for: no zombie of ours is left. */
static void spawn_daemon(struct lcl_prov *p, const sbx_limits_v1 *l)
{
    static atomic_uint_fast64_t last;
    uint64_t now = lcl_now_mono(), prev = atomic_load(&last);
    if (prev && now - prev < 1000000000u && !p->locald_strict)
        return;
    if (!atomic_compare_exchange_strong(&last, &prev, now))
        return;
    char *argv[32 + 2 * LCL_MAX_HIDDEN];
    char *sets[8];
    int n = 0, ns = 0;
    const char *idle = secure_getenv("POLYSANDBOX_LOCALD_IDLE");
    argv[n++] = p->locald_path;
    argv[n++] = "--state-dir";
    argv[n++] = p->state_dir;
    argv[n++] = "--run-dir";
    argv[n++] = p->run_dir;
    argv[n++] = "--key";
    argv[n++] = p->locald_key;
    char warm[80];
    snprintf(warm, sizeof warm, "%" PRIu64 ",%" PRIu64 ",%" PRIu64, l->memory_bytes, l->pids,
             l->disk_bytes);
    argv[n++] = "--warm";
    argv[n++] = warm;
    if (p->locald_strict)
        argv[n++] = "--strict";
    if (idle && *idle) {
        argv[n++] = "--idle";
        argv[n++] = (char *)idle;
    }
    for (size_t i = 0; passed_keys[i]; i++) {
        const char *v = p->host->config_get(p->h, passed_keys[i]);
        if (!v || ns >= 8)
            continue;
        size_t len = strlen(passed_keys[i]) + strlen(v) + 2;
        if (!(sets[ns] = malloc(len)))
            break;
        snprintf(sets[ns], len, "%s=%s", passed_keys[i], v);
        argv[n++] = "--set";
        argv[n++] = sets[ns++];
    }
    const char *const *hide = host_private(p);
    for (size_t i = 0; hide && hide[i] && i < LCL_MAX_HIDDEN; i++) {
        argv[n++] = "--hide";
        argv[n++] = (char *)hide[i];
    }
    argv[n] = NULL;
    char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    pid_t pid = -1;
    int e = posix_spawnattr_init(&attr);
    if (!e) {
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        e = posix_spawn(&pid, p->locald_path, NULL, &attr, argv, envp);
        posix_spawnattr_destroy(&attr);
    }
    if (e)
        p->host->log(p->h, SBX_LOG_WARNING, "starting %s: %s", p->locald_path, strerror(e));
    else
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    for (int i = 0; i < ns; i++)
        free(sets[i]);
}

static uint64_t ns_id(const char *ns)
{
    struct stat st;
    return stat(ns, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The request (wire/exec-req.h) with its daemon's part: whose exec,
 * for which daemon, what the payload would inherit from us. */
static int build_request(struct lcl_prov *p, const struct lcl_child *c, int wfd, char **buf,
                         size_t *len, int fds[LCL_XR_MAX_FDS], int *nfds)
{
    struct lcl_xreq r;
    lcl_launch_xreq(c, wfd, &r);
    r.parts = LCL_XR_INHERIT;
    r.path = c->path_dirs;
    r.rootfs = c->sb->rootfs;
    struct lcl_xr_inherit *q = &r.inh;
    snprintf(q->key, sizeof q->key, "%s", p->locald_key);
    snprintf(q->id, sizeof q->id, "%s", c->sb->id);
    q->mnt_ns = ns_id("/proc/self/ns/mnt");
    q->network = (uint32_t)c->sb->network;
    if (q->network == SBX_NET_HOST)
        q->net_ns = ns_id("/proc/self/ns/net");
    mode_t um = umask(0);
    umask(um);
    q->umask = (uint32_t)um;
    errno = 0;
    q->nice = getpriority(PRIO_PROCESS, 0);
    for (int i = 0; i < RLIM_NLIMITS; i++)
        getrlimit((__rlimit_resource_t)i, &q->rl[i]);
    if (sched_getaffinity(0, sizeof q->cpus, &q->cpus) < 0)
        CPU_ZERO(&q->cpus);
    return lcl_xr_encode(&r, buf, len, fds, nfds);
}

static bool slot_ok(const char *s)
{
    if (strncmp(s, "pool-", 5))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

/* The cgroups a daemon's sandbox can be held in: v1 pool slots (the
 * freezer marks them) or v2 one-shot slots (cgroup/slots.c).  No cgroups
 * at all: in-process, which says what is not enforced. */
bool lcl_locald_cg_ok(const struct lcl_prov *p)
{
    return (p->cg.version == 1 && p->cg.usable[LCL_CG_FREEZER]) ||
           (p->cg.version == 2 && p->cg.v2_base);
}

int lcl_locald_exec(struct lcl_prov *p, const struct lcl_child *c, struct lcl_cg_run *cg,
                    int *pidfd, int *conn)
{
    const struct lcl_sb *sb = c->sb;
    *conn = -1;
    if (!p->locald || !p->root || !lcl_locald_cg_ok(p) || !sb->work_tmpfs ||
        sb->work_uid != p->host_uid ||
        (!sb->rootfs && !c->skel_src) || !p->run_dir)
        return LCL_LOCALD_NO;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s/" LCL_LD_SOCK, p->run_dir) >=
        (int)sizeof sa.sun_path)
        return LCL_LOCALD_NO;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return LCL_LOCALD_NO;
    if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno != ENOENT && errno != ECONNREFUSED) {
            close(s);
            return LCL_LOCALD_NO;
        }
        spawn_daemon(p, &sb->limits);
        /* Strict (tests): this exec waits for it (5 s at most). */
        int e = -1;
        for (int i = 0; p->locald_strict && e < 0 && i < 500; i++) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
            e = connect(s, (struct sockaddr *)&sa, sizeof sa);
        }
        if (e < 0) {
            close(s);
            return LCL_LOCALD_NO;
        }
    }
    /* The socket we reached is in our private run directory, not behind
     * a name someone else planted in /dev/shm (a symlink to another
     * configuration's run directory would hand it our request, and its
     * "another build" answer would make it retire).  Checked after the
     * connect: a name that was not ours then is not ours now. */
    struct stat rd;
    if (lstat(p->run_dir, &rd) < 0 || !S_ISDIR(rd.st_mode) || rd.st_uid != geteuid() ||
        (rd.st_mode & 077)) {
        p->host->log(p->h, SBX_LOG_WARNING, "%s is not a private directory of ours: the daemon "
                     "is not used", p->run_dir);
        close(s);
        return LCL_LOCALD_NO;
    }
    /* Only a daemon of our own uid (the run directory is ours and 0700:
     * this is a second lock on the door). */
    struct ucred cr;
    socklen_t crl = sizeof cr;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 || cr.uid != geteuid()) {
        p->host->log(p->h, SBX_LOG_WARNING, "%s is not served by a process of ours: ignored",
                     sa.sun_path);
        close(s);
        return LCL_LOCALD_NO;
    }
    /* Strict: the daemon may prepare a sandbox first (10 s at most). */
    struct timeval tv = {p->locald_strict ? 30 : 10, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    /* The work directory, as a detached copy of its mount. */
    int wfd = lcl_work_detached(sb, -1); /* the daemon idmaps it for its init */
    if (wfd < 0) {
        p->host->log(p->h, SBX_LOG_DEBUG, "daemon: detaching a copy of %s: %s", sb->work,
                     strerror(errno));
        close(s);
        return LCL_LOCALD_NO;
    }
    size_t len = 0;
    char *req = NULL;
    int fds[LCL_XR_MAX_FDS], nfds = 0;
    int e = build_request(p, c, wfd, &req, &len, fds, &nfds);
    if (!e)
        e = lcl_fds_send(s, req, len, fds, nfds);
    free(req);
    close(wfd);
    if (e) {
        /* Refused before it was read: nothing of it started. */
        close(s);
        return LCL_LOCALD_NO;
    }
    struct lcl_ld_rep rep;
    int got = -1;
    e = lcl_fds_recv(s, &rep, sizeof rep, &got, 1);
    if (e || rep.magic != LCL_LD_MAGIC) {
        if (got >= 0)
            close(got);
        close(s);
        return p->host->set_error(p->h, SBX_E_BACKEND, "polysandbox-locald did not answer the "
                                  "exec request (%s)", e ? strerror(-e) : "bad reply");
    }
    if (rep.code != LCL_LD_OK) {
        if (got >= 0)
            close(got);
        close(s);
        if (rep.code == LCL_LD_MISMATCH)
            spawn_daemon(p, &sb->limits); /* the old one has let go of the socket */
        return LCL_LOCALD_NO;
    }
    rep.slot[sizeof rep.slot - 1] = '\0';
    if (got < 0 || !slot_ok(rep.slot)) {
        if (got >= 0)
            close(got);
        close(s);
        return p->host->set_error(p->h, SBX_E_BACKEND, "polysandbox-locald answered without "
                                  "the sandbox's pidfd or with a bad cgroup '%s'", rep.slot);
    }
    memset(cg, 0, sizeof *cg);
    cg->v2fd = cg->pool_fd = -1;
    if (p->cg.version == 2 && !(cg->v2dir = lcl_join(p->cg.v2_base, rep.slot))) {
        close(got);
        close(s);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < LCL_CG_NCTRL && p->cg.version == 1; i++)
        if (p->cg.usable[i] && !(cg->dir[i] = lcl_join(p->cg.base[i], rep.slot))) {
            for (int j = 0; j < i; j++)
                free(cg->dir[j]);
            close(got);
            close(s); /* the daemon kills the exec */
            return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        }
    cg->active = true;
    *pidfd = got;
    *conn = s;
    p->host->log(p->h, SBX_LOG_DEBUG, "exec in %s: a sandbox polysandbox-locald prepared (%s)",
                 sb->id, rep.slot);
    return 0;
}

void lcl_locald_done(struct lcl_prov *p, int *conn, struct lcl_cg_run *cg, const char *id)
{
    (void)p;
    if (*conn < 0)
        return;
    /* The exec is over (its sandbox empty): the slot is no more this
     * sandbox's, so its destroy, next, finds nothing to kill there while
     * the daemon tears the rest down. */
    char owner[SBX_ID_MAX + 64], now[SBX_ID_MAX + 64];
    const char *fz = cg->v2dir ? cg->v2dir : cg->dir[LCL_CG_FREEZER];
    size_t il = strlen(id);
    ssize_t n = fz ? getxattr(fz, LCL_POOL_XATTR, owner, sizeof owner - 1) : -1;
    if (n > 0) {
        owner[n] = '\0';
        int len = snprintf(now, sizeof now, "%s%s", LCL_LD_IDLE_OWNER, owner + il);
        if (!strncmp(owner, id, il) && owner[il] == ' ' && len > 0 && (size_t)len < sizeof now)
            setxattr(fz, LCL_POOL_XATTR, now, (size_t)len, XATTR_REPLACE);
    }
    char d = LCL_LD_DONE;
    if (send(*conn, &d, 1, MSG_NOSIGNAL) != 1) {
        /* gone: it cleans up all the same */
    }
    close(*conn);
    *conn = -1;
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        free(cg->dir[i]);
    free(cg->v2dir);
    memset(cg, 0, sizeof *cg);
    cg->v2fd = cg->pool_fd = -1;
}

void lcl_locald_doctor(struct lcl_prov *p, sbx_doctor_cb_v1 cb, void *ud)
{
    char detail[LCL_PATH_MAX + 160], lock[LCL_PATH_MAX], pid[24] = "";
    if (!p->locald && p->locald_path) {
        snprintf(detail, sizeof detail, "auto, but %s is not installed: every exec makes its "
                 "sandbox in-process", p->locald_path);
        cb(ud, "daemon (polysandbox-locald)", 1, detail);
        return;
    }
    if (!p->locald) {
        cb(ud, "daemon (polysandbox-locald)", 1, "off: every exec makes its sandbox in-process "
           "(daemon = auto to use prepared sandboxes)");
        return;
    }
    snprintf(lock, sizeof lock, "%s/" LCL_LD_LOCK, p->run_dir ? p->run_dir : "");
    int n = p->run_dir ? lcl_read_file(lock, pid, sizeof pid) : -1;
    while (n > 0 && (pid[n - 1] == '\n'))
        pid[--n] = '\0';
    bool usable = p->root && lcl_locald_cg_ok(p) && p->run_dir;
    snprintf(detail, sizeof detail, "auto: %s; %s%s%s", p->locald_path,
             !usable ? "not used here (needs root, and cgroup v1 with a freezer or cgroup v2)"
             : n > 0 ? "running, pid " : "not running (started on first use)",
             usable && n > 0 ? pid : "", "");
    cb(ud, "daemon (polysandbox-locald)", 1, detail);
}

/* ---- the launcher (launch.h): a spare of the daemon takes the whole exec ---- */

static bool daemon_fits(const struct lcl_launch *l)
{
    /* Egress is attached to an init we clone here: never the daemon's. */
    return !l->sp && !l->sb->egress;
}

static int daemon_prepare(struct lcl_launch *l)
{
    return lcl_locald_exec(l->p, l->c, l->cg, l->pidfd, l->conn);
}

const struct lcl_launcher lcl_launch_daemon = {
    .name = "daemon",
    .fits = daemon_fits,
    .prepare = daemon_prepare,
    .start = NULL, /* the spare is running: no maps, no go of ours */
};
