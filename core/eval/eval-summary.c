/* core/eval/eval-summary.c - counts, pass@k per task and overall, latency,
 * throughput, and the summary as JSON */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "limit-names.h"
#include "strv.h"

void sbx_eval_summary_free(sbx_eval_summary *sum)
{
    if (!sum)
        return;
    for (size_t i = 0; sum->records && i < sum->n_samples; i++)
        core_eval_record_free(sum->records[i]);
    free(sum->records);
    core_strv_free(sum->task_ids);
    free(sum->task_n);
    free(sum->task_c);
    free(sum->task_cb);
    free(sum->sample_task);
    free(sum->latencies);
    core_eval_usage_free(sum->uses, sum->n_uses);
    free(sum->dataset);
    free(sum);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int core_eval_summary_build(const sbx_ctx *ctx, const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                            sbx_eval_record **records, size_t resumed, size_t ran,
                            uint64_t wall_ns, sbx_eval_summary **out)
{
    sbx_eval_summary *sum = calloc(1, sizeof *sum);
    size_t *map = NULL;   /* dataset task -> summary task, or -1 */

    if (!sum) {
        for (size_t i = 0; i < s->n; i++)
            core_eval_record_free(records[i]);
        free(records);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    sum->records = records;
    sum->n_samples = s->n;
    sum->resumed = resumed;
    sum->ran = ran;
    sum->wall_ns = wall_ns;
    sum->fmt = ds->fmt;
    if (!(sum->dataset = strdup(ds->path)) || !(map = malloc(ds->n * sizeof *map)) ||
        !(sum->task_ids = calloc(ds->n + 1, sizeof *sum->task_ids)) ||
        !(sum->task_n = calloc(ds->n, sizeof *sum->task_n)) ||
        !(sum->task_c = calloc(ds->n, sizeof *sum->task_c)) ||
        (ds->fmt == SBX_EVAL_FORMAT_EVALPLUS &&
         !(sum->task_cb = calloc(ds->n, sizeof *sum->task_cb))) ||
        !(sum->sample_task = calloc(s->n + 1, sizeof *sum->sample_task)) ||
        !(sum->latencies = calloc(s->n + 1, sizeof *sum->latencies)))
        goto nomem;
    for (size_t i = 0; i < ds->n; i++)
        map[i] = (size_t)-1;
    /* Tasks in dataset order, those with samples only. */
    for (size_t i = 0; i < s->n; i++)
        map[s->v[i].task] = 0;
    for (size_t i = 0; i < ds->n; i++)
        if (map[i] == 0) {
            if (!(sum->task_ids[sum->n_tasks] = strdup(ds->tasks[i].id)))
                goto nomem;
            map[i] = sum->n_tasks++;
        }
    for (size_t i = 0; i < s->n; i++) {
        const sbx_eval_record *r = records[i];
        size_t t = map[s->v[i].task];
        sum->sample_task[i] = t;
        if (!r)
            continue;
        sum->done++;
        sum->counts[r->verdict]++;
        if (!sbx_eval_verdict_graded(r->verdict))
            continue;
        sum->task_n[t]++;
        if (r->verdict == SBX_VERDICT_PASSED)
            sum->task_c[t]++;
        /* a pass of base + extra is one of base (a record without a base
         * verdict came from elsewhere: its verdict stands for both) */
        if (sum->task_cb && (r->has_base ? r->base_verdict : r->verdict) == SBX_VERDICT_PASSED)
            sum->task_cb[t]++;
        sum->latencies[sum->n_latencies++] = r->time_ns;
    }
    qsort(sum->latencies, sum->n_latencies, sizeof *sum->latencies, cmp_u64);
    free(map);
    if (core_eval_usage_build(ctx, records, s->n, &sum->uses, &sum->n_uses, &sum->all)
        != SBX_OK) {
        sbx_eval_summary_free(sum);
        return SBX_E_NOMEM;
    }
    *out = sum;
    return SBX_OK;
nomem:
    free(map);
    sbx_eval_summary_free(sum);
    return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
}

size_t sbx_eval_summary_done(const sbx_eval_summary *sum) { return sum ? sum->done : 0; }
size_t sbx_eval_summary_total(const sbx_eval_summary *sum) { return sum ? sum->n_samples : 0; }
size_t sbx_eval_summary_resumed(const sbx_eval_summary *sum) { return sum ? sum->resumed : 0; }

size_t sbx_eval_summary_count(const sbx_eval_summary *sum, sbx_eval_verdict v)
{
    return sum && (unsigned)v < SBX_VERDICT_COUNT ? sum->counts[v] : 0;
}

size_t sbx_eval_summary_graded(const sbx_eval_summary *sum)
{
    size_t n = 0;

    for (int v = 0; sum && v < SBX_VERDICT_COUNT; v++)
        if (sbx_eval_verdict_graded((sbx_eval_verdict)v))
            n += sum->counts[v];
    return n;
}

const sbx_eval_record *sbx_eval_summary_record(const sbx_eval_summary *sum, size_t sample)
{
    return sum && sample < sum->n_samples ? sum->records[sample] : NULL;
}

size_t sbx_eval_summary_task_count(const sbx_eval_summary *sum)
{
    return sum ? sum->n_tasks : 0;
}

const char *sbx_eval_summary_task_id(const sbx_eval_summary *sum, size_t i)
{
    return sum && i < sum->n_tasks ? sum->task_ids[i] : NULL;
}

void sbx_eval_summary_task_counts(const sbx_eval_summary *sum, size_t i, size_t *n, size_t *c)
{
    bool ok = sum && i < sum->n_tasks;

    if (n)
        *n = ok ? sum->task_n[i] : 0;
    if (c)
        *c = ok ? sum->task_c[i] : 0;
}

/* The mean pass@k over the tasks of @sum whose passes are @c. */
static bool mean_pass_at_k(const sbx_eval_summary *sum, const size_t *c, unsigned k,
                           double *value, size_t *n_tasks)
{
    double total = 0.0;
    size_t used = 0;

    if (n_tasks)
        *n_tasks = 0;
    if (!sum || !c || k == 0)
        return false;
    for (size_t i = 0; i < sum->n_tasks; i++) {
        double p = sbx_eval_pass_at_k(sum->task_n[i], c[i], k);
        if (p < 0)
            continue;
        total += p;
        used++;
    }
    if (n_tasks)
        *n_tasks = used;
    if (used == 0)
        return false;
    if (value)
        *value = total / (double)used;
    return true;
}

bool sbx_eval_summary_pass_at_k(const sbx_eval_summary *sum, unsigned k, double *value,
                                size_t *n_tasks)
{
    return mean_pass_at_k(sum, sum ? sum->task_c : NULL, k, value, n_tasks);
}

bool sbx_eval_summary_pass_at_k_base(const sbx_eval_summary *sum, unsigned k, double *value,
                                     size_t *n_tasks)
{
    return mean_pass_at_k(sum, sum ? sum->task_cb : NULL, k, value, n_tasks);
}

size_t sbx_eval_summary_sample_task(const sbx_eval_summary *sum, size_t sample)
{
    return sum && sample < sum->n_samples ? sum->sample_task[sample] : (size_t)-1;
}

bool sbx_eval_summary_pass_at_k_ci(const sbx_eval_summary *sum, unsigned k, double *lo,
                                   double *hi)
{
    double *per = sum && k ? calloc(sum->n_tasks + 1, sizeof *per) : NULL;
    size_t used = 0;
    bool ok;

    if (!per)
        return false;
    for (size_t i = 0; i < sum->n_tasks; i++) {
        double p = sbx_eval_pass_at_k(sum->task_n[i], sum->task_c[i], k);
        if (p >= 0)
            per[used++] = p;
    }
    ok = core_eval_bootstrap(per, used, lo, hi) == SBX_OK;
    free(per);
    return ok;
}

uint64_t sbx_eval_summary_latency(const sbx_eval_summary *sum, double pct)
{
    return sum ? core_eval_percentile(sum->latencies, sum->n_latencies, pct) : 0;
}

uint64_t sbx_eval_summary_wall_ns(const sbx_eval_summary *sum) { return sum ? sum->wall_ns : 0; }

double sbx_eval_summary_throughput(const sbx_eval_summary *sum)
{
    if (!sum || sum->wall_ns == 0)
        return 0.0;
    return (double)sum->ran / ((double)sum->wall_ns / 1e9);
}

/* ---- JSON ------------------------------------------------------------------ */

/* {"K": [low, high]} of the 95% bootstrap intervals, null where none. */
static json_t *pass_at_k_ci_obj(const sbx_eval_summary *sum, const unsigned *ks, size_t n_ks)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < n_ks; i++) {
        char key[16];
        double lo, hi;
        snprintf(key, sizeof key, "%u", ks[i]);
        json_object_set_new(o, key, sbx_eval_summary_pass_at_k_ci(sum, ks[i], &lo, &hi)
                                        ? json_pack("[ff]", lo, hi)
                                        : json_null());
    }
    return o;
}

