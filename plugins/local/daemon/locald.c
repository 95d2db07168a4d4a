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

#include "../jail/jail.h"
#include "../wire/locald-proto.h"
#include "locald.h"
#include <polysandbox/sandbox.h>

#include "clock.h"
#include "path-check.h"
#include "settings-read.h"

/* local.c's descriptor: its ops make the provider here too. */
extern const sbx_provider_v1 sandbox_provider_v1;

#define SPARE_MAX 64          /* prepared and serving sandboxes, at most */
#define WMAX 2           /* limits kept prepared for */
#define MAX_FAILS 3      /* preparations failing in a row: that limits goes in-process */

/* ---- the provider's host, for a provider without the core ---- */

struct sbx_host_handle {
    char *sets[16];      /* "key=value" from --set */
    int n_sets;
    const char *hide[LCL_MAX_HIDDEN + 1]; /* --hide: the client's core's private paths */
    int n_hide;
    const char *state_dir;
    bool verbose;
};

static struct sbx_host_handle hh;

static void h_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    if (!h->verbose && level > SBX_LOG_WARNING)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "polysandbox-locald[%ld]: ", (long)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int h_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "polysandbox-locald[%ld]: error: ", (long)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    (void)h;
    return code;
}

static const char *h_config_get(sbx_host_handle *h, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 0; i < h->n_sets; i++)
        if (!strncmp(h->sets[i], key, kl) && h->sets[i][kl] == '=')
            return h->sets[i] + kl + 1;
    return NULL;
}

static int h_secret_get(sbx_host_handle *h, const char *key, const char **out, size_t *len)
{
    (void)h;
    (void)key;
    *out = NULL;
    *len = 0;
    return SBX_E_NOT_FOUND;
}

static void h_secret_release(sbx_host_handle *h, const char *v)
{
    (void)h;
    (void)v;
}

static const char *h_state_dir(sbx_host_handle *h)
{
    return h->state_dir;
}

static void h_retry_after(sbx_host_handle *h, uint64_t ms)
{
    (void)h;
    (void)ms;
}

static void h_not_started(sbx_host_handle *h)
{
    (void)h;
}

static const char *const *h_private_paths(sbx_host_handle *h)
{
    return h->hide;
}

/* The provider's [settings] as the core reads them (core/host-settings.c,
 * built into the daemon with units.c and error.c): the values the client
 * passed with --set, which it read from the same file. */
static const core_setting *h_lookup(void *ud, const char *key)
{
    static _Thread_local core_setting s;
    const char *v = h_config_get(ud, key);

    s = (core_setting){ .key = (char *)key, .value = (char *)v, .file = "--set", .line = 0 };
    return v ? &s : NULL;
}

static int h_settings_read(sbx_host_handle *h, const sbx_setting_v1 *table, size_t entry_size,
                           void *base)
{
    const sbx_provider_v1 *d = &sandbox_provider_v1;
    int rc = core_settings_read(d->name, d->config_keys, d->secret_keys, h_lookup, h, table,
                                entry_size, base);

    return rc == SBX_OK ? SBX_OK
                        : h_set_error(h, rc, "%s", sbx_error_message(sbx_ctx_last_error(NULL)));
}

/* The core's own rule and clock, built into the daemon (core/path-check.c,
 * core/clock.c depend on nothing else of the core). */
static int h_path_check(sbx_host_handle *h, const char *path)
{
    char msg[1024];
    int rc = core_path_check(path, msg, sizeof msg);
    return rc == SBX_OK ? SBX_OK : h_set_error(h, rc, "%s", msg);
}

static uint64_t h_clock_ns(sbx_host_handle *h)
{
    (void)h;
    return core_now_ns();
}

static const sbx_host_v1 host = {
    .struct_size = sizeof(sbx_host_v1),
    .abi_major = SBX_ABI_MAJOR,
    .abi_minor = SBX_ABI_MINOR,
    .log = h_log,
    .set_error = h_set_error,
    .config_get = h_config_get,
    .secret_get = h_secret_get,
    .secret_release = h_secret_release,
    .alloc = malloc,
    .free = free,
    .state_dir = h_state_dir,
    .retry_after = h_retry_after,
    .not_started = h_not_started,
    .private_paths = h_private_paths,
    .settings_read = h_settings_read,
    .path_check = h_path_check,
    .clock_ns = h_clock_ns,
};

