/* core/server/jobs-gate.c - the gate every item of every job passes:
 * the jobs share the runs with the interactive requests and among
 * themselves
 *
 * At most [server] job_workers items run at once, all jobs together; a
 * job with fewer items running goes first, so a small job is not stuck
 * behind a big one; and an item starts only while no interactive request
 * waits for a worker and the workers are not all busy (one job item may
 * always run, so jobs are never starved either).  A 10,000-item batch
 * therefore never holds a POST /v1/run back: the requests have their
 * worker pool, the jobs take what the requests leave, up to their cap.
 */
#include "config.h"

#include <time.h>

#include "jobs.h"

enum { GATE_OPEN, GATE_WAIT, GATE_POLL };

/* Under gate_mu: whether an item of @j may start now (GATE_OPEN); if not,
 * whether a job item's end will say when (GATE_WAIT) or only the worker
 * pool knows, which does not tell (GATE_POLL). */
static int gate_open(struct srv_jobs *J, srv *s, srv_job *j)
{
    srv_pool_stats st;

    if (J->in_flight >= J->workers)
        return GATE_WAIT;
    for (size_t i = 0; i < J->n_gated; i++)
        if (J->gated[i] != j && J->gated[i]->waiting && J->gated[i]->in_flight < j->in_flight)
            return GATE_WAIT;
    if (J->in_flight == 0)
        return GATE_OPEN;
    srv_pool_get_stats(s, &st);
    return st.queued == 0 && st.busy + J->in_flight < st.workers ? GATE_OPEN : GATE_POLL;
}

int job_gate_enter(srv_job *j)
{
    struct srv_jobs *J = j->s->jobs;
    int rc = 0, g;

    pthread_mutex_lock(&J->gate_mu);
    j->waiting++;
    for (;;) {
        struct timespec until;
        if (job_stopping(j)) {
            rc = -1;
            break;
        }
        if ((g = gate_open(J, j->s, j)) == GATE_OPEN)
            break;
        if (g == GATE_WAIT) {
            pthread_cond_wait(&J->gate_cv, &J->gate_mu);
            continue;
        }
        /* the pool does not say when a request ends: look again soon */
        until = job_deadline(UINT64_C(20000000));
        pthread_cond_timedwait(&J->gate_cv, &J->gate_mu, &until);
    }
    j->waiting--;
    if (rc == 0) {
        j->in_flight++;
        J->in_flight++;
    }
    /* the waiters held back for this one's turn look again */
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
    return rc;
}

void job_gate_leave(srv_job *j)
{
    struct srv_jobs *J = j->s->jobs;

    pthread_mutex_lock(&J->gate_mu);
    j->in_flight--;
    J->in_flight--;
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
}

void job_gate_stats(srv *s, unsigned *running, unsigned *workers)
{
    struct srv_jobs *J = s->jobs;

    pthread_mutex_lock(&J->gate_mu);
    *running = J->in_flight;
    *workers = J->workers;
    pthread_mutex_unlock(&J->gate_mu);
}

void job_gate_wake(struct srv_jobs *J)
{
    pthread_mutex_lock(&J->gate_mu);
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
}

int job_gate_join(struct srv_jobs *J, srv_job *j)
{
    int rc = 0;

    pthread_mutex_lock(&J->gate_mu);
    if (J->n_gated == J->cap_gated) {
        size_t cap = J->cap_gated ? J->cap_gated * 2 : 8;
        srv_job **v = realloc(J->gated, cap * sizeof *v);
        if (!v)
            rc = -1;
        else {
            J->gated = v;
            J->cap_gated = cap;
        }
    }
    if (rc == 0)
        J->gated[J->n_gated++] = j;
    pthread_mutex_unlock(&J->gate_mu);
    return rc;
}

void job_gate_part(struct srv_jobs *J, srv_job *j)
{
    pthread_mutex_lock(&J->gate_mu);
    for (size_t i = 0; i < J->n_gated; i++)
        if (J->gated[i] == j) {
            J->gated[i] = J->gated[--J->n_gated];
            break;
        }
    pthread_cond_broadcast(&J->gate_cv);
    pthread_mutex_unlock(&J->gate_mu);
}
