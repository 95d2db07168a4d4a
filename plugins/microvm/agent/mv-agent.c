/* plugins/microvm/agent/mv-agent.c - the guest agent, PID 1 of the VM
 *
 * Mounts what the guest needs, loads the virtio modules the image lists
 * (/etc/sbx-modules), opens the virtio-serial port named MV_PORT_NAME and
 * serves the host's frames (mv-proto.h): files into and out of /work
 * (never through a link a command left there), one command at a time, its output streamed back, its exit reported.  Each
 * command runs as uid/gid 1000 in a session and a cgroup of its own (memory,
 * pids), with the exec's rlimits and a filter killing module loads
 * (mv-filter.c); at its end, or at its timeout, or at
 * the host's KILL, the whole cgroup is killed.  A streamed stdin
 * (MV_EXEC_STDIN_STREAM) is a pipe the agent feeds one STDIN frame at a
 * time, asking for the next (WANT) once the command took the last; a
 * SIGNAL goes to the command's process group.
 *
 * Built statically with no sanitizer (it runs in the guest); depends on
 * the C library and mv-proto.c only.  PID 1 never exits: on a broken
 * channel it powers the VM off.  The host closing its end is no break: a
 * persistent sandbox's client went away (its process released it), and
 * the agent waits for the next one; a command running then is killed
 * and what it would have sent is dropped (nobody is there to read it).
 *
 * Where the kernel's command line says sbx.vsock=PORT (Firecracker, whose
 * agent channel is vsock), the channel is a vsock connection instead:
 * the agent listens on PORT and takes one host connection at a time; a
 * reset one (a VM restored from a snapshot: Firecracker closes every
 * vsock connection, its listeners stay) is a client gone like a closed
 * port.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/random.h>
#include <linux/vm_sockets.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/common.h>

#include "mv-filter.h"
#include "mv-netup.h"
#include "mv-proto.h"

#define SBX_UID 1000
#define CG_ROOT "/sys/fs/cgroup"
#define CG_RUN CG_ROOT "/run"
/* SBX_LIMIT_BIT_* of <polysandbox/common.h> (not included: static build). */
#define LB_CPU (1u << 1)
#define LB_MEMORY (1u << 2)
#define LB_PIDS (1u << 3)
#define LB_DISK (1u << 6)

static int chan = -1;
/* The host closed its end; frames are dropped until a client is back. */
static int host_gone;
static unsigned unenforced;
/* The vsock listener when the channel is vsock (sbx.vsock=PORT), else -1. */
static int vsock_fd = -1;

/* Whether the failed read or write (errno) means the host went away,
 * not a broken channel. */
static int host_left(void)
{
    return errno == EPIPE || (vsock_fd >= 0 && (errno == ECONNRESET || errno == ENOTCONN ||
                                                errno == ESHUTDOWN || errno == ETIMEDOUT));
}

static void logk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logk(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

    if (fd < 0)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        (void)!write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    close(fd);
}

static __attribute__((noreturn)) void die(const char *what)
{
    /* At error level: shown on the console despite "quiet", so the host
     * names it as the reason the VM stopped (mv_last_words). */
    logk("<3>sbx-agent: %s: %s\n", what, strerror(errno));
    sync();
    reboot(RB_POWER_OFF);
    for (;;)
        pause();
}

/* Moves all @len bytes to (out) or from @fd, waiting out EAGAIN and EINTR. */
static int io_all(int fd, void *buf, size_t len, int out)
{
    uint8_t *p = buf;

    while (len) {
        ssize_t n = out ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pfd = { fd, out ? POLLOUT : POLLIN, 0 };
            (void)poll(&pfd, 1, 1000);
            continue;
        }
        if (n == 0 && !out)
            errno = EPIPE; /* the host closed its end */
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
    return io_all(fd, (void *)buf, len, 1);
}

static int read_all(int fd, void *buf, size_t len)
{
    return io_all(fd, buf, len, 0);
}

static void send_frame(uint8_t type, const void *data, size_t len)
{
    uint8_t h[MV_HDR_LEN];

    if (host_gone)
        return;
    mv_hdr_put(h, type, (uint32_t)len);
    if (write_all(chan, h, sizeof h) || (len && write_all(chan, data, len))) {
        if (vsock_fd >= 0 && host_left()) {
            host_gone = 1; /* a vsock client went away: the next one is accepted */
            return;
        }
        die("writing to the host");
    }
}

