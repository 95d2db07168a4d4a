/* core/eval/eval-usage.c - what a run's samples used per provider (latency,
 * CPU, peak memory) and, from the providers' price tables, what they
 * cost.  A cost is only ever computed from a configured price: a
 * provider without one has none, never a zero. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

/* One provider's figures while they are gathered. */
/* A provider's price (sbx_ctx_provider_price): the currency is the
 * configuration's. */
struct price {
    double per_second, per_sandbox;
    const char *currency;
};

struct gather {
    const char *name;          /* borrowed from a record; "" for none */
    uint64_t *lat;             /* latencies of its graded samples */
    sbx_eval_usage u;
    const struct price *price; /* or NULL */
};

void core_eval_usage_free(core_eval_use *uses, size_t n)
{
    for (size_t i = 0; uses && i < n; i++)
        free(uses[i].provider);
    free(uses);
}

/* The currency points into the configuration, which may be gone before
 * the summary: the use keeps its own copy. */
static void own_currency(core_eval_use *use)
{
    if (use->u.currency) {
        snprintf(use->currency, sizeof use->currency, "%s", use->u.currency);
        use->u.currency = use->currency;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* @provider's price into *@buf, returned; NULL when it has none. */
static const struct price *price_of(const sbx_ctx *ctx, const char *provider, struct price *buf)
{
    return *provider && sbx_ctx_provider_price(ctx, provider, &buf->per_second,
                                               &buf->per_sandbox, &buf->currency)
               ? buf
               : NULL;
}

/* Count record @r into @g (whose lat has room): the sample itself on the
 * provider that graded it (or failed it last).  Its attempts go to
 * add_attempt(), each on its own provider; a record of before they were
 * logged counts them all here. */
static void add(struct gather *g, const sbx_eval_record *r)
{
    sbx_eval_usage *u = &g->u;

    u->samples++;
    u->passed += r->verdict == SBX_VERDICT_PASSED;
    if (!r->n_tries) {
        u->sandboxes += r->attempts;
        /* every attempt's time, a failed one's too; records of before it
         * was kept: the last attempt's */
        u->sandbox_ns += r->attempts_ns ? r->attempts_ns : r->time_ns;
    }
    if (sbx_eval_verdict_graded(r->verdict))
        g->lat[u->graded++] = r->time_ns;
    if (r->cpu_ns >= 0) {
        u->cpu_samples++;
        u->cpu_total_ns += (uint64_t)r->cpu_ns;
    }
    if (r->peak_memory > u->peak_memory_max)
        u->peak_memory_max = r->peak_memory;
}

/* One attempt's sandbox, time and, when it failed, failure. */
static void add_attempt(struct gather *g, const core_eval_attempt *a)
{
    g->u.sandboxes++;
    g->u.sandbox_ns += a->time_ns;
    g->u.sandbox_errors += a->verdict == SBX_VERDICT_SANDBOX_ERROR;
}

/* The gather of provider @name among @g's *ng, added when new (its
 * latencies room for @n); NULL on ENOMEM. */
static struct gather *gather_of(struct gather *g, size_t *ng, const char *name, size_t n)
{
    size_t k = 0;

    while (k < *ng && strcmp(g[k].name, name))
        k++;
    if (k == *ng) {
        g[k].name = name;
        g[k].u.peak_memory_max = -1;
        if (!(g[k].lat = calloc(n + 1, sizeof *g->lat)))
            return NULL;
        (*ng)++;
    }
    return &g[k];
}

/* The percentiles, the mean and, priced by @price (NULL: none), the cost. */
static void finish(struct gather *g, const struct price *price)
{
    sbx_eval_usage *u = &g->u;

    qsort(g->lat, u->graded, sizeof *g->lat, cmp_u64);
    u->latency_p50_ns = core_eval_percentile(g->lat, u->graded, 50);
    u->latency_p90_ns = core_eval_percentile(g->lat, u->graded, 90);
    u->latency_max_ns = core_eval_percentile(g->lat, u->graded, 100);
    u->cpu_mean_ns = u->cpu_samples ? u->cpu_total_ns / u->cpu_samples : 0;
    if (!price)
        return;
    u->priced = true;
    u->currency = price->currency;
    u->cost_total = price->per_sandbox * (double)u->sandboxes +
                    price->per_second * ((double)u->sandbox_ns / 1e9);
    u->cost_per_sample = u->samples ? u->cost_total / (double)u->samples : 0.0;
    u->cost_per_pass = u->passed ? u->cost_total / (double)u->passed : -1.0;
}

int core_eval_usage_build(const sbx_ctx *ctx, sbx_eval_record *const *records, size_t n,
                          core_eval_use **uses, size_t *n_uses, core_eval_use *all)
{
    struct gather *g = NULL, total = { "", NULL, { 0 }, NULL };
    size_t ng = 0, room = n + 1;
    bool priced = true;
    const char *currency = NULL;
    int rc = SBX_E_NOMEM;

    *uses = NULL;
    *n_uses = 0;
    memset(all, 0, sizeof *all);
    /* a provider per record and per attempt at most */
    for (size_t i = 0; i < n; i++)
        room += records[i] ? records[i]->n_tries : 0;
    if (!(g = calloc(room, sizeof *g)) || !(total.lat = calloc(n + 1, sizeof *total.lat)))
        goto out;
    total.u.peak_memory_max = -1;
    for (size_t i = 0; i < n; i++) {
        const sbx_eval_record *r = records[i];
        struct gather *at;
        if (!r || r->attempts == 0)     /* nothing ran: nothing used */
            continue;
        /* its attempts first: providers are listed in the order tried */
        for (size_t a = 0; a < r->n_tries; a++) {
            if (!(at = gather_of(g, &ng, r->tries[a].provider, n)))
                goto out;
            add_attempt(at, &r->tries[a]);
            add_attempt(&total, &r->tries[a]);
        }
        if (!(at = gather_of(g, &ng, r->provider ? r->provider : "", n)))
            goto out;
        add(at, r);
        add(&total, r);
    }
    if (!(*uses = calloc(ng + 1, sizeof **uses)))
        goto out;
    for (size_t k = 0; k < ng; k++) {
        struct price pb;
        const struct price *p = price_of(ctx, g[k].name, &pb);
        finish(&g[k], p);
        /* the whole run is priced when every provider in it is, alike */
        if (!p || (currency && strcmp(currency, g[k].u.currency)))
            priced = false;
        else
            currency = g[k].u.currency;
        if (!*g[k].name)
            continue;   /* a sandbox error no provider claimed: in the total alone */
        if (!((*uses)[*n_uses].provider = strdup(g[k].name)))
            goto out;
        (*uses)[*n_uses].u = g[k].u;
        own_currency(&(*uses)[(*n_uses)++]);
    }
    finish(&total, NULL);
    all->u = total.u;
    if (priced && ng) {
        all->u.priced = true;
        all->u.currency = currency;
        for (size_t k = 0; k < ng; k++)
            all->u.cost_total += g[k].u.cost_total;
        all->u.cost_per_sample = all->u.samples ? all->u.cost_total / (double)all->u.samples
                                                : 0.0;
        all->u.cost_per_pass = all->u.passed ? all->u.cost_total / (double)all->u.passed : -1.0;
        own_currency(all);
    }
    rc = SBX_OK;
out:
    for (size_t k = 0; g && k < ng; k++)
        free(g[k].lat);
    free(g);
    free(total.lat);
    if (rc != SBX_OK) {
        core_eval_usage_free(*uses, *n_uses);
        *uses = NULL;
        *n_uses = 0;
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    return SBX_OK;
}

json_t *core_eval_usage_json(const sbx_eval_usage *u)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:f, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}, s:o}",
                          "samples", (json_int_t)u->samples, "passed", (json_int_t)u->passed,
                          "sandboxes", (json_int_t)u->sandboxes,
                          "sandbox_seconds", (double)u->sandbox_ns / 1e9,
                          "latency_ns", "p50", (json_int_t)u->latency_p50_ns,
                          "p90", (json_int_t)u->latency_p90_ns,
                          "max", (json_int_t)u->latency_max_ns,
                          "cpu_ns", "total", (json_int_t)u->cpu_total_ns,
                          "mean", (json_int_t)u->cpu_mean_ns,
                          "samples", (json_int_t)u->cpu_samples,
                          "peak_memory_bytes", u->peak_memory_max >= 0
                              ? json_integer(u->peak_memory_max) : json_null());

    if (o && json_object_set_new(o, "sandbox_errors",
                                 json_integer((json_int_t)u->sandbox_errors)) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o && u->priced &&
        json_object_set_new(o, "cost", json_pack("{s:f, s:f, s:o, s:s}",
                                                 "total", u->cost_total,
                                                 "per_sample", u->cost_per_sample,
                                                 "per_passing_sample", u->cost_per_pass >= 0
                                                     ? json_real(u->cost_per_pass)
                                                     : json_null(),
                                                 "currency", u->currency)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

size_t sbx_eval_summary_provider_count(const sbx_eval_summary *sum)
{
    return sum ? sum->n_uses : 0;
}

const char *sbx_eval_summary_provider(const sbx_eval_summary *sum, size_t i)
{
    return sum && i < sum->n_uses ? sum->uses[i].provider : NULL;
}

bool sbx_eval_summary_usage(const sbx_eval_summary *sum, const char *provider,
                            sbx_eval_usage *u)
{
    if (!sum || !u)
        return false;
    if (!provider) {
        *u = sum->all.u;
        return true;
    }
    for (size_t i = 0; i < sum->n_uses; i++)
        if (!strcmp(sum->uses[i].provider, provider)) {
            *u = sum->uses[i].u;
            return true;
        }
    return false;
}
