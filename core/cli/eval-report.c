/* core/cli/eval-report.c - compare's report as a Markdown page (the HTML
 * page is the library's: sbx_eval_report_to_html) */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval-report.h"

bool cli_report_find_diffs(cli_report *r)
{
    size_t n = sbx_eval_samples_count(r->samples);

    r->n_diffs = 0;
    if (!(r->diffs = calloc(n + 1, sizeof *r->diffs)))
        return false;
    for (size_t i = 0; i < n; i++)
        if (sbx_eval_report_differs(r->lib, i))
            r->diffs[r->n_diffs++] = i;
    return true;
}

static const char *verdict_of(const cli_column *c, size_t i)
{
    const sbx_eval_record *rec = sbx_eval_summary_record(c->sum, i);

    return rec ? sbx_eval_verdict_name(sbx_eval_record_verdict(rec)) : "not run";
}

/* Whether a column grades EvalPlus samples (base and base + extra). */
static bool any_base(const cli_report *r)
{
    for (size_t c = 0; c < r->n_cols; c++)
        if (cli_eval_has_base(r->cols[c].sum))
            return true;
    return false;
}

static double pass_rate(const sbx_eval_summary *s)
{
    size_t graded = sbx_eval_summary_graded(s);

    return graded ? (double)sbx_eval_summary_count(s, SBX_VERDICT_PASSED) / (double)graded : 0.0;
}

/* ---- Markdown ------------------------------------------------------------------ */

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

static void md_row_label(FILE *f, const char *label)
{
    fprintf(f, "| %s |", label);
}

/* One row of the table: @label, then @fmt's pass@@k of each column. */
static void passk_row(FILE *f, const cli_report *r, const char *label, unsigned k,
                      bool (*fmt)(const sbx_eval_summary *, unsigned, char *, size_t))
{
    md_row_label(f, label);
    for (size_t c = 0; c < r->n_cols; c++) {
        char v[96];
        fmt(r->cols[c].sum, k, v, sizeof v);
        fprintf(f, " %s |", v);
    }
    fputc('\n', f);
}