static void send_error(uint32_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void send_error(uint32_t code, const char *fmt, ...)
{
    uint8_t msg[4 + 512];
    va_list ap;

    mv_put32(msg, code);
    va_start(ap, fmt);
    int n = vsnprintf((char *)msg + 4, sizeof msg - 4, fmt, ap);
    va_end(ap);
    send_frame(MV_T_ERROR, msg, 4 + (n < 0 ? 0 : (size_t)n < sizeof msg - 4 ? (size_t)n
                                                                          : sizeof msg - 5));
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    int rc = -1;

    if (fd >= 0) {
        rc = write_all(fd, text, strlen(text));
        close(fd);
    }
    return rc;
}

static long long read_num(const char *path, const char *key)
{
    char buf[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if (!key)
        return strtoll(buf, NULL, 10);
    for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        size_t k = strlen(key);
        if (!strncmp(l, key, k) && l[k] == ' ')
            return strtoll(l + k + 1, NULL, 10);
    }
    return -1;
}

/* The value of @key=VALUE on the kernel's command line into @val: 0, or
 * -1 when it is not there. */
static int cmdline_get(const char *key, char *val, size_t n)
{
    char buf[4096];
    int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;

    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
        if (!strncmp(t, key, strlen(key)) && t[strlen(key)] == '=') {
            snprintf(val, n, "%s", t + strlen(key) + 1);
            return 0;
        }
    return -1;
}

static unsigned long long cmdline_num(const char *key, unsigned long long dflt)
{
    char v[64];

    return cmdline_get(key, v, sizeof v) ? dflt : strtoull(v, NULL, 10);
}

static void load_modules(const char *list)
{
    FILE *f = fopen(list, "re");
    char line[512];

    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0])
            continue;
        int fd = open(line, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST))
            logk("sbx-agent: module %s: %s\n", line, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    fclose(f);
}

static void setup_mounts(void)
{
    char opts[64];

    (void)mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    if (mount("proc", "/proc", "proc", 0, NULL) || mount("sysfs", "/sys", "sysfs", 0, NULL))
        die("mounting /proc and /sys");
    /* (read once /proc is there: before, every boot got the default) */
    unsigned long long disk = cmdline_num("sbx.disk", 64ull << 20);
    /* /tmp and /work each at the disk size, as the local provider's */
    snprintf(opts, sizeof opts, "mode=1777,size=%llu", disk);
    (void)mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts);
    snprintf(opts, sizeof opts, "mode=0755,uid=%d,gid=%d,size=%llu", SBX_UID, SBX_UID, disk);
    if (mount("tmpfs", "/work", "tmpfs", MS_NOSUID | MS_NODEV, opts))
        unenforced |= LB_DISK;
    if (mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL) ||
        write_file(CG_ROOT "/cgroup.subtree_control", "+memory +pids +cpu"))
        unenforced |= LB_MEMORY | LB_PIDS;
}

/* sbx.image=FSTYPE: the host gave a read-only root image as the first
 * virtio-blk disk.  It is mounted with a tmpfs over it (an overlay: the
 * commands may write, each VM in its own memory) at IMG_ROOT, with /proc,
 * /dev, a /tmp of its own and our /work (the same files the host puts and
 * gets) inside; every command runs chrooted there. */
#define IMG_ROOT "/image/root"
static int image_root;

static void mkdirs(const char *const *dirs, size_t n, mode_t mode)
{
    for (size_t i = 0; i < n; i++)
        if (mkdir(dirs[i], mode) && errno != EEXIST)
            die(dirs[i]);
}

