/* core/cli/eval-report.h - the side-by-side report of polysandbox compare */
#ifndef POLYSANDBOX_EVAL_REPORT_H
#define POLYSANDBOX_EVAL_REPORT_H

#include "eval-cli.h"

/* One provider's column. */
typedef struct cli_column {
    const char *label;            /* as given to --providers */
    sbx_eval_summary *sum;
} cli_column;

typedef struct cli_report {
    const cli_eval_args *args;
    const sbx_eval_samples *samples;
    const cli_column *cols;
    size_t n_cols;
    size_t *diffs;                /* sample indexes whose verdicts differ */
    size_t n_diffs;
} cli_report;

/* Fill r->diffs (owned: free()); false on ENOMEM. */
bool cli_report_find_diffs(cli_report *r);
/* Write the report as Markdown / as one self-contained HTML page with
 * inline SVG charts.  0, or an errno value. */
int cli_report_markdown(const cli_report *r, FILE *f);
int cli_report_html(const cli_report *r, FILE *f);

#endif