static json_t *pass_at_k_obj(const sbx_eval_summary *sum, size_t task, const unsigned *ks,
                             size_t n_ks, json_t **tasks_used)
{
    json_t *o = json_object();

    if (tasks_used)
        *tasks_used = json_object();
    for (size_t i = 0; o && i < n_ks; i++) {
        char key[16];
        double v;
        size_t used = 0;
        bool ok;
        snprintf(key, sizeof key, "%u", ks[i]);
        if (task == (size_t)-1) {
            ok = sbx_eval_summary_pass_at_k(sum, ks[i], &v, &used);
        } else {
            v = sbx_eval_pass_at_k(sum->task_n[task], sum->task_c[task], ks[i]);
            ok = v >= 0;
        }
        json_object_set_new(o, key, ok ? json_real(v) : json_null());
        if (tasks_used && *tasks_used)
            json_object_set_new(*tasks_used, key, json_integer((json_int_t)used));
    }
    return o;
}

/* EvalPlus: {"K": pass@k on the base inputs}, null where none. */
static json_t *pass_at_k_base_obj(const sbx_eval_summary *sum, const unsigned *ks,
                                  size_t n_ks)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < n_ks; i++) {
        char key[16];
        double v;
        snprintf(key, sizeof key, "%u", ks[i]);
        json_object_set_new(o, key, sbx_eval_summary_pass_at_k_base(sum, ks[i], &v, NULL)
                                        ? json_real(v) : json_null());
    }
    return o;
}

