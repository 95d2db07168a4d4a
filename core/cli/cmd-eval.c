/* core/cli/cmd-eval.c - polysandbox eval: score completions on a dataset */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "eval-cli.h"

static void eval_help(void)
{
    fputs(
"Usage: polysandbox eval --dataset FILE --samples FILE [OPTIONS]\n"
"       polysandbox eval --dataset FILE --canonical [OPTIONS]\n"
"Run every sample's program in a sandbox and grade it: verdicts, pass@k,\n"
"latency, CPU, peak memory, throughput and cost (from a provider's price\n"
"table: price_per_second, price_per_sandbox).  Each result is appended to the results file as\n"
"its sample finishes, so a killed run can be continued with --resume.\n"
"\n", stdout);
    fputs(cli_eval_help_common, stdout);
    fputs(
"  -p, --provider P[,P...] providers to use; a sample whose sandbox keeps\n"
"                         failing on one is retried on the next\n"
"      --fallback P[,P...] more providers after those (or after the default\n"
"                         one), e.g. --provider e2b --fallback modal,daytona\n"
"\n"
"Results:\n"
"      --out FILE         the results JSONL (default: the samples file's name\n"
"                         and _results.jsonl, e.g. s.jsonl_results.jsonl;\n"
"                         none for --canonical)\n"
"      --json             print the summary as one JSON object\n"
"      --resume           keep the results in --out, run only what is missing\n"
"      --force            replace an existing results file (else refused)\n"
"      --show-program N   print the program of sample N (0-based) and exit\n"
"\n"
"A sample passes only when its program exits 0 after every test ran: see\n"
"VERDICTS in polysandbox-eval(1).  Progress goes to stderr (-q: none).\n"
"Exit status: 0 when every sample was graded; 1 when some ended in sandbox\n"
"errors (listed apart); 65 on a bad dataset, samples or results file;\n"
"2 on bad usage; 125 on other errors.\n",
        stdout);
}

enum { OPT_PROVIDER = 400, OPT_OUT, OPT_RESUME, OPT_SHOW, OPT_FORCE, OPT_FALLBACK };

/* The first SIGINT, SIGTERM or SIGHUP (the terminal hung up) stops
 * taking new samples (cli_interrupt_catch): the running ones finish and
 * are written, the summary is printed; a second one kills. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = sig;
}

static int eval_cb(void *ud, const sbx_eval_record *rec, size_t done, size_t total,
                   size_t passed)
{
    cli_progress_cb(ud, rec, done, total, passed);
    return interrupted != 0;
}

static int show_program(const cli_eval_args *a, sbx_ctx *ctx, const char *which)
{
    sbx_eval_dataset *ds;
    sbx_eval_samples *s;
    uint64_t n = 0;
    const char *why, *lang;
    sbx_eval_opts *o = NULL;
    char *prog;
    int rc;

    if (strcmp(which, "0") && !cli_parse_count(which, &n, &why))
        return cli_usage_error(a->cmd, "invalid value '%s' for --show-program: %s", which, why);
    if ((rc = cli_eval_load(a, ctx, &ds, &s)) >= 0)
        return rc;
    if (n >= sbx_eval_samples_count(s)) {
        cli_err("eval: --show-program %s: there are %zu samples (0 to %zu)", which,
                sbx_eval_samples_count(s), sbx_eval_samples_count(s) - 1);
        rc = CLI_EXIT_USAGE;
    } else if (!(o = cli_eval_opts(a, NULL)) ||
               !(prog = sbx_eval_program_opts(ds, s, (size_t)n, o, &lang))) {
        cli_err("out of memory");
        rc = CLI_EXIT_ERROR;
    } else {
        fputs(prog, stdout);
        free(prog);
        rc = CLI_EXIT_OK;
    }
    sbx_eval_opts_free(o);
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    return rc;
}

/* Nothing a user gave is lost: the results file is no input, and an
 * existing one is continued (--resume) or replaced (--force), never
 * silently emptied.  -1 when fine, else the exit status. */
