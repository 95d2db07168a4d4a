/* core/server/metrics.c - counters and histograms for GET /metrics
 *
 * Prometheus text format 0.0.4, written by hand (no C client in Debian):
 * requests by route and status, rejects by route and reason, in-flight
 * and queue depth, run latency by provider, template and status, pool
 * readiness, breaker state.  Counters live under one mutex: a few
 * hundred updates a second cost nothing next to a sandbox.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "server-int.h"
#include "jobs.h"

static const double buckets[] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
};
#define N_BUCKETS (sizeof buckets / sizeof buckets[0])

struct counter {
    char *a, *b;          /* label values: route and status or reason */
    uint64_t n;
};

struct histo {
    char *provider, *tmpl, *status;
    uint64_t count;
    double sum;
    uint64_t le[N_BUCKETS];
};

struct srv_metrics {
    pthread_mutex_t lock;
    struct counter *req, *rej;
    size_t n_req, n_rej;
    struct histo *run;
    size_t n_run;
    uint64_t lost;        /* connections lost before the reply went out */
};

int srv_metrics_new(srv *s)
{
    struct srv_metrics *m = calloc(1, sizeof *m);

    if (!m)
        return -1;
    pthread_mutex_init(&m->lock, NULL);
    s->metrics = m;
    return 0;
}

static void counters_free(struct counter *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].a);
        free(c[i].b);
    }
    free(c);
}

void srv_metrics_free(srv *s)
{
    struct srv_metrics *m = s->metrics;

    if (!m)
        return;
    counters_free(m->req, m->n_req);
    counters_free(m->rej, m->n_rej);
    for (size_t i = 0; i < m->n_run; i++) {
        free(m->run[i].provider);
        free(m->run[i].tmpl);
        free(m->run[i].status);
    }
    free(m->run);
    pthread_mutex_destroy(&m->lock);
    free(m);
    s->metrics = NULL;
}

/* Under the lock. */
static void bump(struct counter **v, size_t *n, const char *a, const char *b)
{
    struct counter *nv;

    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i].a, a) && !strcmp((*v)[i].b, b)) {
            (*v)[i].n++;
            return;
        }
    if (*n >= 4096 || !(nv = realloc(*v, (*n + 1) * sizeof *nv)))
        return;
    *v = nv;
    nv[*n].a = strdup(a);
    nv[*n].b = strdup(b);
    nv[*n].n = 1;
    if (!nv[*n].a || !nv[*n].b) {
        free(nv[*n].a);
        free(nv[*n].b);
        return;
    }
    (*n)++;
}

void srv_metrics_request(srv *s, const srv_req *r, bool completed)
{
    struct srv_metrics *m = s->metrics;
    const char *route = r->route ? r->route->pattern : "(none)";
    char status[8];

    if (!m)
        return;
    snprintf(status, sizeof status, "%u", r->status);
    pthread_mutex_lock(&m->lock);
    bump(&m->req, &m->n_req, route, status);
    if (r->err_code)
        bump(&m->rej, &m->n_rej, route, r->err_code);
    if (!completed)
        m->lost++;
    pthread_mutex_unlock(&m->lock);
}

void srv_metrics_run(srv *s, const char *provider, const char *tmpl, const char *status,
                     uint64_t ns)
{
    struct srv_metrics *m = s->metrics;
    double sec = (double)ns / 1e9;
    struct histo *h = NULL;

    if (!m)
        return;
    provider = provider ? provider : "";
    tmpl = tmpl ? tmpl : "";
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_run && !h; i++)
        if (!strcmp(m->run[i].provider, provider) && !strcmp(m->run[i].tmpl, tmpl) &&
            !strcmp(m->run[i].status, status))
            h = &m->run[i];
    if (!h && m->n_run < 1024) {
        struct histo *nv = realloc(m->run, (m->n_run + 1) * sizeof *nv);
        if (nv) {
            m->run = nv;
            h = &nv[m->n_run];
            memset(h, 0, sizeof *h);
            h->provider = strdup(provider);
            h->tmpl = strdup(tmpl);
            h->status = strdup(status);
            if (h->provider && h->tmpl && h->status) {
                m->n_run++;
            } else {
                free(h->provider);
                free(h->tmpl);
                free(h->status);
                h = NULL;
            }
        }
    }
    if (h) {
        h->count++;
        h->sum += sec;
        for (size_t i = 0; i < N_BUCKETS; i++)
            if (sec <= buckets[i])
                h->le[i]++;
    }
    pthread_mutex_unlock(&m->lock);
}

/* ---- the text format ----------------------------------------------------------- */

struct out {
    char *buf;
    size_t len, cap;
    bool nomem;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->nomem = true;
            return;
        }
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = o->cap ? o->cap * 2 : 8192;
        while (cap < o->len + (size_t)n + 1)
            cap *= 2;
        char *nb = realloc(o->buf, cap);
        if (!nb) {
            o->nomem = true;
            return;
        }
        o->buf = nb;
        o->cap = cap;
    }
}

