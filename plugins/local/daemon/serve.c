/* plugins/local/daemon/serve.c - one request to polysandbox-locald
 *
 * Read with a timeout and its size capped, from a peer of our uid; its
 * key, ids and inherited attributes checked; then handed to a spare of
 * its limits (or FALLBACK, MISMATCH: the client runs it in-process).
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


/* Strict mode: a sandbox of @wi made and waited for (10 s at most). */
static struct spare *prepare_now(struct daemon *d, int wi)
{
    struct spare *z = NULL;
    for (int i = 0; i < SPARE_MAX && !z; i++)
        if (d->z[i].live && !d->z[i].ready && !d->z[i].serving && d->z[i].want == wi &&
            d->z[i].ctl >= 0)
            z = &d->z[i];
    if (!z) {
        if (d->wants[wi].fails >= MAX_FAILS || !lcl_d_spare_start(d, wi))
            return NULL;
        for (int i = 0; i < SPARE_MAX && !z; i++)
            if (d->z[i].live && !d->z[i].ready && !d->z[i].serving && d->z[i].want == wi &&
                d->z[i].ctl >= 0)
                z = &d->z[i];
    }
    struct pollfd pf = {z ? z->ctl : -1, POLLIN, 0};
    if (!z || poll(&pf, 1, 10000) != 1) {
        if (z)
            lcl_d_spare_end(d, z);
        return NULL;
    }
    lcl_d_on_ready(d, z);
    if (!z->ready) {
        lcl_d_on_exit(d, z); /* it failed: say why */
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


/* Lets go of the socket and the lock, so a daemon of the new build can
 * start; we end when our last exec does.  Clients already queued on the
 * socket are answered (FALLBACK or MISMATCH: they run in-process), not
 * reset: a reset leaves a client unable to tell whether its exec began.
 * Once the name is gone no new one can queue. */
void lcl_d_retire(struct daemon *d)
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
        lcl_d_serve(d, c);
    lcl_d_close_fd(&d->listen_fd);
    if (d->lock_fd >= 0)
        unlink(d->lock_path); /* still locked: see main */
    lcl_d_close_fd(&d->lock_fd);
    for (int i = 0; i < SPARE_MAX; i++)
        if (d->z[i].live && !d->z[i].serving)
            lcl_d_spare_end(d, &d->z[i]);
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
static bool inherit_ok(const struct lcl_xr_inherit *q)
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

/* The key of request @r: its limits, its network (host: only as
 * permitted, and in our own network namespace, which an in-process exec
 * would share) and its image root (checked as create checks it, by the
 * same code).  False: not ours to serve. */
static bool request_key(struct daemon *d, const struct lcl_xreq *r, struct key *k)
{
    memset(k, 0, sizeof *k);
    k->mem = r->limits.memory_bytes;
    k->pids = r->limits.pids;
    k->disk = r->limits.disk_bytes;
    k->net = (int)r->inh.network;
    if (r->inh.network == SBX_NET_HOST) {
        if (!d->p->allow_host_net || !d->net_ns || r->inh.net_ns != d->net_ns)
            return false;
    } else if (r->inh.network != SBX_NET_NONE) {
        return false;
    }
    if (!r->rootfs)
        return true;
    const char *img = r->rootfs;
    if (strlen(img) >= sizeof k->rootfs)
        return false;
    char *real = NULL;
    bool ok = lcl_layout_rootfs(d->p, img, &real) == 0 && real && !strcmp(real, img);
    free(real);
    if (!ok)
        return false;
    memcpy(k->rootfs, img, strlen(img) + 1);
    return lcl_d_image_id(k->rootfs, k->img);
}

void lcl_d_serve(struct daemon *d, int conn)
{
    struct ucred cr;
    socklen_t crl = sizeof cr;
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 || cr.uid != geteuid()) {
        close(conn);
        return;
    }
    struct timeval tv = {2, 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct lcl_xreq r;
    int fds[LCL_XR_MAX_FDS], nfds = 0;
    char *buf = NULL;
    size_t len = 0;
    const char *why = NULL;
    int e = lcl_xr_recv(conn, &buf, &len, fds, &nfds);
    if (!e)
        e = lcl_xr_decode(buf, len, fds, nfds, &r, &why);
    else
        memset(&r, 0, sizeof r);
    if (!e && !(r.parts & LCL_XR_INHERIT)) {
        why = "no daemon's part";
        e = -EPROTO;
    }
    d->last_req = lcl_now_mono();
    struct spare *z = NULL;
    int code = LCL_LD_FALLBACK;
    static struct key k; /* single-threaded; a path is large for the stack */
    if (e == -EPROTONOSUPPORT) {
        code = LCL_LD_MISMATCH;
    } else if (e) {
        lcl_d_log(SBX_LOG_INFO, "bad request: %s", why ? why : strerror(-e));
    } else if (strcmp(r.inh.key, d->key)) {
        code = LCL_LD_MISMATCH;
    } else if (r.inh.mnt_ns == d->mnt_ns && id_ok(r.inh.id) && !d->retiring &&
               inherit_ok(&r.inh) && request_key(d, &r, &k)) {
        int wi = lcl_d_want_for(d, &k);
        d->wants[wi].last = d->last_req;
        for (int i = 0; i < SPARE_MAX && !z; i++)
            if (d->z[i].live && d->z[i].ready && !d->z[i].serving && !d->z[i].exited &&
                lcl_d_key_eq(&d->z[i].k, &k))
                z = &d->z[i];
        if (!z && d->strict)
            z = prepare_now(d, wi);
        /* The work directory seen through its init's user namespace:
         * stored as 1000, shown as its 1000 (local-ids.c). */
        int ns = z && d->p->ids_per_exec ? lcl_id_userns(&z->id, z->pid) : -1;
        if (z && (!mark_owner(z, r.inh.id) ||
                  (d->p->ids_per_exec &&
                   (ns < 0 || lcl_mount_idmap(r.fd[LCL_XR_FD_WORK], ns) < 0)))) {
            lcl_d_spare_end(d, z); /* nothing started: in-process */
            z = NULL;
        } else if (z && lcl_fds_send(z->ctl, buf, len, fds, nfds) < 0) {
            /* It may have the request or not: it goes, the client gets an error. */
            lcl_d_spare_end(d, z);
            z = NULL;
            code = -1;
        }
    }
    lcl_xr_free(&r);
    free(buf);
    for (int i = 0; i < nfds; i++)
        lcl_d_close_fd(&fds[i]);
    if (code == LCL_LD_MISMATCH)
        lcl_d_retire(d); /* before the answer: the client starts the new one */
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
    lcl_d_close_fd(&z->ctl);
    lcl_d_close_fd(&z->rep);
}

