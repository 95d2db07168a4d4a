/* tests/bench/bench-probe.h - what a process and the host hold, for the
 * leak check of bench-runs: a snapshot before and after many runs.
 */
#ifndef BENCH_PROBE_H
#define BENCH_PROBE_H

#include <stdbool.h>
#include <stdio.h>

struct bench_snap {
    long fds;           /* entries of /proc/self/fd */
    long mounts;        /* lines of /proc/self/mountinfo */
    long state_mounts;  /* of those, the ones naming the state directory */
    long cgroups;       /* cgroups named by this process (-<pid>-) */
    long state_dirs;    /* sandbox directories left in the state directory */
    long procs;         /* children, and processes in our cgroups */
    long threads;       /* Threads: of this process */
    long rss_kib;       /* VmRSS */
    long rss_anon_kib;  /* RssAnon: what a leak grows */
    long rss_file_kib;  /* RssFile: code and files mapped, first touched */
    long heap_bytes;    /* malloc'd and not freed, all arenas (mallinfo2) */
    long arena_bytes;   /* heap obtained from the system (arena + mmapped) */
};

/* Takes a snapshot; @state_dir is the provider's state directory
 * (<POLYSANDBOX_STATE_DIR>/local).  Fields that cannot be read are -1. */
void bench_snap_take(struct bench_snap *s, const char *state_dir);

/* Prints what is left that should not be (mounts, cgroups, directories,
 * processes) to @f, one line each, prefixed with @indent. */
void bench_snap_list_leftovers(FILE *f, const char *indent, const char *state_dir);

/* To show the check works: leaks one of each kind on purpose (an fd, a
 * state directory with a mount on it, a cgroup, a child process, 2 MiB of RSS) and
 * bench_inject_undo takes them back. */
struct bench_inject {
    int fd;
    char dir[4096];
    bool mounted;
    char cgroup[4096];
    int child;
    void *mem;
};
void bench_inject_leak(struct bench_inject *in, const char *state_dir);
void bench_inject_undo(struct bench_inject *in);

#endif /* BENCH_PROBE_H */
