/* example.c - a small but real PolySandbox provider, built out of tree
 *
 * Builds with nothing but the installed SDK:
 *
 *     cc -shared -fPIC -fvisibility=hidden \
 *        $(pkg-config --cflags polysandbox-provider) -o example.so example.c
 *
 * Each sandbox is a fresh work directory; each exec runs its command there
 * as a plain process of this user, in a PID namespace of its own, so
 * nothing the command starts outlives the exec.  It shares the host's
 * files and network: it shows the shape of a provider, it is not a jail.
 * It applies the wall clock, the CPU time and the open files and file
 * size limits, and stops the command when the sink says so (the core
 * holds the output caps there); it tells the core that it cannot apply the
 * memory, process-count and disk limits, and it has no network policy
 * (no SBX_CAP_NETWORK_POLICY), so the administrator must allow those to
 * go unenforced (unenforced_limits in polysandbox.ini(5)).
 *
 * Files go in and out of the work directory (SBX_CAP_FILES) with the
 * host's path rule (host->path_check) and never through a link that a
 * command made there.
 *
 * Every exec makes three processes: "outer" (a child of this one, which
 * enters the new PID namespace), "init" (PID 1 there: when it exits, the
 * kernel kills everything left in the namespace) and the command.
 */
#define _GNU_SOURCE /* unshare(), CLONE_NEWPID */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <polysandbox/provider.h>

extern char **environ;

/* What init returns: handed back to every op as `prov`. */
struct example {
    const sbx_host_v1 *host; /* (transfer none) valid until fini */
    sbx_host_handle *h;      /* for host calls */
    /* [settings] of providers.d/example.ini, read by the core (below). */
    const char *work_root;   /* (transfer none) the core's, valid until fini */
    int64_t niceness;        /* of every command */
};

/* One sandbox: create allocates it, destroy frees it. */
struct sandbox {
    char dir[256];        /* the work directory, removed by destroy */
    int niceness;
    char **env;           /* "KEY=VALUE" of the create spec, NULL-terminated */
    sbx_limits_v1 limits;
};

/* One message from the exec's processes to this one. */
enum { REPORT_SETUP, REPORT_EXEC, REPORT_STATUS };
#define REPORT_FD 3 /* where the exec's processes have the report pipe */
struct report {
    int kind;  /* REPORT_SETUP/EXEC: an errno; REPORT_STATUS: a wait status */
    int value;
};

#define FAIL(ex, code, ...) ((ex)->host->set_error((ex)->h, (code), __VA_ARGS__))


