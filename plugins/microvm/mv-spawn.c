/* plugins/microvm/mv-spawn.c - every ephemeral VMM started by one thread
 *
 * An ephemeral VM must never outlive the process that made it: its VMM
 * gets PR_SET_PDEATHSIG.  But that signal follows the *thread* that
 * forked it: a VM started by a pool's worker, or a server's, would be
 * killed when that thread ends (too early), so those were left untied,
 * and a process killed while its pool held VMs left their VMMs running
 * for good.  So the VMMs are forked by one thread of the provider's,
 * started at the first VM and ended by fini: tied to it, they die with
 * the process (and at fini, when every sandbox is gone anyway), whichever
 * thread asked for them.  A detached (persistent) VMM is not tied and is
 * started by the caller's thread as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mv-int.h"

struct job {
    const struct mv_vm_config *cfg;
    pid_t *pid;
    char *err;
    size_t errlen;
    int rc, done;
    struct job *next;
};

struct mv_spawner {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    pthread_t thread;
    int running, stop;
    struct mv_prov *p;
    struct job *head, *tail;
};

static void *spawner(void *arg)
{
    struct mv_spawner *sp = arg;

    pthread_mutex_lock(&sp->lock);
    for (;;) {
        struct job *j = sp->head;
        if (!j) {
            if (sp->stop)
                break;
            pthread_cond_wait(&sp->work, &sp->lock);
            continue;
        }
        sp->head = j->next;
        if (!sp->head)
            sp->tail = NULL;
        pthread_mutex_unlock(&sp->lock);
        struct mv_vm_config cfg = *j->cfg;
        cfg.tie = 1; /* this thread lives as long as the provider */
        j->rc = sp->p->vmm->start(&cfg, j->pid, j->err, j->errlen);
        pthread_mutex_lock(&sp->lock);
        j->done = 1;
        pthread_cond_broadcast(&sp->done);
    }
    pthread_mutex_unlock(&sp->lock);
    return NULL;
}

int mv_spawn_init(struct mv_prov *p)
{
    struct mv_spawner *sp = calloc(1, sizeof *sp);

    if (!sp)
        return -1;
    if (pthread_mutex_init(&sp->lock, NULL) != 0) {
        free(sp);
        return -1;
    }
    if (pthread_cond_init(&sp->work, NULL) != 0) {
        pthread_mutex_destroy(&sp->lock);
        free(sp);
        return -1;
    }
    if (pthread_cond_init(&sp->done, NULL) != 0) {
        pthread_cond_destroy(&sp->work);
        pthread_mutex_destroy(&sp->lock);
        free(sp);
        return -1;
    }
    sp->p = p;
    p->spawner = sp;
    return 0;
}

/* Starts the thread (called locked).  It keeps the signal mask of the
 * thread that asked first, as every thread a caller makes does: the VMMs
 * it forks start with that mask, as they did when the callers forked
 * them. */
static int start_thread(struct mv_spawner *sp)
{
    int e = pthread_create(&sp->thread, NULL, spawner, sp);

    if (e == 0)
        sp->running = 1;
    return e;
}

int mv_spawn_start(struct mv_prov *p, const struct mv_vm_config *cfg, pid_t *pid, char *err,
                   size_t errlen)
{
    struct mv_spawner *sp = p->spawner;
    struct job j = { cfg, pid, err, errlen, -1, 0, NULL };
    int e;

    if (cfg->detach || !sp)
        return p->vmm->start(cfg, pid, err, errlen);
    pthread_mutex_lock(&sp->lock);
    if (!sp->running && (e = start_thread(sp)) != 0) {
        pthread_mutex_unlock(&sp->lock);
        snprintf(err, errlen, "cannot start the thread that starts VMs: %s", strerror(e));
        return -1;
    }
    if (sp->tail)
        sp->tail->next = &j;
    else
        sp->head = &j;
    sp->tail = &j;
    pthread_cond_signal(&sp->work);
    while (!j.done)
        pthread_cond_wait(&sp->done, &sp->lock);
    pthread_mutex_unlock(&sp->lock);
    return j.rc;
}

void mv_spawn_fini(struct mv_prov *p)
{
    struct mv_spawner *sp = p->spawner;

    if (!sp)
        return;
    pthread_mutex_lock(&sp->lock);
    sp->stop = 1;
    pthread_cond_signal(&sp->work);
    int running = sp->running;
    pthread_mutex_unlock(&sp->lock);
    if (running)
        pthread_join(sp->thread, NULL);
    pthread_cond_destroy(&sp->done);
    pthread_cond_destroy(&sp->work);
    pthread_mutex_destroy(&sp->lock);
    free(sp);
    p->spawner = NULL;
}
