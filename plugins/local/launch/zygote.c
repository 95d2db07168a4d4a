/* plugins/local/launch/zygote.c - execs forked from a warm interpreter
 *
 * ops->exec_zygote (ABI 1.2): when the template declares a zygote and
 * the command is that interpreter on a script (`python3 [-S...] main.py
 * ARGS`), the exec's init is not cloned from this process but forked
 * from a zygote: an interpreter started once (per provider instance and
 * interpreter configuration, one per concurrent exec), which imported
 * the template's modules and never runs untrusted code itself.  Its
 * clone is the exec's init, a sandbox of its own exactly as a cloned
 * init is (zygote/helper.c, sharing jail/child.c's set-up): the exec's
 * cgroup, fresh namespaces, root, /tmp, /proc, limits, privileges
 * dropped and the seccomp filter, with pid 1 reaping; and everything the
 * supervisor does (files, cgroup, maps, output, limits, the verdict) is
 * launch/exec.c's own.  The program then runs in that interpreter.
 *
 * A zygote that dies is replaced: before it forked the exec's child the
 * request goes to a new one (nothing started); after, only that exec
 * fails, with a retryable error (SBX_E_BUSY).  SBX_E_NOTSUP (nothing
 * done) sends the core back to ops->exec: another command, an image
 * root, no shared skeleton (unprivileged), or a zygote that cannot start.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "../wire/exec-req.h"
#include "../wire/zygote-proto.h"
#include "plugins/local/local-zygote-py.h" /* LCL_ZYGOTE_PY: zygote/zygote.py as a string */

_Static_assert(LCL_CG_NCTRL <= LCL_XR_CG_MAX, "a request carries a tasks file per controller");

/* A zygote is retired after this many execs: its children share its
 * memory layout and hash seed, so a fresh one now and then bounds that. */
#define ZYG_MAX_USES 256
#define ZYG_MAX_IDLE 8
#define ZYG_HELLO_MS 20000
#define ZYG_MAX_REQUEST (96 * 1024)

struct lcl_zyg {
    struct lcl_zyg *next;
    char *key;
    pid_t pid;
    int pidfd;
    int sock;
    unsigned uses;
    pid_t owner;         /* the process that started it (a fork of ours must not use it) */
    struct lcl_id id;    /* its host id, held while it lives (local-ids.c) */
};

static pthread_mutex_t zyg_lock = PTHREAD_MUTEX_INITIALIZER;

