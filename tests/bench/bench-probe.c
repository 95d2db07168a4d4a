/* tests/bench/bench-probe.c - snapshot of what this process and the host
 * hold (fds, mounts, cgroups, sandbox directories, processes, RSS), so
 * bench-runs can tell what many runs leaked.
 *
 * Only what this process made is counted: its cgroups carry its pid in
 * their name (<id>-<pid>-<start>-<n>), or are pool slots (pool-*) whose
 * owner xattr names it (held: between runs, none should be), and the
 * state directory is private to the benchmark, so sandboxes other
 * programs run meanwhile do not count.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "bench-probe.h"

/* The local provider's default cgroup_root (providers.d/local.ini). */
#define CG_ROOT "polysandbox"
#define CG_MOUNT "/sys/fs/cgroup"

typedef void (*entry_fn)(void *ud, const char *dir, const char *name);

/* Calls @fn for each entry of @dir but . and ..; -1 if @dir is unreadable. */
static long for_each_entry(const char *dir, entry_fn fn, void *ud)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fn)
            fn(ud, dir, e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static long count_fds(void)
{
    long n = for_each_entry("/proc/self/fd", NULL, NULL);
    return n < 0 ? -1 : n - 1; /* the directory stream's own fd */
}

/* Lines of mountinfo, and those naming @needle (when @out is given,
 * printed there). */
static void count_mounts(const char *needle, long *all, long *match, FILE *out,
                         const char *indent)
{
    *all = *match = -1;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    *all = *match = 0;
    while (getline(&line, &cap, f) > 0) {
        (*all)++;
        if (needle && *needle && strstr(line, needle)) {
            (*match)++;
            if (out)
                fprintf(out, "%smount: %s", indent, line);
        }
    }
    free(line);
    fclose(f);
}

struct cg_walk {
    char tag[32];   /* "-<pid>-" */
    long n;
    FILE *out;
    const char *indent;
};

/* A pool slot held by this process: its owner xattr ("<id> <pid>
 * <start>", on the freezer hierarchy's directory) names our pid. */
static bool slot_held_by_us(const char *dir, const char *name)
{
    char path[512], owner[128], pid[32];
    if (strncmp(name, "pool-", 5))
        return false;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ssize_t n = getxattr(path, "trusted.polysandbox.owner", owner, sizeof owner - 1);
    if (n <= 0)
        return false;
    owner[n] = '\0';
    snprintf(pid, sizeof pid, " %ld ", (long)getpid());
    return strstr(owner, pid) != NULL;
}

static void cg_child(void *ud, const char *dir, const char *name)
{
    struct cg_walk *w = ud;
    if (!strstr(name, w->tag) && !slot_held_by_us(dir, name))
        return;
    w->n++;
    if (w->out)
        fprintf(w->out, "%scgroup: %s/%s\n", w->indent, dir, name);
}

/* Each hierarchy under /sys/fs/cgroup (links such as cpuacct ->
 * cpu,cpuacct skipped so nothing counts twice), and the v2 root itself. */
static void cg_hierarchy(void *ud, const char *dir, const char *name)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    snprintf(path, sizeof path, "%s/%s/" CG_ROOT, dir, name);
    for_each_entry(path, cg_child, ud);
}

static long count_cgroups(FILE *out, const char *indent)
{
    struct cg_walk w = {.n = 0, .out = out, .indent = indent};
    snprintf(w.tag, sizeof w.tag, "-%ld-", (long)getpid());
    if (for_each_entry(CG_MOUNT, cg_hierarchy, &w) < 0)
        return -1;
    for_each_entry(CG_MOUNT "/" CG_ROOT, cg_child, &w);
    return w.n;
}

struct sd_walk {
    long n;
    FILE *out;
    const char *indent;
};

static void sd_entry(void *ud, const char *dir, const char *name)
{
    struct sd_walk *w = ud;
    if (strncmp(name, "lcl-", 4))
        return; /* the shared root skeleton and other fixtures stay */
    w->n++;
    if (w->out)
        fprintf(w->out, "%sstate dir: %s/%s\n", w->indent, dir, name);
}

/* Where the local provider keeps the non-persistent sandboxes of
 * @state_dir (plugins/local/local-rundir.c: a random name in the link
 * <state_dir>/run-dir); "" when there is none. */
static void run_dir_of(const char *state_dir, char *out, size_t size)
{
    char link[4096];
    snprintf(link, sizeof link, "%s/run-dir", state_dir);
    ssize_t n = readlink(link, out, size - 1);
    out[n > 0 ? n : 0] = '\0';
}

static long count_state_dirs(const char *state_dir, FILE *out, const char *indent)
{
    struct sd_walk w = {0, out, indent};
    char run[128];
    for_each_entry(state_dir, sd_entry, &w); /* no directory: nothing left */
    run_dir_of(state_dir, run, sizeof run);
    for_each_entry(run, sd_entry, &w);
    return w.n;
}

