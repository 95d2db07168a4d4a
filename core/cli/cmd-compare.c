/* core/cli/cmd-compare.c - polysandbox compare: the same evaluation on
 * several providers, one after the other, and a side-by-side report */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval-cli.h"

/* One provider's column. */
typedef struct cli_column {
    char *label;                  /* sbx_eval_report_label's (owned), or NULL:
                                   * the report names it (--from) */
    const char *provider;         /* the provider it runs on, "" unknown */
    const char **settings;        /* its --set-for SECTION.KEY=VALUE, NULL-terminated */
    size_t n_settings;
    const char *results;          /* its results file, or NULL */
    sbx_eval_summary *sum;
} cli_column;

static void compare_help(void)
{
    fputs(
"Usage: polysandbox compare --dataset FILE (--samples FILE | --canonical)\n"
"                           --providers P,P[,...] [OPTIONS]\n"
"       polysandbox compare --dataset FILE (--samples FILE | --canonical)\n"
"                           --from RESULTS,RESULTS[,...] [OPTIONS]\n"
"Run the same samples on each provider in turn and report them side by\n"
"side: the run's metadata, verdict counts, pass@k with 95% intervals,\n"
"latency, CPU, peak memory, cost (for a provider with a price table),\n"
"throughput, every sample whose verdict differs with each side's reason,\n"
"and a table per task.  The report is printed as Markdown and\n"
"written to PREFIX.md and PREFIX.html (one self-contained page with SVG\n"
"charts); each column's records go to PREFIX.LABEL.jsonl.  Each column\n"
"runs with a context of its own: the global -o values, then its --set-for\n"
"values.  With --from, nothing runs: the report is built from results\n"
"files of eval --out or of an earlier compare.\n"
"\n", stdout);
    fputs(cli_eval_help_common, stdout);
    fputs(
"      --providers LIST   the providers to compare, comma-separated (a name\n"
"                         may repeat: the columns are then NAME, NAME#2, ...)\n"
"      --from LIST        results files to report side by side instead of\n"
"                         running, comma-separated; a column is named after\n"
"                         the provider its records name\n"
"      --report PREFIX    where the report goes (default: compare)\n"
"      --set-for COLUMN:SECTION.KEY=VALUE\n"
"                         a configuration value for one column only, as\n"
"                         -o: e.g. docker:provider.docker.image=IMAGE or\n"
"                         local#2:limits.memory=1G (repeatable)\n"
"      --json             print the report as one JSON object instead of\n"
"                         Markdown (the files are written all the same)\n"
"\n"
"Exit status: 0 when every sample got the same verdict everywhere; 1 when\n"
"some differ (they are listed); 65 on a bad dataset or samples file;\n"
"2 on bad usage; 125 on other errors.\n",
        stdout);
}

enum { OPT_PROVIDERS = 500, OPT_REPORT, OPT_SET_FOR, OPT_FROM };

/* A context for column @c: the global -o values, then the column's. */
static sbx_ctx *column_ctx(const cli_global *g, const cli_column *c)
{
    cli_global cg = *g;
    const char **ov = calloc(g->n_overrides + c->n_settings + 1, sizeof *ov);
    sbx_ctx *ctx;

    if (!ov) {
        cli_err("out of memory");
        return NULL;
    }
    for (size_t i = 0; i < g->n_overrides; i++)
        ov[i] = g->overrides[i];
    cg.n_overrides = g->n_overrides;
    for (size_t i = 0; i < c->n_settings; i++)
        ov[cg.n_overrides++] = c->settings[i];
    cg.overrides = ov;
    ctx = cli_ctx_new(&cg);
    free(ov);
    return ctx;
}

/* Give "COLUMN:SECTION.KEY=VALUE" to its column.  -1 when done, else an
 * exit status after a message. */