static int results_ok(const cli_eval_args *a, const char *out, bool resume)
{
    struct stat st;
    int rc;

    if ((rc = cli_eval_not_input(a, out, "--out")) >= 0)
        return rc;
    if (resume || a->force || stat(out, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return -1;
    return cli_usage_error(a->cmd, "the results file %s exists (%lld bytes): --resume to "
                           "continue it, --force to replace it, or --out another file", out,
                           (long long)st.st_size);
}

int cli_cmd_eval(cli_global *g, int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_EVAL_LONGOPTS,
        { "provider", required_argument, NULL, OPT_PROVIDER },
        { "fallback", required_argument, NULL, OPT_FALLBACK },
        { "out", required_argument, NULL, OPT_OUT },
        { "resume", no_argument, NULL, OPT_RESUME },
        { "force", no_argument, NULL, OPT_FORCE },
        { "show-program", required_argument, NULL, OPT_SHOW },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    cli_eval_args a;
    const char *provider = g->provider, *fallback = NULL, *out = NULL, *show = NULL;
    bool resume = false;
    char *default_out = NULL, *chain = NULL, **providers = NULL;
    sbx_ctx *ctx = NULL;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *s = NULL;
    sbx_eval_opts *o = NULL;
    sbx_eval_summary *sum = NULL;
    cli_progress *prog = NULL;
    unsigned jobs;
    int c, rc = -1;

    cli_eval_args_init(&a, "eval");
    optind = 1;
    while (rc < 0 && (c = getopt_long(argc, argv, "+j:k:hp:", opts, NULL)) != -1) {
        switch (c) {
        case OPT_PROVIDER: case 'p': provider = optarg; break;
        case OPT_FALLBACK: fallback = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_RESUME: resume = true; break;
        case OPT_FORCE: a.force = true; break;
        case OPT_SHOW: show = optarg; break;
        case 'h': eval_help(); return CLI_EXIT_OK;
        case '?': return cli_bad_option(a.cmd);
        default:
            rc = cli_eval_option(&a, c, optarg);
            if (rc == 0)
                return cli_bad_option(a.cmd);
        }
    }
    if (rc >= 0)
        return rc;
    if (optind < argc)
        return cli_usage_error(a.cmd, "unexpected argument '%s'", argv[optind]);
    if ((rc = cli_eval_check(&a, g)) >= 0)
        return rc;
    if (resume && a.force)
        return cli_usage_error(a.cmd, "--resume and --force exclude each other");
    if (!out && a.samples) {
        size_t n = strlen(a.samples) + sizeof "_results.jsonl";
        if (!(default_out = malloc(n))) {
            cli_err("out of memory");
            return CLI_EXIT_ERROR;
        }
        snprintf(default_out, n, "%s_results.jsonl", a.samples);
        out = default_out;
    }
    if (resume && !out) {
        free(default_out);
        return cli_usage_error(a.cmd, "--resume needs --out FILE");
    }
    if (out && !show && (rc = results_ok(&a, out, resume)) >= 0) {
        free(default_out);
        return rc;
    }
    rc = CLI_EXIT_ERROR;
    /* An evaluation runs long enough for warm pools to pay off. */
    g->pools = true;
    if (!(ctx = cli_ctx_new(g)))
        goto done;
    if (show) {
        rc = show_program(&a, ctx, show);
        goto done;
    }
    if (fallback && !cli_names_ok(fallback)) {
        rc = cli_usage_error(a.cmd, "invalid value '%s' for --fallback: expected "
                             "NAME[,NAME...]", fallback);
        goto done;
    }
    /* The fallback chain follows the providers named, or the default. */
    if (fallback && !provider && !(provider = sbx_ctx_default_provider(ctx))) {
        cli_err("eval: --fallback: no provider is ready to go first (see 'polysandbox "
                "providers')");
        goto done;
    }
    if (fallback && asprintf(&chain, "%s,%s", provider, fallback) < 0) {
        chain = NULL;
        cli_err("out of memory");
        goto done;
    }
    if (chain)
        provider = chain;
    if (provider) {
        if (!(providers = cli_split_names(provider))) {
            cli_err("out of memory");
            goto done;
        }
        if (!providers[0]) {
            rc = cli_usage_error(a.cmd, "invalid value '%s' for --provider", provider);
            goto done;
        }
        for (char **p = providers; *p; p++)
            if (!cli_provider_ok(ctx, *p))
                goto done;
    }
    if ((rc = cli_eval_load(&a, ctx, &ds, &s)) >= 0)
        goto done;
    rc = CLI_EXIT_ERROR;
    if (!(o = cli_eval_opts(&a, (const char *const *)providers)))
        goto done;
    /* the records to continue must be this run's: refused before anything runs */
    if (resume && (rc = sbx_eval_journal_check(ctx, ds, s, o, out, NULL)) != SBX_OK) {
        rc = cli_eval_error(ctx, rc, "eval");
        goto done;
    }
    prog = cli_progress_new("eval", g->quiet);
    if (sbx_eval_opts_set_journal(o, out, resume) != SBX_OK ||
        sbx_eval_opts_set_callback(o, eval_cb, prog) != SBX_OK) {
        cli_err("out of memory");
        goto done;
    }
    if (cli_interrupt_catch(on_interrupt) != 0)
        goto done;
    rc = sbx_eval_run(ctx, ds, s, o, &sum);
    cli_progress_free(prog);
    prog = NULL;
    if (rc != SBX_OK) {
        rc = cli_eval_error(ctx, rc, "eval");
        goto done;
    }
    jobs = a.jobs ? a.jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    if (a.json) {
        const char *dflt[2] = { sbx_ctx_default_provider(ctx), NULL };
        char *j = sbx_eval_summary_to_json(sum, a.ks, a.n_ks);
        char *m = sbx_eval_meta_to_json(a.dataset, a.canonical ? NULL : a.samples, o,
                                        providers ? (const char *const *)providers : dflt);
        if (!j || !m) {
            free(j);
            free(m);
            cli_err("out of memory");
            goto done;
        }
        /* the summary's object, with where the results went */
        j[strlen(j) - 1] = '\0';
        printf("%s,\"results\":", j);
        free(j);
        if (out) {
            putchar('"');
            for (const char *p = out; *p; p++) {
                if (*p == '"' || *p == '\\')
                    putchar('\\');
                if ((unsigned char)*p < 0x20)
                    printf("\\u%04x", (unsigned char)*p);
                else
                    putchar(*p);
            }
            putchar('"');
        } else {
            fputs("null", stdout);
        }
        printf(",\"jobs\":%u,\"meta\":%s}\n", jobs, m);
        free(m);
    } else {
        cli_eval_print_summary(stdout, &a, sum, jobs, out);
    }
    /* a sample left ungraded (sandbox error, no template) fails the run */
    rc = sbx_eval_summary_graded(sum) < sbx_eval_summary_done(sum) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    if (interrupted) {
        cli_err("eval: interrupted by %s: %zu of %zu samples not run%s%s",
                interrupted == SIGINT ? "SIGINT" : interrupted == SIGTERM ? "SIGTERM" : "SIGHUP",
                sbx_eval_summary_total(sum) - sbx_eval_summary_done(sum),
                sbx_eval_summary_total(sum), out ? "; continue with --resume --out " : "",
                out ? out : "");
        rc = 128 + (int)interrupted;
    }
done:
    cli_progress_free(prog);
    sbx_eval_summary_free(sum);
    sbx_eval_opts_free(o);
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    sbx_ctx_free(ctx);
    free(providers);
    free(chain);
    free(default_out);
    return rc;
}
