/* core/eval/eval-report-text.c - what the report's HTML page (eval-report-html.c)
 * and its Markdown (eval-report-md.c) write alike: the figures of a
 * column, the run's metadata in words, and the page as one string.  The
 * writers differ only in their markup and in how text is escaped. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "eval-report-int.h"

const char *report_verdict_of(const report_column *c, size_t i)
{
    const sbx_eval_record *rec = sbx_eval_summary_record(c->sum, i);

    return rec ? sbx_eval_verdict_name(sbx_eval_record_verdict(rec)) : "not run";
}

static bool has_base(const sbx_eval_summary *sum)
{
    for (size_t i = 0; i < sbx_eval_summary_total(sum); i++)
        if (sbx_eval_record_base_verdict(sbx_eval_summary_record(sum, i), NULL))
            return true;
    return false;
}

bool report_any_base(const sbx_eval_report *r)
{
    for (size_t c = 0; c < r->n_cols; c++)
        if (has_base(r->cols[c].sum))
            return true;
    return false;
}

double report_pass_rate(const sbx_eval_summary *s)
{
    size_t graded = sbx_eval_summary_graded(s);

    return graded ? (double)sbx_eval_summary_count(s, SBX_VERDICT_PASSED) / (double)graded : 0.0;
}

void report_row_head(FILE *f, const report_row *row, const char *s)
{
    fputs(row->head, f);
    fputs(s, f);
    fputs(row->head_end, f);
}

void report_row_cell(FILE *f, const report_row *row, const char *s)
{
    fputs(row->cell, f);
    fputs(s, f);
    fputs(row->cell_end, f);
}

void report_column_notes(FILE *f, const sbx_eval_report *r, const report_para *p,
                         report_esc esc)
{
    for (size_t c = 0; c < r->n_cols; c++) {
        if (!r->cols[c].results)
            continue;
        fputs(p->open, f);
        fputs("Results of ", f);
        esc(f, r->cols[c].label);
        fputs(": ", f);
        fputs(p->results, f);
        esc(f, r->cols[c].results);
        fputs(p->results_end, f);
    }
    for (size_t c = 0; c < r->n_cols; c++) {
        if (!r->cols[c].settings[0])
            continue;
        fputs(p->open, f);
        fputs("Settings of ", f);
        esc(f, r->cols[c].label);
        fputc(':', f);
        for (size_t i = 0; r->cols[c].settings[i]; i++) {
            fputc(' ', f);
            fputs(p->code, f);
            esc(f, r->cols[c].settings[i]);
            fputs(p->code_end, f);
        }
        fputs(p->end, f);
    }
}

void report_diff_rows(FILE *f, const sbx_eval_report *r, const report_row *row,
                      report_esc esc, void (*cell)(FILE *f, const report_column *c, size_t i))
{
    char num[32];

    for (size_t i = 0; i < sbx_eval_samples_count(r->samples); i++) {
        const sbx_eval_record *rec = sbx_eval_summary_record(r->cols[0].sum, i);
        if (!sbx_eval_report_differs(r, i))
            continue;
        snprintf(num, sizeof num, "%zu", i);
        report_row_head(f, row, num);
        fputs(row->cell, f);
        esc(f, rec ? sbx_eval_record_task_id(rec) : "?");
        fputs(row->cell_end, f);
        for (size_t c = 0; c < r->n_cols; c++)
            cell(f, &r->cols[c], i);
        fputs(row->end, f);
    }
}

/* pass@k as "V [LO, HI]" (its 95% bootstrap interval), or "n/a". */
static void pass_at_k(const sbx_eval_summary *sum, unsigned k, char *buf, size_t size)
{
    double v, lo, hi;

    if (!sbx_eval_summary_pass_at_k(sum, k, &v, NULL))
        snprintf(buf, size, "n/a");
    else if (sbx_eval_summary_pass_at_k_ci(sum, k, &lo, &hi))
        snprintf(buf, size, "%.4f [%.4f, %.4f]", v, lo, hi);
    else
        snprintf(buf, size, "%.4f", v);
}

/* EvalPlus's base pass@k, or "n/a". */
static void pass_at_k_base(const sbx_eval_summary *sum, unsigned k, char *buf, size_t size)
{
    double v;

    if (!sbx_eval_summary_pass_at_k_base(sum, k, &v, NULL))
        snprintf(buf, size, "n/a");
    else
        snprintf(buf, size, "%.4f", v);
}

/* One row of the figures: @label, then @fmt's pass@@k of each column. */
static void passk_row(FILE *f, const sbx_eval_report *r, const report_row *row,
                      const char *label, unsigned k,
                      void (*fmt)(const sbx_eval_summary *, unsigned, char *, size_t))
{
    report_row_head(f, row, label);
    for (size_t c = 0; c < r->n_cols; c++) {
        char v[96];
        fmt(r->cols[c].sum, k, v, sizeof v);
        report_row_cell(f, row, v);
    }
    fputs(row->end, f);
}