int cli_report_markdown(const cli_report *r, FILE *f)
{
    const cli_eval_args *a = r->args;
    bool base = any_base(r);
    char buf[64];

    fputs("# PolySandbox comparison\n\n", f);
    if (r->meta)
        cli_eval_meta_markdown(r->meta, f);
    fprintf(f, "%zu samples.\n\n", sbx_eval_samples_count(r->samples));
    for (size_t c = 0; c < r->n_cols; c++) {
        if (!r->cols[c].results)
            continue;
        fputs("Results of ", f);
        md_cell(f, r->cols[c].label);
        fputs(": `", f);
        md_cell(f, r->cols[c].results);
        fputs("`.\n\n", f);
    }
    for (size_t c = 0; c < r->n_cols; c++) {
        if (!r->cols[c].n_settings)
            continue;
        fputs("Settings of ", f);
        md_cell(f, r->cols[c].label);
        fputc(':', f);
        for (size_t i = 0; i < r->cols[c].n_settings; i++) {
            fputs(" `", f);
            md_cell(f, r->cols[c].settings[i]);
            fputc('`', f);
        }
        fputs(".\n\n", f);
    }
    fputs("| |", f);
    for (size_t c = 0; c < r->n_cols; c++) {
        fputc(' ', f);
        md_cell(f, r->cols[c].label);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (size_t c = 0; c < r->n_cols; c++)
        fputs("---:|", f);
    fputc('\n', f);
    for (int v = 0; v < SBX_VERDICT_COUNT; v++) {
        bool any = v == SBX_VERDICT_PASSED;
        for (size_t c = 0; c < r->n_cols; c++)
            any = any || sbx_eval_summary_count(r->cols[c].sum, (sbx_eval_verdict)v);
        if (!any)
            continue;
        md_row_label(f, sbx_eval_verdict_name((sbx_eval_verdict)v));
        for (size_t c = 0; c < r->n_cols; c++)
            fprintf(f, " %zu |", sbx_eval_summary_count(r->cols[c].sum, (sbx_eval_verdict)v));
        fputc('\n', f);
    }
    md_row_label(f, "pass rate");
    for (size_t c = 0; c < r->n_cols; c++)
        fprintf(f, " %.1f%% |", 100.0 * pass_rate(r->cols[c].sum));
    fputc('\n', f);
    for (size_t k = 0; k < a->n_ks; k++) {
        if (base) {     /* EvalPlus: "base", then pass@k is "base + extra" */
            snprintf(buf, sizeof buf, "pass@%u base", a->ks[k]);
            passk_row(f, r, buf, a->ks[k], cli_eval_pass_at_k_base);
        }
        snprintf(buf, sizeof buf, base ? "pass@%u base + extra" : "pass@%u", a->ks[k]);
        passk_row(f, r, buf, a->ks[k], cli_eval_pass_at_k);
    }
    static const double pcts[] = { 50, 95, 99 };
    for (size_t p = 0; p < 3; p++) {
        snprintf(buf, sizeof buf, "latency p%.0f", pcts[p]);
        md_row_label(f, buf);
        for (size_t c = 0; c < r->n_cols; c++) {
            cli_eval_ms(sbx_eval_summary_latency(r->cols[c].sum, pcts[p]), buf, sizeof buf);
            fprintf(f, " %s |", buf);
        }
        fputc('\n', f);
    }
    md_row_label(f, "throughput");
    for (size_t c = 0; c < r->n_cols; c++)
        fprintf(f, " %.1f/s |", sbx_eval_summary_throughput(r->cols[c].sum));
    fputc('\n', f);
    md_row_label(f, "wall time");
    for (size_t c = 0; c < r->n_cols; c++) {
        cli_eval_ms(sbx_eval_summary_wall_ns(r->cols[c].sum), buf, sizeof buf);
        fprintf(f, " %s |", buf);
    }
    fputc('\n', f);
    if (r->n_diffs == 0) {
        fprintf(f, "\nAll %zu samples got the same verdict on every provider.\n",
                sbx_eval_samples_count(r->samples));
    } else {
        fprintf(f, "\n## Verdicts that differ (%zu of %zu samples)\n\n| sample | task |",
                r->n_diffs, sbx_eval_samples_count(r->samples));
        for (size_t c = 0; c < r->n_cols; c++) {
            fputc(' ', f);
            md_cell(f, r->cols[c].label);
            fputs(" |", f);
        }
        fputs("\n|---:|---|", f);
        for (size_t c = 0; c < r->n_cols; c++)
            fputs("---|", f);
        fputc('\n', f);
        for (size_t d = 0; d < r->n_diffs; d++) {
            size_t i = r->diffs[d];
            const sbx_eval_record *rec = sbx_eval_summary_record(r->cols[0].sum, i);
            fprintf(f, "| %zu | ", i);
            md_cell(f, rec ? sbx_eval_record_task_id(rec) : "?");
            fputs(" |", f);
            for (size_t c = 0; c < r->n_cols; c++) {
                const sbx_eval_record *cr = sbx_eval_summary_record(r->cols[c].sum, i);
                fprintf(f, " %s", verdict_of(&r->cols[c], i));
                if (cr && sbx_eval_record_reason(cr)) {
                    fputs(": ", f);
                    md_cell(f, sbx_eval_record_reason(cr));
                }
                fputs(" |", f);
            }
            fputc('\n', f);
        }
    }
    if (a->n_ks)
        fputs("\npass@k: the mean over tasks of the unbiased estimator, [95% interval] by "
              "a bootstrap over tasks (2000 resamples, seed 20261127).\n", f);
    return ferror(f) ? EIO : 0;
}

int cli_report_html(const cli_report *r, FILE *f)
{
    char *html = sbx_eval_report_to_html(r->lib, r->args->ks, r->args->n_ks);
    int rc = 0;

    if (!html)
        return errno ? errno : ENOMEM;
    if (fputs(html, f) == EOF || ferror(f))
        rc = EIO;
    free(html);
    return rc;
}
