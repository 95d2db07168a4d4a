/* sdk/inside/proc-each.c - every process /proc shows, with its parent */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc-each.h"

/* The parent of /proc/@name, or -1. */
static pid_t parent_of(const char *name)
{
    char path[300], stat[512];
    int ppid;
    char *p;

    snprintf(path, sizeof path, "/proc/%s/stat", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return -1;
    stat[n] = '\0';
    /* "pid (comm) state ppid": comm may hold anything, so the last ')' */
    if (!(p = strrchr(stat, ')')) || sscanf(p + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

long inside_proc_each(int (*fn)(pid_t pid, pid_t ppid, void *arg), void *arg)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    long seen = 0;

    if (!d)
        return -1;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid_t ppid = parent_of(e->d_name);
        if (ppid < 0)
            continue;
        seen++;
        if (fn((pid_t)atol(e->d_name), ppid, arg))
            break;
    }
    closedir(d);
    return seen;
}
