/* plugins/local/launch/exec.c - the supervisor side of one exec
 *
 * The calling thread supervises: it writes the files, has a launcher
 * (launch.h: a zygote, a spare of the daemon, our own clone) make the
 * cgroup and start the sandbox init, writes its id maps, releases it
 * (both only when the init is our own), then polls stdout, stderr, stdin, the
 * init's pidfd and the report pipe against a CLOCK_MONOTONIC deadline.
 * Every kill reaches every process: the cgroup (freeze + kill, or
 * cgroup.kill) and the init through its pidfd (the kernel then kills the
 * whole pid namespace).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_LINUX_SCHED_H
#include <linux/sched.h>
#endif

#include "launch.h"
#include "../wire/locald-proto.h"

enum kill_reason { KILL_NONE, KILL_TIMEOUT, KILL_OUTPUT, KILL_CPU, KILL_CANCEL };

struct run {
    struct lcl_prov *p;
    struct lcl_sb *sb;
    const sbx_exec_spec_v1 *spec;
    const sbx_output_sink_v1 *sink;
    sbx_exec_outcome_v1 *out;
    const struct lcl_spawn *sp;     /* exec_zygote: the zygote's start, or NULL */
    struct lcl_egress net;          /* network = egress: its slirp4netns */
    struct lcl_child c;
    struct lcl_cg_run cg;
    int in[2], outp[2], errp[2], sync[2], rep[2], st[2];
    int pidfd;
    pid_t pid;
    bool reaped;
    bool stop_delivery;
    enum kill_reason killed;
    size_t stdin_off;
    /* Streamed stdin (spec->stdin_fd): what was read and not yet written. */
    bool in_stream, in_eof;
    char in_buf[16384];
    size_t in_len, in_off;
    bool sig_eof;               /* spec->signal_fd said end of file */
    uint64_t t0, t_start, t_end;
    struct lcl_msg msg;
    bool have_msg;
    int locald;                 /* the daemon's connection: its prepared sandbox runs it */
    struct lcl_id id;           /* the host id of our init (in-process) */
    struct lcl_nanny *nanny;    /* the vfork launcher's thread, or NULL */
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void free_strv(char **v)
{
    if (!v)
        return;
    for (char **s = v; *s; s++)
        free(*s);
    free(v);
}

/* ---- preparation ---- */

static int env_set(char ***envp, size_t *n, const char *key, const char *val)
{
    size_t kl = strlen(key);
    char *kv = malloc(kl + strlen(val) + 2);
    if (!kv)
        return SBX_E_NOMEM;
    sprintf(kv, "%s=%s", key, val);
    for (size_t i = 0; i < *n; i++)
        if (!strncmp((*envp)[i], key, kl) && (*envp)[i][kl] == '=') {
            free((*envp)[i]);
            (*envp)[i] = kv;
            return 0;
        }
    char **nv = realloc(*envp, (*n + 2) * sizeof *nv);
    if (!nv) {
        free(kv);
        return SBX_E_NOMEM;
    }
    nv[(*n)++] = kv;
    nv[*n] = NULL;
    *envp = nv;
    return 0;
}

static bool env_key_ok(const char *k)
{
    return k && *k && !strchr(k, '=');
}