/* One exec through a zygote. */
struct zexec {
    struct lcl_prov *p;
    const char *const *zygote;   /* the template's words: interpreter, modules */
    const sbx_exec_spec_v1 *spec;
    size_t script;               /* index of the script in spec->argv */
    struct lcl_zyg *z;           /* checked out */
    bool forked;                 /* the zygote forked the exec's child */
    bool notsup;                 /* no zygote to be had: back to exec */
    bool died;                   /* the zygote died with the exec in flight */
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void zyg_kill(struct lcl_zyg *z)
{
    if (!z)
        return;
    close_fd(&z->sock);
    if (z->pidfd >= 0) {
        syscall(SYS_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        while (waitid((idtype_t)P_PIDFD, (id_t)z->pidfd, &si, WEXITED | __WALL) < 0 &&
               errno == EINTR)
            ;
    }
    close_fd(&z->pidfd);
    lcl_id_give(&z->id);
    free(z->key);
    free(z);
}

/* A zygote of the process we were forked from: forget it (our copies of
 * its descriptors only), it is not ours to use or end. */
static void zyg_forget(struct lcl_zyg *z)
{
    close_fd(&z->sock);
    close_fd(&z->pidfd);
    lcl_id_give(&z->id); /* our copy: the lock stays with the description */
    free(z->key);
    free(z);
}

static bool zyg_alive(const struct lcl_zyg *z)
{
    struct pollfd pf = {z->pidfd, POLLIN, 0};
    return poll(&pf, 1, 0) == 0;
}

void lcl_zyg_fini(struct lcl_prov *p)
{
    pthread_mutex_lock(&zyg_lock);
    struct lcl_zyg *z = p->zyg_idle;
    p->zyg_idle = NULL;
    pthread_mutex_unlock(&zyg_lock);
    while (z) {
        struct lcl_zyg *n = z->next;
        if (z->owner == getpid())
            zyg_kill(z);
        else
            zyg_forget(z);
        z = n;
    }
}

/* ---- what may go through a zygote ---- */

/* Interpreter flags that take no argument and change nothing a fork of
 * an interpreter started with them would not have. */
static bool python_flag(const char *a)
{
    static const char *const ok[] = {"-S", "-s", "-E", "-I", "-B", "-u", "-O", "-OO", "-b",
                                     "-bb", "-q", "-P", "-R"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(a, ok[i]))
            return true;
    return false;
}

/* The index of the script in @argv, or 0 when @argv is not the zygote's
 * interpreter running a script. */
static size_t script_index(const char *const *zygote, const char *const *argv)
{
    if (!zygote || !zygote[0] || !argv || !argv[0] || strcmp(argv[0], zygote[0]))
        return 0;
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strncmp(base, "python", 6))
        return 0;    /* the only kind of zygote this provider has */
    size_t i = 1;
    while (argv[i] && python_flag(argv[i]))
        i++;
    if (!argv[i] || argv[i][0] == '-' || !argv[i][0])
        return 0;    /* -c, -m, stdin, an unknown flag: the plain way */
    return i;
}

/* ---- the helper library, next to local.so ---- */

static char helper_path[LCL_PATH_MAX];
static pthread_once_t helper_once = PTHREAD_ONCE_INIT;

static void helper_find(void)
{
    Dl_info info;
    if (!dladdr((void *)&lcl_zyg_fini, &info) || !info.dli_fname)
        return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return;
    int dl = (int)(slash - info.dli_fname);
    /* Installed: beside local.so; in a build tree local.so is in .libs/. */
    const char *const cand[] = {"/local-zygote.so", "/../local-zygote.so"};
    for (size_t i = 0; i < sizeof cand / sizeof *cand; i++) {
        char path[LCL_PATH_MAX];
        int n = snprintf(path, sizeof path, "%.*s%s", dl, info.dli_fname, cand[i]);
        if (n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0 &&
            realpath(path, helper_path))
            return;
    }
    helper_path[0] = '\0';
}

/* ---- starting a zygote ---- */

/* A zygote cannot be had: say why once (later execs go the plain way)
 * and answer SBX_E_NOTSUP. */
__attribute__((format(printf, 2, 3)))
static int unusable(struct lcl_prov *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&zyg_lock);
    bool first = !p->zyg_broken;
    p->zyg_broken = true;
    pthread_mutex_unlock(&zyg_lock);
    if (first)
        p->host->log(p->h, SBX_LOG_WARNING, "%s; python runs start afresh (no zygote)", msg);
    return p->host->set_error(p->h, SBX_E_NOTSUP, "%s", msg);
}

static bool env_for_zygote(const char *kv)
{
    return !strncmp(kv, "PYTHON", 6) || !strncmp(kv, "LANG=", 5) || !strncmp(kv, "LC_", 3);
}

/* The zygote reads the exec's PYTHON* variables on the host, outside any
 * sandbox: only those that name no path, module or file may go there
 * (PYTHONPATH=/tmp/x would import /tmp/x/typing.py of the host as us).
 * An exec with any other goes the plain way, where its interpreter reads
 * them inside its sandbox. */
static bool env_zygote_safe(const char *kv)
{
    static const char *const ok[] = {
        "PYTHONHASHSEED=", "PYTHONDONTWRITEBYTECODE=", "PYTHONUNBUFFERED=", "PYTHONIOENCODING=",
        "PYTHONUTF8=", "PYTHONOPTIMIZE=", "PYTHONNOUSERSITE=", "PYTHONSAFEPATH=",
        "PYTHONFAULTHANDLER=", "PYTHONINTMAXSTRDIGITS=", "PYTHONWARNDEFAULTENCODING=",
        "PYTHONCOERCECLOCALE=", "PYTHONNODEBUGRANGES=", "PYTHONVERBOSE=", "PYTHONDEBUG="};
    if (strncmp(kv, "PYTHON", 6))
        return true;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strncmp(kv, ok[i], strlen(ok[i])))
            return true;
    return false;
}

/* Whether @path lies in one of the host directories bound read-only into
 * every sandbox at the same path. */
