/* tests/bench/clone-cost.c - what starting a process costs a large caller
 *
 * Usage: clone-cost [-n RUNS] [-m MIB] [-p PAGES]
 *
 * The local provider's in-process init is a copy-on-write fork of the
 * calling process (plugins/local/launch/clone.c): the caller's size is
 * paid on every exec, in the copy of its page tables and in the faults
 * its writes take afterwards (plugins/local/README.md, "Embedding
 * processes").  This program maps and touches MIB of anonymous memory
 * (python3 with the binding holds ~17 MiB), then RUNS times writes to
 * PAGES of its pages (as an interpreter does between calls) and starts a
 * child that exits at once, two ways, alternating: a fork (what clone.c
 * does today) and a child sharing the memory (CLONE_VM | CLONE_VFORK)
 * cloned from a thread of its own that waits for it (the "nanny" such an
 * init would need).  Prints the caller's CPU time per start of each way
 * (its children's excluded), the medians of 5 rounds.
 *
 * A benchmark: it asserts nothing.  No namespaces, no root needed.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 5
#define NANNY_STACK (64 * 1024)

struct caller {
    char *mem;
    size_t len;
    long pages;
};

static double cpu_us(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Writes to @pages pages of the caller's memory, spread over all of it. */
static void dirty(const struct caller *c)
{
    size_t total = c->len / 4096;
    for (long k = 0; k < c->pages && total; k++)
        c->mem[(size_t)k * total / (size_t)c->pages * 4096]++;
}

static int child_exit(void *arg)
{
    (void)arg;
    _exit(0);
}

static int by_fork(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid < 0)
        return -1;
    return waitpid(pid, NULL, 0) == pid ? 0 : -1;
}

/* The nanny: clones the child on a stack of its own, sharing the memory,
 * and waits (CLONE_VFORK) until it is gone; its TLS is the child's.
 * Returns NULL, or @arg when the child could not be started. */
static void *nanny(void *arg)
{
    char *stack = mmap(NULL, NANNY_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return arg;
    int pid = clone(child_exit, stack + NANNY_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    if (pid > 0 && waitpid(pid, NULL, 0) == pid)
        arg = NULL;
    munmap(stack, NANNY_STACK);
    return arg;
}

static int by_nanny(void)
{
    static char failed_mark;
    pthread_t t;
    void *failed = NULL;
    if (pthread_create(&t, NULL, nanny, &failed_mark) != 0 || pthread_join(t, &failed) != 0)
        return -1;
    return failed ? -1 : 0;
}

/* The caller's CPU time per start over @n starts of @start, in us. */
static double round_us(const struct caller *c, long n, int (*start)(void))
{
    double t0 = cpu_us();
    for (long i = 0; i < n; i++) {
        dirty(c);
        if (start() < 0) {
            fprintf(stderr, "clone-cost: starting a child: %s\n", strerror(errno));
            exit(1);
        }
    }
    return (cpu_us() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long arg_long(const char *s, const char *opt)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 1000000) {
        fprintf(stderr, "clone-cost: %s %s: not a number from 0 to 1000000\n", opt, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long n = 200, mib = 17;
    struct caller c = {NULL, 0, 300};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = arg_long(argv[++i], "-n");
        else if (!strcmp(argv[i], "-m") && i + 1 < argc)
            mib = arg_long(argv[++i], "-m");
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            c.pages = arg_long(argv[++i], "-p");
        else {
            fprintf(stderr, "usage: clone-cost [-n RUNS] [-m MIB] [-p PAGES]\n");
            return 2;
        }
    }
    if (n < ROUNDS)
        n = ROUNDS;
    c.len = (size_t)mib << 20;
    if (c.len) {
        c.mem = mmap(NULL, c.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (c.mem == MAP_FAILED) {
            fprintf(stderr, "clone-cost: -m %ld: %s\n", mib, strerror(errno));
            return 1;
        }
        memset(c.mem, 1, c.len);
    }
    double forks[ROUNDS], nannies[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) { /* alternate, so drift in load hits both */
        forks[r] = round_us(&c, n / ROUNDS, by_fork);
        nannies[r] = round_us(&c, n / ROUNDS, by_nanny);
    }
    qsort(forks, ROUNDS, sizeof *forks, cmp_double);
    qsort(nannies, ROUNDS, sizeof *nannies, cmp_double);
    printf("caller of %ld MiB writing %ld pages a start, %d rounds of %ld: CPU per start\n", mib,
           c.pages, ROUNDS, n / ROUNDS);
    printf("fork (the init today):                 median %8.1f us\n", forks[ROUNDS / 2]);
    printf("CLONE_VM | CLONE_VFORK from a nanny:   median %8.1f us\n", nannies[ROUNDS / 2]);
    if (c.mem)
        munmap(c.mem, c.len);
    return 0;
}
