/* plugins/local/launch/vfork.c - the in-process launcher that copies
 * nothing of the caller
 *
 * The init is cloned with CLONE_VM | CLONE_VFORK (and the namespaces of
 * clone.c) from a nanny thread of its own, on a stack of its own: it
 * shares the caller's memory, so no page table is copied and no page the
 * caller writes faults while the exec runs (plugins/local/README.md,
 * "Embedding processes").  The nanny has every signal blocked and waits
 * in the clone, touching nothing, until the init is gone: the init runs
 * on its TLS (errno) and its parent death signal is the nanny's.  The
 * init resets every signal's disposition before anything else (the
 * caller's handlers would run on the caller's memory), stays out of the
 * exec's cgroup and forks the payload as a vfork child too, which joins
 * the cgroup itself (jail/child.c, jail/payload.c: shared_mm).  Only
 * where the init has no cgroup to join by file (v1, or no cgroup); on
 * cgroup v2 the clone launcher starts it (clone3 CLONE_INTO_CGROUP).
 *
 * POLYSANDBOX_LOCAL_LAUNCH=fork in the environment switches this
 * launcher off (the clone launcher's copy-on-write init instead), as
 * do a kernel older than 5.16 (read_kernel says why) and an
 * AddressSanitizer build.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

#define NANNY_STACK (64 * 1024) /* the nanny's own: it calls clone and waitpid */
#define INIT_STACK (512 * 1024) /* the init's, below its guard page */

struct lcl_nanny {
    pthread_t thread;
    bool joinable;
    char *stack; /* the init's, with a guard page at its low end */
    /* The init's view, a copy: it reads it on our memory while the
     * supervisor goes on (closing its copies of fd_tasks, say). */
    struct lcl_child c;
    int flags;
    pid_t pid; /* CLONE_PARENT_SETTID: written before the init runs */
    int ready[2];
    int err; /* the clone's errno, when it failed */
};

/* Whether the caller was dumpable before any payload of ours changed its
 * credentials on the caller's memory (which clears the flag). */
static pthread_once_t dumpable_once = PTHREAD_ONCE_INIT;
static int caller_dumpable;

static void read_dumpable(void)
{
    caller_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

/* Before Linux 5.16 a core dump (of the init or the payload before it
 * executes: a bug of ours) killed every process sharing the memory
 * (zap_threads), the caller too: those kernels keep the copy. */
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;
static bool kernel_ok;

static void read_kernel(void)
{
    struct utsname u;
    unsigned major = 0, minor = 0;
    kernel_ok = uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
                (major > 5 || (major == 5 && minor >= 16));
}

/* A sanitizer's instrumented frames in the init would poison the
 * caller's shadow of the init's stack, left so once it is unmapped:
 * such builds keep the copy. */
#if defined(__SANITIZE_ADDRESS__)
#define LCL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LCL_SANITIZED 1
#endif
#endif
#ifndef LCL_SANITIZED
#define LCL_SANITIZED 0
#endif

static bool vfork_fits(const struct lcl_launch *l)
{
    const char *v = getenv("POLYSANDBOX_LOCAL_LAUNCH");
    if (LCL_SANITIZED || l->sp || (v && !strcmp(v, "fork")))
        return false;
    pthread_once(&kernel_once, read_kernel);
    return kernel_ok;
}

/* The init, on the caller's memory until it exits: system calls only. */
static int init_entry(void *arg)
{
    const struct lcl_nanny *n = arg;
    lcl_signals_default();
    ssize_t w = write(n->ready[1], "s", 1);
    (void)w;
    lcl_child_main(&n->c);
}

static void *nanny_main(void *arg)
{
    struct lcl_nanny *n = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    int pid = clone(init_entry, n->stack + INIT_STACK, n->flags, n, &n->pid);
    if (pid < 0) {
        n->err = errno;
        ssize_t w = write(n->ready[1], "e", 1);
        (void)w;
        return NULL;
    }
    /* Back once the init is gone (it never executes): reap it, unless
     * the supervisor's waitid did. */
    while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
        ;
    return NULL;
}

void lcl_nanny_end(struct lcl_nanny **np)
{
    struct lcl_nanny *n = *np;
    if (!n)
        return;
    if (n->joinable)
        pthread_join(n->thread, NULL);
    for (int i = 0; i < 2; i++)
        if (n->ready[i] >= 0)
            close(n->ready[i]);
    if (n->stack)
        munmap(n->stack - 4096, INIT_STACK + 4096);
    free(n);
    *np = NULL;
}

/* The nanny and, from it, the init: 0, or what failed (*@what) and its
 * errno, nothing started. */
static int nanny_start(struct lcl_nanny *n, const char **what)
{
    *what = "pipe";
    if (pipe2(n->ready, O_CLOEXEC) < 0)
        return errno;
    *what = "mmap of the init's stack";
    char *m = mmap(NULL, INIT_STACK + 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    n->stack = m + 4096;
    if (mprotect(m, 4096, PROT_NONE) < 0)
        return errno;
    *what = "the nanny thread";
    pthread_attr_t attr;
    int e = pthread_attr_init(&attr);
    if (!e)
        e = pthread_attr_setstacksize(&attr, NANNY_STACK);
    if (!e)
        e = pthread_create(&n->thread, &attr, nanny_main, n);
    pthread_attr_destroy(&attr);
    if (e)
        return e;
    n->joinable = true;
    *what = "clone";
    char b = 0;
    ssize_t r;
    while ((r = read(n->ready[0], &b, 1)) < 0 && errno == EINTR)
        ;
    if (r != 1 || b != 's')
        return r == 1 && n->err ? n->err : EIO;
    return 0;
}

static int vfork_start(struct lcl_launch *l)
{
    /* v2: the init is cloned into its cgroup, which only clone3 does. */
    if (l->cg->v2fd >= 0)
        return lcl_launch_clone.start(l);
    struct lcl_nanny *n = calloc(1, sizeof *n);
    if (!n)
        return lcl_launch_clone.start(l);
    n->ready[0] = n->ready[1] = -1;
    /* Exit signal 0: no SIGCHLD for the host's handlers. */
    n->flags = (int)lcl_launch_ns_flags(l) | CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID;
    pthread_once(&dumpable_once, read_dumpable);
    n->c = *l->c;
    n->c.shared_mm = true;
    n->c.new_cgroup_ns = true; /* the payload's, once in the exec's cgroups */
    n->c.redumpable = caller_dumpable == 1;
    *l->nanny = n;
    const char *what = NULL;
    int e = nanny_start(n, &what);
    if (e) {
        /* Nothing started: the copy-on-write init instead (it fails
         * the same way when the namespaces are refused). */
        l->p->host->log(l->p->h, SBX_LOG_DEBUG, "the init on our memory: %s: %s; a copy then", what,
                        strerror(e));
        lcl_nanny_end(l->nanny);
        return lcl_launch_clone.start(l);
    }
    /* The init waits for the go: its id is needed only then. */
    int ret = lcl_launch_take_id(l);
    if (ret)
        return ret;
    *l->pid = n->pid;
    *l->pidfd = (int)syscall(SYS_pidfd_open, n->pid, 0);
    if (*l->pidfd < 0)
        return l->p->host->set_error(l->p->h, SBX_E_IO, "pidfd_open of the sandbox init: %s",
                                     strerror(errno));
    return 0;
}

const struct lcl_launcher lcl_launch_vfork = {
    .name = "vfork",
    .fits = vfork_fits,
    .prepare = lcl_launch_own_cgroup,
    .start = vfork_start,
};
