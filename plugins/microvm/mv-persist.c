/* plugins/microvm/mv-persist.c - persistent sandboxes: VMs that outlive
 * the process that made them
 *
 * A persistent sandbox's VMM runs in a session of its own, nobody's
 * child, and serves its agent's channel on a unix socket it accepts one
 * client at a time on.  Everything another process needs to find it is
 * in <state>/sandboxes/<id>/ (0700): vm.json (0600, the record: the
 * VMM's pid and start time, the VM's name, labels, TTL, creation time,
 * the environment and limits execs use), agent.sock and the VM's logs.
 * A one-shot VM writes the same record in its <state>/vm.XXXXXX, for
 * list alone.
 *
 * The record is read as hostile: a file that is no regular file of
 * ours, too long or malformed is refused, and its pid is only ever
 * signalled through a pidfd opened on it and checked (owner, start
 * time, the VM's name on its command line) after the open, so an edited
 * record or a reused pid never makes us kill another process.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "mv-int.h"
#include "randhex.h"

#define MV_RECORD_MAX (1 << 20)
/* How long attach waits for the agent to answer: another process's exec
 * may hold the VM (one client at a time). */
#define MV_ATTACH_WAIT_MS 60000
#define MV_STOP_WAIT_MS 10000

static const char *const limit_keys[] = {
    "wall_ns", "cpu_ns", "memory_bytes", "pids", "nofile", "fsize_bytes", "disk_bytes",
    "stdout_bytes", "stderr_bytes",
};

static uint64_t *limit_slot(sbx_limits_v1 *l, size_t i)
{
    uint64_t *slots[] = { &l->wall_ns, &l->cpu_ns, &l->memory_bytes, &l->pids, &l->nofile,
                          &l->fsize_bytes, &l->disk_bytes, &l->stdout_bytes,
                          &l->stderr_bytes };
    return slots[i];
}

