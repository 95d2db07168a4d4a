/* core/eval-report-int.h - a side-by-side report's parts, shared by its
 * JSON (eval-report.c) and its HTML (eval-report-html.c) */
#ifndef POLYSANDBOX_EVAL_REPORT_INT_H
#define POLYSANDBOX_EVAL_REPORT_INT_H

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

#endif