/* Mounts under the state dir or the run dir. */
static void count_state_mounts(const char *state_dir, long *all, long *match, FILE *out,
                               const char *indent)
{
    long a, m;
    char run[128];
    run_dir_of(state_dir, run, sizeof run);
    count_mounts(state_dir, all, match, out, indent);
    if (!*run)
        return;
    count_mounts(run, &a, &m, out, indent);
    if (*match >= 0 && m > 0)
        *match += m;
}

/* Is /proc/<pid> a child of ours, or in one of our cgroups? */
static bool proc_is_ours(const char *pid, const char *tag, pid_t self)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* pid (comm) state ppid: comm may hold spaces and parentheses. */
    char *rp = strrchr(buf, ')');
    long ppid = -1;
    if (rp && sscanf(rp + 1, " %*c %ld", &ppid) == 1 && ppid == (long)self)
        return true;
    snprintf(path, sizeof path, "/proc/%s/cgroup", pid);
    if (!(f = fopen(path, "re")))
        return false;
    bool ours = false;
    while (!ours && fgets(buf, sizeof buf, f)) {
        char *at = strstr(buf, "/" CG_ROOT "/");
        ours = at && strstr(buf, tag);
        /* freezer:/polysandbox/pool-...: in a slot we hold. */
        if (!ours && at && strstr(buf, ":freezer:")) {
            char *name = at + sizeof CG_ROOT + 1;
            name[strcspn(name, "\n")] = '\0';
            ours = slot_held_by_us(CG_MOUNT "/freezer/" CG_ROOT, name);
        }
    }
    fclose(f);
    return ours;
}

static long count_procs(FILE *out, const char *indent)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    char tag[32];
    pid_t self = getpid();
    snprintf(tag, sizeof tag, "-%ld-", (long)self);
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]) || atol(e->d_name) == (long)self)
            continue;
        if (!proc_is_ours(e->d_name, tag, self))
            continue;
        n++;
        if (out)
            fprintf(out, "%sprocess: %s\n", indent, e->d_name);
    }
    closedir(d);
    return n;
}

static void read_status(struct bench_snap *s)
{
    s->rss_kib = s->rss_anon_kib = s->rss_file_kib = s->threads = -1;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            s->rss_kib = atol(line + 6);
        else if (!strncmp(line, "RssAnon:", 8))
            s->rss_anon_kib = atol(line + 8);
        else if (!strncmp(line, "RssFile:", 8))
            s->rss_file_kib = atol(line + 8);
        else if (!strncmp(line, "Threads:", 8))
            s->threads = atol(line + 8);
    }
    fclose(f);
}

void bench_snap_take(struct bench_snap *s, const char *state_dir)
{
    s->fds = count_fds();
    count_state_mounts(state_dir, &s->mounts, &s->state_mounts, NULL, "");
    s->cgroups = count_cgroups(NULL, "");
    s->state_dirs = count_state_dirs(state_dir, NULL, "");
    s->procs = count_procs(NULL, "");
    read_status(s);
    struct mallinfo2 mi = mallinfo2();
    s->heap_bytes = (long)mi.uordblks;
    s->arena_bytes = (long)(mi.arena + mi.hblkhd);
}

void bench_snap_list_leftovers(FILE *f, const char *indent, const char *state_dir)
{
    long a, m;
    count_state_mounts(state_dir, &a, &m, f, indent);
    count_cgroups(f, indent);
    count_state_dirs(state_dir, f, indent);
    count_procs(f, indent);
}

void bench_inject_leak(struct bench_inject *in, const char *state_dir)
{
    in->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    snprintf(in->dir, sizeof in->dir, "%s/lcl-injected-leak", state_dir);
    if (mkdir(in->dir, 0700) < 0)
        in->dir[0] = '\0';
    in->mounted = in->dir[0] && mount("tmpfs", in->dir, "tmpfs", MS_NOSUID | MS_NODEV,
                                      "size=64k") == 0;
    snprintf(in->cgroup, sizeof in->cgroup, CG_MOUNT "/pids/" CG_ROOT "/lcl-inject-%ld-0",
             (long)getpid());
    if (mkdir(in->cgroup, 0755) < 0)
        in->cgroup[0] = '\0';
    in->child = (int)fork();
    if (in->child == 0) {
        pause();
        _exit(0);
    }
    const size_t sz = 2u << 20;
    if ((in->mem = malloc(sz)))
        memset(in->mem, 1, sz);
}

void bench_inject_undo(struct bench_inject *in)
{
    if (in->fd >= 0)
        close(in->fd);
    if (in->mounted)
        umount2(in->dir, MNT_DETACH);
    if (in->dir[0])
        rmdir(in->dir);
    if (in->cgroup[0])
        rmdir(in->cgroup);
    if (in->child > 0) {
        kill((pid_t)in->child, SIGKILL);
        waitpid((pid_t)in->child, NULL, 0);
    }
    free(in->mem);
}
