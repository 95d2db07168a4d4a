/* plugins/microvm/mv-qjail.c - QEMU in a jail of its own
 *
 * With vmm_jail = on (the default) each QEMU is started by clone(2) in
 * new mount, pid, ipc, uts and network namespaces (the network one has
 * only a loopback that is down: a VM has no network device), plus a user
 * namespace mapping our uid alone when we are not root.  A VM given
 * egress (cfg->net) keeps the host's network namespace: QEMU's user-mode
 * stack (slirp) opens the guest's connections as ordinary sockets of
 * QEMU's, and reads the host's /etc/resolv.conf (bound in, read only)
 * for 10.0.2.3's answers.  Before it execs QEMU the child:
 *   - writes itself into its cgroup (mv-cgroup.c: memory.max, cpu.max);
 *   - mounts a small tmpfs on <VM dir>/root and binds into it, at their
 *     own paths, only: QEMU's program and the libraries the dynamic
 *     loader resolves for it, its firmware and module folders (read
 *     only), the kernel, initrd and an image's disk (read only), the
 *     console file, and
 *     /dev/null, /dev/urandom and (with KVM) /dev/kvm; a proc of its own
 *     pid namespace showing processes only (subset=pid: /proc/self/fd is
 *     how QEMU opens the memory it is handed as an fd);
 *   - pivots into it, detaches the old root, makes the tmpfs read only;
 *   - as root, drops to vmm_uid:vmm_gid (default 65534, nobody), with
 *     the /dev/kvm group alone when it uses KVM; as a user, its
 *     capabilities end at exec (a uid other than 0 in its namespace);
 *   - sets no_new_privs; QEMU then turns its own seccomp filter on
 *     (-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,
 *     resourcecontrol=deny).
 * Sockets are never paths: the agent's channel, the QMP monitor and a
 * persistent VM's listening socket are fds QEMU inherits.
 *
 * Everything the child touches is prepared here in the parent (paths,
 * the cgroup's fds): between clone and exec it only makes system calls.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mv-int.h"

/* What a jailed QEMU needs of the host beside its VM's own files, found
 * once per provider: its program, libraries, firmware and modules. */
struct mv_qprog {
    pthread_mutex_t lock;
    int done;
    char err[300];
    char **paths; /* NULL-ended */
    int *dirs;    /* whether paths[i] is a folder */
    size_t n;
};

struct bind {
    const char *path;
    int ro, dir;
};

struct mv_qjail {
    int userns;
    unsigned uid, gid, outer_uid, outer_gid;
    gid_t kvm_gid;
    int kvm;
    int net; /* egress: the host's network namespace kept */
    char exe[PATH_MAX];
    char root[4300];
    char name[SBX_ID_MAX + 16];
    int procs[2];
    size_t n;
    struct bind b[];
};

#define MV_QJAIL_EXTRA 9 /* kernel, initrd, image, console, null, urandom, kvm, resolv.conf */

static int add_path(struct mv_qprog *q, const char *path, int dir)
{
    char **np = realloc(q->paths, (q->n + 2) * sizeof *np);
    if (!np)
        return -1;
    q->paths = np;
    int *nd = realloc(q->dirs, (q->n + 1) * sizeof *nd);
    if (!nd)
        return -1;
    q->dirs = nd;
    for (size_t i = 0; i < q->n; i++)
        if (!strcmp(q->paths[i], path))
            return 0;
    if (!(q->paths[q->n] = strdup(path)))
        return -1;
    q->dirs[q->n++] = dir;
    q->paths[q->n] = NULL;
    return 0;
}

/* The libraries of the ELF program @exe, as its dynamic loader resolves
 * them (LD_TRACE_LOADED_OBJECTS, what ldd does; @exe is the configured
 * VMM, trusted as much as running it), added to @q; the folder of libc
 * into @libdir. */