/* The limits any sample's sandbox ran without. */
static uint64_t unenforced(const sbx_eval_summary *sum)
{
    uint64_t bits = 0;

    for (size_t i = 0; i < sum->n_samples; i++)
        if (sum->records[i])
            bits |= sum->records[i]->unenforced;
    return bits;
}

/* Append to @list the samples of verdict @v (not graded): sample,
 * task_id, provider and error (the record's reason).  -1 on ENOMEM. */
static int list_ungraded(const sbx_eval_summary *sum, sbx_eval_verdict v, json_t *list)
{
    for (size_t i = 0; i < sum->n_samples; i++) {
        const sbx_eval_record *r = sum->records[i];
        json_t *e;
        if (!r || r->verdict != v)
            continue;
        if (!(e = json_object()))
            return -1;
        json_object_set_new(e, "sample", json_integer((json_int_t)i));
        json_object_set_new(e, "task_id", json_string(r->task_id));
        json_object_set_new(e, "provider", json_string(r->provider ? r->provider : ""));
        json_object_set_new(e, "error", r->reason ? json_string(r->reason) : json_null());
        if (json_array_append_new(list, e))
            return -1;
    }
    return 0;
}

/* "usage" (of every sample) and "providers" ({NAME: usage}) into @o;
 * -1 on ENOMEM. */
static int providers_json(const sbx_eval_summary *sum, json_t *o)
{
    json_t *provs = json_object();

    if (!provs || json_object_set_new(o, "providers", provs) ||
        json_object_set_new(o, "usage", core_eval_usage_json(&sum->all.u)))
        return -1;
    for (size_t i = 0; i < sum->n_uses; i++)
        if (json_object_set_new(provs, sum->uses[i].provider,
                                core_eval_usage_json(&sum->uses[i].u)))
            return -1;
    return 0;
}

