/* tests/hostile/hostile.c - hostile programs, one per subcommand
 *
 * ONLY EVER RUN INSIDE THE SANDBOX UNDER TEST (tests/hostile/run.sh copies
 * it in with --file).  Each subcommand either attacks a limit (the
 * supervisor must stop it: fork bomb, memory bomb, spin, flood, ...) or
 * tries an escape and exits 0 when the escape was refused, 1 when it
 * worked, printing what happened.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <arpa/inet.h>
#include <unistd.h>

/* Prints the outcome of one attempt; returns 1 if it succeeded (bad). */
static int attempt(const char *what, long r)
{
    if (r >= 0) {
        printf("ESCAPE: %s succeeded\n", what);
        return 1;
    }
    printf("refused: %s: %s\n", what, strerror(errno));
    return 0;
}

static int forkbomb(void)
{
    pid_t me = getpid();
    for (;;) {
        pid_t p = fork();
        if (p < 0) {
            if (getpid() == me) {
                puts("fork failed in the first process");
                return 3;
            }
            pause();
        }
    }
}

static int membomb(void)
{
    for (;;) {
        char *p = malloc(16u << 20);
        if (!p) {
            puts("malloc failed");
            return 3;
        }
        memset(p, 0x5a, 16u << 20);
    }
}

static int daemonize(const char *token)
{
    pid_t p = fork();
    if (p < 0)
        return 3;
    if (p == 0) {
        setsid();
        if (fork() == 0) {
            prctl(PR_SET_NAME, token, 0, 0, 0);
            signal(SIGTERM, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
            close(0);
            close(1);
            close(2);
            for (;;)
                pause();
        }
        _exit(0);
    }
    waitpid(p, NULL, 0);
    puts("daemon started");
    return 0;
}

static int flood(void)
{
    static char buf[65536];
    memset(buf, 'x', sizeof buf);
    for (;;)
        if (write(1, buf, sizeof buf) < 0)
            return 3;
}

static int binary(void)
{
    unsigned char buf[256];
    for (int i = 0; i < 256; i++)
        buf[i] = (unsigned char)i;
    for (int i = 0; i < 256; i++)
        if (write(1, buf, sizeof buf) != (ssize_t)sizeof buf)
            return 3;
    return 0;
}

static int read_stdin(void)
{
    char buf[4096];
    long total = 0;
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0)
        total += n;
    printf("%ld\n", total);
    return n < 0 ? 3 : 0;
}

static int write_host(const char *token)
{
    const char *outside[] = {"/etc", "/usr", "/usr/bin", "/", "/var", "/proc", "/dev", "/lib"};
    char path[256];
    int bad = 0;
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
        snprintf(path, sizeof path, "%s/hostile-%s", strcmp(outside[i], "/") ? outside[i] : "", token);
        bad |= attempt(path, open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
    }
    /* Inside the sandbox these must work, and stay inside. */
    const char *inside[] = {"/tmp", "/work", "/var/tmp", "/dev/shm"};
    for (size_t i = 0; i < sizeof inside / sizeof *inside; i++) {
        snprintf(path, sizeof path, "%s/hostile-%s-%zu", inside[i], token, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) {
            printf("UNEXPECTED: cannot write %s: %s\n", path, strerror(errno));
            bad = 1;
        } else {
            close(fd);
        }
    }
    return bad;
}

static int read_secrets(void)
{
    const char *paths[] = {"/etc/shadow", "/etc/gshadow", "/root", "/home", "/run", "/sys",
                           "/etc/polysandbox", "/var/lib/polysandbox", "/proc/1/environ"};
    int bad = 0;
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        bad |= attempt(paths[i], open(paths[i], O_RDONLY));
    return bad;
}

static int do_connect(const char *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return attempt("socket", -1) ? 1 : 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return attempt("connect to the host's loopback", connect(s, (struct sockaddr *)&a, sizeof a));
}

static int do_ptrace(void)
{
    pid_t c = fork();
    if (c == 0) {
        for (;;)
            pause();
    }
    int bad = attempt("ptrace(PTRACE_ATTACH, child)", ptrace(PTRACE_ATTACH, c, 0, 0));
    bad |= attempt("ptrace(PTRACE_ATTACH, 1)", ptrace(PTRACE_ATTACH, 1, 0, 0));
    bad |= attempt("ptrace(PTRACE_TRACEME)", ptrace(PTRACE_TRACEME, 0, 0, 0));
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    return bad;
}

