/* core/cli/eval-cli.h - shared parts of polysandbox eval and compare */
#ifndef POLYSANDBOX_EVAL_CLI_H
#define POLYSANDBOX_EVAL_CLI_H

#include <stdio.h>

#include <polysandbox/eval.h>

#include "cli.h"

#define CLI_EVAL_MAX_K 16

/* What eval and compare both take. */
typedef struct cli_eval_args {
    const char *cmd;              /* "eval" or "compare" */
    const char *dataset;
    const char *samples;          /* NULL with --canonical */
    bool canonical;
    sbx_eval_format format;
    unsigned ks[CLI_EVAL_MAX_K];
    size_t n_ks;
    unsigned jobs;                /* 0: cores */
    unsigned retries;
    bool retries_set;
    uint64_t timeout_ns;          /* 0: default */
    uint64_t memory;              /* 0: default */
    bool json;
    /* --max-input, --max-line, --max-records as "eval.KEY=VALUE" */
    char caps[3][48];
    bool force;                   /* eval --force: replace existing results */
    bool isolated;                /* --isolated-check */
    bool allow_partial;           /* --allow-partial */
    bool all_tests;               /* --all-tests */
    bool exec_per_test;           /* --exec-per-test */
    uint64_t min_ns;              /* --min-time, 0: default */
    double factor;                /* --time-factor, < 0: default */
    uint64_t compile_ns;          /* --compile-timeout, 0: default */
    uint64_t ep_min_ns;           /* --evalplus-min-time, 0: default */
    double ep_factor;             /* --evalplus-time-factor, < 0: default */
} cli_eval_args;

/* Long option ids shared by the two commands' parsers. */
enum {
    CLI_EO_DATASET = 300, CLI_EO_SAMPLES, CLI_EO_CANONICAL, CLI_EO_FORMAT,
    CLI_EO_TIMEOUT, CLI_EO_MEMORY, CLI_EO_RETRIES, CLI_EO_JSON,
    CLI_EO_MAX_INPUT, CLI_EO_MAX_LINE, CLI_EO_MAX_RECORDS, CLI_EO_ISOLATED,
    CLI_EO_ALLOW_PARTIAL, CLI_EO_ALL_TESTS, CLI_EO_MIN_TIME, CLI_EO_TIME_FACTOR,
    CLI_EO_COMPILE_TIMEOUT, CLI_EO_EP_MIN_TIME, CLI_EO_EP_TIME_FACTOR, CLI_EO_EXEC_PER_TEST
};
#define CLI_EVAL_LONGOPTS \
    { "dataset", required_argument, NULL, CLI_EO_DATASET }, \
    { "samples", required_argument, NULL, CLI_EO_SAMPLES }, \
    { "canonical", no_argument, NULL, CLI_EO_CANONICAL }, \
    { "format", required_argument, NULL, CLI_EO_FORMAT }, \
    { "timeout", required_argument, NULL, CLI_EO_TIMEOUT }, \
    { "memory", required_argument, NULL, CLI_EO_MEMORY }, \
    { "retries", required_argument, NULL, CLI_EO_RETRIES }, \
    { "json", no_argument, NULL, CLI_EO_JSON }, \
    { "max-input", required_argument, NULL, CLI_EO_MAX_INPUT }, \
    { "max-line", required_argument, NULL, CLI_EO_MAX_LINE }, \
    { "max-records", required_argument, NULL, CLI_EO_MAX_RECORDS }, \
    { "isolated-check", no_argument, NULL, CLI_EO_ISOLATED }, \
    { "allow-partial", no_argument, NULL, CLI_EO_ALLOW_PARTIAL }, \
    { "all-tests", no_argument, NULL, CLI_EO_ALL_TESTS }, \
    { "exec-per-test", no_argument, NULL, CLI_EO_EXEC_PER_TEST }, \
    { "min-time", required_argument, NULL, CLI_EO_MIN_TIME }, \
    { "time-factor", required_argument, NULL, CLI_EO_TIME_FACTOR }, \
    { "compile-timeout", required_argument, NULL, CLI_EO_COMPILE_TIMEOUT }, \
    { "evalplus-min-time", required_argument, NULL, CLI_EO_EP_MIN_TIME }, \
    { "evalplus-time-factor", required_argument, NULL, CLI_EO_EP_TIME_FACTOR }, \
    { "jobs", required_argument, NULL, 'j' }

/* Help lines of the shared options. */
extern const char cli_eval_help_common[];

void cli_eval_args_init(cli_eval_args *a, const char *cmd);
/* Handle one shared option (getopt's @c and optarg).  Returns -1 when
 * handled, 0 when @c is not a shared option, else an exit status. */
int cli_eval_option(cli_eval_args *a, int c, const char *arg);
/* Check the parsed options together; -1 when fine, else an exit status.
 * Adds the input caps to @g's overrides (for the contexts made after). */
int cli_eval_check(cli_eval_args *a, cli_global *g);
/* The exit status when the file @out (a results file or report) is the
 * dataset's or the samples' (the same file, through links too), after
 * a message naming both; -1 when it is neither. */
int cli_eval_not_input(const cli_eval_args *a, const char *out, const char *what);
/* Load the dataset and samples; -1 when loaded, else an exit status
 * (after a message).  (transfer full) *ds and *s. */
int cli_eval_load(const cli_eval_args *a, sbx_ctx *ctx, sbx_eval_dataset **ds,
                  sbx_eval_samples **s);
/* Options for sbx_eval_run from @a; NULL after a message. */
sbx_eval_opts *cli_eval_opts(const cli_eval_args *a, const char *const *providers);
/* The exit status for a library error of an evaluation. */
int cli_eval_error(const sbx_ctx *ctx, int rc, const char *what);
/* Human summary of a run. */
void cli_eval_print_summary(FILE *f, const cli_eval_args *a, const sbx_eval_summary *sum,
                            unsigned jobs, const char *results);
/* "0.4321 [0.3012, 0.5544]": pass@k of @sum with its 95% bootstrap
 * interval (sbx_eval_summary_pass_at_k_ci) into @buf; false (and "n/a")
 * when not computable. */
bool cli_eval_pass_at_k(const sbx_eval_summary *sum, unsigned k, char *buf, size_t size);
/* Whether @sum grades EvalPlus samples (a base verdict and a base + extra
 * one); then cli_eval_pass_at_k is base + extra. */
bool cli_eval_has_base(const sbx_eval_summary *sum);
/* "12.3 ms" style duration of @ns into @buf. */
void cli_eval_ms(uint64_t ns, char *buf, size_t size);

/* ---- progress (eval-progress.c) ---- */

typedef struct cli_progress cli_progress;
/* A progress display on stderr: a bar on a terminal, a line per tenth
 * otherwise; nothing when @quiet.  @label prefixes it. */
cli_progress *cli_progress_new(const char *label, bool quiet);
/* The sbx_eval_record_cb to pass with the progress as ud. */
int cli_progress_cb(void *ud, const sbx_eval_record *rec, size_t done, size_t total,
                    size_t passed);
/* Finish the line and free. */
void cli_progress_free(cli_progress *p);

#endif /* POLYSANDBOX_EVAL_CLI_H */