int mv_id_ok(const char *id)
{
    size_t n = strlen(id);

    if (n <= strlen(MV_PERSIST_PREFIX) || n >= SBX_ID_MAX ||
        strncmp(id, MV_PERSIST_PREFIX, strlen(MV_PERSIST_PREFIX)))
        return 0;
    return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

/* <state>/sandboxes, made (0700) when @make. */
static int sandboxes_dir(struct mv_prov *p, int make, char *buf, size_t n)
{
    const char *state = p->host->state_dir(p->h);

    if (!state || (size_t)snprintf(buf, n, "%s/sandboxes", state) >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (make && ((mkdir(state, 0700) && errno != EEXIST) || (mkdir(buf, 0700) && errno != EEXIST)))
        return -1;
    return 0;
}

int mv_persist_dir(struct mv_prov *p, const char *id, int make, char *buf, size_t n)
{
    char base[4096];

    if (sandboxes_dir(p, make, base, sizeof base))
        return -1;
    if ((size_t)snprintf(buf, n, "%s/%s", base, id) >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return make ? mkdir(buf, 0700) : 0;
}

void mv_persist_new_id(char id[SBX_ID_MAX])
{
    char hex[33];

    if (pc_random_hex(hex, 8))
        snprintf(hex, sizeof hex, "%lx%lx", (long)getpid(), (long)time(NULL));
    snprintf(id, SBX_ID_MAX, MV_PERSIST_PREFIX "%s", hex);
}

/* A unix socket address for @dir/agent.sock that fits sun_path however
 * long the state directory is: through the directory's fd. */
static int sock_addr(const char *dir, int *dfd, struct sockaddr_un *sa)
{
    if ((*dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/" MV_SOCK, *dfd);
    return 0;
}

int mv_persist_listen(const char *dir)
{
    struct sockaddr_un sa;
    int dfd, fd = -1, e;

    if (sock_addr(dir, &dfd, &sa))
        return -1;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 4)) {
        e = errno;
        if (fd >= 0)
            close(fd);
        close(dfd);
        errno = e;
        return -1;
    }
    close(dfd);
    return fd;
}

int mv_persist_connect(const char *dir, int64_t deadline_ms)
{
    struct sockaddr_un sa;
    int dfd, fd, e;

    if (sock_addr(dir, &dfd, &sa))
        return -1;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    /* EAGAIN: the VMM's backlog is full (others wait for it too). */
    while (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (errno != EAGAIN || mv_now_ms() >= deadline_ms) {
            e = errno;
            close(fd);
            fd = -1;
            errno = e;
            break;
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    /* Blocking from here on, as the channel's writes expect (a unix
     * socket's connect never is in progress). */
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : 0;
    if (fd >= 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
        e = errno;
        close(fd);
        fd = -1;
        errno = e;
    }
    e = errno;
    close(dfd);
    errno = e;
    return fd;
}

/* ---- the VMM's identity ---------------------------------------------- */

unsigned long long mv_proc_start(pid_t pid)
{
    char path[64], buf[1024];
    unsigned long long start = 0;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* Field 22, counted after the command name's closing parenthesis
     * (the name may hold spaces and parentheses). */
    char *q = strrchr(buf, ')');
    if (!q || sscanf(q + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                            "%*d %*d %*d %llu", &start) != 1)
        return 0;
    return start;
}

/* Whether @pid is, now, the VMM of @name started at @start and ours
 * (@name NULL: any of ours started then, an ephemeral VM's, unnamed). */
static int is_our_vmm(pid_t pid, unsigned long long start, const char *name)
{
    char path[64], *buf;
    struct stat st;
    int ok = 0;

    snprintf(path, sizeof path, "/proc/%ld", (long)pid);
    /* As root, a jailed QEMU runs as vmm_uid: the start time and the
     * name tell it. */
    if (pid <= 1 || !start || stat(path, &st) || (st.st_uid != geteuid() && geteuid() != 0) ||
        mv_proc_start(pid) != start)
        return 0;
    if (!name)
        return 1;
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !(buf = malloc(65537))) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t len = 0;
    ssize_t n;
    while (len < 65536 && (n = read(fd, buf + len, 65536 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    for (size_t i = 0; i < len && !ok;) {
        const char *arg = buf + i;
        size_t al = strlen(arg);
        /* QEMU's -name, firecracker's --id */
        if ((!strcmp(arg, "-name") || !strcmp(arg, "--id")) && i + al + 1 < len &&
            !strcmp(arg + al + 1, name))
            ok = 1;
        i += al + 1;
    }
    free(buf);
    return ok;
}

int mv_persist_stop(pid_t pid, unsigned long long start, const char *name)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

    if (pfd < 0)
        return errno == ESRCH ? 0 : -1;
    /* Checked after the pidfd pins the process: a pid reused since is
     * told apart by its start time and command line. */
    if (!is_our_vmm(pid, start, name)) {
        close(pfd);
        errno = ESRCH;
        return 0;
    }
    if (syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) != 0 && errno != ESRCH) {
        int e = errno;
        close(pfd);
        errno = e;
        return -1;
    }
    struct pollfd f = { pfd, POLLIN, 0 };
    int64_t end = mv_now_ms() + MV_STOP_WAIT_MS, left;
    int r;
    do
        r = poll(&f, 1, (int)((left = end - mv_now_ms()) > 0 ? left : 0));
    while (r < 0 && errno == EINTR && left > 0);
    close(pfd);
    if (r <= 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    return 1;
}

int mv_persist_alive(const struct mv_sandbox *s)
{
    return is_our_vmm(s->pid, s->start_ticks, s->id);
}

/* ---- the record ---------------------------------------------------------- */

static json_t *kv_object(const sbx_kv_v1 *kv, size_t n)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < n; i++)
        if (json_object_set_new(o, kv[i].key, json_string(kv[i].value))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

int mv_persist_save(struct mv_prov *p, const struct mv_sandbox *s,
                    const sbx_create_spec_v1 *spec, uint64_t created_ns)
{
    json_t *labels = kv_object(spec->labels, spec->n_labels);
    json_t *env = json_array(), *limits = json_object(), *root = NULL;
    char *text = NULL;
    int rc = SBX_OK, dfd = -1, fd = -1;

    for (size_t off = 0; env && off < s->env_len; off += strlen(s->env + off) + 1)
        if (json_array_append_new(env, json_string(s->env + off)))
            goto nomem;
    for (size_t i = 0; limits && i < sizeof limit_keys / sizeof *limit_keys; i++)
        if (json_object_set_new(limits, limit_keys[i],
                                json_integer((json_int_t)*limit_slot((sbx_limits_v1 *)&s->limits,
                                                                     i))))
            goto nomem;
    if (!labels || !env || !limits)
        goto nomem;
    root = json_pack("{s:i, s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:I, s:O, s:O, s:O}", "version",
                     1, "id", s->id, "pid", (json_int_t)s->pid, "start",
                     (json_int_t)s->start_ticks, "created_ns", (json_int_t)created_ns, "ttl_ns",
                     (json_int_t)spec->ttl_ns, "vmm", s->vmm->name, "accel", s->accel,
                     "unenforced", (json_int_t)s->unenforced,
                     "labels", labels, "env", env, "limits", limits);
    if (!root || !(text = json_dumps(root, JSON_COMPACT)))
        goto nomem;
    size_t len = strlen(text), done = 0;
    if ((dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        (fd = openat(dfd, MV_RECORD ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                     0600)) < 0)
        goto io;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto io;
        done += (size_t)n;
    }
    if (fsync(fd) || renameat(dfd, MV_RECORD ".tmp", dfd, MV_RECORD))
        goto io;
    goto out;
io:
    rc = p->host->set_error(p->h, SBX_E_IO, "microvm: writing %s/" MV_RECORD ": %s", s->dir,
                            strerror(errno));
    goto out;
nomem:
    rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
out:
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    free(text);
    json_decref(root);
    json_decref(labels);
    json_decref(env);
    json_decref(limits);
    return rc;
}

/* A non-negative integer member, or -1. */
static long long member_u(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

/* The record's VMM: its "vmm" member, qemu or firecracker; a record
 * written before it was kept has none, and is @dflt's (the settings').
 * NULL: a value that is neither, refused. */
static const struct mv_vmm *record_vmm(const json_t *root, const struct mv_vmm *dflt)
{
    static const struct mv_vmm *const known[] = { &mv_vmm_qemu, &mv_vmm_firecracker };
    json_t *v = json_object_get(root, "vmm");

    if (!v)
        return dflt;
    for (size_t i = 0; json_is_string(v) && i < sizeof known / sizeof *known; i++)
        if (!strcmp(json_string_value(v), known[i]->name))
            return known[i];
    return NULL;
}

/* Reads the record of @id (NULL: an ephemeral VM's, whatever its id): a
 * regular file of ours, at most MV_RECORD_MAX bytes, its members of the
 * right types.  NULL and *why set otherwise (errno ENOENT: no such
 * sandbox). */
static json_t *record_load(const char *dir, const char *id, const char **why)
{
    int fd = -1, dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    char *text = NULL;
    json_t *root = NULL, *v;
    size_t len = 0;

    *why = NULL;
    if (dfd < 0 || (fd = openat(dfd, MV_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        fstat(fd, &st)) {
        *why = strerror(errno);
        goto out;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        *why = "not a regular file of ours, 0600";
        goto out;
    }
    if (st.st_size > MV_RECORD_MAX || !(text = malloc((size_t)st.st_size + 1))) {
        *why = "too large";
        goto out;
    }
    while (len < (size_t)st.st_size) {
        ssize_t n = read(fd, text + len, (size_t)st.st_size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    if (!(root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL))) {
        *why = "not JSON";
        goto out;
    }
    if (!json_is_object(root) || member_u(root, "version") != 1 ||
        !json_is_string(v = json_object_get(root, "id")) ||
        (id ? strcmp(json_string_value(v), id) != 0
            : strlen(json_string_value(v)) >= SBX_ID_MAX) ||
        member_u(root, "pid") < 2 || member_u(root, "pid") > (1 << 22) ||
        member_u(root, "start") < 1 || member_u(root, "created_ns") < 0 ||
        member_u(root, "ttl_ns") < 0 || member_u(root, "unenforced") < 0 ||
        !json_is_string(json_object_get(root, "accel")) || !record_vmm(root, &mv_vmm_qemu) ||
        !json_is_object(json_object_get(root, "labels")) ||
        !json_is_array(json_object_get(root, "env")) ||
        !json_is_object(json_object_get(root, "limits"))) {
        *why = "a member missing or of the wrong type";
        goto out;
    }
    const char *k;
    json_object_foreach(json_object_get(root, "labels"), k, v)
        if (!json_is_string(v)) {
            *why = "a label that is not a string";
            goto out;
        }
    size_t i;
    json_array_foreach(json_object_get(root, "env"), i, v)
        if (!json_is_string(v) || !strchr(json_string_value(v), '=')) {
            *why = "an environment entry that is no KEY=VALUE string";
            goto out;
        }
    for (i = 0; i < sizeof limit_keys / sizeof *limit_keys; i++)
        if (member_u(json_object_get(root, "limits"), limit_keys[i]) < 0) {
            *why = "a limit missing or negative";
            goto out;
        }
    free(text);
    close(fd);
    close(dfd);
    return root;
out:
    if (!*why)
        *why = "unreadable";
    free(text);
    json_decref(root);
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    return NULL;
}

/* The record's labels as pairs pointing into @root (valid while it is). */
static sbx_kv_v1 *record_labels(json_t *root, size_t *n)
{
    json_t *labels = json_object_get(root, "labels"), *v;
    sbx_kv_v1 *kv = calloc(json_object_size(labels) + 1, sizeof *kv);
    const char *k;

    *n = 0;
    if (!kv)
        return NULL;
    json_object_foreach(labels, k, v) {
        kv[*n].key = k;
        kv[(*n)++].value = json_string_value(v);
    }
    return kv;
}

int mv_persist_load(struct mv_prov *p, const char *id, struct mv_sandbox **out)
{
    char dir[4200];
    const char *why;
    json_t *root, *v;
    struct mv_sandbox *s;
    size_t i;

    *out = NULL;
    if (!mv_id_ok(id))
        return p->host->set_error(p->h, SBX_E_NOT_FOUND, "microvm: no sandbox '%.80s'", id);
    if (mv_persist_dir(p, id, 0, dir, sizeof dir))
        return p->host->set_error(p->h, SBX_E_IO, "microvm: the state directory: %s",
                                  strerror(errno));
    if (!(root = record_load(dir, id, &why))) {
        if (errno == ENOENT)
            return p->host->set_error(p->h, SBX_E_NOT_FOUND, "microvm: no sandbox %s", id);
        return p->host->set_error(p->h, SBX_E_BACKEND, "microvm: the record %s/" MV_RECORD
                                  " of sandbox %s: %s", dir, id, why);
    }
    if (!(s = calloc(1, sizeof *s)) || !(s->dir = strdup(dir)))
        goto nomem;
    s->chan = -1;
    s->persistent = 1;
    snprintf(s->id, sizeof s->id, "%s", id);
    s->pid = (pid_t)member_u(root, "pid");
    s->start_ticks = (unsigned long long)member_u(root, "start");
    s->unenforced = (uint32_t)member_u(root, "unenforced");
    s->accel = !strcmp(json_string_value(json_object_get(root, "accel")), "kvm") ? "kvm" : "tcg";
    s->vmm = record_vmm(root, p->vmm);
    for (i = 0; i < sizeof limit_keys / sizeof *limit_keys; i++)
        *limit_slot(&s->limits, i) =
            (uint64_t)member_u(json_object_get(root, "limits"), limit_keys[i]);
    json_array_foreach(json_object_get(root, "env"), i, v)
        s->env_len += strlen(json_string_value(v)) + 1;
    if (!(s->env = malloc(s->env_len + 1)))
        goto nomem;
    s->env_len = 0;
    json_array_foreach(json_object_get(root, "env"), i, v) {
        size_t n = strlen(json_string_value(v)) + 1;
        memcpy(s->env + s->env_len, json_string_value(v), n);
        s->env_len += n;
        s->n_env++;
    }
    json_decref(root);
    *out = s;
    return SBX_OK;
nomem:
    json_decref(root);
    mv_sandbox_release(s);
    return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
}

int mv_persist_remove(struct mv_prov *p, const char *dir)
{
    /* The last two are Firecracker's sockets. */
    static const char *const leaves[] = { MV_RECORD, MV_RECORD ".tmp", MV_SOCK, "console.log",
                                          "vmm.log", "api.sock", "vsock.sock" };
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    mv_jail_remove(dir);  /* a jailed firecracker's chroot */
    mv_qjail_remove(dir); /* a jailed QEMU's root and cgroup */
    if (dfd < 0)
        return errno == ENOENT ? SBX_OK
                               : p->host->set_error(p->h, SBX_E_IO, "microvm: %s: %s", dir,
                                                    strerror(errno));
    for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
        (void)unlinkat(dfd, leaves[i], 0);
    close(dfd);
    if (rmdir(dir) && errno != ENOENT)
        return p->host->set_error(p->h, SBX_E_IO, "microvm: removing %s: %s", dir,
                                  strerror(errno));
    return SBX_OK;
}

/* ---- one client at a time ---------------------------------------------- */

/* How long a sync GET goes unanswered before another is sent. */
#define MV_SYNC_RESEND_MS 3000

/* Sends a sync GET naming a new nonce (into @nonce). */
static int sync_send(struct mv_prov *p, struct mv_sandbox *s, char nonce[33])
{
    char path[64];
    uint8_t get[MV_GET_HEAD_LEN];

    if (pc_random_hex(nonce, 16))
        return p->host->set_error(p->h, SBX_E_IO, "microvm: getrandom: %s", strerror(errno));
    snprintf(path, sizeof path, "../sync-%s", nonce);
    mv_put64(get, 0);
    return mv_chan_send(p, s->chan, MV_T_GET, get, sizeof get, path, strlen(path) + 1);
}

static int mv_persist_sync(struct mv_prov *p, struct mv_sandbox *s)
{
    char nonce[33];
    int64_t deadline = mv_now_ms() + MV_ATTACH_WAIT_MS, resend;
    int rc;

    /* A GET the agent refuses by its path, naming it: the first answer
     * that names our nonce is in step; whatever a client that went away
     * left queued comes before it and is dropped.  Unanswered for a
     * while, another GET goes with a new nonce, and only the newest
     * one's answer counts (the agent answers in order): a GET that
     * reached the guest before it saw this client connect is dropped
     * there with the old client's leftovers. */
    if (s->vmm->connect) {
        /* The VMM's own channel (Firecracker's vsock socket): the
         * record's VMM, which made it, whatever vmm says now. */
        char log[4300], err[512];
        snprintf(log, sizeof log, "%s/vmm.log", s->dir);
        struct mv_vm_config cfg = { .binary = p->binary, .dir = s->dir, .log = log,
                                    .name = s->id, .chan_fd = -1, .qmp_fd = -1,
                                    .incoming_fd = -1 };
        if (s->vmm->connect(&cfg, s->pid, deadline, &s->chan, err, sizeof err) != 0) {
            s->chan = -1;
            return p->host->set_error(p->h, SBX_E_BACKEND,
                                      "microvm: sandbox %s: connecting to its VM: %s", s->id,
                                      err);
        }
    } else if ((s->chan = mv_persist_connect(s->dir, deadline)) < 0)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "microvm: sandbox %s: connecting to its VM at %s/" MV_SOCK
                                  ": %s", s->id, s->dir, strerror(errno));
    if ((rc = sync_send(p, s, nonce)))
        return rc;
    resend = mv_now_ms() + MV_SYNC_RESEND_MS;
    for (int frames = 0; frames < 100000; frames++) {
        struct mv_hdr hd;
        uint8_t *pl = NULL;
        /* Waits for a frame's start (never a timeout inside a frame,
         * which would leave the stream out of step). */
        int64_t now = mv_now_ms();
        if (now < deadline) {
            struct pollfd pfd = { s->chan, POLLIN, 0 };
            if (resend < deadline && now >= resend) {
                if ((rc = sync_send(p, s, nonce)))
                    return rc;
                resend = mv_now_ms() + MV_SYNC_RESEND_MS;
                continue;
            }
            int r = poll(&pfd, 1, (int)((resend < deadline ? resend : deadline) - now));
            if (r < 0 && errno != EINTR)
                return p->host->set_error(p->h, SBX_E_IO, "microvm: poll: %s",
                                          strerror(errno));
            if (r <= 0)
                continue;
        }
        rc = mv_chan_recv(p, s->chan, deadline, &hd, &pl);
        if (rc == SBX_E_TIMEOUT)
            return p->host->set_error(p->h, SBX_E_TIMEOUT,
                                      "microvm: sandbox %s: its agent did not answer within %d s"
                                      " (a VM serves one client at a time: is another process"
                                      " using it?)", s->id, MV_ATTACH_WAIT_MS / 1000);
        if (rc)
            return rc;
        int mine = hd.type == MV_T_ERROR && hd.len > 4 &&
                   memmem(pl + 4, hd.len - 4, nonce, strlen(nonce));
        free(pl);
        if (mine)
            return SBX_OK;
    }
    return p->host->set_error(p->h, SBX_E_BACKEND,
                              "microvm: sandbox %s: its agent never answered in step", s->id);
}

int mv_ready(struct mv_prov *p, struct mv_sandbox *s)
{
    int rc;

    if (s->chan >= 0)
        return SBX_OK;
    if (!s->persistent || !mv_persist_alive(s))
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "microvm: sandbox %s: its VM (pid %ld) is no longer running;"
                                  " destroy it", s->persistent ? s->id : "", (long)s->pid);
    if ((rc = mv_persist_sync(p, s)) && s->chan >= 0) {
        close(s->chan);
        s->chan = -1;
    }
    return rc;
}

/* ---- list ---------------------------------------------------------------- */

/* Calls @cb for the sandbox whose record is in @dir when its labels
 * include @filter's.  @id: the persistent sandbox it must be; NULL: an
 * ephemeral VM's directory, listed while its VMM runs (one being made
 * or gone is no sandbox: skipped). */
static int list_one(struct mv_prov *p, const char *dir, const char *id, const sbx_kv_v1 *filter,
                    size_t n_filter, sbx_list_cb_v1 cb, void *ud)
{
    const char *why;
    json_t *root;
    size_t n, i;
    sbx_kv_v1 *kv;
    int rc = SBX_OK;

    if (!(root = record_load(dir, id, &why))) {
        /* being made, or damaged: skipped, never fatal to the listing */
        if (id)
            p->host->log(p->h, SBX_LOG_INFO, "microvm: skipping %s: %s", dir, why);
        return SBX_OK;
    }
    if (!id && !is_our_vmm((pid_t)member_u(root, "pid"),
                           (unsigned long long)member_u(root, "start"), NULL)) {
        json_decref(root);
        return SBX_OK;
    }
    if (!(kv = record_labels(root, &n))) {
        json_decref(root);
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    }
    for (i = 0; i < n_filter; i++) {
        json_t *v = json_object_get(json_object_get(root, "labels"), filter[i].key);
        if (!v || strcmp(json_string_value(v), filter[i].value))
            break;
    }
    if (i == n_filter)
        rc = cb(ud, json_string_value(json_object_get(root, "id")), kv, n,
                (uint64_t)member_u(root, "created_ns"));
    free(kv);
    json_decref(root);
    return rc;
}

/* Lists the persistent sandboxes (<state>/sandboxes/ID), then the
 * ephemeral VMs running (<state>/vm.XXXXXX: this process's and
 * others'). */
int mv_list(void *prov, const sbx_kv_v1 *filter, size_t n_filter, sbx_list_cb_v1 cb, void *ud)
{
    struct mv_prov *p = prov;
    const char *state = p->host->state_dir(p->h);
    char base[4096], dir[4400];
    struct dirent *de;
    DIR *d;
    int rc = SBX_OK;

    mv_image_sweep(p); /* gc runs list: image disks whose image is gone, */
    mv_snap_sweep(p);  /* snapshots no state directory (or disk) owns */
    mv_cg_sweep();     /* and VMM cgroups no VMM is in */
    if (sandboxes_dir(p, 0, base, sizeof base) || !(d = opendir(base))) {
        if (errno != ENOENT)
            return p->host->set_error(p->h, SBX_E_IO, "microvm: listing %s: %s", base,
                                      strerror(errno));
    } else {
        while (rc == SBX_OK && (de = readdir(d))) {
            if (!mv_id_ok(de->d_name))
                continue;
            snprintf(dir, sizeof dir, "%s/%s", base, de->d_name);
            rc = list_one(p, dir, de->d_name, filter, n_filter, cb, ud);
        }
        closedir(d);
    }
    if (rc != SBX_OK || !state || !(d = opendir(state)))
        return rc;
    while (rc == SBX_OK && (de = readdir(d))) {
        if (strncmp(de->d_name, MV_EPHEMERAL_DIR, strlen(MV_EPHEMERAL_DIR)))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", state, de->d_name);
        rc = list_one(p, dir, NULL, filter, n_filter, cb, ud);
    }
    closedir(d);
    return rc;
}