static int do_mount(void)
{
    int bad = attempt("mount tmpfs on /tmp", mount("none", "/tmp", "tmpfs", 0, NULL));
    bad |= attempt("remount / read-write", mount(NULL, "/", NULL, MS_REMOUNT, NULL));
    bad |= attempt("umount /proc", umount2("/proc", MNT_DETACH));
    bad |= attempt("fsopen(tmpfs)", syscall(SYS_fsopen, "tmpfs", 0));
    bad |= attempt("open_tree(/)", syscall(SYS_open_tree, AT_FDCWD, "/", 1));
    return bad;
}

static int do_unshare(void)
{
    int bad = attempt("unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER));
    bad |= attempt("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
    bad |= attempt("unshare(CLONE_NEWNET)", unshare(CLONE_NEWNET));
    long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    if (r > 0)
        waitpid((pid_t)r, NULL, 0);
    bad |= attempt("clone(CLONE_NEWUSER)", r);
    bad |= attempt("setns", syscall(SYS_setns, 0, 0));
    return bad;
}

static int do_keyctl(void)
{
    int bad = attempt("add_key", syscall(SYS_add_key, "user", "hostile", "x", 1, -3 /* session */));
    bad |= attempt("keyctl(GET_KEYRING_ID)", syscall(SYS_keyctl, 0, -3, 0));
    bad |= attempt("request_key", syscall(SYS_request_key, "user", "hostile", NULL, 0));
    return bad;
}

static int do_misc(void)
{
    char params[120];
    memset(params, 0, sizeof params);
    int bad = attempt("io_uring_setup", syscall(SYS_io_uring_setup, 4, params));
    bad |= attempt("bpf", syscall(SYS_bpf, 0, NULL, 0));
    bad |= attempt("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
    bad |= attempt("userfaultfd", syscall(SYS_userfaultfd, 0));
    char c = 'x';
    bad |= attempt("ioctl(TIOCSTI)", ioctl(1, TIOCSTI, &c));
    bad |= attempt("socket(AF_VSOCK)", socket(40, SOCK_STREAM, 0));
    bad |= attempt("socket(AF_ALG)", socket(38, SOCK_SEQPACKET, 0));
    struct timespec ts = {0, 0};
    bad |= attempt("clock_settime", clock_settime(CLOCK_REALTIME, &ts));
    return bad;
}

static int do_kmod(void)
{
    /* Only exploits load modules: the filter kills (SIGSYS). */
    syscall(SYS_init_module, NULL, 0, "");
    puts("ESCAPE: init_module returned");
    return 1;
}

/* 50 MiB on one line: the cap must cut it, nothing may wait for a newline. */
static int huge_line(void)
{
    static char buf[1 << 20];
    memset(buf, 'y', sizeof buf);
    for (int i = 0; i < 50; i++)
        if (write(1, buf, sizeof buf) < 0)
            return 3;
    return 0;
}

/* kill(-1) reaches only the sandbox: our own child dies, we (the sender)
 * and the host survive. */
static int kill_all(void)
{
    pid_t c = fork();
    if (c < 0)
        return 3;
    if (c == 0) {
        for (;;)
            pause();
    }
    signal(SIGTERM, SIG_IGN);
    if (kill(-1, SIGKILL) < 0) {
        printf("kill(-1): %s\n", strerror(errno));
        return 1;
    }
    int st;
    if (waitpid(c, &st, 0) != c || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
        puts("the sandbox's own child did not die of kill(-1)");
        return 1;
    }
    puts("kill(-1) killed the sandbox's child; still alive");
    return 0;
}

/* kill(0): our own process group (a session of our own) dies, us with
 * it; nothing above us belongs to it. */
static int kill_group(void)
{
    kill(0, SIGKILL);
    puts("still alive after kill(0, SIGKILL)");
    return 1;
}

/* The process that started us (a sandbox's init, or a supervisor of the
 * exec) outlives SIGKILL and SIGSTOP from us. */
static int kill_parent(void)
{
    pid_t pp = getppid();
    printf("kill(parent %d, SIGSTOP): %s\n", (int)pp,
           kill(pp, SIGSTOP) < 0 ? strerror(errno) : "sent");
    printf("kill(parent %d, SIGKILL): %s\n", (int)pp,
           kill(pp, SIGKILL) < 0 ? strerror(errno) : "sent");
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return 0;
}

/* SIGIO aimed at the parent: F_SETOWN it on a pipe, with SIGKILL,
 * SIGSTOP, SIGTERM or plain SIGIO as the signal (root's F_SETOWN passes
 * the kernel's permission check), then make the pipe readable. */
static int sigio_parent(void)
{
    const int sigs[] = {SIGKILL, SIGSTOP, SIGTERM, 0};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        int p[2];
        if (pipe(p) < 0)
            return 3;
        int own = fcntl(p[0], F_SETOWN, getppid());
        int sig = fcntl(p[0], F_SETSIG, sigs[i]);
        int async = fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
        printf("signal %d: F_SETOWN %s, F_SETSIG %s, O_ASYNC %s\n", sigs[i],
               own < 0 ? strerror(errno) : "ok", sig < 0 ? "refused" : "ok",
               async < 0 ? "refused" : "ok");
        if (write(p[1], "x", 1) != 1)
            return 3;
        close(p[0]);
        close(p[1]);
    }
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return 0;
}

/* The parent's oom_score_adj cannot be raised (it would be the OOM
 * killer's first choice). */
static int oom_parent(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)getppid());
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return attempt(path, -1);
    long r = write(fd, "1000", 4);
    close(fd);
    return attempt(path, r);
}

