/* core/cli/eval-meta.h - what a report says about the run it reports:
 * tool version, date, host, inputs with their digests, limits, jobs */
#ifndef POLYSANDBOX_EVAL_META_H
#define POLYSANDBOX_EVAL_META_H

#include <stdio.h>

#include "eval-cli.h"


typedef struct cli_eval_input {
    const char *path;             /* (borrowed) or NULL (canonical samples) */
    long long size;               /* bytes, -1 when unreadable */
    char sha256[65];              /* hex, "" when unreadable */
} cli_eval_input;

typedef struct cli_eval_meta {
    const char *version;          /* sbx_version() */
    char date[32];                /* UTC, ISO 8601: 2026-11-27T10:00:00Z */
    char host[256];               /* uname nodename */
    char kernel[256];             /* uname sysname release machine */
    cli_eval_input dataset, samples;
    unsigned jobs;                /* workers per provider */
    const cli_eval_args *args;    /* the limits */
    const char *const *providers; /* (borrowed) NULL-terminated, or NULL */
    bool rebuilt;                 /* from results files: limits and jobs unknown */
} cli_eval_meta;

/* Fill @m for a report of @a's inputs run with @jobs workers (0: the
 * cores).  The files are read whole for their digests; one that is no
 * regular file or cannot be read gets size -1 and no digest (a report
 * is not refused for that). */
void cli_eval_meta_fill(cli_eval_meta *m, const cli_eval_args *a, unsigned jobs);
/* @m as Markdown lines (the HTML page's are the library's). */
void cli_eval_meta_markdown(const cli_eval_meta *m, FILE *f);

#endif