/* "12.3 ms" or "1.23 s" */
void report_duration(uint64_t ns, char *buf, size_t size)
{
    double v = (double)ns / 1e6;

    if (v >= 1000.0)
        snprintf(buf, size, "%.2f s", v / 1000.0);
    else
        snprintf(buf, size, "%.1f ms", v);
}

void report_latency_rows(FILE *f, const sbx_eval_report *r, const report_row *row)
{
    static const double pcts[] = { 50, 90, 95, 99, 100 };
    char buf[64];

    for (size_t p = 0; p < sizeof pcts / sizeof *pcts; p++) {
        if (pcts[p] < 100)
            snprintf(buf, sizeof buf, "latency p%.0f", pcts[p]);
        else
            snprintf(buf, sizeof buf, "latency max");
        report_row_head(f, row, buf);
        for (size_t c = 0; c < r->n_cols; c++) {
            report_duration(sbx_eval_summary_latency(r->cols[c].sum, pcts[p]), buf, sizeof buf);
            report_row_cell(f, row, buf);
        }
        fputs(row->end, f);
    }
}

/* One row of a column's usage: @label, then @fmt of each column's. */
static void usage_row(FILE *f, const sbx_eval_report *r, const report_row *row,
                      const char *label,
                      void (*fmt)(const sbx_eval_usage *u, char *buf, size_t size))
{
    report_row_head(f, row, label);
    for (size_t c = 0; c < r->n_cols; c++) {
        sbx_eval_usage u;
        char v[96];
        (void)sbx_eval_summary_usage(r->cols[c].sum, NULL, &u);
        fmt(&u, v, sizeof v);
        report_row_cell(f, row, v);
    }
    fputs(row->end, f);
}

static void fmt_cpu_total(const sbx_eval_usage *u, char *buf, size_t size)
{
    if (u->cpu_samples)
        report_duration(u->cpu_total_ns, buf, size);
    else
        snprintf(buf, size, "n/a");
}

static void fmt_cpu_mean(const sbx_eval_usage *u, char *buf, size_t size)
{
    if (u->cpu_samples)
        report_duration(u->cpu_mean_ns, buf, size);
    else
        snprintf(buf, size, "n/a");
}

static void fmt_peak(const sbx_eval_usage *u, char *buf, size_t size)
{
    if (u->peak_memory_max >= 0)
        snprintf(buf, size, "%.1f MiB", (double)u->peak_memory_max / (1024.0 * 1024.0));
    else
        snprintf(buf, size, "n/a");
}

/* A cost, or "n/a" where no price applies (never a made-up zero). */
static void cost(const sbx_eval_usage *u, double v, char *buf, size_t size)
{
    if (u->priced && v >= 0)
        snprintf(buf, size, "%.6g %s", v, u->currency);
    else
        snprintf(buf, size, "n/a");
}

static void fmt_cost(const sbx_eval_usage *u, char *buf, size_t size)
{
    cost(u, u->cost_total, buf, size);
}

static void fmt_cost_sample(const sbx_eval_usage *u, char *buf, size_t size)
{
    cost(u, u->cost_per_sample, buf, size);
}

static void fmt_cost_pass(const sbx_eval_usage *u, char *buf, size_t size)
{
    cost(u, u->cost_per_pass, buf, size);
}

void report_usage_rows(FILE *f, const sbx_eval_report *r, const report_row *row)
{
    bool priced = false;

    usage_row(f, r, row, "CPU total", fmt_cpu_total);
    usage_row(f, r, row, "CPU mean", fmt_cpu_mean);
    usage_row(f, r, row, "peak memory max", fmt_peak);
    for (size_t c = 0; c < r->n_cols; c++) {
        sbx_eval_usage u;
        priced = priced || (sbx_eval_summary_usage(r->cols[c].sum, NULL, &u) && u.priced);
    }
    if (!priced)
        return;
    usage_row(f, r, row, "cost", fmt_cost);
    usage_row(f, r, row, "cost per sample", fmt_cost_sample);
    usage_row(f, r, row, "cost per passing sample", fmt_cost_pass);
}

bool report_any_fallback(const sbx_eval_report *r)
{
    sbx_eval_usage u;

    for (size_t c = 0; c < r->n_cols; c++) {
        if (sbx_eval_summary_provider_count(r->cols[c].sum) > 1)
            return true;
        if (sbx_eval_summary_usage(r->cols[c].sum, NULL, &u) && u.sandbox_errors)
            return true;
    }
    return false;
}

