/* core/cli/eval-report.h - the side-by-side report of polysandbox compare */
#ifndef POLYSANDBOX_EVAL_REPORT_H
#define POLYSANDBOX_EVAL_REPORT_H

#include "eval-cli.h"
#include "eval-meta.h"

/* One provider's column. */
typedef struct cli_column {
    const char *label;            /* as given to --providers */
    char provider[256];           /* the label without its "#N" */
    const char **settings;        /* its --set-for SECTION.KEY=VALUE, NULL-terminated */
    size_t n_settings;
    const char *results;          /* its results file, or NULL */
    sbx_eval_summary *sum;
} cli_column;

typedef struct cli_report {
    const cli_eval_args *args;
    const sbx_eval_samples *samples;
    const cli_column *cols;
    size_t n_cols;
    size_t *diffs;                /* sample indexes whose verdicts differ */
    size_t n_diffs;
    const char *prefix;           /* where the .md and .html files go */
    const cli_eval_meta *meta;
    const sbx_eval_report *lib;   /* the same columns, in the library's report */
} cli_report;

/* Fill r->diffs (owned: free()) from r->lib; false on ENOMEM. */
bool cli_report_find_diffs(cli_report *r);
/* Write the report as Markdown.  0, or an errno value. */
int cli_report_markdown(const cli_report *r, FILE *f);
/* Write r->lib as the library's HTML page.  0, or an errno value. */
int cli_report_html(const cli_report *r, FILE *f);

#endif
