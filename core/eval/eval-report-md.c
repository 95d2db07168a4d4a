/* core/eval/eval-report-md.c - the side-by-side report as Markdown, built here
 * so that the command (its standard output and PREFIX.md) and the
 * bindings give the same text: the run's metadata, a table of verdict
 * counts, pass@k, latency, CPU, memory, cost and throughput per column, and the samples
 * whose verdicts differ.  A table cell cannot be broken by what it
 * holds ('|' is escaped, a newline is a space). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval-report-int.h"

/* Table cells: no '|' or newline may break the row. */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void plain(FILE *f, const char *s)
{
    fputs(s, f);
}

static const report_para md_para = { "", "`", "`.\n\n", "`", "`", ".\n\n" };
static const report_row md_row = { "| ", " |", " ", " |", "\n" };

/* What the report says about its run: tool, date (now), host, jobs,
 * inputs with their digests, providers, limits. */
static void meta_md(const sbx_eval_report *r, FILE *f)
{
    char date[32];

    report_date(date, sizeof date);
    fprintf(f, "polysandbox %s, %s, host ", sbx_version(), date);
    report_host(f, plain);
    if (!r->have_opts)
        fputs(", rebuilt from results files.\n\n", f);
    else
        fprintf(f, ", %u jobs.\n\n", report_jobs(r));
    fputs("Dataset: ", f);
    report_input(f, r->dataset, r->dataset_name, plain);
    fputs(".\nSamples: ", f);
    report_input(f, r->samples_file, r->samples_name, plain);
    fputs(".\nProviders: ", f);
    report_providers(f, r, plain);
    fputs(".\nLimits: ", f);
    report_limits(f, r);
    fputs(".\n\n", f);
}

/* The header of a table whose first columns are @first ("| |"), then
 * one per report column, aligned by @align ("---:|"). */
static void md_head(FILE *f, const sbx_eval_report *r, const char *first, const char *rule,
                    const char *align)
{
    fputs(first, f);
    for (size_t c = 0; c < r->n_cols; c++) {
        fputc(' ', f);
        md_cell(f, r->cols[c].label);
        fputs(" |", f);
    }
    fputs(rule, f);
    for (size_t c = 0; c < r->n_cols; c++)
        fputs(align, f);
    fputc('\n', f);
}

/* A differing sample's cell: verdict and reason. */
static void md_verdict_cell(FILE *f, const report_column *c, size_t i)
{
    const sbx_eval_record *rec = sbx_eval_summary_record(c->sum, i);

    fprintf(f, " %s", report_verdict_of(c, i));
    if (rec && sbx_eval_record_reason(rec)) {
        fputs(": ", f);
        md_cell(f, sbx_eval_record_reason(rec));
    }
    fputs(" |", f);
}

/* The differing samples' table: each column's verdict and reason. */
static void md_diffs(FILE *f, const sbx_eval_report *r, size_t n_diffs)
{
    fprintf(f, "\n## Verdicts that differ (%zu of %zu samples)\n\n", n_diffs,
            sbx_eval_samples_count(r->samples));
    md_head(f, r, "| sample | task |", "\n|---:|---|", "---|");
    report_diff_rows(f, r, &md_row, md_cell, md_verdict_cell);
}

static int write_md(const sbx_eval_report *r, const unsigned *ks, size_t n_ks, FILE *f)
{
    size_t n_diffs = sbx_eval_report_diff_count(r);
    char buf[64];

    fputs("# PolySandbox comparison\n\n", f);
    meta_md(r, f);
    fprintf(f, "%zu samples.\n\n", sbx_eval_samples_count(r->samples));
    report_column_notes(f, r, &md_para, md_cell);
    md_head(f, r, "| |", "\n|---|", "---:|");
    for (int v = 0; v < SBX_VERDICT_COUNT; v++) {
        bool any = v == SBX_VERDICT_PASSED;
        for (size_t c = 0; c < r->n_cols; c++)
            any = any || sbx_eval_summary_count(r->cols[c].sum, (sbx_eval_verdict)v);
        if (!any)
            continue;
        report_row_head(f, &md_row, sbx_eval_verdict_name((sbx_eval_verdict)v));
        for (size_t c = 0; c < r->n_cols; c++)
            fprintf(f, " %zu |", sbx_eval_summary_count(r->cols[c].sum, (sbx_eval_verdict)v));
        fputc('\n', f);
    }
    report_row_head(f, &md_row, "pass rate");
    for (size_t c = 0; c < r->n_cols; c++)
        fprintf(f, " %.1f%% |", 100.0 * report_pass_rate(r->cols[c].sum));
    fputc('\n', f);
    report_passk_rows(f, r, ks, n_ks, &md_row);
    report_latency_rows(f, r, &md_row);
    report_usage_rows(f, r, &md_row);
    report_row_head(f, &md_row, "throughput");
    for (size_t c = 0; c < r->n_cols; c++)
        fprintf(f, " %.1f/s |", sbx_eval_summary_throughput(r->cols[c].sum));
    fputc('\n', f);
    report_row_head(f, &md_row, "wall time");
    for (size_t c = 0; c < r->n_cols; c++) {
        report_duration(sbx_eval_summary_wall_ns(r->cols[c].sum), buf, sizeof buf);
        fprintf(f, " %s |", buf);
    }
    fputc('\n', f);
    if (report_any_fallback(r)) {
        fputs("\n## Attempts per provider\n\nEach attempt counts on the provider that ran "
              "it: its time, its cost and, when its sandbox failed, a sandbox error.\n\n"
              "| column | provider | samples | sandboxes | sandbox errors | sandbox time "
              "| cost |\n|---|---|---:|---:|---:|---:|---:|\n", f);
        report_attempt_rows(f, r, &md_row, md_cell);
    }
    if (n_diffs == 0)
        fprintf(f, "\nAll %zu samples got the same verdict on every provider.\n",
                sbx_eval_samples_count(r->samples));
    else
        md_diffs(f, r, n_diffs);
    if (n_ks)
        fputs("\npass@k: the mean over tasks of the unbiased estimator, [95% interval] by "
              "a bootstrap over tasks (2000 resamples, seed 20261127).\n", f);
    return ferror(f) ? EIO : 0;
}

char *sbx_eval_report_to_markdown(const sbx_eval_report *r, const unsigned *ks, size_t n_ks)
{
    return report_text(r, ks, n_ks, write_md);
}