static int trace_libs(struct mv_qprog *q, const char *exe, char *libdir, size_t n)
{
    char *argv[] = {(char *)exe, NULL};
    char *envp[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
    posix_spawn_file_actions_t fa;
    char buf[16384];
    size_t len = 0;
    ssize_t got;
    int pp[2], st = 0, rc = -1;
    pid_t pid;

    libdir[0] = '\0';
    if (pipe2(pp, O_CLOEXEC) != 0)
        return -1;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(pp[0]);
        close(pp[1]);
        return -1;
    }
    int e = posix_spawn_file_actions_adddup2(&fa, pp[1], 1);
    if (!e)
        e = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(pp[1]);
    if (e) {
        close(pp[0]);
        errno = e;
        return -1;
    }
    while (len < sizeof buf - 1 && ((got = read(pp[0], buf + len, sizeof buf - 1 - len)) > 0 ||
                                    (got < 0 && errno == EINTR)))
        if (got > 0)
            len += (size_t)got;
    close(pp[0]);
    buf[len] = '\0';
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        errno = ENOEXEC;
        return -1;
    }
    rc = 0;
    /* "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or
     * "\t/lib64/ld-linux-x86-64.so.2 (0x...)" */
    for (char *line = strtok(buf, "\n"); line && !rc; line = strtok(NULL, "\n")) {
        char *s = strstr(line, "=> ");
        s = s ? s + 3 : line + strspn(line, " \t");
        if (*s != '/')
            continue;
        char *end = strstr(s, " (");
        if (end)
            *end = '\0';
        rc = add_path(q, s, 0);
        const char *leaf = strrchr(s, '/');
        if (!rc && !strncmp(leaf, "/libc.so", 8) && (size_t)(leaf - s) < n)
            snprintf(libdir, n, "%.*s", (int)(leaf - s), s);
    }
    return rc;
}

/* Fills @q for QEMU's program @bin (locked). */
static void prog_find(struct mv_qprog *q, const char *bin)
{
    char full[4200], real[PATH_MAX], libdir[PATH_MAX], d[PATH_MAX + 64], r[PATH_MAX];
    unsigned char magic[4];
    int fd;

    if (!mv_vmm_path(bin, full, sizeof full) || !realpath(full, real)) {
        snprintf(q->err, sizeof q->err, "no QEMU program at %s", bin);
        return;
    }
    /* A wrapper script would be run by the trace, and needs a shell. */
    if ((fd = open(real, O_RDONLY | O_CLOEXEC)) < 0 || read(fd, magic, 4) != 4 ||
        memcmp(magic, "\177ELF", 4)) {
        snprintf(q->err, sizeof q->err,
                 "the VMM's jail runs an ELF program only, and %.150s is "
                 "not one (vmm_jail = off runs it unjailed)",
                 real);
        if (fd >= 0)
            close(fd);
        return;
    }
    close(fd);
    if (add_path(q, full, 0) || (strcmp(full, real) && add_path(q, real, 0)) ||
        trace_libs(q, real, libdir, sizeof libdir) != 0) {
        snprintf(q->err, sizeof q->err, "the libraries of %.200s: %s", real, strerror(errno));
        return;
    }
    /* Its firmware (bios-microvm.bin, linuxboot_dma.bin) and modules
     * (accel-tcg-*.so), which QEMU looks for beside its program. */
    char *bindir = dirname(real);
    snprintf(d, sizeof d, "%s/../share/qemu", bindir);
    if (realpath(d, r) && add_path(q, r, 1)) {
        snprintf(q->err, sizeof q->err, "out of memory");
        return;
    }
    if (libdir[0]) {
        snprintf(d, sizeof d, "%s/../lib/%s/qemu", bindir, basename(libdir));
        if (realpath(d, r) && add_path(q, r, 1)) {
            snprintf(q->err, sizeof q->err, "out of memory");
            return;
        }
    }
    q->done = 1;
}

int mv_qjail_init(struct mv_prov *p)
{
    struct mv_qprog *q = calloc(1, sizeof *q);

    if (!q || pthread_mutex_init(&q->lock, NULL) != 0) {
        free(q);
        return -1;
    }
    p->qprog = q;
    return 0;
}

void mv_qjail_fini(struct mv_prov *p)
{
    struct mv_qprog *q = p->qprog;

    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++)
        free(q->paths[i]);
    free(q->paths);
    free(q->dirs);
    pthread_mutex_destroy(&q->lock);
    free(q);
    p->qprog = NULL;
}

/* What QEMU's jail binds of the host, found once (0, or -1 and q->err). */
static int prog_ready(struct mv_prov *p)
{
    struct mv_qprog *q = p->qprog;

    pthread_mutex_lock(&q->lock);
    if (!q->done && !q->err[0])
        prog_find(q, p->binary);
    pthread_mutex_unlock(&q->lock);
    return q->done ? 0 : -1;
}