/* Fixed base, then the sandbox's, then the exec's: never the host's. */
static int build_env(struct run *r)
{
    static const char *const base[][2] = {
        {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/work"}, {"LANG", "C.UTF-8"},
        {"TMPDIR", "/tmp"}, {"USER", "sandbox"}, {"LOGNAME", "sandbox"},
    };
    char **env = calloc(1, sizeof *env);
    size_t n = 0;
    int ret = env ? 0 : SBX_E_NOMEM;
    for (size_t i = 0; !ret && i < sizeof base / sizeof *base; i++)
        ret = env_set(&env, &n, base[i][0], base[i][1]);
    for (size_t i = 0; !ret && i < r->sb->n_env; i++)
        ret = env_set(&env, &n, r->sb->env[i].key, r->sb->env[i].value);
    for (size_t i = 0; !ret && i < r->spec->n_env; i++) {
        const sbx_kv_v1 *kv = &r->spec->env[i];
        if (!env_key_ok(kv->key) || !kv->value) {
            free_strv(env);
            return r->p->host->set_error(r->p->h, SBX_E_INVAL,
                                         "exec environment entry %zu: bad name '%s'", i,
                                         kv->key ? kv->key : "(null)");
        }
        ret = env_set(&env, &n, kv->key, kv->value);
    }
    if (ret) {
        free_strv(env);
        return r->p->host->set_error(r->p->h, ret, "out of memory building the environment");
    }
    r->c.envp = env;
    /* The PATH search list comes from the final environment. */
    const char *path = "/usr/local/bin:/usr/bin:/bin";
    for (size_t i = 0; i < n; i++)
        if (!strncmp(env[i], "PATH=", 5))
            path = env[i] + 5;
    size_t cnt = 2;
    for (const char *s = path; *s; s++)
        cnt += *s == ':';
    char **dirs = calloc(cnt, sizeof *dirs), *copy = strdup(path), *save = NULL;
    size_t k = 0;
    if (dirs && copy)
        for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
            if (!(dirs[k++] = strdup(t)))
                break;
    free(copy);
    if (!dirs || (k && !dirs[k - 1])) {
        free_strv(dirs);
        return r->p->host->set_error(r->p->h, SBX_E_NOMEM, "out of memory building PATH");
    }
    r->c.path_dirs = dirs;
    return 0;
}

static int build_cwd(struct run *r, char **cwd)
{
    const char *s = r->spec->cwd;
    *cwd = NULL;
    if (!s || !*s)
        *cwd = strdup("/work");
    else if (s[0] == '/')
        *cwd = strdup(s); /* a path of the sandbox's own view: harmless */
    else
        *cwd = lcl_join("/work", s);
    if (!*cwd)
        return r->p->host->set_error(r->p->h, SBX_E_NOMEM, "out of memory");
    return 0;
}

/* ---- output ---- */

/* Hands @n bytes to the core's sink, which holds the output caps: when it
 * says stop (past a cap, or the caller stopped), the command is killed. */
static void deliver(struct run *r, int stream, const char *buf, size_t n)
{
    if (r->stop_delivery || n == 0)
        return;
    if (r->sink && r->sink->write && r->sink->write(r->sink->ud, stream, buf, n) != 0) {
        r->stop_delivery = true;
        if (!r->killed)
            r->killed = KILL_OUTPUT;
    }
}

/* Reads what is there; returns false at EOF or error (fd then closed). */
static bool pump(struct run *r, int *fd, int stream)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) {
            deliver(r, stream, buf, (size_t)n);
            if ((size_t)n < sizeof buf)
                return true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return true;
        close_fd(fd);
        return false;
    }
}