/* Every descriptor closed, stdio among them, then an exit status of our
 * own: the status still arrives. */
static int close_all(void)
{
    for (int fd = 0; fd < 1024; fd++)
        close(fd);
    return 5;
}

/* Fill DIR with one file until ENOSPC; the file must stop at the tmpfs
 * size (MAX bytes, in MiB), with ENOSPC, not another error. */
static int fill_disk(const char *dir, const char *max_mib)
{
    static char buf[65536];
    char path[256];
    long long max = atoll(max_mib) << 20, total = 0;
    signal(SIGXFSZ, SIG_IGN);
    memset(buf, 'z', sizeof buf);
    snprintf(path, sizeof path, "%s/fill", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        printf("cannot create %s: %s\n", path, strerror(errno));
        return 3;
    }
    ssize_t n;
    while ((n = write(fd, buf, sizeof buf)) > 0)
        total += n;
    int e = errno;
    close(fd);
    printf("%s: wrote %lld bytes, then: %s\n", dir, total, n < 0 ? strerror(e) : "EOF");
    if (n < 0 && e == ENOSPC && total <= max)
        return 0;
    return 1;
}

/* Create empty files in DIR until ENOSPC: the inode cap must hold. */
static int fill_inodes(const char *dir, const char *max_s)
{
    char path[256];
    long max = atol(max_s), i;
    for (i = 0; i < max + 1000; i++) {
        snprintf(path, sizeof path, "%s/i%ld", dir, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) {
            int e = errno;
            printf("%s: %ld files, then: %s\n", dir, i, strerror(e));
            return e == ENOSPC ? 0 : 1;
        }
        close(fd);
    }
    printf("%s: %ld files and no ENOSPC\n", dir, i);
    return 1;
}

/* 10,000 nested directories (far past PATH_MAX) in /work. */
static int deep_dirs(void)
{
    if (chdir("/work") < 0)
        return 3;
    for (int i = 0; i < 10000; i++) {
        if (mkdir("d", 0755) < 0 || chdir("d") < 0) {
            printf("level %d: %s\n", i, strerror(errno));
            return 1;
        }
    }
    int fd = open("leaf", O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        return 1;
    close(fd);
    puts("10000 levels made");
    return 0;
}

static int do_mknod(void)
{
    int bad = attempt("mknod /work/null (char 1,3)", mknod("/work/null", S_IFCHR | 0666, makedev(1, 3)));
    bad |= attempt("mknod /tmp/sda (block 8,0)", mknod("/tmp/sda", S_IFBLK | 0600, makedev(8, 0)));
    bad |= attempt("mknod /dev/shm/mem (char 1,1)", mknod("/dev/shm/mem", S_IFCHR | 0600, makedev(1, 1)));
    return bad;
}

/* None of the given host paths (the orchestrator's own files) exists. */
static int read_paths(int argc, char **argv)
{
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        struct stat st;
        bad |= attempt(argv[i], stat(argv[i], &st));
    }
    return bad;
}

/* /proc/self/mountinfo names none of the given host paths (the
 * orchestrator's state and configuration directories). */
static int mountinfo_clean(int argc, char **argv)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[8192];
    int bad = 0;
    if (!f) {
        printf("cannot read /proc/self/mountinfo: %s\n", strerror(errno));
        return 1;
    }
    while (fgets(line, sizeof line, f))
        for (int i = 2; i < argc; i++)
            if (*argv[i] && strstr(line, argv[i])) {
                printf("ESCAPE: mountinfo shows %s: %s", argv[i], line);
                bad = 1;
            }
    fclose(f);
    return bad;
}

