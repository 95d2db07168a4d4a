/* plugins/local/local-util.c - small helpers: time, paths, small files */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "local-int.h"

/* Every signal's disposition to SIG_DFL and an empty mask: what a new
 * program must start with, not what the host process had (e.g. SIGPIPE
 * ignored).  System calls only: a fork of a multi-threaded process may
 * call it. */
void lcl_signals_default(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Per thread: an init on its caller's memory (launch/vfork.c) runs on
 * its nanny thread's TLS, so two such inits of one process each have
 * their own.  Initial-exec: no allocation on first use. */
static __thread volatile sig_atomic_t forward_pgid __attribute__((tls_model("initial-exec")));

static void forward(int sig)
{
    int e = errno;
    /* Its process group (it called setsid), or itself should it not
     * lead one. */
    if (forward_pgid > 0 && kill(-(pid_t)forward_pgid, sig) != 0)
        (void)kill((pid_t)forward_pgid, sig);
    errno = e;
}

void lcl_signal_forward_to(pid_t payload)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    sigset_t set;
    sigemptyset(&set);
    forward_pgid = payload;
    for (int sig = 1; sig < NSIG; sig++) {
        if (!sbx_signal_deliverable(sig))
            continue;
        sigaction(sig, &sa, NULL);
        sigaddset(&set, sig);
    }
    /* An init the daemon forked has its blocked signals (SIGTERM...). */
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

uint64_t lcl_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t lcl_now_unix(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *lcl_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

/* Write @text to an existing file (cgroup knobs, /proc maps).  Returns 0
 * or -errno. */
int lcl_write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int err = n < 0 ? errno : ((size_t)n != len ? EIO : 0);
    if (close(fd) < 0 && !err)
        err = errno;
    return -err;
}

/* Read at most size-1 bytes, NUL-terminated.  Returns length or -errno. */
int lcl_read_file(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    while (off + 1 < size) {
        ssize_t n = read(fd, buf + off, size - 1 - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            close(fd);
            return -err;
        }
        if (n == 0)
            break;
        off += (size_t)n;
    }
    buf[off] = '\0';
    close(fd);
    return (int)off;
}

int lcl_read_u64(const char *path, uint64_t *v)
{
    char buf[64];
    int n = lcl_read_file(path, buf, sizeof buf);
    if (n < 0)
        return n;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (errno || end == buf)
        return -EINVAL;
    *v = x;
    return 0;
}

/* Read "key value" lines (memory.oom_control, pids.events, cpu.stat). */
int lcl_read_keyed_u64(const char *path, const char *key, uint64_t *v)
{
    char buf[4096];
    int n = lcl_read_file(path, buf, sizeof buf);
    if (n < 0)
        return n;
    size_t kl = strlen(key);
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (!strncmp(line, key, kl) && line[kl] == ' ') {
            *v = strtoull(line + kl + 1, NULL, 10);
            return 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    return -ENOENT;
}

int lcl_work_open(const struct lcl_sb *sb, int flags)
{
    int dfd = open(sb->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, "work", flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(dfd);
    errno = e;
    return fd;
}

/* Remove a directory tree without following symlinks or crossing into
 * other file systems' mount points (those are unmounted first by the
 * caller).  Returns 0 or -errno of the first failure. */
static int rm_at(int dfd, const char *name, int depth)
{
    if (depth > 256)
        return -ELOOP;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOTDIR || errno == ELOOP) {
            if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                return -errno;
            return 0;
        }
        return errno == ENOENT ? 0 : -errno;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        int err = errno;
        close(fd);
        return -err;
    }
    int ret = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        int r;
        if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
            r = rm_at(dirfd(d), de->d_name, depth + 1);
        else
            r = unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (r && !ret)
            ret = r;
    }
    closedir(d);
    if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !ret)
        ret = -errno;
    return ret;
}

int lcl_rm_tree(const char *path)
{
    return rm_at(AT_FDCWD, path, 0);
}

/* errno -> sbx_status */
int lcl_err_code(int err)
{
    switch (err) {
    case ENOMEM: return SBX_E_NOMEM;
    case EPERM: case EACCES: return SBX_E_PERM;
    case ENOENT: return SBX_E_NOT_FOUND;
    case ELOOP: case EXDEV: return SBX_E_PATH;
    case EEXIST: return SBX_E_EXISTS;
    case EAGAIN: case EBUSY: return SBX_E_BUSY;
    default: return SBX_E_IO;
    }
}

/* Our ids: "lcl-" and hex digits; also accept [a-z0-9-] generally so a
 * future id scheme stays attachable.  Never '/', '.', or empty. */
bool lcl_id_valid(const char *id)
{
    size_t n = 0;
    if (!id || strncmp(id, LCL_ID_PREFIX, strlen(LCL_ID_PREFIX)))
        return false;
    for (const char *s = id; *s; s++, n++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    }
    return n > strlen(LCL_ID_PREFIX) && n < 64;
}

void lcl_kv_free(sbx_kv_v1 *kv, size_t n)
{
    if (!kv)
        return;
    for (size_t i = 0; i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}

int lcl_kv_copy(const sbx_kv_v1 *in, size_t n, sbx_kv_v1 **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    sbx_kv_v1 *kv = calloc(n, sizeof *kv);
    if (!kv)
        return SBX_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        kv[i].key = strdup(in[i].key ? in[i].key : "");
        kv[i].value = strdup(in[i].value ? in[i].value : "");
        if (!kv[i].key || !kv[i].value) {
            lcl_kv_free(kv, n);
            return SBX_E_NOMEM;
        }
    }
    *out = kv;
    return 0;
}

void lcl_sb_free(struct lcl_sb *sb)
{
    if (!sb)
        return;
    free(sb->dir);
    free(sb->work);
    free(sb->template_name);
    free(sb->rootfs);
    lcl_kv_free(sb->env, sb->n_env);
    lcl_kv_free(sb->labels, sb->n_labels);
    free(sb);
}

int lcl_work_detached(const struct lcl_sb *sb, int userns)
{
    int wfd = lcl_work_open(sb, O_PATH);
    if (wfd < 0)
        return -1;
    int fd = (int)syscall(SYS_open_tree, wfd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE |
                          OPEN_TREE_CLOEXEC);
    int e = errno;
    close(wfd);
    errno = e;
    if (fd < 0)
        return -1;
    struct { uint64_t set, clr, prop, userns; } ma = {
        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (userns >= 0 ? LCL_MOUNT_ATTR_IDMAP : 0), 0,
        MS_PRIVATE, userns >= 0 ? (uint64_t)userns : 0};
    if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &ma, sizeof ma) < 0) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

uint64_t lcl_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * UINT64_C(0x100000001b3);
    return h;
}
