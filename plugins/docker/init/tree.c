/* plugins/docker/init/tree.c - the helper's hold on what an exec
 * started: every descendant killed (the helper is a child subreaper, so
 * orphans stay its descendants), and the cgroup's counts of OOM kills and
 * of forks its pids limit refused
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"
#include "inside/proc-each.h"

#define MAX_PROCS 65536

static pid_t *pids, *ppids;

int tree_reserve(void)
{
    if (!pids)
        pids = malloc(MAX_PROCS * sizeof *pids);
    if (!ppids)
        ppids = malloc(MAX_PROCS * sizeof *ppids);
    return pids && ppids ? 0 : -1;
}

/* Notes one process in pids/ppids; @arg counts them. */
static int note(pid_t pid, pid_t ppid, void *arg)
{
    size_t *n = arg;
    pids[*n] = pid;
    ppids[*n] = ppid;
    return ++*n == MAX_PROCS;
}

/* Sends SIGKILL to every descendant of this process, except the
 * @n_skip processes of @skip and their descendants; returns how many were
 * found (zombies included, as they are still in /proc). */
int kill_descendants(const pid_t *skip, size_t n_skip)
{
    size_t n = 0;
    if (tree_reserve() < 0 || inside_proc_each(note, &n) < 0)
        return 0;
    /* Mark descendants: repeat until nothing changes (ppid links). */
    pid_t self = getpid();
    int found = 0;
    char *mark = calloc(n ? n : 1, 1);
    if (!mark)
        return 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            if (mark[i])
                continue;
            int desc = ppids[i] == self;
            for (size_t k = 0; desc && k < n_skip; k++)
                desc = pids[i] != skip[k];
            for (size_t j = 0; !desc && j < n; j++)
                desc = mark[j] && pids[j] == ppids[i];
            if (desc) {
                mark[i] = 1;
                changed = 1;
                found++;
                kill(pids[i], SIGKILL);
            }
        }
    }
    free(mark);
    return found;
}

/* Kills and reaps everything below us.  Bounded: a process must be
 * killed before it can fork again, so the tree shrinks each round. */
void kill_tree(void)
{
    for (int round = 0; round < 2000; round++) {
        int found = kill_descendants(NULL, 0);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!found)
            return;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The number after @key ("oom_kill ") in the first of @files that
 * has it, or -1. */
static long long cgroup_count(const char *const files[2], const char *key)
{
    for (size_t i = 0; i < 2; i++) {
        char buf[1024];
        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        char *p = strstr(buf, key);
        if (p)
            return atoll(p + strlen(key));
    }
    return -1;
}

/* The OOM-kill count of our cgroup (v1 memory.oom_control, v2
 * memory.events), or -1. */
long long oom_kills(void)
{
    static const char *const files[] = {"/sys/fs/cgroup/memory/memory.oom_control",
                                        "/sys/fs/cgroup/memory.events"};
    return cgroup_count(files, "oom_kill ");
}

/* How often the cgroup's pids limit refused a fork (v1 and v2
 * pids.events), or -1. */
long long pids_refusals(void)
{
    static const char *const files[] = {"/sys/fs/cgroup/pids/pids.events",
                                        "/sys/fs/cgroup/pids.events"};
    return cgroup_count(files, "max ");
}