static void setup_image(void)
{
    char fs[16];
    const char *top[] = { "/image", "/image/lower", "/image/rw", IMG_ROOT };
    const char *rw[] = { "/image/rw/upper", "/image/rw/work" };
    const char *in[] = { IMG_ROOT "/proc", IMG_ROOT "/dev", IMG_ROOT "/work" };
    int tries = 0;

    if (cmdline_get("sbx.image", fs, sizeof fs) || (strcmp(fs, "erofs") && strcmp(fs, "ext4")))
        return;
    load_modules("/etc/sbx-modules-image");
    /* The disk appears once virtio_blk has probed it. */
    while (access("/dev/vda", F_OK) != 0 && tries++ < 500) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    mkdirs(top, sizeof top / sizeof top[0], 0755);
    if (mount("/dev/vda", "/image/lower", fs, MS_RDONLY | MS_NODEV, NULL))
        die("mounting the image /dev/vda");
    if (mount("tmpfs", "/image/rw", "tmpfs", MS_NODEV, "mode=0755"))
        die("mounting the image's tmpfs");
    mkdirs(rw, sizeof rw / sizeof rw[0], 0755);
    if (mount("overlay", IMG_ROOT, "overlay", MS_NODEV,
              "lowerdir=/image/lower,upperdir=/image/rw/upper,workdir=/image/rw/work"))
        die("mounting the image's overlay");
    mkdirs(in, sizeof in / sizeof in[0], 0755);
    if (mkdir(IMG_ROOT "/tmp", 01777) && errno != EEXIST)
        die(IMG_ROOT "/tmp");
    if (mount("proc", IMG_ROOT "/proc", "proc", 0, NULL) ||
        mount("/dev", IMG_ROOT "/dev", NULL, MS_BIND | MS_REC, NULL) ||
        mount("tmpfs", IMG_ROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=16m") ||
        mount("/work", IMG_ROOT "/work", NULL, MS_BIND, NULL))
        die("mounting /proc, /dev, /tmp and /work in the image");
    image_root = 1;
}

/* The loopback, and with sbx.net=user (a template allowing egress) eth0
 * on QEMU's user-mode network (mv-netup.c).  A VM that was to have
 * network and cannot stops (its reason on the console): never a run
 * without the network its template asked for. */
static void setup_net(void)
{
    char v[16];
    const char *what = "";
    int eth = !cmdline_get("sbx.net", v, sizeof v) && !strcmp(v, "user");

    if (eth)
        load_modules("/etc/sbx-modules-net");
    if (mv_netup(eth, image_root ? IMG_ROOT : NULL, &what) != 0) {
        if (eth)
            die(what);
        logk("sbx-agent: %s: %s\n", what, strerror(errno));
    }
}

/* Waits until a host is connected again: the port polls POLLHUP while
 * nobody holds the host's end (virtio_console), and wakes no one when a
 * client comes, hence the short sleeps.  What the client that went away
 * sent and we did not read yet is dropped meanwhile. */
static void wait_host(void)
{
    if (vsock_fd >= 0) {
        int fd;
        if (chan >= 0)
            close(chan);
        while ((fd = accept4(vsock_fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
            if (errno != EINTR && errno != ECONNABORTED)
                die("accepting a vsock connection");
        chan = fd;
        host_gone = 0;
        return;
    }
    for (;;) {
        struct pollfd pfd = { chan, POLLIN, 0 };
        if (poll(&pfd, 1, 0) >= 0 && !(pfd.revents & POLLHUP))
            break;
        if (pfd.revents & POLLIN) {
            char junk[4096];
            if (read(chan, junk, sizeof junk) > 0)
                continue;
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    host_gone = 0;
}

/* Listens on vsock @port and returns the first host connection. */
static int open_vsock(unsigned port)
{
    struct sockaddr_vm sa = { .svm_family = AF_VSOCK, .svm_port = port,
                              .svm_cid = VMADDR_CID_ANY };

    vsock_fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (vsock_fd < 0 || bind(vsock_fd, (struct sockaddr *)&sa, sizeof sa) ||
        listen(vsock_fd, 1))
        die("listening on vsock");
    wait_host();
    return chan;
}

static int open_port(void)
{
    for (int tries = 0; tries < 1000; tries++) {
        DIR *d = opendir("/sys/class/virtio-ports");
        struct dirent *e;

        while (d && (e = readdir(d))) {
            char path[512], name[128] = "";
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", e->d_name);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            ssize_t n = fd >= 0 ? read(fd, name, sizeof name - 1) : -1;
            if (fd >= 0)
                close(fd);
            name[n > 0 ? n : 0] = '\0';
            name[strcspn(name, "\n")] = '\0';
            if (strcmp(name, MV_PORT_NAME))
                continue;
            snprintf(path, sizeof path, "/dev/%s", e->d_name);
            closedir(d);
            d = NULL;
            fd = open(path, O_RDWR | O_CLOEXEC);
            if (fd >= 0) {
                (void)chmod(path, 0600);
                return fd;
            }
            break;
        }
        if (d)
            closedir(d);
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    errno = ENODEV;
    die("no virtio port " MV_PORT_NAME);
}

/* The directory holding @path's last component, opened under /work with
 * no link followed on the way (O_NOFOLLOW on each component; a command
 * may have left links anywhere in /work), missing ones made when @make.
 * @path (modified) is relative, no ".", ".." or empty component.  The
 * directory's fd and *leaf, or -1 with *code (MV_ERR_*) and errno set. */
static int walk(char *path, int make, const char **leaf, uint32_t *code)
{
    int dir = open("/work", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char *c = path;

    *code = MV_ERR_OTHER;
    if (dir < 0)
        return -1;
    for (;;) {
        char *slash = strchr(c, '/');
        if (!slash) {
            *leaf = c;
            return dir;
        }
        *slash = '\0';
        if (make && mkdirat(dir, c, 0755) == 0 && fchownat(dir, c, SBX_UID, SBX_UID,
                                                          AT_SYMLINK_NOFOLLOW) != 0)
            logk("sbx-agent: chown %s: %s\n", c, strerror(errno));
        int next = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dir);
        if (next < 0) {
            /* ELOOP: a link; ENOTDIR: a link or a file in the way */
            *code = e == ENOENT ? MV_ERR_NOENT : e == ELOOP || e == ENOTDIR ? MV_ERR_PATH
                                                                           : MV_ERR_OTHER;
            errno = e;
            return -1;
        }
        dir = next;
        c = slash + 1;
    }
}

/* FILE: u32 mode, path NUL, data; answered DONE or ERROR. */
static void do_file(uint8_t *p, size_t len)
{
    uint8_t *nul;
    const char *leaf;
    uint32_t code, mode;
    char *path;
    int dir, fd;

    if (len < 5 || !(nul = memchr(p + 4, '\0', len - 4))) {
        send_error(MV_ERR_OTHER, "malformed file frame");
        return;
    }
    mode = mv_get32(p) & 07777;
    path = (char *)p + 4;
    size_t off = (size_t)(nul - p) + 1;
    if (!mv_path_ok(path)) {
        send_error(MV_ERR_PATH, "unsafe path %.200s", path);
        return;
    }
    char shown[256];
    snprintf(shown, sizeof shown, "%s", path);
    if ((dir = walk(path, 1, &leaf, &code)) < 0) {
        send_error(code, "upload %.200s: %s", shown, strerror(errno));
        return;
    }
    /* O_NONBLOCK: a FIFO the command left there must not hang the agent. */
    fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    int e = errno;
    close(dir);
    struct stat st;
    if (fd < 0) {
        send_error(e == ELOOP ? MV_ERR_PATH : e == EISDIR ? MV_ERR_NOTFILE : MV_ERR_OTHER,
                   "upload %.200s: %s", shown,
                   e == ELOOP ? "a symbolic link is there" : strerror(e));
        return;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        send_error(MV_ERR_NOTFILE, "upload %.200s: not a regular file there", shown);
    } else if (ftruncate(fd, 0) || write_all(fd, p + off, len - off) ||
               fchown(fd, SBX_UID, SBX_UID) || fchmod(fd, mode)) {
        send_error(MV_ERR_OTHER, "upload %.200s: %s", shown, strerror(errno));
    } else {
        send_frame(MV_T_DONE, NULL, 0);
    }
    close(fd);
}

/* GET: u64 max, path NUL; answered FILEDATA (at most max bytes) or ERROR. */
static void do_get(uint8_t *p, size_t len)
{
    const char *leaf;
    uint32_t code;
    struct stat st;
    int dir, fd;

    if (len < MV_GET_HEAD_LEN + 2 || p[len - 1] != '\0') {
        send_error(MV_ERR_OTHER, "malformed get frame");
        return;
    }
    uint64_t max = mv_get64(p);
    char *path = (char *)p + MV_GET_HEAD_LEN;
    if (max > MV_MAX_PAYLOAD)
        max = MV_MAX_PAYLOAD;
    if (strlen(path) != len - MV_GET_HEAD_LEN - 1 || !mv_path_ok(path)) {
        send_error(MV_ERR_PATH, "unsafe path %.200s", path);
        return;
    }
    char shown[256];
    snprintf(shown, sizeof shown, "%s", path);
    if ((dir = walk(path, 0, &leaf, &code)) < 0) {
        send_error(code, "download %.200s: %s", shown, strerror(errno));
        return;
    }
    fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int e = errno;
    close(dir);
    if (fd < 0) {
        send_error(e == ENOENT ? MV_ERR_NOENT : e == ELOOP ? MV_ERR_PATH : MV_ERR_OTHER,
                   "download %.200s: %s", shown,
                   e == ELOOP ? "a symbolic link is there" : strerror(e));
        return;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        send_error(MV_ERR_NOTFILE, "download %.200s: not a regular file", shown);
        close(fd);
        return;
    }
    if ((uint64_t)st.st_size > max) {
        send_error(MV_ERR_TOOBIG, "download %.200s: %lld bytes, over the %llu asked for", shown,
                   (long long)st.st_size, (unsigned long long)max);
        close(fd);
        return;
    }
    /* Read one byte past the size: a file that grew is refused, not cut. */
    size_t cap = (size_t)st.st_size + 1, got = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    for (;;) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        e = n < 0 ? errno : 0;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got == cap)
            break;
    }
    close(fd);
    if (got == cap)
        send_error(MV_ERR_TOOBIG, "download %.200s: it grew while read", shown);
    else if (got < (size_t)st.st_size)
        send_error(MV_ERR_OTHER, "download %.200s: read %zu of %lld bytes (%s)", shown, got,
                   (long long)st.st_size, e ? strerror(e) : "it shrank while read");
    else
        send_frame(MV_T_FILEDATA, buf, got);
    free(buf);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void kill_group(void)
{
    if (write_file(CG_RUN "/cgroup.kill", "1") != 0)
        kill(-1, SIGKILL); /* PID 1 is spared by kill(-1) */
}

static void set_limit(const char *file, unsigned long long v, unsigned bit)
{
    char num[32];

    if (unenforced & bit)
        return;
    snprintf(num, sizeof num, "%llu", v);
    if (write_file(file, num))
        unenforced |= bit;
}

/* Parses an EXEC frame into argv/env; NULL on a malformed one. */
static char **split(const uint8_t *p, size_t len, size_t n, size_t *used)
{
    /* two NULLs after the @n: room for one more (do_exec's argv's end) */
    char **v = calloc(n + 2, sizeof *v);
    size_t off = 0;

    for (size_t i = 0; v && i < n; i++) {
        const uint8_t *nul = off < len ? memchr(p + off, '\0', len - off) : NULL;
        if (!nul) {
            free(v);
            return NULL;
        }
        v[i] = (char *)p + off;
        off = (size_t)(nul - p) + 1;
    }
    *used = off;
    return v;
}

/* A streamed stdin: the pipe's write end (-1 once closed: at the end the
 * host sent, or when the command closed its stdin), the chunk being
 * written, whether a WANT is unanswered, whether the end came. */
struct feed {
    int fd;
    uint8_t *buf;
    size_t len, off;
    int asked, eof;
};

static void feed_ask(struct feed *f)
{
    f->asked = 1;
    send_frame(MV_T_WANT, NULL, 0);
}

/* Writes what the command takes of the chunk now (never waiting: its
 * output must keep flowing); once it took all, asks for the next.  Once
 * the command closed its stdin the rest is dropped, as on the other
 * providers, and no more asked for: the host then stops reading it. */
static void feed_write(struct feed *f)
{
    while (f->fd >= 0 && f->off < f->len) {
        ssize_t n = write(f->fd, f->buf + f->off, f->len - f->off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n < 0) {
            close(f->fd); /* EPIPE: the command closed its stdin */
            f->fd = -1;
            break;
        }
        f->off += (size_t)n;
    }
    free(f->buf);
    f->buf = NULL;
    f->len = f->off = 0;
    if (f->fd >= 0)
        feed_ask(f);
}

/* Reads @len bytes of a frame from the host during an exec: 0, or -1
 * when the host went away (the exec is then killed). */
static int read_host(void *buf, size_t len)
{
    if (!read_all(chan, buf, len))
        return 0;
    if (!host_left())
        die("reading from the host");
    host_gone = 1;
    return -1;
}

/* One frame from the host while the command @pid runs: a KILL (1, as
 * the host going away), STDIN for @f (NULL: stdin is not streamed), a
 * SIGNAL; anything else breaks the protocol. */
static int exec_frame(struct feed *f, pid_t pid, int reaped)
{
    uint8_t h[MV_HDR_LEN], *b;
    struct mv_hdr hd;
    const char *why;

    if (read_host(h, sizeof h))
        return 1;
    if (mv_hdr_parse(h, 0, &hd, &why)) {
        errno = EPROTO;
        die(why);
    }
    if (hd.type == MV_T_KILL)
        return 1;
    if (hd.type == MV_T_SIGNAL) {
        uint8_t sig;
        if (read_host(&sig, 1))
            return 1;
        /* (its process group is gone with it once reaped) */
        if (sbx_signal_deliverable(sig) && !reaped)
            (void)kill(-pid, sig);
        return 0;
    }
    if (hd.type != MV_T_STDIN)
        die("an unexpected frame during an exec");
    if (!f || !f->asked || f->eof) {
        errno = EPROTO;
        die("a stdin frame not asked for");
    }
    if (!(b = malloc(hd.len + 1)))
        die("out of memory");
    if (hd.len && read_host(b, hd.len)) {
        free(b);
        return 1;
    }
    f->asked = 0;
    if (hd.len == 0) {
        free(b);
        f->eof = 1;
        if (f->fd >= 0)
            close(f->fd);
        f->fd = -1;
        return 0;
    }
    f->buf = b;
    f->len = hd.len;
    f->off = 0;
    feed_write(f);
    return 0;
}

static void do_exec(uint8_t *p, size_t len)
{
    struct mv_exit ex = { 0, 0, 0, -1, -1 };
    uint8_t out[MV_EXIT_LEN];
    size_t used;

    if (len < MV_EXEC_HEAD_LEN) {
        send_error(MV_ERR_OTHER, "malformed exec frame");
        return;
    }
    uint64_t timeout_ms = mv_get64(p), mem = mv_get64(p + 8), pids = mv_get64(p + 16),
             nofile = mv_get64(p + 24), fsize = mv_get64(p + 32), cpu_ms = mv_get64(p + 40);
    uint32_t argc = mv_get32(p + 48), envc = mv_get32(p + 52), flags = mv_get32(p + 56);
    if (argc < 1 || argc > 65536 || envc > 65536 || (flags & ~MV_EXEC_STDIN_STREAM)) {
        send_error(MV_ERR_OTHER, "malformed exec frame");
        return;
    }
    char **strs = split(p + MV_EXEC_HEAD_LEN, len - MV_EXEC_HEAD_LEN, 1 + argc + envc, &used);
    if (!strs) {
        send_error(MV_ERR_OTHER, "malformed exec frame");
        return;
    }
    /* argv ends where the environment began: a NULL between them */
    memmove(strs + 2 + argc, strs + 1 + argc, envc * sizeof *strs);
    strs[1 + argc] = NULL;
    const uint8_t *in = p + MV_EXEC_HEAD_LEN + used;
    size_t in_len = len - MV_EXEC_HEAD_LEN - used;
    struct feed feed = { -1, NULL, 0, 0, 0, 0 }, *fd_feed = NULL;
    int in_fd = -1, pi[2];

    if (flags & MV_EXEC_STDIN_STREAM) {
        /* a pipe, fed as the command takes it; our end never blocks */
        int piped = !in_len && !pipe2(pi, O_CLOEXEC);
        if (!piped || fcntl(pi[1], F_SETFL, fcntl(pi[1], F_GETFL) | O_NONBLOCK)) {
            send_error(MV_ERR_OTHER, "stdin: %s", in_len ? "streamed and sent" : strerror(errno));
            if (piped) {
                close(pi[0]);
                close(pi[1]);
            }
            free(strs);
            return;
        }
        in_fd = pi[0];
        feed.fd = pi[1];
        fd_feed = &feed;
    } else {
        /* stdin from a file: no writer to keep fed beside the output. */
        in_fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (in_fd < 0 || write_all(in_fd, in, in_len) || lseek(in_fd, 0, SEEK_SET) != 0) {
            send_error(MV_ERR_OTHER, "stdin: %s", strerror(errno));
            free(strs);
            if (in_fd >= 0)
                close(in_fd);
            return;
        }
    }
    if (mkdir(CG_RUN, 0755) && errno != EEXIST)
        unenforced |= LB_MEMORY | LB_PIDS;
    set_limit(CG_RUN "/memory.max", mem, LB_MEMORY);
    set_limit(CG_RUN "/memory.swap.max", 0, 0);
    set_limit(CG_RUN "/pids.max", pids, LB_PIDS);
    long long oom0 = read_num(CG_RUN "/memory.events", "oom_kill");

    int po[2], pe[2], pc[2];
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || pipe2(pc, O_CLOEXEC)) {
        send_error(MV_ERR_OTHER, "pipe: %s", strerror(errno));
        free(strs);
        close(in_fd);
        if (feed.fd >= 0)
            close(feed.fd);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char num[32];
        int e;
        snprintf(num, sizeof num, "%d", (int)getpid());
        (void)write_file(CG_RUN "/cgroup.procs", num);
        setsid();
        struct rlimit rl = { nofile, nofile };
        setrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = rl.rlim_max = fsize;
        setrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = (cpu_ms + 999) / 1000;
        rl.rlim_max = rl.rlim_cur + 1;
        setrlimit(RLIMIT_CPU, &rl);
        dup2(in_fd, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        if ((image_root && chroot(IMG_ROOT)) ||
            chdir(strs[0][0] ? strs[0] : "/work") || setgroups(0, NULL) ||
            setgid(SBX_UID) || setuid(SBX_UID) || mv_filter_install())
            _exit(125);
        signal(SIGPIPE, SIG_DFL);
        execvpe(strs[1], strs + 1, strs + 2 + argc);
        e = errno;
        (void)!write(pc[1], &e, sizeof e);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(in_fd);
    close(po[1]);
    close(pe[1]);
    close(pc[1]);
    free(strs);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        close(pc[0]);
        if (feed.fd >= 0)
            close(feed.fd);
        send_error(MV_ERR_OTHER, "fork: %s", strerror(errno));
        return;
    }
    /* Until the command runs (its exec done, or failed): a SIGNAL the
     * host sends from now on reaches its process group, not ours. */
    int e = 0;
    ssize_t got;
    while ((got = read(pc[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    if (got == (ssize_t)sizeof e)
        ex.flags |= MV_EXIT_NOEXEC;
    close(pc[0]);
    if (fd_feed)
        feed_ask(&feed);
    int64_t deadline = now_ms() + (int64_t)timeout_ms;
    int status = 0, reaped = 0, open_o = 1, open_e = 1;
    uint8_t *buf = malloc(MV_CHUNK);
    if (!buf)
        die("out of memory");
    while (open_o || open_e || !reaped) {
        struct pollfd f[4] = { { open_o ? po[0] : -1, POLLIN, 0 },
                               { open_e ? pe[0] : -1, POLLIN, 0 },
                               { host_gone ? -1 : chan, POLLIN, 0 },
                               { feed.buf ? feed.fd : -1, POLLOUT, 0 } };
        int64_t left = deadline - now_ms();
        if (left <= 0 && !(ex.flags & (MV_EXIT_TIMEOUT | MV_EXIT_KILLED))) {
            ex.flags |= MV_EXIT_TIMEOUT;
            kill_group();
            kill(-pid, SIGKILL);
        }
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
            reaped = 1;
            kill_group(); /* what it left behind goes with it */
        }
        int r = poll(f, 4, reaped ? 200 : left > 50 ? 50 : left > 0 ? (int)left : 50);
        if (r < 0 && errno != EINTR)
            die("poll");
        for (int i = 0; i < 2; i++) {
            if (!f[i].revents || f[i].fd < 0)
                continue;
            ssize_t n = read(f[i].fd, buf, MV_CHUNK);
            if (n > 0)
                send_frame(i ? MV_T_STDERR : MV_T_STDOUT, buf, (size_t)n);
            else if (n == 0 || errno != EINTR) {
                if (i)
                    open_e = 0;
                else
                    open_o = 0;
            }
        }
        if (f[3].revents)
            feed_write(&feed);
        int kill_now = 0;
        if (f[2].revents & POLLHUP && !(f[2].revents & POLLIN))
            host_gone = 1; /* its client went away: nobody wants the rest */
        else if (f[2].revents)
            kill_now = exec_frame(fd_feed, pid, reaped);
        if ((host_gone || kill_now) && !(ex.flags & MV_EXIT_KILLED)) {
            ex.flags |= MV_EXIT_KILLED;
            kill_group();
            kill(-pid, SIGKILL);
        }
        if (reaped && r == 0)
            break; /* pipes held open past cgroup.kill: give up on them */
    }
    free(buf);
    free(feed.buf);
    if (feed.fd >= 0)
        close(feed.fd);
    close(po[0]);
    close(pe[0]);
    if (WIFSIGNALED(status))
        ex.signal = WTERMSIG(status);
    else
        ex.exit_code = WEXITSTATUS(status);
    long long oom1 = read_num(CG_RUN "/memory.events", "oom_kill");
    if (oom1 > oom0 && oom0 >= 0)
        ex.flags |= MV_EXIT_OOM;
    if (ex.signal == SIGXCPU || (ex.signal == SIGKILL && !(ex.flags & ~MV_EXIT_NOEXEC) &&
                                 read_num(CG_RUN "/cpu.stat", "usage_usec") >=
                                     (long long)cpu_ms * 1000))
        ex.flags |= MV_EXIT_CPU;
    long long usec = read_num(CG_RUN "/cpu.stat", "usage_usec");
    ex.cpu_ns = usec >= 0 ? usec * 1000 : -1;
    ex.peak_memory_bytes = read_num(CG_RUN "/memory.peak", NULL);
    if (read_num(CG_RUN "/pids.events", "max") > 0)
        ex.flags |= MV_EXIT_PIDS;
    /* A fresh cgroup for the next command: its figures start at zero. */
    if (rmdir(CG_RUN) && errno != ENOENT)
        logk("sbx-agent: rmdir %s: %s\n", CG_RUN, strerror(errno));
    mv_exit_encode(out, &ex);
    send_frame(MV_T_EXIT, out, sizeof out);
}

static void send_hello(void)
{
    struct mv_hello hl = { MV_PROTO_VERSION, unenforced };
    uint8_t hb[MV_HELLO_LEN];

    mv_hello_encode(hb, &hl);
    send_frame(MV_T_HELLO, hb, sizeof hb);
}

/* SEED, a VM restored from a snapshot: until now its kernel's random
 * state, clock and /work's and /tmp's sizes are the snapshot's, shared with every VM
 * restored from it.  The host's entropy is mixed in and the CRNG reseeded
 * at once (RNDRESEEDCRNG; mixing alone would leave the old key in use up
 * to a minute), the clock set, /work and /tmp resized; answered by a HELLO. */
static void do_seed(const uint8_t *p, size_t len)
{
    struct {
        struct rand_pool_info info;
        uint8_t buf[MV_SEED_BYTES];
    } pool;
    struct mv_seed sd;
    const char *why;
    char opts[64];

    if (mv_seed_decode(p, len, &sd, &why)) {
        send_error(MV_ERR_OTHER, "%s", why);
        return;
    }
    memcpy(pool.buf, sd.entropy, sizeof pool.buf);
    pool.info.entropy_count = 8 * MV_SEED_BYTES;
    pool.info.buf_size = MV_SEED_BYTES;
    int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ioctl(fd, RNDADDENTROPY, &pool) != 0 || ioctl(fd, RNDRESEEDCRNG) != 0) {
        send_error(MV_ERR_OTHER, "reseeding the kernel's random generator: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    close(fd);
    struct timespec ts = { (time_t)sd.sec, (long)sd.nsec };
    if (clock_settime(CLOCK_REALTIME, &ts) != 0) {
        send_error(MV_ERR_OTHER, "setting the clock: %s", strerror(errno));
        return;
    }
    snprintf(opts, sizeof opts, "size=%llu", (unsigned long long)sd.disk_bytes);
    if (!(unenforced & LB_DISK) &&
        (mount(NULL, "/work", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) != 0 ||
         mount(NULL, "/tmp", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) != 0)) {
        send_error(MV_ERR_OTHER, "resizing /work and /tmp: %s", strerror(errno));
        return;
    }
    send_hello();
}

int main(void)
{
    uint8_t h[MV_HDR_LEN];

    if (getpid() != 1)
        return 2;
    setup_mounts();
    load_modules("/etc/sbx-modules");
    setup_image();
    setup_net();
    signal(SIGPIPE, SIG_IGN);
    unsigned long long port = cmdline_num("sbx.vsock", 0);
    if (port)
        load_modules("/etc/sbx-modules-vsock");
    chan = port && port <= 0xffffffffu ? open_vsock((unsigned)port) : open_port();
    send_hello();
    for (;;) {
        struct mv_hdr hd;
        const char *why;
        uint8_t *p;

        if (host_gone)
            wait_host();
        if (read_all(chan, h, sizeof h)) {
            if (!host_left())
                die("reading from the host");
            wait_host(); /* a persistent sandbox's client went away */
            continue;
        }
        if (mv_hdr_parse(h, 0, &hd, &why)) {
            errno = EPROTO;
            die(why);
        }
        p = malloc(hd.len + 1);
        if (!p)
            die("out of memory");
        if (hd.len && read_all(chan, p, hd.len)) {
            if (!host_left())
                die("reading from the host");
            free(p); /* a half frame of a client that went away */
            wait_host();
            continue;
        }
        if (hd.type == MV_T_FILE)
            do_file(p, hd.len);
        else if (hd.type == MV_T_GET)
            do_get(p, hd.len);
        else if (hd.type == MV_T_EXEC)
            do_exec(p, hd.len);
        else if (hd.type == MV_T_SEED)
            do_seed(p, hd.len);
        /* a KILL, SIGNAL or STDIN between commands (one that crossed
         * the last command's EXIT) has nothing to reach */
        free(p);
        /* reap orphans reparented to PID 1 */
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}