void report_attempt_rows(FILE *f, const sbx_eval_report *r, const report_row *row,
                         report_esc esc)
{
    for (size_t c = 0; c < r->n_cols; c++) {
        const sbx_eval_summary *sum = r->cols[c].sum;
        for (size_t i = 0; i < sbx_eval_summary_provider_count(sum); i++) {
            const char *name = sbx_eval_summary_provider(sum, i);
            sbx_eval_usage u;
            char v[96];
            if (!sbx_eval_summary_usage(sum, name, &u))
                continue;
            fputs(row->head, f);
            esc(f, r->cols[c].label);
            fputs(row->head_end, f);
            fputs(row->cell, f);
            esc(f, name);
            fputs(row->cell_end, f);
            snprintf(v, sizeof v, "%zu", u.samples);
            report_row_cell(f, row, v);
            snprintf(v, sizeof v, "%zu", u.sandboxes);
            report_row_cell(f, row, v);
            snprintf(v, sizeof v, "%zu", u.sandbox_errors);
            report_row_cell(f, row, v);
            report_duration(u.sandbox_ns, v, sizeof v);
            report_row_cell(f, row, v);
            fmt_cost(&u, v, sizeof v);
            report_row_cell(f, row, v);
            fputs(row->end, f);
        }
    }
}

void report_passk_rows(FILE *f, const sbx_eval_report *r, const unsigned *ks, size_t n_ks,
                       const report_row *row)
{
    bool base = report_any_base(r);
    char label[64];

    for (size_t k = 0; k < n_ks; k++) {
        if (base) {     /* EvalPlus: "base", then pass@k is "base + extra" */
            snprintf(label, sizeof label, "pass@%u base", ks[k]);
            passk_row(f, r, row, label, ks[k], pass_at_k_base);
        }
        snprintf(label, sizeof label, base ? "pass@%u base + extra" : "pass@%u", ks[k]);
        passk_row(f, r, row, label, ks[k], pass_at_k);
    }
}

void report_date(char *date, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;

    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        !strftime(date, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(date, size, "unknown");
}

void report_host(FILE *f, report_esc esc)
{
    struct utsname u;

    if (uname(&u) != 0) {
        fputs("unknown (unknown)", f);
        return;
    }
    esc(f, u.nodename);
    fputs(" (", f);
    esc(f, u.sysname);
    fputc(' ', f);
    esc(f, u.release);
    fputc(' ', f);
    esc(f, u.machine);
    fputc(')', f);
}

unsigned report_jobs(const sbx_eval_report *r)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    return r->limits.jobs ? r->limits.jobs : cpus > 0 ? (unsigned)cpus : 1;
}

void report_providers(FILE *f, const sbx_eval_report *r, report_esc esc)
{
    for (size_t c = 0; c < r->n_cols; c++) {
        fputs(c ? ", " : "", f);
        esc(f, *r->cols[c].provider ? r->cols[c].provider : "?");
    }
}

/* "PATH (N bytes, sha256 HEX)", read now; a report is not refused for an
 * input without a digest: it says so. */
void report_input(FILE *f, const char *path, const char *name, report_esc esc)
{
    char sha[65];
    int64_t size;

    if (!path) {
        fputs("the dataset's reference solutions", f);
        return;
    }
    esc(f, name ? name : path);
    if (sbx_eval_input_digest(path, &size, sha) != SBX_OK || size < 0)
        fputs(" (not a regular file, or unreadable: no digest)", f);
    else
        fprintf(f, " (%lld bytes, sha256 %s)", (long long)size, sha);
}

void report_limits(FILE *f, const sbx_eval_report *r)
{
    const sbx_eval_opts *o = &r->limits;

    if (!r->have_opts) {
        fputs("not recorded (rebuilt from results files)", f);
        return;
    }
    fprintf(f, "timeout %g s, memory ", (double)o->timeout_ns / 1e9);
    if (o->limits[SBX_LIMIT_MEMORY])
        fprintf(f, "%llu bytes", (unsigned long long)o->limits[SBX_LIMIT_MEMORY]);
    else
        fputs("the configuration's", f);
    fprintf(f, ", retries %u, judged tests max(%g s, %g x reference), compile %g s, "
            "EvalPlus inputs max(%g s, %g x reference)%s%s",
            o->retries, (double)o->min_ns / 1e9, o->factor, (double)o->compile_ns / 1e9,
            (double)o->ep_min_ns / 1e9, o->ep_factor,
            o->all_tests ? ", all tests" : "", o->isolated ? ", isolated check" : "");
}

char *report_text(const sbx_eval_report *r, const unsigned *ks, size_t n_ks,
                  int (*write)(const sbx_eval_report *, const unsigned *, size_t, FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    if (!r) {
        errno = EINVAL;
        return NULL;
    }
    if (!(f = open_memstream(&text, &len)))
        return NULL;
    rc = write(r, ks, n_ks, f);
    if (fclose(f) != 0 && rc == 0)
        rc = errno ? errno : ENOMEM;
    if (rc != 0) {
        free(text);
        errno = rc;
        return NULL;
    }
    return text;
}