static void free_env(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

/* Adds @kv ("KEY=VALUE", transfer full) to @env (of *@n entries),
 * replacing an entry of the same key: the exec's environment overrides
 * the sandbox's. */
static void put_env(char **env, size_t *n, char *kv)
{
    size_t klen = strcspn(kv, "=") + 1, i;

    for (i = 0; i < *n; i++)
        if (strncmp(env[i], kv, klen) == 0)
            break;
    if (i < *n)
        free(env[i]);
    else
        (*n)++;
    env[i] = kv;
}

static char *kv_string(const sbx_kv_v1 *kv)
{
    char *s = malloc(strlen(kv->key) + strlen(kv->value) + 2);

    if (s)
        sprintf(s, "%s=%s", kv->key, kv->value);
    return s;
}

/* A new environment (NULL-terminated, or NULL when out of memory):
 * @base ("KEY=VALUE" strings, NULL-terminated, or NULL), then @kv over it. */
static char **make_env(char *const *base, const sbx_kv_v1 *kv, size_t n_kv)
{
    size_t n_base = 0, n = 0;
    char **env, *s;

    while (base && base[n_base])
        n_base++;
    env = calloc(n_base + n_kv + 1, sizeof *env);
    if (!env)
        return NULL;
    for (size_t i = 0; i < n_base + n_kv; i++) {
        s = i < n_base ? strdup(base[i]) : kv_string(&kv[i - n_base]);
        if (!s) {
            free_env(env);
            return NULL;
        }
        put_env(env, &n, s);
    }
    return env;
}

/* Where work directories go: absolute, and short enough for dir[]. */
static const char *work_root_ok(const char *v)
{
    return v[0] != '/' || strlen(v) > 200 ? "use an absolute directory of at most 200 bytes"
                                          : NULL;
}

/* The keys of providers.d/example.ini: the core parses them (ABI 1.9),
 * with the grammar of polysandbox.ini, and names the file, the line and
 * the key when a value is bad. */
static const sbx_setting_v1 example_settings[] = {
    {.key = "work_root", .type = SBX_SETTING_STRING, .def = "/tmp", .check = work_root_ok,
     .offset = offsetof(struct example, work_root)},
    {.key = "nice", .type = SBX_SETTING_INT, .def = "0", .min = "0", .max = "19",
     .offset = offsetof(struct example, niceness)},
    {.key = NULL},
};
static const char *const example_keys[] = {"work_root", "nice", NULL};

static int example_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov)
{
    struct example *ex;
    int rc;

    /* A core older than this header refuses the module; a host table of
     * a test may still lack a slot. */
    if (!SBX_HOST_HAS(host, settings_read) || !SBX_HOST_HAS(host, path_check) ||
        !SBX_HOST_HAS(host, clock_ns))
        return host->set_error(h, SBX_E_INTERNAL, "the host lends no settings_read, "
                               "path_check or clock_ns (ABI 1.10)");
    if (!(ex = calloc(1, sizeof *ex)))
        return host->set_error(h, SBX_E_NOMEM, "out of memory");
    ex->host = host;
    ex->h = h;
    if ((rc = host->settings_read(h, example_settings, sizeof example_settings[0], ex))) {
        free(ex);
        return rc;
    }
    *prov = ex;
    return SBX_OK;
}

static void example_fini(void *prov)
{
    free(prov);
}

