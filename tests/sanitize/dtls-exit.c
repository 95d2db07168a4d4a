/* tests/sanitize/dtls-exit.c - LeakSanitizer at exit with a dynamic TLS
 * block at a page + 16
 *
 * Usage: dtls-exit MODULE (dtls-mod.so).  The __tls_get_addr interceptor
 * of GCC 12's libasan (and LLVM's before 17) takes a dynamic TLS block
 * that starts 16 bytes into a page for one of glibc 2.19-2.24's
 * "__signal_safe_memalign" blocks and reads its bounds from the 16 bytes
 * before it: since glibc 2.25 these blocks come from malloc, so that is
 * ASan's chunk header.  The leak check at exit then scans those garbage
 * bounds and its tracer dies ("Tracer caught signal 11"), whenever a
 * dlopen'ed module's block happens to land there: one allocation in 128
 * of its size.  The test suite's ASAN_OPTIONS (Makefile.am) turn the
 * interceptor off; this program lands a block there on purpose and exits
 * normally, so that the check at exit runs.
 *
 * Children find how many allocations before the dlopen put the block
 * there (the allocator's state is theirs by fork, so the count carries
 * over: two probes give it, else every count up to TRIES is tried), then
 * one more child does it and exits through exit().
 * Exit status: that child's, 77 without AddressSanitizer, 3 when no count
 * in range places the block, 99 on a system call's failure.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

#define PAGE 4096u
#define TRIES 1024  /* allocations: covers a page for any small size class */

static void *keep[TRIES];

/* @n allocations of the block's size, then the block: its page offset. */
static unsigned place(const char *module, int n)
{
    void *h;
    long *(*word)(void);

    for (int i = 0; i < n; i++)
        if (!(keep[i] = malloc(sizeof(long))))
            return PAGE;
    if (!(h = dlopen(module, RTLD_NOW)) || !(*(void **)&word = dlsym(h, "dtls_word"))) {
        fprintf(stderr, "dtls-exit: %s: %s\n", module, dlerror());
        return PAGE;
    }
    return (unsigned)((uintptr_t)word() % PAGE);
}

/* Run place(@n) in a child; its offset, or PAGE when it failed. */
static unsigned offset_for(const char *module, int n)
{
    int fd[2], status;
    unsigned off = PAGE;
    pid_t pid;

    if (pipe(fd) != 0 || (pid = fork()) < 0) {
        perror("dtls-exit: pipe/fork");
        exit(99);
    }
    if (pid == 0) {
        off = place(module, n);
        _exit(write(fd[1], &off, sizeof off) == (ssize_t)sizeof off ? 0 : 1);
    }
    (void)close(fd[1]);
    if (read(fd[0], &off, sizeof off) != (ssize_t)sizeof off)
        off = PAGE;
    (void)close(fd[0]);
    if (waitpid(pid, &status, 0) != pid) {
        perror("dtls-exit: waitpid");
        exit(99);
    }
    return off;
}

/* The count from two probes, as blocks follow each other a size class
 * apart; -1 when they do not tell (main then tries every count). */
static int first_guess(const char *module)
{
    unsigned o0 = offset_for(module, 0), o1 = offset_for(module, 1);
    unsigned stride = o1 - o0, gap = (16 + PAGE - o0) % PAGE;

    if (o0 >= PAGE || o1 >= PAGE || o1 <= o0 || gap % stride != 0 || gap / stride >= TRIES)
        return -1;
    return (int)(gap / stride);
}

int main(int argc, char **argv)
{
    int n, status;
    pid_t pid;

    if (argc != 2) {
        fprintf(stderr, "usage: dtls-exit MODULE\n");
        return 2;
    }
#ifndef HAVE_ASAN
    return 77;
#endif
    n = first_guess(argv[1]);
    if (n < 0 || offset_for(argv[1], n) != 16)
        for (n = 0; n < TRIES && offset_for(argv[1], n) != 16; n++)
            ;
    if (n == TRIES)
        return 3;
    if ((pid = fork()) < 0) {
        perror("dtls-exit: fork");
        return 99;
    }
    if (pid == 0) {
        unsigned off = place(argv[1], n);
        printf("dtls-exit: block at page offset %u after %d allocations\n", off, n);
        fflush(stdout);
        exit(off == 16 ? 0 : 3);    /* the leak check runs here */
    }
    if (waitpid(pid, &status, 0) != pid) {
        perror("dtls-exit: waitpid");
        return 99;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