int mv_qjail_describe(struct mv_prov *p, char *buf, size_t n)
{
    if (!p->vmm_jail) {
        snprintf(buf, n, "off: QEMU runs as the provider does, with its seccomp filter only");
        return 1;
    }
    if (prog_ready(p) != 0) {
        snprintf(buf, n, "on, but no VM can start: %s", p->qprog->err);
        return 0;
    }
    char who[64];
    if (geteuid() == 0)
        snprintf(who, sizeof who, "as %u:%u", p->vmm_uid, p->vmm_gid);
    else
        snprintf(who, sizeof who, "in a user namespace");
    snprintf(buf, n,
             "on: QEMU %s, in namespaces of its own, a root of %zu host paths and "
             "the VM's, a cgroup of %llu MiB and one CPU",
             who, p->qprog->n, (unsigned long long)(p->memory_mib + MV_JAIL_OVERHEAD_MIB));
    return 1;
}

void mv_qjail_free(struct mv_qjail *j)
{
    if (!j)
        return;
    for (int i = 0; i < 2; i++)
        if (j->procs[i] >= 0)
            close(j->procs[i]);
    free(j);
}

/* The console file, made for QEMU to write (as the jail's uid). */
static int console_file(const struct mv_qjail *j, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

    if (fd < 0 || (!j->userns && fchown(fd, j->uid, j->gid) != 0)) {
        snprintf(err, errlen, "the VM's console %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int mv_qjail_prepare(struct mv_prov *p, const struct mv_vm_config *cfg, struct mv_qjail **out,
                     char *err, size_t errlen)
{
    struct mv_qprog *q = p->qprog;
    struct mv_qjail *j;
    const char *leaf;
    struct stat st;

    *out = NULL;
    if (prog_ready(p) != 0) {
        snprintf(err, errlen, "%s", q->err);
        return -1;
    }
    if (!(j = calloc(1, sizeof *j + (q->n + MV_QJAIL_EXTRA) * sizeof j->b[0]))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    j->procs[0] = j->procs[1] = -1;
    j->userns = geteuid() != 0;
    j->uid = j->userns ? geteuid() : p->vmm_uid;
    j->gid = j->userns ? getegid() : p->vmm_gid;
    j->outer_uid = geteuid();
    j->outer_gid = getegid();
    j->kvm = !strcmp(cfg->accel, "kvm");
    snprintf(j->exe, sizeof j->exe, "%s", q->paths[0]);
    for (size_t i = 0; i < q->n; i++)
        j->b[j->n++] = (struct bind){q->paths[i], 1, q->dirs[i]};
    j->b[j->n++] = (struct bind){cfg->kernel, 1, 0};
    j->b[j->n++] = (struct bind){cfg->initrd, 1, 0};
    if (cfg->image)
        j->b[j->n++] = (struct bind){cfg->image, 1, 0};
    j->b[j->n++] = (struct bind){cfg->console, 0, 0};
    j->b[j->n++] = (struct bind){"/dev/null", 0, 0};
    j->b[j->n++] = (struct bind){"/dev/urandom", 1, 0};
    j->net = cfg->net;
    if (j->net && access("/etc/resolv.conf", R_OK) == 0)
        j->b[j->n++] = (struct bind){"/etc/resolv.conf", 1, 0};
    if (j->kvm) {
        j->b[j->n++] = (struct bind){"/dev/kvm", 0, 0};
        j->kvm_gid = stat("/dev/kvm", &st) == 0 ? st.st_gid : 0;
    }
    leaf = strrchr(cfg->dir, '/');
    snprintf(j->name, sizeof j->name, "%s", leaf ? leaf + 1 : cfg->dir);
    if ((size_t)snprintf(j->root, sizeof j->root, "%s/root", cfg->dir) >= sizeof j->root ||
        (mkdir(j->root, 0700) != 0 && errno != EEXIST)) {
        snprintf(err, errlen, "the VMM's root %s: %s", j->root, strerror(errno));
        goto fail;
    }
    if (console_file(j, cfg->console, err, errlen) ||
        mv_cg_make(j->name, (cfg->memory_mib + MV_JAIL_OVERHEAD_MIB) << 20, j->procs, err, errlen))
        goto fail;
    *out = j;
    return 0;
fail:
    mv_qjail_free(j);
    return -1;
}

void mv_qjail_remove(const char *dir)
{
    char root[4300];
    const char *leaf = strrchr(dir, '/');

    snprintf(root, sizeof root, "%s/root", dir);
    (void)rmdir(root); /* the tmpfs was in the VMM's namespace alone */
    mv_cg_remove(leaf ? leaf + 1 : dir);
}

pid_t mv_qjail_fork(const struct mv_qjail *j)
{
    if (!j)
        return fork();
    unsigned long fl = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
    if (!j->net)
        fl |= CLONE_NEWNET;
    if (j->userns)
        fl |= CLONE_NEWUSER;
    /* Without CLONE_VM, clone returns twice as fork does. */
    return (pid_t)syscall(SYS_clone, fl, NULL, NULL, NULL, NULL);
}

/* --- in the child, between clone and exec: system calls only --- */

static int fail(char *err, size_t n, const char *what, const char *path)
{
    snprintf(err, n, "the VMM's jail: %s %s: %s", what, path, strerror(errno));
    return -1;
}

static int put(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t len = (ssize_t)strlen(text);
    int rc = fd >= 0 && write(fd, text, (size_t)len) == len ? 0 : -1;

    if (fd >= 0)
        close(fd);
    return rc;
}

/* mkdir -p of @path's parents (under the tmpfs). */
static int parents(char *path)
{
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        int r = mkdir(path, 0755);
        *s = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

/* Binds @b->path at the same path under @root, read only when asked
 * (keeping the flags a user namespace may not drop). */
static int bind_one(const char *root, const struct bind *b, char *err, size_t n)
{
    char dst[8500];
    struct statvfs vfs;

    snprintf(dst, sizeof dst, "%s%s", root, b->path);
    if (parents(dst) != 0)
        return fail(err, n, "mkdir for", dst);
    if (b->dir ? mkdir(dst, 0755) != 0 && errno != EEXIST
               : mknod(dst, S_IFREG | 0644, 0) != 0 && errno != EEXIST)
        return fail(err, n, "making the mount point", dst);
    if (mount(b->path, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
        return fail(err, n, "binding", b->path);
    if (!b->ro)
        return 0;
    unsigned long fl = MS_BIND | MS_REMOUNT | MS_RDONLY;
    if (statvfs(dst, &vfs) == 0) {
        fl |= (vfs.f_flag & ST_NOSUID) ? MS_NOSUID : 0;
        fl |= (vfs.f_flag & ST_NODEV) ? MS_NODEV : 0;
        fl |= (vfs.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
    }
    if (mount(NULL, dst, NULL, fl, NULL) != 0)
        return fail(err, n, "making read only", dst);
    return 0;
}

int mv_qjail_enter(const struct mv_qjail *j, char *err, size_t n)
{
    char path[4400], map[64];

    if (j->userns) {
        snprintf(map, sizeof map, "%u %u 1\n", j->uid, j->outer_uid);
        if (put("/proc/self/uid_map", map) != 0)
            return fail(err, n, "writing", "/proc/self/uid_map");
        if (put("/proc/self/setgroups", "deny") != 0)
            return fail(err, n, "writing", "/proc/self/setgroups");
        snprintf(map, sizeof map, "%u %u 1\n", j->gid, j->outer_gid);
        if (put("/proc/self/gid_map", map) != 0)
            return fail(err, n, "writing", "/proc/self/gid_map");
    }
    for (int i = 0; i < 2; i++)
        if (j->procs[i] >= 0 && write(j->procs[i], "0", 1) != 1)
            return fail(err, n, "joining", "its cgroup");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return fail(err, n, "making private", "/");
    if (mount("tmpfs", j->root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755") != 0)
        return fail(err, n, "mounting a tmpfs on", j->root);
    for (size_t i = 0; i < j->n; i++)
        if (bind_one(j->root, &j->b[i], err, n))
            return -1;
    snprintf(path, sizeof path, "%s/proc", j->root);
    if (mkdir(path, 0555) != 0 ||
        mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid") != 0)
        return fail(err, n, "mounting", path);
    if (chdir(j->root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
        umount2(".", MNT_DETACH) != 0 || chdir("/") != 0)
        return fail(err, n, "pivoting into", j->root);
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
        return fail(err, n, "making read only", "its root");
    (void)sethostname("microvm", 7);
    if (!j->userns) {
        gid_t kvm = j->kvm_gid;
        if (setgroups(j->kvm ? 1 : 0, &kvm) != 0 || setresgid(j->gid, j->gid, j->gid) != 0 ||
            setresuid(j->uid, j->uid, j->uid) != 0)
            return fail(err, n, "dropping to", "vmm_uid/vmm_gid");
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail(err, n, "setting", "no_new_privs");
    return 0;
}

const char *mv_qjail_exe(const struct mv_qjail *j)
{
    return j->exe;
}