/* /proc entries that show or act on the host kernel are masked. */
static int proc_masked(void)
{
    const char *files[] = {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
                           "/proc/latency_stats", "/proc/kallsyms", "/proc/sysrq-trigger"};
    const char *dirs[] = {"/proc/irq", "/proc/bus", "/proc/fs", "/proc/acpi", "/proc/scsi"};
    int bad = 0;
    char buf[64];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        int fd = open(files[i], O_RDONLY);
        if (fd < 0)
            continue; /* absent or unreadable: fine */
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        if (n > 0) {
            printf("ESCAPE: %s shows %zd bytes\n", files[i], n);
            bad = 1;
        }
    }
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char path[64];
        snprintf(path, sizeof path, "%s/hostile", dirs[i]);
        bad |= attempt(path, open(path, O_WRONLY | O_CREAT, 0644));
        DIR *d = opendir(dirs[i]); /* the mask is an empty directory */
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                printf("ESCAPE: %s is not masked (shows %s)\n", dirs[i], de->d_name);
                bad = 1;
                break;
            }
        if (d)
            closedir(d);
    }
    /* hidepid: the sandbox's init (pid 1) is not the payload's user's. */
    struct stat st;
    bad |= attempt("stat /proc/1 (the init, hidden)", stat("/proc/1", &st));
    bad |= attempt("write /proc/sys/kernel/hostname", open("/proc/sys/kernel/hostname", O_WRONLY));
    bad |= attempt("write /proc/sys/vm/drop_caches", open("/proc/sys/vm/drop_caches", O_WRONLY));
    return bad;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : "x";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(cmd, "forkbomb")) return forkbomb();
    if (!strcmp(cmd, "membomb")) return membomb();
    if (!strcmp(cmd, "spin")) for (;;) ;
    if (!strcmp(cmd, "sleep")) { sleep(100000); return 0; }
    if (!strcmp(cmd, "ignore-term")) {
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        for (;;) pause();
    }
    if (!strcmp(cmd, "daemon")) return daemonize(arg);
    if (!strcmp(cmd, "sigstop")) { raise(SIGSTOP); return 0; }
    if (!strcmp(cmd, "close-stdio")) { close(0); close(1); close(2); for (;;) pause(); }
    if (!strcmp(cmd, "flood")) return flood();
    if (!strcmp(cmd, "binary")) return binary();
    if (!strcmp(cmd, "stdin")) return read_stdin();
    if (!strcmp(cmd, "write-host")) return write_host(arg);
    if (!strcmp(cmd, "read-secrets")) return read_secrets();
    if (!strcmp(cmd, "connect")) return do_connect(arg);
    if (!strcmp(cmd, "ptrace")) return do_ptrace();
    if (!strcmp(cmd, "mount")) return do_mount();
    if (!strcmp(cmd, "unshare")) return do_unshare();
    if (!strcmp(cmd, "keyctl")) return do_keyctl();
    if (!strcmp(cmd, "misc")) return do_misc();
    if (!strcmp(cmd, "kmod")) return do_kmod();
    if (!strcmp(cmd, "huge-line")) return huge_line();
    if (!strcmp(cmd, "kill-all")) return kill_all();
    if (!strcmp(cmd, "kill-group")) return kill_group();
    if (!strcmp(cmd, "kill-parent")) return kill_parent();
    if (!strcmp(cmd, "sigio-parent")) return sigio_parent();
    if (!strcmp(cmd, "oom-parent")) return oom_parent();
    if (!strcmp(cmd, "close-all")) return close_all();
    if (!strcmp(cmd, "fill-disk")) return fill_disk(arg, argc > 3 ? argv[3] : "0");
    if (!strcmp(cmd, "fill-inodes")) return fill_inodes(arg, argc > 3 ? argv[3] : "0");
    if (!strcmp(cmd, "deep-dirs")) return deep_dirs();
    if (!strcmp(cmd, "mknod")) return do_mknod();
    if (!strcmp(cmd, "read-paths")) return read_paths(argc, argv);
    if (!strcmp(cmd, "proc-masked")) return proc_masked();
    if (!strcmp(cmd, "mountinfo-clean")) return mountinfo_clean(argc, argv);
    fprintf(stderr, "hostile: unknown subcommand '%s'\n", cmd);
    return 2;
}
