/* core/eval/eval-report-html.c - the side-by-side report as one self-contained
 * HTML page with inline SVG charts (no script, no style sheet, no font or
 * image from the network), built here so that the command (PREFIX.html)
 * and the server (POST /v1/compare) give the same page.  Every string
 * from a dataset, samples file, result record or caller is escaped. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval-int.h"
#include "eval-report-int.h"

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* What the report says about its run, as a definition list: tool, date
 * (now), host, inputs with their digests, jobs, providers, limits. */
static void meta_html(const sbx_eval_report *r, FILE *f)
{
    char date[32];

    report_date(date, sizeof date);
    fputs("<dl id=\"meta\">\n<dt>polysandbox</dt><dd id=\"meta-version\">", f);
    esc(f, sbx_version());
    fputs("</dd>\n<dt>date (UTC)</dt><dd id=\"meta-date\">", f);
    esc(f, date);
    fputs("</dd>\n<dt>host</dt><dd id=\"meta-host\">", f);
    report_host(f, esc);
    fputs("</dd>\n<dt>dataset</dt><dd id=\"meta-dataset\">", f);
    report_input(f, r->dataset, r->dataset_name, esc);
    fputs("</dd>\n<dt>samples</dt><dd id=\"meta-samples\">", f);
    report_input(f, r->samples_file, r->samples_name, esc);
    fputs("</dd>\n<dt>jobs</dt><dd id=\"meta-jobs\">", f);
    if (!r->have_opts)
        fputs("not recorded", f);
    else
        fprintf(f, "%u", report_jobs(r));
    fputs("</dd>\n<dt>providers</dt><dd id=\"meta-providers\">", f);
    report_providers(f, r, esc);
    fputs("</dd>\n<dt>limits</dt><dd id=\"meta-limits\">", f);
    report_limits(f, r);
    fputs("</dd>\n</dl>\n", f);
}

static const report_para html_para = { "<p>", "<code class=\"results\">", "</code></p>\n",
                                       "<code>", "</code>", ".</p>\n" };
static const report_row html_row = { "<tr><td class=\"l\">", "</td>", "<td class=\"passk\">",
                                     "</td>", "</tr>\n" };

static const report_row html_fig_row = { "<tr><td class=\"l\">", "</td>", "<td>", "</td>",
                                         "</tr>\n" };

static const report_row html_diff_row = { "<tr><td>", "</td>", "<td class=\"l\">", "</td>",
                                          "</tr>\n" };

static const char *const palette[] = { "#3b6fb6", "#d9822b", "#3a9a5b", "#b23b3b", "#7d5ba6",
                                       "#8c6d31" };

/* A horizontal bar chart: one bar per (label, value), each value shown
 * with @decimals and @unit.  @log: bars on a log scale from the decade
 * below the smallest positive value to the one above the largest, with
 * a tick per decade, so that a median of milliseconds stays readable
 * next to one timeout of seconds. */
static void svg_bars(FILE *f, const char *title, const char *const *labels, const double *vals,
                     const int *colors, size_t n, int decimals, const char *unit, double max,
                     bool log)
{
    const int bar = 22, gap = 8, left = 180, width = 360;
    int height = 34 + (int)n * (bar + gap) + (log ? 16 : 0);
    double lo10 = 0, hi10 = 1, min = 0;
    char num[64];

    if (max <= 0)
        for (size_t i = 0; i < n; i++)
            max = vals[i] > max ? vals[i] : max;
    if (max <= 0)
        max = 1;
    if (log) {
        for (size_t i = 0; i < n; i++)
            if (vals[i] > 0 && (min == 0 || vals[i] < min))
                min = vals[i];
        lo10 = floor(log10(min > 0 ? min : max));
        hi10 = ceil(log10(max));
        if (hi10 <= lo10)
            hi10 = lo10 + 1;
    }
    fprintf(f, "<figure><figcaption>");
    esc(f, title);
    fprintf(f, "</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\" "
               "data-scale=\"%s\">\n",
            left + width + 90, height, log ? "log" : "linear");
    for (double d = lo10; log && d <= hi10; d++) {
        int x = left + (int)((d - lo10) / (hi10 - lo10) * width + 0.5);
        fprintf(f, "<line x1=\"%d\" y1=\"6\" x2=\"%d\" y2=\"%d\" stroke=\"#ccc\"/>"
                   "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%g%s</text>\n",
                x, x, height - 18, x, height - 4, pow(10, d), unit);
    }
    for (size_t i = 0; i < n; i++) {
        int y = 10 + (int)i * (bar + gap);
        int w = log ? (vals[i] > 0 ? (int)((log10(vals[i]) - lo10) / (hi10 - lo10) * width + 0.5)
                                   : 0)
                    : (int)(vals[i] / max * width + 0.5);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + 15);
        esc(f, labels[i]);
        fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
                left, y, w > 0 ? w : 1, bar, palette[colors[i] % 6]);
        snprintf(num, sizeof num, "%.*f%s", decimals, vals[i], unit);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", left + (w > 0 ? w : 1) + 5, y + 15, num);
    }
    fputs("</svg></figure>\n", f);
}