/* ---- state ---- */

/* What a prepared sandbox is made for: the limits its cgroup and /tmp
 * carry, its network, and its root (the skeleton, or an image directory
 * as it was when its top level was read: its identity and times). */
struct key {
    uint64_t mem, pids, disk;
    int net;                  /* SBX_NET_NONE or SBX_NET_HOST */
    uint64_t img[5];          /* image: dev, ino, mtime, ctime (s, ns mixed) */
    char rootfs[LCL_PATH_MAX]; /* image directory, or "" */
};

struct want {
    bool used;
    struct key k;
    uint64_t last;       /* last asked for (monotonic ns) */
    int fails;
};

struct spare {
    bool live;
    struct key k;
    pid_t pid;
    int pidfd, ctl, rep; /* rep: the init's setup failures, until it serves */
    struct lcl_cg_run cg;
    bool ready, serving, exited, finishing;
    int client;
    int want;            /* index into wants (preparation failures count there) */
    struct lcl_id id;    /* its host id, held while it lives (local-ids.c) */
};

struct daemon {
    struct lcl_prov *p;
    const char *run_dir;
    char key[LCL_LD_KEY_MAX];
    char sock_path[108];
    char lock_path[LCL_PATH_MAX];
    dev_t sock_dev;
    ino_t sock_ino;
    int lock_fd, listen_fd, sig_fd;
    int per_key;         /* K */
    uint64_t idle_ns, last_req;
    uint64_t mnt_ns, net_ns;
    dev_t state_dev;     /* the state directory we serve (gone: we go) */
    ino_t state_ino;
    bool retiring, stop;
    bool strict;         /* tests: a request waits for a sandbox prepared for it */
    struct want wants[WMAX];
    struct spare z[SPARE_MAX];
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static bool key_eq(const struct key *a, const struct key *b)
{
    return a->mem == b->mem && a->pids == b->pids && a->disk == b->disk && a->net == b->net &&
           !memcmp(a->img, b->img, sizeof a->img) && !strcmp(a->rootfs, b->rootfs);
}

/* The image directory's identity now; false if it is not one. */
static bool image_id(const char *dir, uint64_t img[5])
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

/* ---- prepared sandboxes ---- */

static void on_ready(struct daemon *d, struct spare *z);
static void on_exit_(struct daemon *d, struct spare *z);

struct lcl_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};

/* Ends @z: kills what runs, reaps, gives the slot back; the entry is free. */
static void spare_end(struct daemon *d, struct spare *z)
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
    close_fd(&z->pidfd);
    close_fd(&z->ctl);
    close_fd(&z->rep);
    close_fd(&z->client);
    lcl_id_give(&z->id);
    memset(z, 0, sizeof *z);
    z->pidfd = z->ctl = z->rep = z->client = z->id.fd = z->id.userns = -1;
}

/* Clones a sandbox init for limits @w and lets it build its root. */
static bool spare_start(struct daemon *d, int wi)
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
    if (sb.rootfs && (!image_id(sb.rootfs, img) || memcmp(img, w->k.img, sizeof img))) {
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
        h_log(&hh, SBX_LOG_WARNING, "cannot prepare a sandbox (%s): executions go in-process",
              !skel && !sb.rootfs ? "no shared skeleton" : z->cg.active && z->cg.pool_fd < 0
                  ? "no cgroup pool slot" : strerror(errno));
        for (int i = 0; i < LCL_CG_NCTRL; i++)
            close_fd(&tasks[i]);
        for (int i = 0; i < 2; i++) {
            close_fd(&sv[i]);
            close_fd(&rep[i]);
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
    close_fd(&sv[1]);
    close_fd(&rep[1]);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        close_fd(&tasks[i]);
    z->live = true;
    z->ctl = sv[0];
    z->rep = rep[0];
    if (pid < 0) {
        h_log(&hh, SBX_LOG_WARNING, "clone of a prepared sandbox: %s", strerror(e));
        z->exited = true;
        z->pidfd = -1;
        lcl_cg_destroy(p, &z->cg);
        close_fd(&z->ctl);
        close_fd(&z->rep);
        lcl_id_give(&z->id);
        z->live = false;
        w->fails++;
        return false;
    }
    z->pid = (pid_t)pid;
    z->pidfd = pidfd;
    char go = 'g';
    if (lcl_id_maps(&z->id, z->pid) < 0 || send(z->ctl, &go, 1, MSG_NOSIGNAL) != 1) {
        h_log(&hh, SBX_LOG_WARNING, "starting a prepared sandbox: %s", strerror(errno));
        spare_end(d, z);
        w->fails++;
        return false;
    }
    fcntl(z->rep, F_SETFL, O_NONBLOCK);
    return true;
}

/* Keeps K prepared for each limits asked for lately. */
static void fill(struct daemon *d)
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
        while (have < d->per_key && spare_start(d, wi))
            have++;
    }
}