static int remove_one(const char *path, const struct stat *st, int type,
                      struct FTW *ftw)
{
    (void)st, (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void free_sandbox(struct sandbox *s)
{
    free_env(s->env);
    free(s);
}

static int example_create(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                          char id[SBX_ID_MAX])
{
    const uint64_t unenforced =
        SBX_LIMIT_BIT_MEMORY | SBX_LIMIT_BIT_PIDS | SBX_LIMIT_BIT_DISK;
    struct example *ex = prov;
    struct sandbox *s;
    int rc;

    if (spec->image && spec->image_explicit)
        return FAIL(ex, SBX_E_NOTSUP, "example runs no images (asked for %s)",
                    spec->image);
    /* Say what will not be enforced before anything runs.  A core before
     * ABI 1.5 has no such slot (then nothing is refused). */
    if (ex->host->struct_size > offsetof(sbx_host_v1, limits_unenforced) &&
        ex->host->limits_unenforced &&
        (rc = ex->host->limits_unenforced(ex->h, unenforced,
                                          "a plain process: no cgroup")) != SBX_OK)
        return rc;
    s = calloc(1, sizeof *s);
    if (!s || !(s->env = make_env(NULL, spec->env, spec->n_env))) {
        free(s);
        return FAIL(ex, SBX_E_NOMEM, "out of memory");
    }
    s->limits = spec->limits;
    s->niceness = (int)ex->niceness;
    snprintf(s->dir, sizeof s->dir, "%s/example-XXXXXX", ex->work_root);
    if (!mkdtemp(s->dir)) {
        rc = FAIL(ex, SBX_E_IO, "mkdtemp %s: %s", s->dir, strerror(errno));
        free_sandbox(s);
        return rc;
    }
    snprintf(id, SBX_ID_MAX, "%s", strrchr(s->dir, '/') + 1);
    *sb = s;
    return SBX_OK;
}

static int example_destroy(void *prov, void *sb)
{
    struct example *ex = prov;
    struct sandbox *s = sb;
    int rc = SBX_OK;

    if (nftw(s->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        rc = FAIL(ex, SBX_E_IO, "removing %s: %s", s->dir, strerror(errno));
    free_sandbox(s);
    return rc;
}

/* ---- files: upload, download and an exec's files ----
 *
 * The work directory is the sandbox's: its commands may have put links
 * anywhere in it.  Every part of a path is opened below the one before
 * with O_NOFOLLOW, so a link (in the middle or at the end) is refused,
 * never followed, even if a command swaps one in meanwhile. */

/* Opens the directory holding @path's last part; with @make, the missing
 * parents are made.  Returns its fd and points *leaf into @buf, or minus
 * the sbx_status with the error set. */
static int open_parent(struct example *ex, const struct sandbox *s, const char *path,
                       int make, char *buf, size_t size, const char **leaf)
{
    char *part = buf, *slash;
    int dfd, rc;

    /* The rule every provider applies: relative, no "..", no control
     * character (ABI 1.10; the loader refuses this module on older cores). */
    if ((rc = ex->host->path_check(ex->h, path)) != SBX_OK)
        return -rc;
    if (strlen(path) >= size)
        return -FAIL(ex, SBX_E_PATH, "file path too long: %s", path);
    strcpy(buf, path);
    if ((dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -FAIL(ex, SBX_E_IO, "open %s: %s", s->dir, strerror(errno));
    for (; (slash = strchr(part, '/')); part = slash + 1) {
        int next;

        *slash = '\0';
        if (make && mkdirat(dfd, part, 0755) != 0 && errno != EEXIST) {
            rc = FAIL(ex, SBX_E_IO, "file '%s': mkdir %s: %s", path, part, strerror(errno));
            close(dfd);
            return -rc;
        }
        next = openat(dfd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            int e = errno;
            close(dfd);
            if (e == ENOENT)
                return -FAIL(ex, SBX_E_NOT_FOUND, "file '%s': no directory %s", path, part);
            return -FAIL(ex, e == ELOOP || e == ENOTDIR ? SBX_E_PATH : SBX_E_IO,
                         "file '%s': %s is %s", path, part,
                         e == ELOOP || e == ENOTDIR ? "a link or not a directory; refused"
                                                    : strerror(e));
        }
        close(dfd);
        dfd = next;
    }
    *leaf = part;
    return dfd;
}

static int write_file(struct example *ex, struct sandbox *s, const char *path,
                      const void *data, size_t len, uint32_t mode)
{
    char buf[4096];
    const char *leaf;
    int dfd = open_parent(ex, s, path, 1, buf, sizeof buf, &leaf);
    int fd, rc = SBX_OK;
    size_t done = 0;

    if (dfd < 0)
        return -dfd;
    /* A link at the end is removed, then a new file made: never written
     * through (O_EXCL, O_NOFOLLOW). */
    if (unlinkat(dfd, leaf, 0) != 0 && errno != ENOENT) {
        rc = FAIL(ex, errno == EISDIR ? SBX_E_PATH : SBX_E_IO, "file '%s': %s", path,
                  strerror(errno));
        close(dfd);
        return rc;
    }
    fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                mode & 07777);
    close(dfd);
    if (fd < 0)
        return FAIL(ex, SBX_E_IO, "file '%s': %s", path, strerror(errno));
    while (done < len) {
        ssize_t w = write(fd, (const char *)data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = FAIL(ex, errno == ENOSPC ? SBX_E_LIMIT : SBX_E_IO, "writing '%s': %s", path,
                      strerror(errno));
            break;
        }
        done += (size_t)w;
    }
    /* Set the mode after: the umask has narrowed the one open made. */
    if (!rc && fchmod(fd, mode & 07777) != 0)
        rc = FAIL(ex, SBX_E_IO, "file '%s': chmod: %s", path, strerror(errno));
    if (close(fd) != 0 && !rc)
        rc = FAIL(ex, SBX_E_IO, "closing '%s': %s", path, strerror(errno));
    return rc;
}

static int example_upload(void *prov, void *sb, const char *path, const void *data,
                          size_t len, uint32_t mode)
{
    return write_file(prov, sb, path, data, len, mode);
}

static int example_download(void *prov, void *sb, const char *path, size_t max, void **data,
                            size_t *len)
{
    struct example *ex = prov;
    char buf[4096];
    const char *leaf;
    int dfd = open_parent(ex, sb, path, 0, buf, sizeof buf, &leaf);
    struct stat st;
    char *out = NULL;
    size_t got = 0;
    int fd, rc = SBX_OK;

    if (dfd < 0)
        return -dfd;
    fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return FAIL(ex, errno == ENOENT ? SBX_E_NOT_FOUND
                        : errno == ELOOP ? SBX_E_PATH : SBX_E_IO,
                    "file '%s': %s", path,
                    errno == ELOOP ? "a link; refused" : strerror(errno));
    if (fstat(fd, &st) != 0)
        rc = FAIL(ex, SBX_E_IO, "file '%s': fstat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = FAIL(ex, SBX_E_PATH, "file '%s' is not a regular file; refused", path);
    else if ((uint64_t)st.st_size > max)
        rc = FAIL(ex, SBX_E_LIMIT, "file '%s' is %lld bytes, more than the %zu allowed", path,
                  (long long)st.st_size, max);
    else if (!(out = ex->host->alloc((size_t)st.st_size + 1)))
        rc = FAIL(ex, SBX_E_NOMEM, "out of memory reading '%s'", path);
    while (!rc && got < (size_t)st.st_size) {
        ssize_t n = read(fd, out + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = FAIL(ex, SBX_E_IO, "reading '%s': %s", path, strerror(errno));
        else if (n == 0)
            break; /* it shrank meanwhile: what is there */
        else
            got += (size_t)n;
    }
    close(fd);
    if (rc) {
        if (out)
            ex->host->free(out);
        return rc;
    }
    out[got] = '\0';
    *data = out;
    *len = got;
    return SBX_OK;
}

/* The exec's files, as uploads. */
static int write_files(struct example *ex, struct sandbox *s, const sbx_exec_spec_v1 *spec)
{
    for (size_t i = 0; i < spec->n_files; i++) {
        const sbx_file_v1 *f = &spec->files[i];
        int rc = write_file(ex, s, f->path, f->data, f->len, f->mode);
        if (rc != SBX_OK)
            return rc;
    }
    return SBX_OK;
}

static void report(int fd, int kind, int value)
{
    struct report r = {kind, value};
    (void)!write(fd, &r, sizeof r); /* 8 bytes: atomic on a pipe */
}

/* In the command's process: limits, directory, then exec.  Only
 * async-signal-safe calls: the provider's process may have threads. */
static void run_command(const struct sandbox *s, const sbx_exec_spec_v1 *spec,
                        char **env)
{
    uint64_t cpu_s = (s->limits.cpu_ns + 999999999u) / 1000000000u;
    struct rlimit cpu = {cpu_s, cpu_s + 1}; /* SIGXCPU, then SIGKILL */
    struct rlimit files = {s->limits.nofile, s->limits.nofile};
    struct rlimit fsize = {s->limits.fsize_bytes, s->limits.fsize_bytes};

    if (chdir(s->dir) != 0 || (spec->cwd && chdir(spec->cwd) != 0) ||
        setrlimit(RLIMIT_CPU, &cpu) != 0 || setrlimit(RLIMIT_NOFILE, &files) != 0 ||
        setrlimit(RLIMIT_FSIZE, &fsize) != 0 ||
        (s->niceness && setpriority(PRIO_PROCESS, 0, s->niceness) != 0)) {
        report(REPORT_FD, REPORT_SETUP, errno);
        _exit(127);
    }
    environ = env; /* execvp looks argv[0] up in the sandbox's PATH */
    execvp(spec->argv[0], (char *const *)spec->argv);
    report(REPORT_FD, REPORT_EXEC, errno);
    _exit(errno == ENOENT ? 127 : 126);
}

/* "outer": enter a new PID namespace; its first child is PID 1 there. */
static void run_outer(const struct sandbox *s, const sbx_exec_spec_v1 *spec,
                      char **env, int out, int err, int rep)
{
    pid_t init, cmd, pid;
    int in, st;

    /* stdin, stdout, stderr, the report pipe (closed by exec), and no
     * other descriptor of the provider's process: a command holding
     * another exec's pipe would keep that exec waiting.  All moved above
     * REPORT_FD first, so that no dup2() overwrites another's source. */
    out = fcntl(out, F_DUPFD, REPORT_FD + 1);
    err = fcntl(err, F_DUPFD, REPORT_FD + 1);
    rep = fcntl(rep, F_DUPFD, REPORT_FD + 1);
    in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || rep < 0 || in < 0 || dup2(in, 0) < 0 ||
        dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(rep, REPORT_FD) < 0 ||
        fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC) < 0 || close_range(REPORT_FD + 1, ~0u, 0) != 0) {
        report(rep, REPORT_SETUP, errno);
        _exit(1);
    }
    /* root may make a PID namespace; another user needs a user namespace
     * for it (where the kernel allows unprivileged ones). */
    if (unshare(CLONE_NEWPID) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
        report(REPORT_FD, REPORT_SETUP, errno);
        _exit(1);
    }
    init = fork();
    if (init < 0) {
        report(REPORT_FD, REPORT_SETUP, errno);
        _exit(1);
    }
    if (init > 0) {
        while (waitpid(init, &st, 0) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    cmd = fork(); /* in "init", PID 1 */
    if (cmd < 0) {
        report(REPORT_FD, REPORT_SETUP, errno);
        _exit(1);
    }
    if (cmd == 0)
        run_command(s, spec, env);
    /* Orphans of the command become ours: reap them until it ends. */
    while ((pid = wait(&st)) != cmd)
        if (pid < 0 && errno != EINTR)
            _exit(1);
    report(REPORT_FD, REPORT_STATUS, st);
    _exit(0); /* and the kernel kills what is left in the namespace */
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
}

static int example_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                        const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct example *ex = prov;
    struct sandbox *s = sb;
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, pr[2] = {-1, -1};
    uint64_t t0 = ex->host->clock_ns(ex->h), deadline = t0 + spec->timeout_ns;
    int stopped = 0, timed_out = 0, rc, st;
    struct report r, status = {-1, 0}, failure = {-1, 0};
    char **env = NULL;
    pid_t outer;

    rc = write_files(ex, s, spec);
    if (rc != SBX_OK)
        return rc;
    env = make_env(s->env, spec->env, spec->n_env);
    if (!env)
        return FAIL(ex, SBX_E_NOMEM, "out of memory");
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0 ||
        pipe2(pr, O_CLOEXEC) != 0) {
        rc = FAIL(ex, SBX_E_IO, "pipe: %s", strerror(errno));
        goto out;
    }
    outer = fork();
    if (outer < 0) {
        /* Nothing started, and a lack of processes may pass: the core may
         * run it again on this sandbox (the hint is in the outcome since
         * ABI 1.12; an older core's outcome has no such field). */
        int busy = errno == EAGAIN;
        rc = FAIL(ex, busy ? SBX_E_BUSY : SBX_E_IO, "fork: %s", strerror(errno));
        if (SBX_OUTCOME_HAS(out, not_started))
            out->not_started = 1;
        goto out;
    }
    if (outer == 0) {
        setpgid(0, 0);
        run_outer(s, spec, env, po[1], pe[1], pr[1]);
    }
    /* Its own process group (set on both sides: no race): one kill(-outer)
     * reaches "init", whose death empties the namespace. */
    setpgid(outer, outer);
    close(po[1]), close(pe[1]), close(pr[1]);
    po[1] = pe[1] = pr[1] = -1;
    out->start_ns = ex->host->clock_ns(ex->h) - t0;

    /* Output until both streams end (the namespace is empty), the wall
     * clock runs out or the sink says stop. */
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    while (!stopped && (fds[0].fd >= 0 || fds[1].fd >= 0)) {
        uint64_t now = ex->host->clock_ns(ex->h);
        if (now >= deadline) {
            timed_out = stopped = 1;
            break;
        }
        int ms = (int)((deadline - now) / 1000000u) + 1;
        if (poll(fds, 2, ms) < 0 && errno != EINTR) {
            rc = FAIL(ex, SBX_E_IO, "poll: %s", strerror(errno));
            stopped = 1;
            break;
        }
        for (int i = 0; i < 2 && !stopped; i++) {
            char buf[65536];
            ssize_t n;
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            n = read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                fds[i].fd = -1; /* end of the stream */
            else if (sink->write(sink->ud, i + 1, buf, (size_t)n) != 0)
                stopped = 1; /* past a cap (the core holds them), or stopped */
        }
    }
    if (stopped)
        kill(-outer, SIGKILL);
    while (waitpid(outer, &st, 0) < 0 && errno == EINTR)
        ;
    out->exec_ns = ex->host->clock_ns(ex->h) - t0 - out->start_ns;

    /* What the processes reported: init's wait status, or why it failed. */
    while (read(pr[0], &r, sizeof r) == (ssize_t)sizeof r)
        if (r.kind == REPORT_STATUS)
            status = r;
        else
            failure = r;
    out->exit_code = -1;
    if (rc != SBX_OK) {
        /* the error is set: the core reports a sandbox error */
    } else if (timed_out) {
        out->status = SBX_RUN_TIMEOUT;
    } else if (stopped) {
        out->status = SBX_RUN_OUTPUT_LIMIT;
    } else if (failure.kind == REPORT_EXEC) {
        out->exit_code = failure.value == ENOENT ? 127 : 126;
        out->status = failure.value == ENOENT ? SBX_RUN_NOT_FOUND
                                              : SBX_RUN_NOT_EXECUTABLE;
    } else if (failure.kind == REPORT_SETUP || status.kind != REPORT_STATUS) {
        rc = FAIL(ex, SBX_E_BACKEND, "starting %s: %s", spec->argv[0],
                  failure.kind == REPORT_SETUP ? strerror(failure.value)
                                               : "no status from the sandbox");
    } else if (WIFEXITED(status.value)) {
        out->exit_code = WEXITSTATUS(status.value);
        out->status = out->exit_code ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
    } else {
        out->signal = WTERMSIG(status.value);
        out->status = out->signal == SIGXCPU ? SBX_RUN_CPU_LIMIT : SBX_RUN_SIGNAL;
    }
out:
    close_pair(po), close_pair(pe), close_pair(pr);
    free_env(env);
    return rc;
}

static const sbx_provider_ops_v1 example_ops = {
    .init = example_init,
    .fini = example_fini,
    .create = example_create,
    .exec = example_exec,
    .destroy = example_destroy,
    .upload = example_upload,
    .download = example_download,
    /* Optional ops left NULL: the core answers SBX_E_NOTSUP for them. */
};

/* SBX_CAP_CONCURRENT: ops share nothing, so many sandboxes may run at
 * once.  SBX_CAP_FILES: upload and download, never through a link.
 * SBX_PROVIDER_F_HOST_ROOT: commands run on the host's own files, so a
 * template is usable when its compiler or interpreter is installed here. */
SBX_PROVIDER_DEFINE_FLAGS("example", "0.2.0",
                          "example provider: plain processes in a PID namespace",
                          "MIT", SBX_CAP_CONCURRENT | SBX_CAP_FILES,
                          SBX_PROVIDER_F_HOST_ROOT,
                          example_keys, NULL, &example_ops);