/* A differing sample's cell: verdict, reason, output excerpt. */
static void html_verdict_cell(FILE *f, const report_column *c, size_t i)
{
    const sbx_eval_record *rec = sbx_eval_summary_record(c->sum, i);

    fprintf(f, "<td class=\"l\"><span class=\"verdict\">%s</span>", report_verdict_of(c, i));
    if (rec && sbx_eval_record_reason(rec)) {
        fputs("<br><span class=\"reason\">", f);
        esc(f, sbx_eval_record_reason(rec));
        fputs("</span>", f);
    }
    if (rec && sbx_eval_record_output(rec) && *sbx_eval_record_output(rec)) {
        fputs("<details><summary>output</summary><pre class=\"output\">", f);
        esc(f, sbx_eval_record_output(rec));
        fputs("</pre></details>", f);
    }
    fputs("</td>", f);
}

#define TASK_REASONS 5   /* non-passes listed per task, the rest counted */

/* One column's per-task table: n, c, pass@1, verdict counts and the
 * reasons of the samples that did not pass.  0 or ENOMEM. */
static int html_tasks(FILE *f, const report_column *col)
{
    const sbx_eval_summary *sum = col->sum;
    size_t nt = sbx_eval_summary_task_count(sum), ns = sbx_eval_summary_total(sum);
    size_t *counts = calloc(nt * SBX_VERDICT_COUNT + 1, sizeof *counts);
    size_t *first = calloc(nt + 1, sizeof *first), *next = calloc(ns + 1, sizeof *next);
    bool used[SBX_VERDICT_COUNT] = { false };

    if (!counts || !first || !next) {
        free(counts);
        free(first);
        free(next);
        return ENOMEM;
    }
    /* per task, its samples in order as a list: first[t], next[i] (+1, 0 ends) */
    for (size_t i = ns; i-- > 0;) {
        size_t t = sbx_eval_summary_sample_task(sum, i);
        const sbx_eval_record *rec = sbx_eval_summary_record(sum, i);
        if (t >= nt)
            continue;
        next[i] = first[t];
        first[t] = i + 1;
        if (rec) {
            counts[t * SBX_VERDICT_COUNT + sbx_eval_record_verdict(rec)]++;
            used[sbx_eval_record_verdict(rec)] = true;
        }
    }
    used[SBX_VERDICT_PASSED] = true;
    fputs("<details class=\"tasks\"><summary>Per task: ", f);
    esc(f, col->label);
    fprintf(f, " (%zu tasks)</summary>\n<table class=\"tasks\" data-column=\"", nt);
    esc(f, col->label);
    fputs("\"><tr><th>task</th><th>n</th><th>c</th><th>pass@1</th>", f);
    for (int v = 0; v < SBX_VERDICT_COUNT; v++)
        if (used[v])
            fprintf(f, "<th>%s</th>", sbx_eval_verdict_name((sbx_eval_verdict)v));
    fputs("<th>why not passed</th></tr>\n", f);
    for (size_t t = 0; t < nt; t++) {
        size_t tn, tc, listed = 0, more = 0;
        double p1;
        sbx_eval_summary_task_counts(sum, t, &tn, &tc);
        p1 = sbx_eval_pass_at_k(tn, tc, 1);
        fputs("<tr><td class=\"l\">", f);
        esc(f, sbx_eval_summary_task_id(sum, t));
        fprintf(f, "</td><td>%zu</td><td>%zu</td>", tn, tc);
        if (p1 >= 0)
            fprintf(f, "<td>%.4f</td>", p1);
        else
            fputs("<td>n/a</td>", f);
        for (int v = 0; v < SBX_VERDICT_COUNT; v++)
            if (used[v])
                fprintf(f, "<td>%zu</td>", counts[t * SBX_VERDICT_COUNT + v]);
        fputs("<td class=\"l\">", f);
        for (size_t i = first[t]; i; i = next[i - 1]) {
            const sbx_eval_record *rec = sbx_eval_summary_record(sum, i - 1);
            if (!rec || sbx_eval_record_verdict(rec) == SBX_VERDICT_PASSED)
                continue;
            if (listed == TASK_REASONS) {
                more++;
                continue;
            }
            fprintf(f, "%s<span class=\"why\">sample %zu: %s", listed ? "<br>" : "", i - 1,
                    sbx_eval_verdict_name(sbx_eval_record_verdict(rec)));
            if (sbx_eval_record_reason(rec)) {
                fputs(": ", f);
                esc(f, sbx_eval_record_reason(rec));
            }
            fputs("</span>", f);
            listed++;
        }
        if (more)
            fprintf(f, "<br>and %zu more", more);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></details>\n", f);
    free(counts);
    free(first);
    free(next);
    return 0;
}

static int write_html(const sbx_eval_report *r, const unsigned *ks, size_t n_ks, FILE *f)
{
    size_t n = r->n_cols, nb = 0;
    const char **labels = calloc(n * (SBX_VERDICT_COUNT + 5) + 1, sizeof *labels);
    char **owned = calloc(n * (SBX_VERDICT_COUNT + 5) + 1, sizeof *owned);
    double *vals = calloc(n * (SBX_VERDICT_COUNT + 5) + 1, sizeof *vals);
    int *colors = calloc(n * (SBX_VERDICT_COUNT + 5) + 1, sizeof *colors);
    static const double pcts[] = { 50, 90, 95, 99, 100 };
    size_t n_owned = 0;
    size_t n_diffs = sbx_eval_report_diff_count(r);
    int rc = 0;

    if (!labels || !owned || !vals || !colors) {
        rc = ENOMEM;
        goto out;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>PolySandbox comparison</title>\n"
          "<style>body{font-family:sans-serif;margin:2em;max-width:60em}"
          "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.25em .6em}"
          "td{text-align:right}td.l{text-align:left}figure{margin:1.5em 0}"
          "figcaption{font-weight:bold;margin-bottom:.3em}</style>\n</head><body>\n"
          "<h1>PolySandbox comparison</h1>\n", f);
    meta_html(r, f);
    fprintf(f, "<p>%zu samples.</p>\n", sbx_eval_samples_count(r->samples));
    report_column_notes(f, r, &html_para, esc);

    /* the Markdown table's figures, as an HTML table */
    fputs("<table><tr><th></th>", f);
    for (size_t c = 0; c < n; c++) {
        fputs("<th>", f);
        esc(f, r->cols[c].label);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int v = 0; v < SBX_VERDICT_COUNT; v++) {
        fprintf(f, "<tr><td class=\"l\">%s</td>", sbx_eval_verdict_name((sbx_eval_verdict)v));
        for (size_t c = 0; c < n; c++)
            fprintf(f, "<td>%zu</td>", sbx_eval_summary_count(r->cols[c].sum, (sbx_eval_verdict)v));
        fputs("</tr>\n", f);
    }
    report_passk_rows(f, r, ks, n_ks, &html_row);
    report_latency_rows(f, r, &html_fig_row);
    report_usage_rows(f, r, &html_fig_row);
    fputs("</table>\n<p>pass@k: the mean over tasks of the unbiased estimator; in brackets "
          "its 95% interval by a percentile bootstrap over tasks (2000 resamples, fixed "
          "seed 20261127).</p>\n", f);
    if (report_any_fallback(r)) {
        fputs("<h2>Attempts per provider</h2>\n<p>Each attempt counts on the provider that "
              "ran it: its time, its cost and, when its sandbox failed, a sandbox "
              "error.</p>\n<table><tr><th>column</th><th>provider</th><th>samples</th>"
              "<th>sandboxes</th><th>sandbox errors</th><th>sandbox time</th>"
              "<th>cost</th></tr>\n", f);
        report_attempt_rows(f, r, &html_fig_row, esc);
        fputs("</table>\n", f);
    }

    /* charts */
    for (size_t c = 0; c < n; c++) {
        labels[c] = r->cols[c].label;
        vals[c] = 100.0 * report_pass_rate(r->cols[c].sum);
        colors[c] = (int)c;
    }
    svg_bars(f, "Pass rate (% of graded samples)", labels, vals, colors, n, 1, "%", 100.0,
             false);
    nb = 0;
    for (size_t c = 0; c < n; c++)
        for (size_t p = 0; p < sizeof pcts / sizeof *pcts; p++) {
            char *l = malloc(strlen(r->cols[c].label) + 8);
            if (!l) {
                rc = ENOMEM;
                goto out;
            }
            if (pcts[p] < 100)
                sprintf(l, "%s p%.0f", r->cols[c].label, pcts[p]);
            else
                sprintf(l, "%s max", r->cols[c].label);
            owned[n_owned++] = l;
            labels[nb] = l;
            vals[nb] = (double)sbx_eval_summary_latency(r->cols[c].sum, pcts[p]) / 1e6;
            colors[nb++] = (int)c;
        }
    svg_bars(f, "Latency per sample, ms (p50, p90, p95, p99, max; log scale)", labels, vals, colors, nb,
             1, " ms", 0, true);
    for (size_t c = 0; c < n; c++) {
        labels[c] = r->cols[c].label;
        vals[c] = sbx_eval_summary_throughput(r->cols[c].sum);
        colors[c] = (int)c;
    }
    svg_bars(f, "Throughput, samples per second", labels, vals, colors, n, 1, "/s", 0, false);
    nb = 0;
    for (size_t c = 0; c < n; c++)
        for (int v = 1; v < SBX_VERDICT_COUNT; v++) {
            size_t cnt = sbx_eval_summary_count(r->cols[c].sum, (sbx_eval_verdict)v);
            char *l;
            if (!cnt)
                continue;
            if (!(l = malloc(strlen(r->cols[c].label) + 32))) {
                rc = ENOMEM;
                goto out;
            }
            sprintf(l, "%s %s", r->cols[c].label, sbx_eval_verdict_name((sbx_eval_verdict)v));
            owned[n_owned++] = l;
            labels[nb] = l;
            vals[nb] = (double)cnt;
            colors[nb++] = (int)c;
        }
    if (nb)
        svg_bars(f, "Errors and failures (samples, by verdict)", labels, vals, colors, nb, 0, "", 0,
                 false);
    else
        fputs("<p>No sample failed or erred on any provider.</p>\n", f);

    if (n_diffs == 0) {
        fprintf(f, "<p>All %zu samples got the same verdict on every provider.</p>\n",
                sbx_eval_samples_count(r->samples));
    } else {
        fprintf(f, "<h2>Verdicts that differ (%zu)</h2>\n<table><tr><th>sample</th><th>task</th>",
                n_diffs);
        for (size_t c = 0; c < n; c++) {
            fputs("<th>", f);
            esc(f, r->cols[c].label);
            fputs("</th>", f);
        }
        fputs("</tr>\n", f);
        report_diff_rows(f, r, &html_diff_row, esc, html_verdict_cell);
        fputs("</table>\n", f);
    }
    for (size_t c = 0; c < n && rc == 0; c++)
        rc = html_tasks(f, &r->cols[c]);
    fputs("</body></html>\n", f);
    if (ferror(f))
        rc = EIO;
out:
    for (size_t i = 0; owned && i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(labels);
    free(vals);
    free(colors);
    return rc;
}

char *sbx_eval_report_to_html(const sbx_eval_report *r, const unsigned *ks, size_t n_ks)
{
    return report_text(r, ks, n_ks, write_html);
}