static int want_for(struct daemon *d, const struct key *k)
{
    int lru = 0;
    for (int i = 0; i < WMAX; i++) {
        if (d->wants[i].used && key_eq(&d->wants[i].k, k))
            return i;
        if (!d->wants[i].used || (d->wants[lru].used && d->wants[i].last < d->wants[lru].last))
            lru = i;
    }
    /* Others' prepared sandboxes go. */
    for (int i = 0; i < SPARE_MAX; i++)
        if (d->z[i].live && !d->z[i].serving && d->z[i].want == lru)
            spare_end(d, &d->z[i]);
    d->wants[lru] = (struct want){true, *k, lcl_now_mono(), 0};
    return lru;
}

/* ---- requests ---- */

/* Strict mode: a sandbox of @wi made and waited for (10 s at most). */
static struct spare *prepare_now(struct daemon *d, int wi)
{
    struct spare *z = NULL;
    for (int i = 0; i < SPARE_MAX && !z; i++)
        if (d->z[i].live && !d->z[i].ready && !d->z[i].serving && d->z[i].want == wi &&
            d->z[i].ctl >= 0)
            z = &d->z[i];
    if (!z) {
        if (d->wants[wi].fails >= MAX_FAILS || !spare_start(d, wi))
            return NULL;
        for (int i = 0; i < SPARE_MAX && !z; i++)
            if (d->z[i].live && !d->z[i].ready && !d->z[i].serving && d->z[i].want == wi &&
                d->z[i].ctl >= 0)
                z = &d->z[i];
    }
    struct pollfd pf = {z ? z->ctl : -1, POLLIN, 0};
    if (!z || poll(&pf, 1, 10000) != 1) {
        if (z)
            spare_end(d, z);
        return NULL;
    }
    on_ready(d, z);
    if (!z->ready) {
        on_exit_(d, z); /* it failed: say why */
        return NULL;
    }
    return z;
}

static void reply(int conn, int code, const char *slot, int fd)
{
    struct lcl_ld_rep r;
    memset(&r, 0, sizeof r);
    r.magic = LCL_LD_MAGIC;
    r.code = code;
    if (slot)
        snprintf(r.slot, sizeof r.slot, "%s", slot);
    lcl_fds_send(conn, &r, sizeof r, &fd, fd >= 0 ? 1 : 0);
}

static void serve(struct daemon *d, int conn);

/* Lets go of the socket and the lock, so a daemon of the new build can
 * start; we end when our last exec does.  Clients already queued on the
 * socket are answered (FALLBACK or MISMATCH: they run in-process), not
 * reset: a reset leaves a client unable to tell whether its exec began.
 * Once the name is gone no new one can queue. */
