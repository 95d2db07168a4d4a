/* core/eval/eval-report-int.h - a side-by-side report's parts, shared by its
 * JSON (eval-report.c), its HTML (eval-report-html.c) and its Markdown
 * (eval-report-md.c), and what the two pages write alike
 * (eval-report-text.c) */
#ifndef POLYSANDBOX_EVAL_REPORT_INT_H
#define POLYSANDBOX_EVAL_REPORT_INT_H

#include <stdio.h>

#include "eval-int.h"

typedef struct report_column {
    char *label, *provider, *results;
    char **settings;              /* NULL-terminated; owned */
    const sbx_eval_summary *sum;  /* borrowed */
} report_column;

struct sbx_eval_report {
    const sbx_eval_samples *samples;  /* borrowed */
    char *dataset, *samples_file;     /* samples_file NULL: canonical */
    report_column *cols;
    size_t n_cols;
    sbx_eval_opts limits;             /* the run's; only its values are read */
    bool have_opts;                   /* false: rebuilt from results files */
    char *prefix;                     /* the Markdown and HTML files', or NULL */
    char *dataset_name, *samples_name; /* shown in the HTML for the paths, or NULL */
};

/* ---- eval-report-text.c ---- */

/* Writes @s to @f escaped for a page's markup. */
typedef void (*report_esc)(FILE *f, const char *s);
/* A table row's markup: the label between @head and @head_end, each
 * column's value between @cell and @cell_end, then @end. */
typedef struct report_row {
    const char *head, *head_end, *cell, *cell_end, *end;
} report_row;

/* The markup of the paragraphs naming each column's results file and
 * settings: each opens with @open; a results file is between @results
 * and @results_end (which ends the paragraph), a setting between @code
 * and @code_end, and a paragraph of settings ends with @end. */
typedef struct report_para {
    const char *open, *results, *results_end, *code, *code_end, *end;
} report_para;

/* "Results of LABEL: FILE" and "Settings of LABEL: S S" paragraphs of
 * the columns that have them, every string escaped by @esc. */
void report_column_notes(FILE *f, const sbx_eval_report *r, const report_para *p,
                         report_esc esc);
/* A row's label and a value in its markup (@s as it is: the caller's
 * words, never the data's). */
void report_row_head(FILE *f, const report_row *row, const char *s);
void report_row_cell(FILE *f, const report_row *row, const char *s);
/* A row per sample whose verdicts differ: its number as the label, its
 * task (escaped by @esc) as the first value, then @cell's cell of each
 * column. */
void report_diff_rows(FILE *f, const sbx_eval_report *r, const report_row *row,
                      report_esc esc, void (*cell)(FILE *f, const report_column *c, size_t i));
/* Sample @i's verdict in column @c ("not run": no record). */
const char *report_verdict_of(const report_column *c, size_t i);
/* Whether a column grades EvalPlus samples (base and base + extra). */
bool report_any_base(const sbx_eval_report *r);
/* Passed of graded samples, 0 when none was graded. */
double report_pass_rate(const sbx_eval_summary *s);
/* The rows of pass@k for each of @ks ("V [LO, HI]", its 95% bootstrap
 * interval, or "n/a"), EvalPlus's base rows first. */
void report_passk_rows(FILE *f, const sbx_eval_report *r, const unsigned *ks, size_t n_ks,
                       const report_row *row);
/* The rows of CPU time (total, mean), peak memory and, when a column is
 * priced, cost (total, per sample, per passing sample; "n/a" for a
 * column without a price) of each column's samples. */
void report_usage_rows(FILE *f, const sbx_eval_report *r, const report_row *row);
/* Whether a column ran on more than one provider or had sandbox errors:
 * then its attempts per provider are worth a table. */
bool report_any_fallback(const sbx_eval_report *r);
/* A row per column and provider it ran on: the column's label (escaped
 * by @esc) then the provider's name, samples (graded or failed last
 * there), sandboxes (its attempts), sandbox errors, their time and cost
 * ("n/a" without a price). */
void report_attempt_rows(FILE *f, const sbx_eval_report *r, const report_row *row,
                         report_esc esc);
/* The rows of the latency percentiles (p50, p90, p95, p99, max) of each
 * column's graded samples. */
void report_latency_rows(FILE *f, const sbx_eval_report *r, const report_row *row);
/* @ns as "12.3 ms" or "1.23 s". */
void report_duration(uint64_t ns, char *buf, size_t size);
/* Now, UTC, ISO 8601 ("unknown" when the clock fails). */
void report_date(char *date, size_t size);
/* "NODENAME (SYSNAME RELEASE MACHINE)" of this host. */
void report_host(FILE *f, report_esc esc);
/* The workers per column: the options', else the cores. */
unsigned report_jobs(const sbx_eval_report *r);
/* The columns' providers, comma-separated ("?": unknown). */
void report_providers(FILE *f, const sbx_eval_report *r, report_esc esc);
/* An input as "NAME (N bytes, sha256 HEX)", its digest read now (@path
 * NULL: the canonical samples; @name NULL: the path). */
void report_input(FILE *f, const char *path, const char *name, report_esc esc);
/* The limits on one line, or that they were not recorded. */
void report_limits(FILE *f, const sbx_eval_report *r);
/* What @write writes of @r, as one string (transfer full), or NULL with
 * errno. */
char *report_text(const sbx_eval_report *r, const unsigned *ks, size_t n_ks,
                  int (*write)(const sbx_eval_report *, const unsigned *, size_t, FILE *));

#endif