static void feed_stdin(struct run *r)
{
    const char *d = r->spec->stdin_data;
    while (r->stdin_off < r->spec->stdin_len) {
        ssize_t n = write(r->in[1], d + r->stdin_off, r->spec->stdin_len - r->stdin_off);
        if (n > 0) {
            r->stdin_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        break; /* EPIPE: the command closed its stdin */
    }
    close_fd(&r->in[1]);
}

/* Streamed stdin: write what is held; at its end, close the pipe.  A
 * command that closed its stdin drops the rest (and we read no more). */
static void feed_stream(struct run *r)
{
    while (r->in_off < r->in_len) {
        ssize_t n = write(r->in[1], r->in_buf + r->in_off, r->in_len - r->in_off);
        if (n > 0) {
            r->in_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        r->in_eof = true; /* EPIPE */
        break;
    }
    r->in_off = r->in_len = 0;
    if (r->in_eof)
        close_fd(&r->in[1]);
}

/* stdin_fd is readable: take one chunk (it may block otherwise). */
static void read_stream(struct run *r)
{
    ssize_t n;

    while ((n = read(r->spec->stdin_fd, r->in_buf, sizeof r->in_buf)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0) {
        r->in_eof = true;
        close_fd(&r->in[1]);
        return;
    }
    r->in_len = (size_t)n;
    r->in_off = 0;
    feed_stream(r);
}

/* signal_fd is readable (the payload runs): each byte a signal for it.
 * The init forwards these to the payload's process group (jail/child.c:
 * lcl_child_forward); others are not ours to send. */
static void read_signals(struct run *r)
{
    unsigned char b[64];
    ssize_t n;

    while ((n = read(r->spec->signal_fd, b, sizeof b)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0) {
        r->sig_eof = true;
        return;
    }
    for (ssize_t i = 0; i < n; i++)
        if (sbx_signal_deliverable(b[i]) && r->pidfd >= 0 && !r->reaped)
            (void)syscall(SYS_pidfd_send_signal, r->pidfd, (int)b[i], NULL, 0);
}

static void read_report(struct run *r)
{
    struct lcl_msg m;
    ssize_t n;
    while ((n = read(r->rep[0], &m, sizeof m)) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof m) {
        if (!r->have_msg) {
            r->msg = m;
            r->msg.what[sizeof r->msg.what - 1] = '\0';
            r->have_msg = true;
        }
        return;
    }
    if (n < 0 && errno == EAGAIN)
        return;
    /* EOF: the payload exec'd (or everything died). */
    if (!r->t_start)
        r->t_start = lcl_now_mono();
    close_fd(&r->rep[0]);
}

/* ---- process control ---- */

static void kill_all(struct run *r)
{
    lcl_cg_kill(r->p, &r->cg);
    if (r->pidfd >= 0 && !r->reaped)
        syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
}

static void reap(struct run *r)
{
    if (r->reaped || r->pidfd < 0)
        return;
    if (r->locald >= 0) {
        /* The daemon's child: we wait for its end (the pid namespace
         * is empty by then); the daemon reaps it. */
        struct pollfd pf[2] = {{r->pidfd, POLLIN, 0}, {r->st[0], POLLIN, 0}};
        while (poll(pf, 2, -1) < 0 && errno == EINTR)
            ;
        r->reaped = true;
        return;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    while (waitid((idtype_t)P_PIDFD, (id_t)r->pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
        ;
    r->reaped = true;
}

static int write_maps(struct run *r)
{
    struct lcl_prov *p = r->p;
    char path[64], map[64];
    int e;
    if (p->root) {
        /* Its own id of the range (local-ids.c). */
        if ((e = lcl_id_maps(&r->id, r->pid)) < 0)
            return p->host->set_error(p->h, lcl_err_code(-e), "writing the uid/gid maps of %ld "
                                      "(uid %lu): %s", (long)r->pid, (unsigned long)r->id.uid,
                                      strerror(-e));
        return 0;
    }
    snprintf(path, sizeof path, "/proc/%ld/setgroups", (long)r->pid);
    if ((e = lcl_write_file(path, "deny")) < 0)
        return p->host->set_error(p->h, SBX_E_IO, "writing %s: %s", path, strerror(-e));
    snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)r->pid);
    snprintf(map, sizeof map, "%u %lu 1\n", LCL_SANDBOX_UID, (unsigned long)p->host_uid);
    if ((e = lcl_write_file(path, map)) < 0)
        return p->host->set_error(p->h, lcl_err_code(-e), "writing '%.*s' to %s: %s",
                                  (int)strlen(map) - 1, map, path, strerror(-e));
    snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)r->pid);
    snprintf(map, sizeof map, "%u %lu 1\n", LCL_SANDBOX_GID, (unsigned long)p->host_gid);
    if ((e = lcl_write_file(path, map)) < 0)
        return p->host->set_error(p->h, lcl_err_code(-e), "writing '%.*s' to %s: %s",
                                  (int)strlen(map) - 1, map, path, strerror(-e));
    return 0;
}

/* The go: with it, when the init's id is its own, the work directory as
 * a detached copy of its mount idmapped through the init's user
 * namespace (its files are stored as 1000: local-ids.c), which the init
 * attaches on /work instead of binding it. */
static int release_init(struct run *r)
{
    struct lcl_prov *p = r->p;
    int wfd = -1;
    if (r->c.work_by_sync) {
        int ns = lcl_id_userns(&r->id, r->pid);
        wfd = ns < 0 ? -1 : lcl_work_detached(r->sb, ns);
        if (wfd < 0) {
            int e = errno;
            return p->host->set_error(p->h, e == ELOOP || e == ENOTDIR ? SBX_E_PATH : SBX_E_IO,
                                      "the work directory %s for uid %lu: %s", r->sb->work,
                                      (unsigned long)r->id.uid,
                                      e == ELOOP || e == ENOTDIR
                                      ? "it or its sandbox directory is a link: refused"
                                      : strerror(e));
        }
    }
    int e = -lcl_fds_send(r->sync[1], "g", 1, &wfd, wfd >= 0 ? 1 : 0);
    if (wfd >= 0)
        close(wfd);
    if (e)
        return p->host->set_error(p->h, SBX_E_IO, "releasing the sandbox init: %s", strerror(e));
    return 0;
}

/* ---- the loop ---- */

static int poll_ms(uint64_t now, uint64_t until)
{
    if (until <= now)
        return 0;
    uint64_t ms = (until - now + 999999) / 1000000;
    return ms > 1000 ? 1000 : (int)ms;
}

static void supervise(struct run *r)
{
    const uint64_t deadline = r->t0 + r->spec->timeout_ns;
    const uint64_t cpu_limit = r->sb->limits.cpu_ns;
    /* CPU use cannot pass the limit before wall time limit/ncpu. */
    const uint64_t cpu_watch = r->t0 + cpu_limit / (uint64_t)(r->p->ncpu > 0 ? r->p->ncpu : 1);
    bool exited = false;
    while (!exited && !r->killed) {
        struct pollfd pf[9];
        int n = 0, i_out = -1, i_err = -1, i_in = -1, i_pid, i_rep = -1, i_st = -1, i_cancel = -1;
        int i_sin = -1, i_sig = -1;
        if (r->outp[0] >= 0)
            pf[i_out = n++] = (struct pollfd){r->outp[0], POLLIN, 0};
        if (r->errp[0] >= 0)
            pf[i_err = n++] = (struct pollfd){r->errp[0], POLLIN, 0};
        /* Streamed stdin: read more only once the command took the last. */
        if (r->in[1] >= 0 && (!r->in_stream || r->in_off < r->in_len))
            pf[i_in = n++] = (struct pollfd){r->in[1], POLLOUT, 0};
        else if (r->in[1] >= 0 && !r->in_eof)
            pf[i_sin = n++] = (struct pollfd){r->spec->stdin_fd, POLLIN, 0};
        if (r->rep[0] >= 0)
            pf[i_rep = n++] = (struct pollfd){r->rep[0], POLLIN, 0};
        pf[i_pid = n++] = (struct pollfd){r->pidfd, POLLIN, 0};
        /* Signals wait in their pipe until the payload runs (the init
         * forwards them from then on). */
        if (r->spec->signal_fd >= 0 && !r->sig_eof && r->t_start)
            pf[i_sig = n++] = (struct pollfd){r->spec->signal_fd, POLLIN, 0};
        if (r->spec->cancel_fd >= 0)
            pf[i_cancel = n++] = (struct pollfd){r->spec->cancel_fd, POLLIN, 0};
        /* A prepared sandbox's init (and a zygote's, empty_before_status)
         * sends the status once the sandbox is empty, then tears its
         * namespaces down: the status is the end. */
        if ((r->locald >= 0 || r->c.empty_before_status) && r->st[0] >= 0)
            pf[i_st = n++] = (struct pollfd){r->st[0], POLLIN, 0};
        uint64_t now = lcl_now_mono();
        uint64_t wake = deadline;
        if (r->cg.active && cpu_limit) {
            uint64_t next = now >= cpu_watch ? now + 50000000u : cpu_watch;
            if (next < wake)
                wake = next;
        }
        int pr = poll(pf, (nfds_t)n, poll_ms(now, wake));
        if (pr < 0 && errno != EINTR)
            break;
        now = lcl_now_mono();
        if (pr > 0) {
            if (i_rep >= 0 && pf[i_rep].revents)
                read_report(r);
            if (i_out >= 0 && pf[i_out].revents)
                pump(r, &r->outp[0], SBX_STREAM_STDOUT);
            if (i_err >= 0 && pf[i_err].revents)
                pump(r, &r->errp[0], SBX_STREAM_STDERR);
            if (i_in >= 0 && pf[i_in].revents)
                r->in_stream ? feed_stream(r) : feed_stdin(r);
            if (i_sin >= 0 && pf[i_sin].revents)
                read_stream(r);
            if (i_sig >= 0 && pf[i_sig].revents)
                read_signals(r);
            if (pf[i_pid].revents || (i_st >= 0 && pf[i_st].revents))
                exited = true;
            if (!exited && i_cancel >= 0 && pf[i_cancel].revents)
                r->killed = KILL_CANCEL;
        }
        if (r->killed)
            break;
        if (!exited && now >= deadline) {
            r->killed = KILL_TIMEOUT;
            break;
        }
        if (!exited && r->cg.active && cpu_limit && now >= cpu_watch) {
            int64_t used = lcl_cg_cpu_ns(r->p, &r->cg);
            if (used >= 0 && (uint64_t)used > cpu_limit)
                r->killed = KILL_CPU;
        }
    }
    r->t_end = lcl_now_mono();
    if (!exited)
        kill_all(r);
    reap(r);
    /* Output still in the pipes: the pid namespace is gone (or empty), so the write
     * ends are closed unless some other host process forked meanwhile. */
    for (int idle = 0; (r->outp[0] >= 0 || r->errp[0] >= 0) && idle < 1;) {
        struct pollfd pf[2];
        int n = 0, i_out = -1, i_err = -1;
        if (r->outp[0] >= 0)
            pf[i_out = n++] = (struct pollfd){r->outp[0], POLLIN, 0};
        if (r->errp[0] >= 0)
            pf[i_err = n++] = (struct pollfd){r->errp[0], POLLIN, 0};
        int pr = poll(pf, (nfds_t)n, 50);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            idle++;
            continue;
        }
        if (i_out >= 0 && pf[i_out].revents)
            pump(r, &r->outp[0], SBX_STREAM_STDOUT);
        if (i_err >= 0 && pf[i_err].revents)
            pump(r, &r->errp[0], SBX_STREAM_STDERR);
    }
    if (r->rep[0] >= 0) {
        int fl = fcntl(r->rep[0], F_GETFL);
        fcntl(r->rep[0], F_SETFL, fl | O_NONBLOCK);
        read_report(r);
    }
}

/* ---- the verdict ---- */

static int verdict(struct run *r)
{
    struct lcl_prov *p = r->p;
    sbx_exec_outcome_v1 *o = r->out;
    int status = 0;
    bool have_status = false;
    if (r->st[0] >= 0) {
        ssize_t n;
        while ((n = read(r->st[0], &status, sizeof status)) < 0 && errno == EINTR)
            ;
        have_status = n == (ssize_t)sizeof status;
    }
    uint64_t oom = lcl_cg_oom_kills(p, &r->cg);
    uint64_t pids_hit = lcl_cg_pids_max_hits(p, &r->cg);
    /* Final (the init is reaped): the pool's release reads them again. */
    r->cg.oom = oom;
    r->cg.pids_hits = pids_hit;
    r->cg.counted = r->reaped;
    o->cpu_ns = lcl_cg_cpu_ns(p, &r->cg);
    o->peak_memory_bytes = lcl_cg_peak(p, &r->cg);
    if (!r->t_start)
        r->t_start = r->t_end;
    o->start_ns = r->t_start - r->t0;
    o->exec_ns = r->t_end > r->t_start ? r->t_end - r->t_start : 0;
    o->exit_code = -1;
    o->signal = 0;

    if (r->have_msg && r->msg.kind == LCL_MSG_SETUP && !r->killed &&
        !strncmp(r->msg.what, LCL_STEP_CWD " ", sizeof LCL_STEP_CWD) &&
        (r->msg.err == ENOENT || r->msg.err == ENOTDIR))
        return p->host->set_error(p->h, SBX_E_INVAL, "working directory %s: %s in the sandbox",
                                  r->msg.what + sizeof LCL_STEP_CWD, r->msg.err == ENOENT
                                  ? "no such directory" : "not a directory");
    if (r->have_msg && r->msg.kind == LCL_MSG_SETUP && !r->killed)
        return p->host->set_error(p->h, r->msg.err == EPERM || r->msg.err == EACCES ? SBX_E_PERM
                                                                                   : SBX_E_IO,
                                  "sandbox setup failed: %s: %s", r->msg.what,
                                  strerror(r->msg.err));
    switch (r->killed) {
    case KILL_TIMEOUT:
        o->status = SBX_RUN_TIMEOUT;
        return SBX_OK;
    case KILL_OUTPUT:
        o->status = SBX_RUN_OUTPUT_LIMIT;
        return SBX_OK;
    case KILL_CPU:
        o->status = SBX_RUN_CPU_LIMIT;
        return SBX_OK;
    case KILL_CANCEL:
        return p->host->set_error(p->h, SBX_E_CANCELLED, "the exec in %s was cancelled",
                                  r->sb->id);
    case KILL_NONE:
        break;
    }
    if (r->have_msg && r->msg.kind == LCL_MSG_EXEC) {
        bool nf = r->msg.err == ENOENT || r->msg.err == ENOTDIR;
        o->status = nf ? SBX_RUN_NOT_FOUND : SBX_RUN_NOT_EXECUTABLE;
        o->exit_code = nf ? 127 : 126;
        p->host->log(p->h, SBX_LOG_DEBUG, "%s: %s", r->msg.what, strerror(r->msg.err));
        return SBX_OK;
    }
    /* The OOM killer may pick the init (a fork of the embedding process,
     * so as large as it) instead of the payload: the count still tells. */
    if (!have_status && oom) {
        o->status = SBX_RUN_MEMORY_LIMIT;
        o->signal = SIGKILL;
        return SBX_OK;
    }
    if (!have_status)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "the sandbox init of %s ended without reporting the command's "
                                  "status (killed from outside? e.g. the sandbox was destroyed)",
                                  r->sb->id);
    bool cpu_over = o->cpu_ns >= 0 && r->sb->limits.cpu_ns &&
                    (uint64_t)o->cpu_ns > r->sb->limits.cpu_ns;
    if (WIFEXITED(status)) {
        o->exit_code = WEXITSTATUS(status);
        if (o->exit_code == 0)
            o->status = cpu_over ? SBX_RUN_CPU_LIMIT : SBX_RUN_OK;
        else if (oom)
            o->status = SBX_RUN_MEMORY_LIMIT;
        else if (pids_hit)
            o->status = SBX_RUN_PIDS_LIMIT;
        else
            o->status = cpu_over ? SBX_RUN_CPU_LIMIT : SBX_RUN_NONZERO_EXIT;
        return SBX_OK;
    }
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    o->signal = sig;
    if (oom)
        o->status = SBX_RUN_MEMORY_LIMIT;
    else if (sig == SIGSYS)
        o->status = SBX_RUN_SECCOMP;
    else if (sig == SIGXCPU || cpu_over)
        o->status = SBX_RUN_CPU_LIMIT;
    else if (sig == SIGXFSZ)
        o->status = SBX_RUN_SIGNAL;
    else if (pids_hit)
        o->status = SBX_RUN_PIDS_LIMIT;
    else
        o->status = SBX_RUN_SIGNAL;
    return SBX_OK;
}

/* ---- entry ---- */

static void cleanup(struct run *r)
{
    int *fds[] = {&r->in[0], &r->in[1], &r->outp[0], &r->outp[1], &r->errp[0], &r->errp[1],
                  &r->sync[0], &r->sync[1], &r->rep[0], &r->rep[1], &r->st[0], &r->st[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        close_fd(fds[i]);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        close_fd(&r->c.fd_tasks[i]);
    if (r->pidfd >= 0 && !r->reaped) {
        kill_all(r);
        reap(r);
    }
    /* The init is gone (or its go will never come: it exits). */
    lcl_nanny_end(&r->nanny);
    lcl_egress_stop(&r->net);
    lcl_locald_done(r->p, &r->locald, &r->cg, r->sb->id);
    lcl_id_give(&r->id);
    if (r->cg.active)
        lcl_cg_destroy(r->p, &r->cg);
    close_fd(&r->pidfd);
    free_strv(r->c.envp);
    free_strv(r->c.path_dirs);
    free((char *)r->c.cwd);
}

static int make_pipes(struct run *r)
{
    int *ps[] = {r->in, r->outp, r->errp, r->rep, r->st};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        if (pipe2(ps[i], O_CLOEXEC) < 0)
            return r->p->host->set_error(r->p->h, SBX_E_IO, "pipe: %s", strerror(errno));
    /* A socket: the go may carry the work directory (release_init). */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sync) < 0)
        return r->p->host->set_error(r->p->h, SBX_E_IO, "socketpair: %s", strerror(errno));
    /* Our ends never block the supervisor. */
    int ours[] = {r->in[1], r->outp[0], r->errp[0], r->rep[0], r->st[0]};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (fcntl(ours[i], F_SETFL, O_NONBLOCK) < 0)
            return r->p->host->set_error(r->p->h, SBX_E_IO, "fcntl: %s", strerror(errno));
    return 0;
}

int lcl_exec(struct lcl_prov *p, struct lcl_sb *sb, const sbx_exec_spec_v1 *spec,
             const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    return lcl_exec_spawn(p, sb, spec, sink, out, NULL);
}

int lcl_exec_spawn(struct lcl_prov *p, struct lcl_sb *sb, const sbx_exec_spec_v1 *spec,
                   const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out,
                   const struct lcl_spawn *sp)
{
    struct run r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        r.c.fd_tasks[i] = -1;
    r.p = p;
    r.sb = sb;
    r.spec = spec;
    r.sink = sink;
    r.out = out;
    r.sp = sp;
    r.t0 = lcl_now_mono();
    r.pidfd = -1;
    r.locald = -1;
    r.cg.v2fd = -1;
    r.cg.pool_fd = -1;
    r.id.fd = r.id.userns = -1;
    r.net.pid = -1;
    r.net.exit_w = -1;
    int *ps[] = {r.in, r.outp, r.errp, r.sync, r.rep, r.st};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        ps[i][0] = ps[i][1] = -1;

    if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: empty argv");
    if (!spec->timeout_ns)
        return p->host->set_error(p->h, SBX_E_INVAL, "exec: timeout_ns is 0");
    for (size_t i = 0; i < spec->n_files; i++) {
        int ret = lcl_file_write(p, sb, spec->files[i].path, spec->files[i].data,
                                 spec->files[i].len, spec->files[i].mode);
        if (ret)
            return ret;
    }

    char *cwd = NULL;
    int ret = build_env(&r);
    if (!ret)
        ret = build_cwd(&r, &cwd);
    r.c.cwd = cwd;
    if (!ret)
        ret = make_pipes(&r);
    if (ret) {
        cleanup(&r);
        return ret;
    }
    r.c.prov = p;
    const int child_fds[LCL_CHILD_NFD] = {r.in[0], r.outp[1], r.errp[1], r.rep[1], r.st[1]};
    lcl_child_exec_view(&r.c, sb, (char *const *)spec->argv, r.c.envp, r.c.path_dirs, cwd,
                        child_fds);
    lcl_limits_floors(p, &r.c, sp != NULL);
    r.c.fd_sync = r.sync[0];
    r.c.drop_groups = p->root;
    r.c.net_none = sb->network != SBX_NET_HOST;
    r.c.skel_src = sb->rootfs ? NULL : lcl_skel_shared(p);
    /* Its files stored as 1000, seen through an idmapped mount. */
    r.c.work_by_sync = !sp && p->ids_per_exec && sb->work_tmpfs && sb->work_uid == LCL_SANDBOX_UID;
    snprintf(r.c.tmp_opts, sizeof r.c.tmp_opts, "size=%llu,nr_inodes=%llu,mode=1777",
             (unsigned long long)sb->limits.disk_bytes, (unsigned long long)p->work_inodes);

    /* Who starts the init (launchers.c): a zygote, a spare of the
     * daemon, or our own clone. */
    struct lcl_launch l = {p, sb, &r.c, sp, &r.cg, &r.id, &r.pid, &r.pidfd, &r.locald,
                          &r.nanny};
    const struct lcl_launcher *ln = NULL;
    ret = lcl_launch_prepare(&l, &ln);
    if (ret) {
        cleanup(&r);
        return ret;
    }

    /* A write to a pipe the command closed must not kill the host. */
    sigset_t pipe_set, old_mask;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);

    ret = ln->start ? ln->start(&l) : 0;
    /* The child's ends are the child's now. */
    close_fd(&r.in[0]);
    close_fd(&r.outp[1]);
    close_fd(&r.errp[1]);
    close_fd(&r.sync[0]);
    close_fd(&r.rep[1]);
    close_fd(&r.st[1]);
    for (int i = 0; i < LCL_CG_NCTRL; i++)
        close_fd(&r.c.fd_tasks[i]);  /* the child's now */
    if (!ret && r.pid > 0 && !(sp && sp->maps_written))
        ret = write_maps(&r);
    /* Its network before its command: the init waits for the go. */
    if (!ret && sb->egress)
        ret = lcl_egress_start(p, r.pid, &r.net);
    if (!ret && r.locald < 0)
        ret = release_init(&r);
    close_fd(&r.sync[1]);
    if (!ret) {
        r.in_stream = spec->stdin_fd >= 0;
        if (!r.in_stream && (!spec->stdin_data || spec->stdin_len == 0))
            close_fd(&r.in[1]);
        supervise(&r);
        ret = verdict(&r);
    }

    /* Consume a SIGPIPE our stdin writes raised, then restore the mask. */
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) &&
        !sigismember(&old_mask, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    cleanup(&r);
    return ret;
}