static int add_set_for(const char *cmd, const char *arg, cli_column *cols, size_t n_cols)
{
    const char *colon = strchr(arg, ':'), *v, *eq, *dot;
    cli_column *c = NULL;

    if (!colon || colon == arg)
        return cli_usage_error(cmd, "invalid value '%s' for --set-for: expected "
                               "COLUMN:SECTION.KEY=VALUE", arg);
    for (size_t i = 0; i < n_cols && !c; i++)
        if (strlen(cols[i].label) == (size_t)(colon - arg) &&
            !strncmp(cols[i].label, arg, (size_t)(colon - arg)))
            c = &cols[i];
    if (!c)
        return cli_usage_error(cmd, "invalid value '%s' for --set-for: '%.*s' is not one of "
                               "the columns of --providers (a repeated name is NAME#2, ...)",
                               arg, (int)(colon - arg), arg);
    v = colon + 1;
    eq = strchr(v, '=');
    dot = strchr(v, '.');
    if (!eq || !dot || dot > eq || dot == v || dot + 1 == eq)
        return cli_usage_error(cmd, "invalid value '%s' for --set-for: expected "
                               "COLUMN:SECTION.KEY=VALUE", arg);
    const char **ns = realloc(c->settings, (c->n_settings + 2) * sizeof *ns);
    if (!ns) {
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    ns[c->n_settings++] = v;
    ns[c->n_settings] = NULL;
    c->settings = ns;
    return -1;
}

static int fill_report(FILE *f, void *ud)
{
    return fputs(ud, f) == EOF || ferror(f) ? EIO : 0;
}

/* PREFIX.EXT holding @text, whole or not at all (checked before the run
 * not to be the dataset or the samples). */
static int write_report(const char *text, const char *prefix, const char *ext)
{
    size_t n = strlen(prefix) + strlen(ext) + 1;
    char *path = malloc(n);
    int e;

    if (!path) {
        cli_err("out of memory");
        return -1;
    }
    snprintf(path, n, "%s%s", prefix, ext);
    if ((e = cli_write_file(path, fill_report, (void *)text)) != 0)
        cli_err("compare: cannot write %s: %s", path, strerror(e));
    free(path);
    return e ? -1 : 0;
}

/* The library's report of @cols (its Markdown, HTML and JSON are the
 * report's, and so are the labels of columns without one).  NULL after
 * a message. */
static sbx_eval_report *lib_report(const cli_eval_args *a, const sbx_eval_samples *s,
                                   const cli_column *cols, size_t n_cols, const char *prefix,
                                   bool rebuilt)
{
    sbx_eval_report *lr = NULL;
    sbx_eval_opts *o = NULL;
    int e = sbx_eval_report_new(s, a->dataset, a->canonical ? NULL : a->samples, &lr);

    for (size_t i = 0; e == SBX_OK && i < n_cols; i++)
        e = sbx_eval_report_add(lr, cols[i].label, cols[i].provider, cols[i].results,
                                cols[i].settings, cols[i].sum);
    if (e == SBX_OK)
        e = sbx_eval_report_set_files(lr, prefix);
    /* the limits that applied, as the columns' options had them */
    if (e == SBX_OK && !rebuilt) {
        if (!(o = cli_eval_opts(a, NULL))) {
            sbx_eval_report_free(lr);
            return NULL;
        }
        e = sbx_eval_report_set_opts(lr, o);
        sbx_eval_opts_free(o);
    }
    if (e != SBX_OK) {
        cli_err("compare: cannot build the report (%s)", sbx_strerror(e));
        sbx_eval_report_free(lr);
        return NULL;
    }
    return lr;
}

/* Write PREFIX.md and PREFIX.html and print the report (Markdown, or
 * JSON with --json); the exit status. */
static int report(const cli_global *g, const cli_eval_args *a, const sbx_eval_samples *s,
                  const cli_column *cols, size_t n_cols, const char *prefix, bool rebuilt)
{
    sbx_eval_report *lr = lib_report(a, s, cols, n_cols, prefix, rebuilt);
    char *md = NULL, *html = NULL, *json = NULL;
    int rc = CLI_EXIT_ERROR;

    if (!lr)
        return rc;
    if (!(md = sbx_eval_report_to_markdown(lr, a->ks, a->n_ks)) ||
        !(html = sbx_eval_report_to_html(lr, a->ks, a->n_ks)) ||
        (a->json && !(json = sbx_eval_report_to_json(lr, a->ks, a->n_ks)))) {
        cli_err("out of memory");
        goto done;
    }
    if (write_report(md, prefix, ".md") || write_report(html, prefix, ".html"))
        goto done;
    if ((json ? fputs(json, stdout) == EOF || putchar('\n') == EOF : fputs(md, stdout) == EOF) ||
        fflush(stdout) != 0) {
        cli_err("compare: cannot write the report to the standard output");
        goto done;
    }
    if (!g->quiet)
        fprintf(stderr, "polysandbox: compare: wrote %s.md and %s.html\n", prefix, prefix);
    rc = sbx_eval_report_diff_count(lr) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
done:
    free(md);
    free(html);
    free(json);
    sbx_eval_report_free(lr);
    return rc;
}

/* The provider the records of @sum name (the first that names one), or
 * NULL. */
static const char *records_provider(const sbx_eval_summary *sum)
{
    for (size_t i = 0; i < sbx_eval_summary_total(sum); i++) {
        const sbx_eval_record *r = sbx_eval_summary_record(sum, i);
        if (r && *sbx_eval_record_provider(r))
            return sbx_eval_record_provider(r);
    }
    return NULL;
}

/* compare --from LIST: the report of results already recorded. */
static int compare_from(cli_global *g, const cli_eval_args *a, const char *list,
                        const char *prefix)
{
    char *names = strdup(list);
    cli_column *cols = NULL;
    size_t n_cols = 0;
    sbx_ctx *ctx = NULL;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *s = NULL;
    int rc = CLI_EXIT_ERROR;

    if (!names || !(cols = calloc(strlen(list) + 1, sizeof *cols))) {
        cli_err("out of memory");
        goto done;
    }
    for (char *tok = strtok(names, ","); tok; tok = strtok(NULL, ","))
        cols[n_cols++].results = tok;
    if (n_cols < 2) {
        rc = cli_usage_error(a->cmd, "invalid value '%s' for --from: name at least two "
                             "results files, separated by commas", list);
        goto done;
    }
    for (size_t i = 0; i < n_cols; i++) {
        char md[4096];
        snprintf(md, sizeof md, "%s.md", prefix);
        if (!strcmp(cols[i].results, md) ||
            (snprintf(md, sizeof md, "%s.html", prefix), !strcmp(cols[i].results, md))) {
            rc = cli_usage_error(a->cmd, "--report %s would overwrite the results file %s",
                                 prefix, cols[i].results);
            goto done;
        }
    }
    if (!(ctx = cli_ctx_new(g)))
        goto done;
    if ((rc = cli_eval_load(a, ctx, &ds, &s)) >= 0)
        goto done;
    for (size_t i = 0; i < n_cols; i++) {
        const char *prov;
        int e = sbx_eval_summary_load(ctx, ds, s, cols[i].results, &cols[i].sum);
        if (e != SBX_OK) {
            rc = cli_eval_error(ctx, e, "compare --from");
            goto done;
        }
        /* the report names a column after its provider (NAME#2 when
         * repeated), else after its file */
        prov = records_provider(cols[i].sum);
        cols[i].provider = prov ? prov : "";
    }
    rc = report(g, a, s, cols, n_cols, prefix, true);
done:
    for (size_t i = 0; cols && i < n_cols; i++)
        sbx_eval_summary_free(cols[i].sum);
    free(cols);
    free(names);
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    sbx_ctx_free(ctx);
    return rc;
}

int cli_cmd_compare(cli_global *g, int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_EVAL_LONGOPTS,
        { "providers", required_argument, NULL, OPT_PROVIDERS },
        { "report", required_argument, NULL, OPT_REPORT },
        { "set-for", required_argument, NULL, OPT_SET_FOR },
        { "from", required_argument, NULL, OPT_FROM },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    cli_eval_args a;
    const char *list = NULL, *prefix = "compare", *from = NULL;
    const char **set_for = NULL;
    size_t n_set_for = 0;
    char *names = NULL, **journals = NULL;
    const char **provs = NULL;
    cli_column *cols = NULL;
    size_t n_cols = 0;
    sbx_ctx *ctx = NULL;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *s = NULL;
    int c, rc = -1;

    cli_eval_args_init(&a, "compare");
    optind = 1;
    while (rc < 0 && (c = getopt_long(argc, argv, "+j:k:h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_PROVIDERS: list = optarg; break;
        case OPT_FROM: from = optarg; break;
        case OPT_REPORT: prefix = optarg; break;
        case OPT_SET_FOR: {
            const char **ns = realloc(set_for, (n_set_for + 1) * sizeof *ns);
            if (!ns) {
                cli_err("out of memory");
                rc = CLI_EXIT_ERROR;
                break;
            }
            set_for = ns;
            set_for[n_set_for++] = optarg;
            break;
        }
        case 'h': compare_help(); free(set_for); return CLI_EXIT_OK;
        case '?': free(set_for); return cli_bad_option(a.cmd);
        default:
            rc = cli_eval_option(&a, c, optarg);
            if (rc == 0)
                rc = cli_bad_option(a.cmd);
        }
    }
    if (rc < 0 && optind < argc)
        rc = cli_usage_error(a.cmd, "unexpected argument '%s'", argv[optind]);
    if (rc < 0)
        rc = cli_eval_check(&a, g);
    if (rc < 0 && list && from)
        rc = cli_usage_error(a.cmd, "--providers and --from exclude each other: run, or "
                             "report results already recorded");
    if (rc < 0 && from && n_set_for)
        rc = cli_usage_error(a.cmd, "--set-for needs --providers: nothing runs with --from");
    if (rc < 0 && !list && !from)
        rc = cli_usage_error(a.cmd, "missing --providers P,P (or --from RESULTS,RESULTS)");
    if (rc < 0 && !*prefix)
        rc = cli_usage_error(a.cmd, "--report needs a file name prefix");
    if (rc < 0) {
        /* before anything runs: the report must not replace an input */
        char *md = malloc(strlen(prefix) + 6);
        if (!md) {
            cli_err("out of memory");
            rc = CLI_EXIT_ERROR;
        } else {
            sprintf(md, "%s.md", prefix);
            rc = cli_eval_not_input(&a, md, "--report");
            sprintf(md, "%s.html", prefix);
            if (rc < 0)
                rc = cli_eval_not_input(&a, md, "--report");
            free(md);
        }
    }
    if (rc >= 0) {
        free(set_for);
        return rc;
    }
    if (from) {
        rc = compare_from(g, &a, from, prefix);
        free(set_for);
        return rc;
    }

    rc = CLI_EXIT_ERROR;
    if (!(names = strdup(list)) || !(cols = calloc(strlen(list) + 1, sizeof *cols)) ||
        !(provs = calloc(strlen(list) + 1, sizeof *provs))) {
        cli_err("out of memory");
        goto done;
    }
    /* the columns' labels, as the report names them (NAME#2 for a
     * repeated provider), needed before anything runs: --set-for and
     * the results files name them */
    for (char *tok = strtok(names, ","); tok; tok = strtok(NULL, ","))
        provs[n_cols++] = tok;
    for (size_t i = 0; i < n_cols; i++) {
        cols[i].provider = provs[i];
        if (!(cols[i].label = sbx_eval_report_label(provs, i))) {
            cli_err("out of memory");
            goto done;
        }
    }
    /* each column's records, kept so that a report can be rebuilt
     * (--from) and two runs diffed; checked before anything runs */
    if (!(journals = calloc(n_cols + 1, sizeof *journals))) {
        cli_err("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_cols; i++) {
        if (asprintf(&journals[i], "%s.%s.jsonl", prefix, cols[i].label) < 0) {
            journals[i] = NULL;
            cli_err("out of memory");
            goto done;
        }
        cols[i].results = journals[i];
        if ((rc = cli_eval_not_input(&a, journals[i], "--report")) >= 0)
            goto done;
        rc = CLI_EXIT_ERROR;
    }
    if (n_cols < 2) {
        rc = cli_usage_error(a.cmd, "invalid value '%s' for --providers: name at least two "
                             "providers, separated by commas", list);
        goto done;
    }
    for (size_t i = 0; i < n_set_for; i++)
        if ((rc = add_set_for(a.cmd, set_for[i], cols, n_cols)) >= 0)
            goto done;
    rc = CLI_EXIT_ERROR;
    g->pools = true;   /* long enough for warm pools to pay off */
    /* Every column's configuration and provider is checked before
     * anything runs; its context lives only while it runs, so that one
     * column's warm pools do not hold sandboxes during the next's. */
    for (size_t i = 0; i < n_cols; i++) {
        sbx_ctx *cc = column_ctx(g, &cols[i]);
        bool ok = cc && cli_provider_ok(cc, cols[i].provider);
        if (ok && i == 0) {
            ctx = cc;     /* loads the dataset */
            continue;
        }
        sbx_ctx_free(cc);
        if (!ok)
            goto done;
    }
    if ((rc = cli_eval_load(&a, ctx, &ds, &s)) >= 0)
        goto done;
    rc = CLI_EXIT_ERROR;
    sbx_ctx_free(ctx);
    ctx = NULL;
    /* One provider after the other, so that their figures do not share
     * the machine. */
    for (size_t i = 0; i < n_cols; i++) {
        char label[300];
        const char *pv[2] = { cols[i].provider, NULL };
        sbx_eval_opts *o;
        cli_progress *prog;
        int e;
        snprintf(label, sizeof label, "compare %s", cols[i].label);
        if (!(ctx = column_ctx(g, &cols[i])) || !(o = cli_eval_opts(&a, pv)))
            goto done;
        if (sbx_eval_opts_set_journal(o, cols[i].results, false) != SBX_OK) {
            cli_err("out of memory");
            sbx_eval_opts_free(o);
            goto done;
        }
        prog = cli_progress_new(label, g->quiet);
        sbx_eval_opts_set_callback(o, cli_progress_cb, prog);
        e = sbx_eval_run(ctx, ds, s, o, &cols[i].sum);
        cli_progress_free(prog);
        sbx_eval_opts_free(o);
        if (e != SBX_OK) {
            rc = cli_eval_error(ctx, e, "compare");
            goto done;
        }
        sbx_ctx_free(ctx);
        ctx = NULL;
    }
    rc = report(g, &a, s, cols, n_cols, prefix, false);
done:
    for (size_t i = 0; cols && i < n_cols; i++) {
        sbx_eval_summary_free(cols[i].sum);
        free(cols[i].settings);
        free(cols[i].label);
        if (journals)
            free(journals[i]);
    }
    free(journals);
    free(provs);
    free(set_for);
    free(cols);
    free(names);
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    sbx_ctx_free(ctx);
    return rc;
}