static bool under_bind(const struct lcl_prov *p, const char *path)
{
    for (size_t i = 0; i < p->n_binds; i++) {
        const struct lcl_bind *b = &p->binds[i];
        size_t n = strlen(b->path);
        if (!b->link && b->is_dir && !strncmp(path, b->path, n) && path[n] == '/')
            return true;
    }
    return false;
}

/* The interpreter's absolute path along the exec's PATH.  The zygote runs
 * it on the host, not in a sandbox: only a file that is, symlinks
 * resolved, in a directory every sandbox sees read-only at the same path
 * (so the very interpreter the plain exec would find there, never one a
 * PATH entry like /tmp/bin finds on the host). */
static char *bound_exe(const struct lcl_prov *p, const char *path)
{
    char *real = path[0] == '/' ? realpath(path, NULL) : NULL;
    if (real && under_bind(p, real) && access(real, X_OK) == 0)
        return real;
    free(real);
    return NULL;
}

static char *find_interp(const struct lcl_prov *p, const struct lcl_child *c, const char *name)
{
    if (strchr(name, '/'))
        return bound_exe(p, name);
    for (char **d = c->path_dirs; d && *d; d++) {
        char *path = (*d)[0] == '/' ? lcl_join(*d, name) : NULL;
        char *real = path ? bound_exe(p, path) : NULL;
        free(path);
        if (real)
            return real;
    }
    return NULL;
}

/* What a zygote is for: the interpreter, its flags, the modules, and the
 * environment its start reads.  One string, fields separated by \x1f. */
static char *zyg_key(const struct zexec *x, const struct lcl_child *c)
{
    size_t len = 1;
    for (size_t i = 0; i < x->script; i++)
        len += strlen(x->spec->argv[i]) + 1;
    for (size_t i = 1; x->zygote[i]; i++)
        len += strlen(x->zygote[i]) + 1;
    for (char **e = c->envp; *e; e++)
        if (env_for_zygote(*e))
            len += strlen(*e) + 1;
    char *key = malloc(len + 4);
    if (!key)
        return NULL;
    char *w = key;
    for (size_t i = 0; i < x->script; i++)
        w += sprintf(w, "%s\x1f", x->spec->argv[i]);
    *w++ = '\x1e';
    for (size_t i = 1; x->zygote[i]; i++)
        w += sprintf(w, "%s\x1f", x->zygote[i]);
    *w++ = '\x1e';
    for (char **e = c->envp; *e; e++)
        if (env_for_zygote(*e))
            w += sprintf(w, "%s\x1f", *e);
    *w = '\0';
    return key;
}

struct buf {
    char *d;
    size_t len, cap;
    bool nomem;
};
static void put(struct buf *b, const void *d, size_t n);
static void put_str(struct buf *b, const char *s);
static int send_layout(const struct lcl_prov *p, const struct lcl_child *c, int sock);