static void retire(struct daemon *d)
{
    struct stat st;
    if (d->retiring)
        return;
    d->retiring = true;
    if (stat(d->sock_path, &st) == 0 && st.st_dev == d->sock_dev && st.st_ino == d->sock_ino)
        unlink(d->sock_path);
    int c;
    /* The listener is non-blocking: EAGAIN once the queue is empty. */
    while (d->listen_fd >= 0 && (c = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
        serve(d, c);
    close_fd(&d->listen_fd);
    if (d->lock_fd >= 0)
        unlink(d->lock_path); /* still locked: see main */
    close_fd(&d->lock_fd);
    for (int i = 0; i < SPARE_MAX; i++)
        if (d->z[i].live && !d->z[i].serving)
            spare_end(d, &d->z[i]);
}

static bool id_ok(const char *id)
{
    if (strncmp(id, LCL_ID_PREFIX, strlen(LCL_ID_PREFIX)))
        return false;
    for (const char *s = id; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

/* Marks the slot as @id's exec (destroy of that sandbox finds it),
 * keeping our pid and start time. */
static bool mark_owner(struct spare *z, const char *id)
{
    char old[SBX_ID_MAX + 64], owner[SBX_ID_MAX + 64];
    ssize_t n = fgetxattr(z->cg.pool_fd, LCL_POOL_XATTR, old, sizeof old - 1);
    if (n <= 0)
        return false;
    old[n] = '\0';
    const char *rest = strchr(old, ' ');
    if (!rest)
        return false;
    int len = snprintf(owner, sizeof owner, "%s%s", id, rest);
    return len > 0 && (size_t)len < sizeof owner &&
           fsetxattr(z->cg.pool_fd, LCL_POOL_XATTR, owner, (size_t)len, 0) == 0;
}

/* Can a prepared sandbox give the payload what it would inherit from
 * this client in-process?  The rlimits the payload does not set itself,
 * the nice value and the CPU affinity must be ours (a limit or a
 * priority cannot be raised in there); the umask is set per request. */
static bool inherit_ok(const struct lcl_ld_req *q)
{
    for (int i = 0; i < RLIM_NLIMITS; i++) {
        struct rlimit rl;
        if (i == RLIMIT_CPU || i == RLIMIT_NOFILE || i == RLIMIT_FSIZE || i == RLIMIT_CORE)
            continue;
        if (getrlimit((__rlimit_resource_t)i, &rl) < 0 || rl.rlim_cur != q->rl[i].rlim_cur ||
            rl.rlim_max != q->rl[i].rlim_max)
            return false;
    }
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    cpu_set_t cpus;
    return !errno && q->nice == nice && sched_getaffinity(0, sizeof cpus, &cpus) == 0 &&
           CPU_EQUAL(&cpus, &q->cpus);
}

/* The key of request @q (@buf: it and its strings): its limits, its
 * network (host: only as permitted, and in our own network namespace,
 * which an in-process exec would share) and its image root (checked as
 * create checks it, by the same code).  False: not ours to serve. */
static bool request_key(struct daemon *d, const struct lcl_ld_req *q, const char *buf,
                        struct key *k)
{
    memset(k, 0, sizeof *k);
    k->mem = q->limits.memory_bytes;
    k->pids = q->limits.pids;
    k->disk = q->limits.disk_bytes;
    k->net = (int)q->network;
    if (q->network == SBX_NET_HOST) {
        if (!d->p->allow_host_net || !d->net_ns || q->net_ns != d->net_ns)
            return false;
    } else if (q->network != SBX_NET_NONE) {
        return false;
    }
    if (!q->rootfs_len)
        return true;
    if (q->rootfs_len > q->blob_len || q->rootfs_len > sizeof k->rootfs)
        return false;
    const char *img = buf + sizeof *q + q->blob_len - q->rootfs_len;
    if (img[q->rootfs_len - 1] != '\0' || strlen(img) != q->rootfs_len - 1)
        return false;
    char *real = NULL;
    bool ok = lcl_layout_rootfs(d->p, img, &real) == 0 && real && !strcmp(real, img);
    free(real);
    if (!ok)
        return false;
    memcpy(k->rootfs, img, q->rootfs_len);
    return image_id(k->rootfs, k->img);
}

static void serve(struct daemon *d, int conn)
{
    struct ucred cr;
    socklen_t crl = sizeof cr;
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 || cr.uid != geteuid()) {
        close(conn);
        return;
    }
    struct timeval tv = {2, 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct lcl_ld_req q;
    int fds[LCL_LD_NFDS];
    char *buf = NULL;
    int e = lcl_fds_recv(conn, &q, sizeof q, fds, LCL_LD_NFDS);
    bool fds_ok = true;
    for (int i = 0; i < LCL_LD_NFDS; i++)
        fds_ok = fds_ok && fds[i] >= 0;
    if (!e && (q.magic != LCL_LD_MAGIC || q.blob_len > LCL_LD_BLOB_MAX || !fds_ok))
        e = -EPROTO;
    if (!e && !(buf = malloc(sizeof q + q.blob_len)))
        e = -ENOMEM;
    if (!e) {
        memcpy(buf, &q, sizeof q);
        e = lcl_fds_recv(conn, buf + sizeof q, q.blob_len, NULL, 0);
    }
    q.id[sizeof q.id - 1] = '\0';
    q.key[sizeof q.key - 1] = '\0';
    d->last_req = lcl_now_mono();
    struct spare *z = NULL;
    int code = LCL_LD_FALLBACK;
    static struct key k; /* single-threaded; a path is large for the stack */
    if (e) {
        h_log(&hh, SBX_LOG_INFO, "bad request: %s", strerror(-e));
    } else if (q.version != LCL_LD_VERSION || strcmp(q.key, d->key)) {
        code = LCL_LD_MISMATCH;
    } else if (q.mnt_ns == d->mnt_ns && id_ok(q.id) && !d->retiring && inherit_ok(&q) &&
               request_key(d, &q, buf, &k)) {
        int wi = want_for(d, &k);
        d->wants[wi].last = d->last_req;
        for (int i = 0; i < SPARE_MAX && !z; i++)
            if (d->z[i].live && d->z[i].ready && !d->z[i].serving && !d->z[i].exited &&
                key_eq(&d->z[i].k, &k))
                z = &d->z[i];
        if (!z && d->strict)
            z = prepare_now(d, wi);
        /* The work directory seen through its init's user namespace:
         * stored as 1000, shown as its 1000 (local-ids.c). */
        int ns = z && d->p->ids_per_exec ? lcl_id_userns(&z->id, z->pid) : -1;
        if (z && (!mark_owner(z, q.id) ||
                  (d->p->ids_per_exec && (ns < 0 || lcl_mount_idmap(fds[LCL_LD_FD_WORK], ns) < 0)))) {
            spare_end(d, z); /* nothing started: in-process */
            z = NULL;
        } else if (z && lcl_fds_send(z->ctl, buf, sizeof q + q.blob_len, fds, LCL_LD_NFDS) < 0) {
            /* It may have the request or not: it goes, the client gets an error. */
            spare_end(d, z);
            z = NULL;
            code = -1;
        }
    }
    free(buf);
    for (int i = 0; i < LCL_LD_NFDS; i++)
        close_fd(&fds[i]);
    if (code == LCL_LD_MISMATCH)
        retire(d); /* before the answer: the client starts the new one */
    if (!z) {
        if (code >= 0)
            reply(conn, code, NULL, -1);
        close(conn);
        return;
    }
    const char *fz = z->cg.v2dir ? z->cg.v2dir : z->cg.dir[LCL_CG_FREEZER];
    reply(conn, LCL_LD_OK, strrchr(fz, '/') + 1, z->pidfd);
    z->serving = true;
    z->client = conn;
    close_fd(&z->ctl);
    close_fd(&z->rep);
}

/* ---- events ---- */

static void on_ready(struct daemon *d, struct spare *z)
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
        close_fd(&z->ctl); /* its end is gone: the pidfd tells the rest */
    }
}

/* The client is done (or gone): kill what is left; the end is reaped
 * when its pidfd says so, so the namespaces' teardown holds up no
 * request. */
static void spare_finish(struct daemon *d, struct spare *z)
{
    close_fd(&z->client);
    if (z->exited) {
        spare_end(d, z);
        return;
    }
    lcl_cg_kill(d->p, &z->cg);
    syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
    z->finishing = true;
}

static void on_exit_(struct daemon *d, struct spare *z)
{
    z->exited = true;
    if (z->finishing) {
        spare_end(d, z);
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
        h_log(&hh, SBX_LOG_WARNING, "preparing a sandbox failed: %s: %s", m.what,
              strerror(m.err));
    }
    if (!z->ready)
        d->wants[z->want].fails++;
    spare_end(d, z);
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
    return stat(hh.state_dir, &st) < 0 ? errno == ENOENT || errno == ENOTDIR
                                       : st.st_dev != d->state_dev || st.st_ino != d->state_ino;
}

static void loop(struct daemon *d)
{
    while (!d->stop) {
        uint64_t hold = refill_hold(d, lcl_now_mono());
        if (!hold)
            fill(d);
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
            retire(d);
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
                    serve(d, c);
                break;
            }
            case 2:
                on_exit_(d, z);
                break;
            case 3: /* "done", or the client went away: either way it ends */
                spare_finish(d, z);
                break;
            case 4:
                on_ready(d, z);
                break;
            }
        }
    }
    for (int i = 0; i < SPARE_MAX; i++)
        spare_end(d, &d->z[i]);
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
            hh.verbose = true;
            continue;
        }
        if (!strcmp(a, "--help"))
            return usage(stdout, 0);
        if (!v)
            return usage(stderr, 2);
        i++;
        if (!strcmp(a, "--state-dir"))
            hh.state_dir = v;
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
            if (hh.n_hide >= LCL_MAX_HIDDEN || v[0] != '/') {
                fprintf(stderr, "polysandbox-locald: --hide '%s': an absolute path (%d at most)\n",
                        v, LCL_MAX_HIDDEN);
                return 2;
            }
            hh.hide[hh.n_hide++] = v;
        } else if (!strcmp(a, "--set")) {
            if (hh.n_sets >= 16 || !strchr(v, '=')) {
                fprintf(stderr, "polysandbox-locald: --set '%s': KEY=VALUE (16 at most)\n", v);
                return 2;
            }
            hh.sets[hh.n_sets++] = (char *)v;
        } else {
            return usage(stderr, 2);
        }
    }
    if (!hh.state_dir || !run_dir || !key || strlen(key) >= LCL_LD_KEY_MAX)
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
        h_log(&hh, SBX_LOG_ERROR, "%s is not a private directory of ours", run_dir);
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
        close_fd(&d.lock_fd);
        if (tries > 8)
            return 1;
    }
    /* Our pid, for people and tests (the lock is what counts). */
    char pid_text[24];
    int pl = snprintf(pid_text, sizeof pid_text, "%ld\n", (long)getpid());
    if (ftruncate(d.lock_fd, 0) < 0 || pwrite(d.lock_fd, pid_text, (size_t)pl, 0) != pl)
        h_log(&hh, SBX_LOG_WARNING, "writing our pid to %s: %s", lock, strerror(errno));

    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    d.sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);

    void *prov = NULL;
    int ret = sandbox_provider_v1.ops->init(&host, &hh, &prov);
    if (ret || !prov || d.sig_fd < 0) {
        h_log(&hh, SBX_LOG_ERROR, "the local provider did not start (%d)", ret);
        return 1;
    }
    d.p = prov;
    d.p->cg_v2_slots = true; /* v2: our cgroups are one-shot slots (cgroup/slots.c) */
    if (!d.p->run_dir || strcmp(d.p->run_dir, run_dir) || !d.p->root ||
        lcl_seccomp_ensure(d.p)) {
        h_log(&hh, SBX_LOG_ERROR, "not usable here (run directory %s, root %d)",
              d.p->run_dir ? d.p->run_dir : "none", d.p->root);
        sandbox_provider_v1.ops->fini(prov);
        return 1;
    }
    if (stat("/proc/self/ns/mnt", &st) == 0)
        d.mnt_ns = st.st_ino;
    if (stat("/proc/self/ns/net", &st) == 0)
        d.net_ns = st.st_ino;
    if (stat(hh.state_dir, &st) == 0) {
        d.state_dev = st.st_dev;
        d.state_ino = st.st_ino;
    }
    int e = listen_on(&d);
    if (e) {
        h_log(&hh, SBX_LOG_ERROR, "listening on %s/" LCL_LD_SOCK ": %s", run_dir, strerror(-e));
        sandbox_provider_v1.ops->fini(prov);
        return 1;
    }
    d.last_req = lcl_now_mono();
    if (warm.disk)
        want_for(&d, &warm);
    loop(&d);
    retire(&d);
    sandbox_provider_v1.ops->fini(prov);
    rmdir(run_dir); /* if no sandbox lives there (as the provider does) */
    return 0;
}