char *sbx_eval_summary_to_json(const sbx_eval_summary *sum, const unsigned *ks, size_t n_ks)
{
    json_t *o, *counts, *tasks, *lat, *errs, *none = NULL, *used = NULL;
    char *s = NULL;

    if (!sum)
        return NULL;
    o = json_object();
    counts = json_object();
    tasks = json_array();
    lat = json_object();
    errs = json_array();
    if (!o || !counts || !tasks || !lat || !errs)
        goto out;
    json_object_set_new(o, "dataset", json_string(sum->dataset));
    json_object_set_new(o, "format", json_string(sbx_eval_format_name(sum->fmt)));
    json_object_set_new(o, "samples", json_integer((json_int_t)sum->n_samples));
    json_object_set_new(o, "done", json_integer((json_int_t)sum->done));
    json_object_set_new(o, "resumed", json_integer((json_int_t)sum->resumed));
    json_object_set_new(o, "ran", json_integer((json_int_t)sum->ran));
    for (int v = 0; v < SBX_VERDICT_COUNT; v++)
        json_object_set_new(counts, sbx_eval_verdict_name((sbx_eval_verdict)v),
                            json_integer((json_int_t)sum->counts[v]));
    json_object_set(o, "counts", counts);
    json_object_set_new(o, "graded", json_integer((json_int_t)sbx_eval_summary_graded(sum)));
    json_object_set_new(o, "pass_at_k", pass_at_k_obj(sum, (size_t)-1, ks, n_ks, &used));
    json_object_set_new(o, "pass_at_k_tasks", used ? used : json_null());
    json_object_set_new(o, "pass_at_k_ci", pass_at_k_ci_obj(sum, ks, n_ks));
    if (sum->task_cb)   /* EvalPlus: pass_at_k is "base + extra", this "base" */
        json_object_set_new(o, "pass_at_k_base", pass_at_k_base_obj(sum, ks, n_ks));
    for (size_t i = 0; i < sum->n_tasks; i++) {
        json_t *t = json_object();
        if (!t)
            goto out;
        json_object_set_new(t, "task_id", json_string(sum->task_ids[i]));
        json_object_set_new(t, "n", json_integer((json_int_t)sum->task_n[i]));
        json_object_set_new(t, "c", json_integer((json_int_t)sum->task_c[i]));
        if (sum->task_cb)
            json_object_set_new(t, "c_base", json_integer((json_int_t)sum->task_cb[i]));
        json_object_set_new(t, "pass_at_k", pass_at_k_obj(sum, i, ks, n_ks, NULL));
        json_array_append_new(tasks, t);
    }
    json_object_set(o, "tasks", tasks);
    json_object_set_new(lat, "p50", json_integer((json_int_t)sbx_eval_summary_latency(sum, 50)));
    json_object_set_new(lat, "p90", json_integer((json_int_t)sbx_eval_summary_latency(sum, 90)));
    json_object_set_new(lat, "p95", json_integer((json_int_t)sbx_eval_summary_latency(sum, 95)));
    json_object_set_new(lat, "p99", json_integer((json_int_t)sbx_eval_summary_latency(sum, 99)));
    json_object_set_new(lat, "max", json_integer((json_int_t)sbx_eval_summary_latency(sum, 100)));
    json_object_set(o, "latency_ns", lat);
    if (providers_json(sum, o) != 0)
        goto out;
    json_object_set_new(o, "unenforced_limits", core_limit_names_json(unenforced(sum)));
    json_object_set_new(o, "wall_ns", json_integer((json_int_t)sum->wall_ns));
    json_object_set_new(o, "throughput_per_s", json_real(sbx_eval_summary_throughput(sum)));
    /* Persistent sandbox errors and samples no template runs, reported
     * apart from the verdicts on the code. */
    if (!(none = json_array()) || list_ungraded(sum, SBX_VERDICT_SANDBOX_ERROR, errs) ||
        list_ungraded(sum, SBX_VERDICT_NO_TEMPLATE, none))
        goto out;
    json_object_set(o, "sandbox_errors", errs);
    json_object_set(o, "no_template", none);
    s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
out:
    json_decref(counts);
    json_decref(tasks);
    json_decref(lat);
    json_decref(errs);
    json_decref(none);
    json_decref(o);
    return s;
}