struct lcl_clone_args_z {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static int zyg_spawn(struct zexec *x, const struct lcl_child *c, char *key,
                     struct lcl_zyg **out)
{
    struct lcl_prov *p = x->p;
    *out = NULL;
    pthread_once(&helper_once, helper_find);
    if (!helper_path[0]) {
        free(key);
        return unusable(p, "zygote: local-zygote.so is not beside local.so");
    }
    char *interp = find_interp(p, c, x->spec->argv[0]);
    size_t nz = 0, ne = 0;
    while (x->zygote[nz])
        nz++;
    for (char **e = c->envp; *e; e++)
        ne += env_for_zygote(*e);
    /* interp, flags, -c, script, tag, helper, modules, NULL */
    char **argv = calloc(x->script + nz + 5, sizeof *argv);
    char **envp = calloc(ne + 1, sizeof *envp);
    struct lcl_zyg *z = calloc(1, sizeof *z);
    int sv[2] = {-1, -1};
    if (interp && (!argv || !envp || !z)) {
        free(interp);
        free(argv);
        free(envp);
        free(z);
        free(key);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    if (!interp || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = errno;
        free(interp);
        free(argv);
        free(envp);
        free(z);
        free(key);
        return unusable(p, "zygote: cannot start %s: %s", x->spec->argv[0],
                        interp ? strerror(e) : "not found along the sandbox's PATH");
    }
    size_t k = 0;
    argv[k++] = interp;
    for (size_t i = 1; i < x->script; i++)
        argv[k++] = (char *)x->spec->argv[i];
    argv[k++] = (char *)"-c";
    argv[k++] = (char *)LCL_ZYGOTE_PY;
    argv[k++] = (char *)"polysandbox-zygote";
    argv[k++] = helper_path;
    for (size_t i = 1; i < nz; i++)
        argv[k++] = (char *)x->zygote[i];
    size_t m = 0;
    for (char **e = c->envp; *e; e++)
        if (env_for_zygote(*e))
            envp[m++] = *e;

    int pidfd = -1;
    struct lcl_clone_args_z ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_PIDFD;
    ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
    ca.exit_signal = 0; /* no SIGCHLD: the host's handlers never see it */
    long pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid == 0) {
        /* A fork of a multi-threaded process: system calls only. */
        if (sv[1] == 3)
            fcntl(3, F_SETFD, 0);
        else if (dup2(sv[1], 3) < 0)
            _exit(127);
        int nul = open("/dev/null", O_RDWR);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
            _exit(127);
        syscall(SYS_close_range, 4u, ~0u, 0);
        /* Not the caller's directory: nothing of it is on the zygote's path. */
        if (chdir("/") < 0)
            _exit(127);
        lcl_signals_default();
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int e = errno;
    free(interp);
    free(argv);
    free(envp);
    close_fd(&sv[1]);
    if (pid < 0) {
        close_fd(&sv[0]);
        free(z);
        free(key);
        return unusable(p, "zygote: clone3: %s", strerror(e));
    }
    *z = (struct lcl_zyg){NULL, key, (pid_t)pid, pidfd, sv[0], 0, getpid(), {0, 0, -1, -1}};
    /* The root it builds, before its imports, in namespaces of its own. */
    if (send_layout(p, c, z->sock) < 0) {
        zyg_kill(z);
        return unusable(p, "zygote: sending its layout: %s", strerror(errno));
    }
    /* Ready once it has loaded the helper, built its root and imported
     * the modules; or a struct lcl_msg says which step failed. */
    char hello[sizeof(struct lcl_msg)];
    struct pollfd pf = {z->sock, POLLIN, 0};
    ssize_t n = -1;
    int pr;
    while ((pr = poll(&pf, 1, ZYG_HELLO_MS)) < 0 && errno == EINTR)
        ;
    if (pr > 0)
        while ((n = recv(z->sock, hello, sizeof hello, MSG_DONTWAIT)) < 0 && errno == EINTR)
            ;
    if (n == (ssize_t)sizeof(struct lcl_msg)) {
        struct lcl_msg msg;
        memcpy(&msg, hello, sizeof msg);
        msg.what[sizeof msg.what - 1] = '\0';
        zyg_kill(z);
        return unusable(p, "zygote: building its root: %s: %s", msg.what, strerror(msg.err));
    }
    if (n != (ssize_t)strlen(LCL_ZYG_HELLO) || memcmp(hello, LCL_ZYG_HELLO, (size_t)n)) {
        zyg_kill(z);
        return unusable(p, "zygote: %s did not start (%s)", x->spec->argv[0],
                        pr == 0 ? "no answer" : "it exited");
    }
    /* Its user namespace maps the sandbox user only, as each exec's own
     * did (the zygote itself, the host's root, has no name there), to a
     * host id of its own while it lives.  None free: this exec goes the
     * plain way. */
    if (lcl_id_take(p, &z->id)) {
        zyg_kill(z);
        x->notsup = true;
        return SBX_E_NOTSUP;
    }
    int me = -lcl_id_maps(&z->id, z->pid);
    if (me) {
        zyg_kill(z);
        return unusable(p, "zygote: writing its uid/gid map: %s", strerror(me));
    }
    *out = z;
    return 0;
}

/* An idle zygote for @key (owned by the call: freed or kept), or a new one. */
static int zyg_take(struct zexec *x, const struct lcl_child *c, bool fresh)
{
    char *key = zyg_key(x, c);
    if (!key)
        return x->p->host->set_error(x->p->h, SBX_E_NOMEM, "out of memory");
    if (!fresh) {
        struct lcl_zyg *stale = NULL;
        pid_t self = getpid();
        pthread_mutex_lock(&zyg_lock);
        for (struct lcl_zyg **pp = &x->p->zyg_idle; *pp;) {
            struct lcl_zyg *z = *pp;
            if (z->owner != self) {
                *pp = z->next;
                z->next = stale;
                stale = z;
                continue;
            }
            if (!strcmp(z->key, key)) {
                x->z = z;
                *pp = z->next;
                z->next = NULL;
                break;
            }
            pp = &z->next;
        }
        pthread_mutex_unlock(&zyg_lock);
        while (stale) {
            struct lcl_zyg *n = stale->next;
            zyg_forget(stale);
            stale = n;
        }
        if (x->z) {
            free(key);
            return 0;
        }
    }
    int ret = zyg_spawn(x, c, key, &x->z);
    x->notsup = ret == SBX_E_NOTSUP;
    return ret;
}

static void zyg_put(struct lcl_prov *p, struct lcl_zyg *z)
{
    size_t n = 0;
    pthread_mutex_lock(&zyg_lock);
    for (struct lcl_zyg *i = p->zyg_idle; i; i = i->next)
        n++;
    if (n < ZYG_MAX_IDLE) {
        z->next = p->zyg_idle;
        p->zyg_idle = z;
        z = NULL;
    }
    pthread_mutex_unlock(&zyg_lock);
    zyg_kill(z);
}

/* ---- the request ---- */

static void put(struct buf *b, const void *d, size_t n)
{
    if (b->nomem)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *nd = realloc(b->d, cap);
        if (!nd) {
            b->nomem = true;
            return;
        }
        b->d = nd;
        b->cap = cap;
    }
    memcpy(b->d + b->len, d, n);
    b->len += n;
}

static void put_str(struct buf *b, const char *s)
{
    put(b, s, strlen(s) + 1);
}

/* The layout message (wire/zygote-proto.h): where the root is built, the
 * shared skeleton, the system binds, our paths to cover. */
static int send_layout(const struct lcl_prov *p, const struct lcl_child *c, int sock)
{
    struct buf b = {0};
    struct lcl_zyg_layout l = {LCL_ZYG_LAYOUT_MAGIC, 0, (uint32_t)p->n_masks, 0};
    for (size_t i = 0; i < p->n_binds; i++)
        l.n_binds += !p->binds[i].link;
    put(&b, &l, sizeof l);
    put_str(&b, p->skel);
    put_str(&b, c->skel_src ? c->skel_src : "");
    for (size_t i = 0; i < p->n_binds; i++)
        if (!p->binds[i].link)
            put_str(&b, p->binds[i].path);
    for (size_t i = 0; i < p->n_masks; i++)
        put_str(&b, p->masks[i]);
    if (b.nomem || !c->skel_src) {
        free(b.d);
        errno = b.nomem ? ENOMEM : EINVAL;
        return -1;
    }
    ssize_t n;
    while ((n = send(sock, b.d, b.len, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    free(b.d);
    return n == (ssize_t)b.len ? 0 : -1;
}

/* The request (wire/exec-req.h) with its init's part: the program's
 * argv from the script on, the environment, and what the init needs
 * (flags, the limits' rlimits and floors, /tmp options, the filter, the
 * v1 tasks files; @leave_fd the parents' when @leave_mask is all of
 * them).  The work directory's descriptor is set per attempt.  0,
 * -ENOMEM or -E2BIG. */
static int build_request(const struct zexec *x, const struct lcl_child *c, uint32_t *tasks_mask,
                         uint32_t leave_mask, const int *leave_fd, struct buf *b,
                         int fds[LCL_XR_MAX_FDS], int *nfds)
{
    const struct lcl_prov *p = x->p;
    struct lcl_xreq r;
    lcl_launch_xreq(c, -1, &r);
    r.parts = LCL_XR_INIT;
    r.argv = (char **)(x->spec->argv + x->script);
    r.tmp_opts = c->tmp_opts;
    r.bpf = p->bpf;
    r.fd_sync = c->fd_sync;
    struct lcl_xr_init *in = &r.init;
    in->flags = (c->drop_groups ? LCL_XR_F_DROP_GROUPS : 0) |
                (c->net_none ? LCL_XR_F_NET_NONE : 0);
    in->cap_last = p->cap_last;
    in->rl_data = c->rl_data;
    in->rl_nproc = c->rl_nproc;
    in->bpf_len = p->bpf ? (uint32_t)p->bpf_len : 0;
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        r.fd_tasks[i] = c->fd_tasks[i];
        r.fd_leave[i] = leave_fd[i];
        if (c->fd_tasks[i] >= 0)
            in->tasks_mask |= 1u << i;
    }
    *tasks_mask = in->tasks_mask;
    in->leave_mask = leave_mask == in->tasks_mask ? leave_mask : 0;
    return lcl_xr_encode(&r, &b->d, &b->len, fds, nfds);
}

/* Send the request; the zygote answers with its child's pid and a pidfd.
 * 1: the zygote is gone before forking (nothing started); 2: it could not
 * clone the child. */
static int ask(struct zexec *x, const struct buf *b, const int *fds, int nfds, pid_t *pid,
               int *pidfd)
{
    struct lcl_zyg *z = x->z;
    char cbuf[CMSG_SPACE(sizeof(int) * 16)];
    struct iovec iov = {b->d, b->len};
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    memset(cbuf, 0, sizeof cbuf);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    ssize_t n;
    while ((n = sendmsg(z->sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return 1;
    int32_t got = 0;
    char rbuf[CMSG_SPACE(sizeof(int))];
    iov = (struct iovec){&got, sizeof got};
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = rbuf;
    mh.msg_controllen = sizeof rbuf;
    while ((n = recvmsg(z->sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    if (n == (ssize_t)sizeof got && got < 0 && !cm)
        return 2;
    if (n != (ssize_t)sizeof got || !cm || cm->cmsg_type != SCM_RIGHTS || got <= 0) {
        if (cm && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
            close(fd);
        }
        return 1;
    }
    memcpy(pidfd, CMSG_DATA(cm), sizeof *pidfd);
    *pid = (pid_t)got;
    return 0;
}

/* lcl_spawn.start: the exec's init is a zygote's child, in its fresh
 * namespaces already, waiting for the go. */
static int zyg_start(void *ud, struct lcl_child *c, pid_t *pid, int *pidfd)
{
    struct zexec *x = ud;
    struct lcl_prov *p = x->p;
    for (char **e = c->envp; *e; e++)
        if (!env_zygote_safe(*e)) {
            x->notsup = true;
            return p->host->set_error(p->h, SBX_E_NOTSUP, "zygote: %.*s is for the sandbox only",
                                      (int)strcspn(*e, "="), *e);
        }
    struct buf b = {0};
    uint32_t mask = 0, leave = 0;
    /* v1: the tasks files of the exec's cgroups' parents, which the init
     * moves itself to once its sandbox is empty, before it reports the
     * status: then the status is the exec's end (c->empty_before_status),
     * and the init's exit (the namespaces' teardown, an RCU grace period
     * for the mounts) overlaps with what we do next.  Without them (v2,
     * no cgroups, an open fails) its exit is the end, as for a clone. */
    int leave_fd[LCL_CG_NCTRL];
    for (int i = 0; i < LCL_CG_NCTRL; i++) {
        leave_fd[i] = -1;
        if (c->fd_tasks[i] < 0 || !p->cg.base[i])
            continue;
        char path[LCL_PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/tasks", p->cg.base[i]);
        if (n > 0 && (size_t)n < sizeof path &&
            (leave_fd[i] = open(path, O_WRONLY | O_CLOEXEC)) >= 0)
            leave |= 1u << i;
    }
    int fds[LCL_XR_MAX_FDS], nfds = 0;
    int ret = build_request(x, c, &mask, leave, leave_fd, &b, fds, &nfds);
    if (leave != mask)
        leave = 0;
    c->empty_before_status = c->leave_cgroup = leave != 0;
    if (ret == -ENOMEM) {
        ret = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    } else if (ret || b.len > ZYG_MAX_REQUEST) {
        /* One datagram, within the socket's buffer: larger argv or
         * environments go the plain way. */
        x->notsup = true;
        ret = p->host->set_error(p->h, SBX_E_NOTSUP, "zygote: request of %zu bytes",
                                 ret ? (size_t)LCL_XR_MAX : b.len);
    }
    int wfd = -1;
    /* A reused zygote may have died since: then a fresh one, once. */
    for (int attempt = 0; !ret; attempt++) {
        bool reused = false;
        if (!x->z) {
            ret = zyg_take(x, c, attempt > 0);
            if (ret)
                break;
            reused = x->z->uses > 0;
        }
        /* The work directory, as a detached copy of its mount (the init's
         * mount namespace has nothing of the host's to bind it from),
         * seen through the zygote's user namespace (local-ids.c). */
        close_fd(&wfd);
        int ns = p->ids_per_exec ? lcl_id_userns(&x->z->id, x->z->pid) : -1;
        if (!p->ids_per_exec || ns >= 0)
            wfd = lcl_work_detached(c->sb, ns);
        if (wfd < 0) {
            int e = errno;
            ret = p->host->set_error(p->h, e == ELOOP || e == ENOTDIR ? SBX_E_PATH : SBX_E_IO,
                                     "zygote: a detached copy of %s: %s", c->sb->work,
                                     e == ELOOP || e == ENOTDIR
                                     ? "it or its sandbox directory is a link: refused"
                                     : strerror(e));
            break;
        }
        fds[LCL_XR_FD_WORK] = wfd;
        int a = ask(x, &b, fds, nfds, pid, pidfd);
        if (a == 0) {
            x->forked = true;
            x->z->uses++;
            break;
        }
        if (a == 2) {
            ret = p->host->set_error(p->h, SBX_E_IO,
                                     "zygote: it could not clone the sandbox init");
            break;
        }
        zyg_kill(x->z);
        x->z = NULL;
        if (!reused || attempt > 0)
            ret = p->host->set_error(p->h, SBX_E_BACKEND, "zygote: it died before forking");
    }
    free(b.d);
    close_fd(&wfd);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        close_fd(&leave_fd[i]);
    return ret;
}

int lcl_zyg_exec(struct lcl_prov *p, struct lcl_sb *sb, const char *const *zygote,
                 const sbx_exec_spec_v1 *spec, const sbx_output_sink_v1 *sink,
                 sbx_exec_outcome_v1 *out)
{
    struct zexec x = {p, zygote, spec, 0, NULL, false, false, false};
    pthread_mutex_lock(&zyg_lock);
    bool broken = p->zyg_broken;
    pthread_mutex_unlock(&zyg_lock);
    /* Not for a sandbox made before ids were per exec (its files belong
     * to the id then shared). */
    /* Egress (local-egress.c) is attached to an init we clone ourselves. */
    if (broken || sb->rootfs || sb->egress || !(x.script = script_index(zygote, spec->argv)) ||
        (p->ids_per_exec && sb->work_uid != LCL_SANDBOX_UID) || !lcl_skel_shared(p))
        return p->host->set_error(p->h, SBX_E_NOTSUP, "this exec cannot go through a zygote");
    struct lcl_spawn sp = {zyg_start, &x, true};
    int ret = lcl_exec_spawn(p, sb, spec, sink, out, &sp);
    if (x.z) {
        bool alive = zyg_alive(x.z);
        /* "done": it reaps its child and waits for the next request. */
        if (alive && x.forked && send(x.z->sock, "d", 1, MSG_NOSIGNAL) != 1)
            alive = false;
        x.died = x.forked && !alive;
        if (alive && x.z->uses < ZYG_MAX_USES)
            zyg_put(p, x.z);
        else
            zyg_kill(x.z);
    }
    if (x.notsup)
        return SBX_E_NOTSUP;
    if (ret && x.died)
        return p->host->set_error(p->h, SBX_E_BUSY,
                                  "the zygote died while the exec ran (it is restarted; "
                                  "the exec may run again)");
    return ret;
}

/* ---- the launcher (launch.h): an exec_zygote's init is the zygote's child ---- */

static bool zyg_fits(const struct lcl_launch *l)
{
    return l->sp != NULL;
}

/* The init started by l->sp instead of cloned (a zygote's child, which
 * joins v1 cgroups through the tasks files it was given). */
static int zyg_launch(struct lcl_launch *l)
{
    bool joined = false;
    l->c->new_cgroup_ns = true;
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        joined = joined || l->c->fd_tasks[i] >= 0;
    int ret = l->sp->start(l->sp->ud, l->c, l->pid, l->pidfd);
    if (ret)
        return ret;
    return lcl_cg_attach(l->p, l->cg, *l->pid, joined);
}

const struct lcl_launcher lcl_launch_zygote = {
    .name = "zygote",
    .fits = zyg_fits,
    .prepare = lcl_launch_own_cgroup,
    .start = zyg_launch,
};