/* A label value: \, " and newline escaped. */
static const char *lv(const char *s, char *buf, size_t size)
{
    size_t j = 0;

    for (; *s && j + 3 < size; s++) {
        if (*s == '\\' || *s == '"') {
            buf[j++] = '\\';
            buf[j++] = *s;
        } else if (*s == '\n') {
            buf[j++] = '\\';
            buf[j++] = 'n';
        } else {
            buf[j++] = *s;
        }
    }
    buf[j] = '\0';
    return buf;
}

static void help(struct out *o, const char *name, const char *type, const char *text)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static long long ready_of(const sbx_provider *p)
{
    return sbx_provider_get_state(p) == SBX_PROVIDER_READY;
}

static long long breaker_of(const sbx_provider *p)
{
    return (long long)sbx_provider_breaker(p);
}

static long long failures_of(const sbx_provider *p)
{
    return (long long)sbx_provider_breaker_failures(p);
}

/* One gauge with a value per provider. */
static void provider_gauge(struct out *o, srv *s, const char *name, const char *text,
                           long long (*value)(const sbx_provider *))
{
    char e1[256];
    size_t n = sbx_ctx_provider_count(s->ctx);

    help(o, name, "gauge", text);
    for (size_t i = 0; i < n; i++) {
        const sbx_provider *p = sbx_ctx_provider(s->ctx, i);
        put(o, "%s{provider=\"%s\"} %lld\n", name, lv(sbx_provider_name(p), e1, sizeof e1),
            value(p));
    }
}

/* One gauge with a statistic per pool. */
static void pool_gauge(struct out *o, srv *s, const char *name, const char *text,
                       sbx_pool_stat which)
{
    char e1[256];
    size_t n = sbx_ctx_pool_count(s->ctx);
    uint64_t st[SBX_POOL_STAT_COUNT];

    help(o, name, "gauge", text);
    for (size_t i = 0; i < n; i++) {
        const char *pool = sbx_ctx_pool_name(s->ctx, i);
        if (sbx_pool_stats(s->ctx, pool, st, SBX_POOL_STAT_COUNT) == SBX_OK)
            put(o, "%s{pool=\"%s\"} %llu\n", name, lv(pool, e1, sizeof e1),
                (unsigned long long)st[which]);
    }
}

static void jobs_metrics(struct out *o, srv *s)
{
    struct job_stats st;

    job_stats(s, &st);
    help(o, "polysandboxd_jobs", "gauge", "batch and eval jobs kept, by kind and state");
    for (size_t k = 0; k < JOB_KINDS; k++)
        for (int state = JOB_QUEUED; state <= JOB_CANCELLED; state++)
            put(o, "polysandboxd_jobs{kind=\"%s\",state=\"%s\"} %zu\n", job_kinds[k]->name,
                job_state_name(state), st.jobs[k][state]);
    help(o, "polysandboxd_job_items_pending", "gauge",
         "items of queued and running jobs not yet done, by kind");
    for (size_t k = 0; k < JOB_KINDS; k++)
        put(o, "polysandboxd_job_items_pending{kind=\"%s\"} %zu\n", job_kinds[k]->name,
            st.items_pending[k]);
    help(o, "polysandboxd_job_items_done_total", "counter",
         "items of jobs that ended since the server started, by kind");
    for (size_t k = 0; k < JOB_KINDS; k++)
        put(o, "polysandboxd_job_items_done_total{kind=\"%s\"} %llu\n", job_kinds[k]->name,
            st.items_done[k]);
    help(o, "polysandboxd_job_items_failed_total", "counter",
         "of those, the items that did not pass (a run not ok, a sample not passed), by kind");
    for (size_t k = 0; k < JOB_KINDS; k++)
        put(o, "polysandboxd_job_items_failed_total{kind=\"%s\"} %llu\n", job_kinds[k]->name,
            st.items_failed[k]);
}

char *srv_metrics_text(srv *s, size_t *len)
{
    struct srv_metrics *m = s->metrics;
    struct out o = {0};
    srv_pool_stats ps;
    char e1[512], e2[256], e3[64];

    srv_pool_get_stats(s, &ps);
    help(&o, "polysandboxd_in_flight", "gauge", "requests admitted and not yet answered");
    put(&o, "polysandboxd_in_flight %u\n", ps.busy + ps.queued);
    help(&o, "polysandboxd_workers_busy", "gauge", "workers running a request");
    put(&o, "polysandboxd_workers_busy %u\n", ps.busy);
    help(&o, "polysandboxd_workers", "gauge", "worker threads");
    put(&o, "polysandboxd_workers %u\n", ps.workers);
    help(&o, "polysandboxd_queue_depth", "gauge", "requests waiting for a worker");
    put(&o, "polysandboxd_queue_depth %u\n", ps.queued);
    help(&o, "polysandboxd_queue_capacity", "gauge", "requests that may wait (queue)");
    put(&o, "polysandboxd_queue_capacity %u\n", ps.queue_cap);
    {
        unsigned queued, running;
        srv_j0_queue_stats(s, &queued, &running);
        help(&o, "polysandboxd_judge0_queued", "gauge",
             "Judge0 submissions waiting to run in the background");
        put(&o, "polysandboxd_judge0_queued %u\n", queued);
        help(&o, "polysandboxd_judge0_running", "gauge",
             "Judge0 submissions taken from that queue and not yet ended");
        put(&o, "polysandboxd_judge0_running %u\n", running);
    }
    {
        srv_j0_cb_counts cb;
        srv_j0_callback_counts(s, &cb);
        help(&o, "polysandboxd_judge0_callbacks_queued", "gauge",
             "Judge0 callbacks in memory, waiting or being sent (judge0_callbacks_pending)");
        put(&o, "polysandboxd_judge0_callbacks_queued %u\n", cb.queued);
        help(&o, "polysandboxd_judge0_callbacks_kept", "gauge",
             "Judge0 callbacks kept in the state directory (judge0_callbacks_kept)");
        put(&o, "polysandboxd_judge0_callbacks_kept %u\n", cb.kept);
        help(&o, "polysandboxd_judge0_callbacks_on_disk", "gauge",
             "of those, the ones waiting on disk only for a place in memory");
        put(&o, "polysandboxd_judge0_callbacks_on_disk %u\n", cb.on_disk);
        help(&o, "polysandboxd_judge0_callbacks_total", "counter",
             "Judge0 callbacks ended since the server started, by how");
        put(&o, "polysandboxd_judge0_callbacks_total{end=\"delivered\"} %llu\n", cb.delivered);
        put(&o, "polysandboxd_judge0_callbacks_total{end=\"given_up\"} %llu\n", cb.given_up);
        put(&o, "polysandboxd_judge0_callbacks_total{end=\"refused\"} %llu\n", cb.refused);
        put(&o, "polysandboxd_judge0_callbacks_total{end=\"dropped\"} %llu\n", cb.dropped);
    }

    pthread_mutex_lock(&m->lock);
    help(&o, "polysandboxd_requests_total", "counter", "requests answered, by route and status");
    for (size_t i = 0; i < m->n_req; i++)
        put(&o, "polysandboxd_requests_total{route=\"%s\",status=\"%s\"} %llu\n",
            lv(m->req[i].a, e1, sizeof e1), lv(m->req[i].b, e2, sizeof e2),
            (unsigned long long)m->req[i].n);
    help(&o, "polysandboxd_rejects_total", "counter",
         "requests answered with an error, by route and reason (the error code)");
    for (size_t i = 0; i < m->n_rej; i++)
        put(&o, "polysandboxd_rejects_total{route=\"%s\",reason=\"%s\"} %llu\n",
            lv(m->rej[i].a, e1, sizeof e1), lv(m->rej[i].b, e2, sizeof e2),
            (unsigned long long)m->rej[i].n);
    help(&o, "polysandboxd_connections_lost_total", "counter",
         "requests whose client went away before the reply was sent");
    put(&o, "polysandboxd_connections_lost_total %llu\n", (unsigned long long)m->lost);
    help(&o, "polysandboxd_run_duration_seconds", "histogram",
         "runs and execs, by provider, template and status, from request to result");
    for (size_t i = 0; i < m->n_run; i++) {
        const struct histo *h = &m->run[i];
        char lab[1024];
        snprintf(lab, sizeof lab, "provider=\"%s\",template=\"%s\",status=\"%s\"",
                 lv(h->provider, e1, sizeof e1), lv(h->tmpl, e2, sizeof e2),
                 lv(h->status, e3, sizeof e3));
        for (size_t b = 0; b < N_BUCKETS; b++)
            put(&o, "polysandboxd_run_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", lab,
                buckets[b], (unsigned long long)h->le[b]);
        put(&o, "polysandboxd_run_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", lab,
            (unsigned long long)h->count);
        put(&o, "polysandboxd_run_duration_seconds_sum{%s} %.9f\n", lab, h->sum);
        put(&o, "polysandboxd_run_duration_seconds_count{%s} %llu\n", lab,
            (unsigned long long)h->count);
    }
    pthread_mutex_unlock(&m->lock);
    jobs_metrics(&o, s);
    help(&o, "polysandboxd_admitted_total", "counter", "requests admitted to the workers");
    put(&o, "polysandboxd_admitted_total %llu\n", (unsigned long long)ps.admitted);
    provider_gauge(&o, s, "polysandboxd_provider_ready",
                   "1 when the provider is loaded and ready", ready_of);
    provider_gauge(&o, s, "polysandboxd_breaker_state",
                   "circuit breaker per provider: 0 closed, 1 open, 2 half-open", breaker_of);
    provider_gauge(&o, s, "polysandboxd_breaker_failures",
                   "consecutive failed creates the breaker counted", failures_of);
    pool_gauge(&o, s, "polysandboxd_pool_ready", "ready sandboxes in a warm pool",
               SBX_POOL_STAT_READY);
    pool_gauge(&o, s, "polysandboxd_pool_size", "ready sandboxes a warm pool keeps",
               SBX_POOL_STAT_SIZE);
    if (o.nomem) {
        free(o.buf);
        return NULL;
    }
    *len = o.len;
    return o.buf;
}
