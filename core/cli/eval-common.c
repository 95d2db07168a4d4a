/* core/cli/eval-common.c - options, loading and the summary shared by
 * polysandbox eval and polysandbox compare */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval-cli.h"

const char cli_eval_help_common[] =
"What to score:\n"
"      --dataset FILE     the tasks: HumanEval, MBPP, generic, judged problems,\n"
"                         CodeContests, APPS, LiveCodeBench, EvalPlus\n"
"                         (HumanEval+, MBPP+) or MultiPL-E JSONL (.gz too)\n"
"      --samples FILE     completions: JSONL of {\"task_id\", \"completion\"}\n"
"                         (judged problems: and an optional \"language\";\n"
"                         MultiPL-E: {\"name\", \"completions\": [...]} too)\n"
"      --canonical        score the dataset's own reference solutions\n"
"      --allow-partial    score a samples file that leaves tasks out (else\n"
"                         refused, naming the tasks without samples)\n"
"      --format FMT       auto (default), humaneval, mbpp, generic, judged,\n"
"                         codecontests, apps, livecodebench, evalplus or\n"
"                         multipl-e\n"
"\n"
"Running:\n"
"  -j, --jobs N           parallel workers (default: the number of cores)\n"
"      --timeout DURATION wall-clock limit per program (default 3s;\n"
"                         MultiPL-E: 15s, as its evaluator)\n"
"      --memory SIZE      memory limit per program (default: the configuration's)\n"
"      --retries N        attempts again after a sandbox error, per provider\n"
"                         (default 2)\n"
"      --isolated-check   HumanEval, MBPP: run the tests in a process the\n"
"                         completion never runs in, calling it with literals\n"
"                         (EvalPlus samples always are)\n"
"  -k K[,K...]            pass@k to report (default 1,10,100)\n"
"\n"
"Judged problems (stdin/expected output tests; compiled once per sample):\n"
"      --all-tests        run every test, not up to the first failure\n"
"      --exec-per-test    run each test of a compiled program or a Python\n"
"                         script on an exec of its own (default: all in one\n"
"                         exec, through the runner; the same verdicts)\n"
"      --min-time DURATION  T_min of a test's limit max(T_min, K x reference\n"
"                         time) when the task gives one (default 1s)\n"
"      --time-factor K    K of that limit (default 3; 0: --timeout alone)\n"
"      --compile-timeout DURATION  the compile step's limit (default 30s)\n"
"\n"
"EvalPlus (each input's limit: max(T_min, K x the reference's time on it)):\n"
"      --evalplus-min-time DURATION  T_min (default 1s, as EvalPlus)\n"
"      --evalplus-time-factor K  K (default 4, as EvalPlus; 0: T_min alone)\n"
"\n"
"Input caps (a file past one is refused, naming it and the cap):\n"
"      --max-input SIZE   decompressed size of the dataset or samples\n"
"                         (default 256M: [eval] max_input in polysandbox.ini)\n"
"      --max-line SIZE    one line of either (default 1M: max_line)\n"
"      --max-records N    records of either (default 1000000: max_records)\n";

void cli_eval_args_init(cli_eval_args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->ks[0] = 1;
    a->ks[1] = 10;
    a->ks[2] = 100;
    a->n_ks = 3;
    a->factor = -1;
    a->ep_factor = -1;
}

static int parse_ks(cli_eval_args *a, const char *arg)
{
    const char *p = arg;

    a->n_ks = 0;
    for (;;) {
        char *end;
        unsigned long v;
        errno = 0;
        if (*p < '0' || *p > '9')
            goto bad;
        v = strtoul(p, &end, 10);
        if (errno || v == 0 || v > 1000000 || (*end != ',' && *end != '\0'))
            goto bad;
        if (a->n_ks == CLI_EVAL_MAX_K)
            return cli_usage_error(a->cmd, "invalid value '%s' for -k: at most %d values",
                                   arg, CLI_EVAL_MAX_K);
        for (size_t i = 0; i < a->n_ks; i++)
            if (a->ks[i] == v)
                return cli_usage_error(a->cmd, "invalid value '%s' for -k: %lu is repeated",
                                       arg, v);
        a->ks[a->n_ks++] = (unsigned)v;
        if (*end == '\0')
            return -1;
        p = end + 1;
    }
bad:
    return cli_usage_error(a->cmd, "invalid value '%s' for -k: expected positive whole "
                           "numbers separated by commas, e.g. 1,10,100", arg);
}

int cli_eval_option(cli_eval_args *a, int c, const char *arg)
{
    const char *why;
    uint64_t n;

    switch (c) {
    case CLI_EO_DATASET: a->dataset = arg; return -1;
    case CLI_EO_SAMPLES: a->samples = arg; return -1;
    case CLI_EO_CANONICAL: a->canonical = true; return -1;
    case CLI_EO_JSON: a->json = true; return -1;
    case CLI_EO_ISOLATED: a->isolated = true; return -1;
    case CLI_EO_ALLOW_PARTIAL: a->allow_partial = true; return -1;
    case CLI_EO_ALL_TESTS: a->all_tests = true; return -1;
    case CLI_EO_EXEC_PER_TEST: a->exec_per_test = true; return -1;
    case CLI_EO_MIN_TIME:
    case CLI_EO_COMPILE_TIMEOUT:
    case CLI_EO_EP_MIN_TIME: {
        static const char *const names[] = { "min-time", "compile-timeout",
                                             "evalplus-min-time" };
        int i = c == CLI_EO_MIN_TIME ? 0 : c == CLI_EO_COMPILE_TIMEOUT ? 1 : 2;
        uint64_t *to = i == 0 ? &a->min_ns : i == 1 ? &a->compile_ns : &a->ep_min_ns;
        if (!cli_parse_duration(arg, to, &why))
            return cli_usage_error(a->cmd, "invalid value '%s' for --%s: %s", arg, names[i],
                                   why);
        return -1;
    }
    case CLI_EO_TIME_FACTOR:
    case CLI_EO_EP_TIME_FACTOR: {
        double *k = c == CLI_EO_TIME_FACTOR ? &a->factor : &a->ep_factor;
        char *end;
        errno = 0;
        *k = strtod(arg, &end);
        if (errno || end == arg || *end || !(*k >= 0 && *k <= 1000))
            return cli_usage_error(a->cmd, "invalid value '%s' for --%s: expected "
                                   "a number from 0 to 1000", arg,
                                   c == CLI_EO_TIME_FACTOR ? "time-factor"
                                                           : "evalplus-time-factor");
        return -1;
    }
    case CLI_EO_FORMAT:
        for (int f = SBX_EVAL_FORMAT_AUTO; f <= SBX_EVAL_FORMAT_LAST; f++)
            if (!strcmp(arg, sbx_eval_format_name((sbx_eval_format)f))) {
                a->format = (sbx_eval_format)f;
                return -1;
            }
        return cli_usage_error(a->cmd, "invalid value '%s' for --format: expected auto, "
                               "humaneval, mbpp, generic, judged, codecontests, apps, "
                               "livecodebench, evalplus or multipl-e", arg);
    case CLI_EO_TIMEOUT:
        if (!cli_parse_duration(arg, &a->timeout_ns, &why))
            return cli_usage_error(a->cmd, "invalid value '%s' for --timeout: %s", arg, why);
        return -1;
    case CLI_EO_MEMORY:
        if (!cli_parse_size(arg, &a->memory, &why))
            return cli_usage_error(a->cmd, "invalid value '%s' for --memory: %s", arg, why);
        return -1;
    case CLI_EO_RETRIES:
        if (!strcmp(arg, "0")) {
            n = 0;
        } else if (!cli_parse_count(arg, &n, &why) || n > 100) {
            return cli_usage_error(a->cmd, "invalid value '%s' for --retries: %s", arg,
                                   n > 100 ? "at most 100" : why);
        }
        a->retries = (unsigned)n;
        a->retries_set = true;
        return -1;
    case 'j':
        if (!cli_parse_count(arg, &n, &why) || n > 4096)
            return cli_usage_error(a->cmd, "invalid value '%s' for --jobs: %s", arg,
                                   n > 4096 ? "at most 4096" : why);
        a->jobs = (unsigned)n;
        return -1;
    case 'k':
        return parse_ks(a, arg);
    case CLI_EO_MAX_INPUT:
    case CLI_EO_MAX_LINE:
    case CLI_EO_MAX_RECORDS: {
        static const char *const keys[] = { "max_input", "max_line", "max_records" };
        int i = c - CLI_EO_MAX_INPUT;
        bool good = c == CLI_EO_MAX_RECORDS ? cli_parse_count(arg, &n, &why)
                                            : cli_parse_size(arg, &n, &why);
        if (!good)
            return cli_usage_error(a->cmd, "invalid value '%s' for --max-%s: %s", arg,
                                   keys[i] + 4, why);
        snprintf(a->caps[i], sizeof a->caps[i], "eval.%s=%llu", keys[i],
                 (unsigned long long)n);
        return -1;
    }
    default:
        return 0;
    }
}

int cli_eval_check(cli_eval_args *a, cli_global *g)
{
    for (int i = 0; i < 3; i++) {
        const char **no;
        if (!a->caps[i][0])
            continue;
        if (!(no = realloc(g->overrides, (g->n_overrides + 2) * sizeof *no))) {
            cli_err("out of memory");
            return CLI_EXIT_ERROR;
        }
        no[g->n_overrides++] = a->caps[i];
        no[g->n_overrides] = NULL;
        g->overrides = no;
    }
    if (!a->dataset)
        return cli_usage_error(a->cmd, "missing --dataset FILE");
    if (!a->samples && !a->canonical)
        return cli_usage_error(a->cmd, "give --samples FILE, or --canonical to score the "
                               "dataset's reference solutions");
    if (a->samples && a->canonical)
        return cli_usage_error(a->cmd, "--samples and --canonical exclude each other");
    return -1;
}

int cli_eval_not_input(const cli_eval_args *a, const char *out, const char *what)
{
    const char *in[2] = { a->dataset, a->samples };
    const char *name[2] = { "the dataset", "the samples file" };
    struct stat so, si;

    if (stat(out, &so) != 0)
        return -1;          /* not there yet: it is no input */
    for (int i = 0; i < 2; i++)
        if (in[i] && stat(in[i], &si) == 0 && si.st_dev == so.st_dev &&
            si.st_ino == so.st_ino)
            return cli_usage_error(a->cmd, "%s %s is %s %s (the same file): it would be "
                                   "overwritten; choose another", what, out, name[i], in[i]);
    return -1;
}

int cli_eval_error(const sbx_ctx *ctx, int rc, const char *what)
{
    cli_lib_error(ctx, rc, what);
    return (rc == SBX_E_INVAL || rc == SBX_E_IO) ? CLI_EXIT_DATA : CLI_EXIT_ERROR;
}

int cli_eval_load(const cli_eval_args *a, sbx_ctx *ctx, sbx_eval_dataset **ds,
                  sbx_eval_samples **s)
{
    int rc;

    *ds = NULL;
    *s = NULL;
    if ((rc = sbx_eval_dataset_load(ctx, a->dataset, a->format, ds)) != SBX_OK)
        return cli_eval_error(ctx, rc, NULL);
    rc = a->canonical ? sbx_eval_samples_canonical(ctx, *ds, s)
                      : sbx_eval_samples_load(ctx, *ds, a->samples, s);
    if (rc != SBX_OK) {
        sbx_eval_dataset_free(*ds);
        *ds = NULL;
        return cli_eval_error(ctx, rc, NULL);
    }
    return -1;
}

sbx_eval_opts *cli_eval_opts(const cli_eval_args *a, const char *const *providers)
{
    sbx_eval_opts *o = sbx_eval_opts_new();
    int rc;

    if (!o) {
        cli_err("out of memory");
        return NULL;
    }
    rc = sbx_eval_opts_set_providers(o, providers);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_jobs(o, a->jobs);
    if (rc == SBX_OK && a->timeout_ns)
        rc = sbx_eval_opts_set_timeout(o, a->timeout_ns);
    if (rc == SBX_OK && a->memory)
        rc = sbx_eval_opts_set_limit(o, SBX_LIMIT_MEMORY, a->memory);
    if (rc == SBX_OK && a->retries_set)
        rc = sbx_eval_opts_set_retries(o, a->retries);
    if (rc == SBX_OK && a->isolated)
        rc = sbx_eval_opts_set_isolated_check(o, true);
    if (rc == SBX_OK && a->allow_partial)
        rc = sbx_eval_opts_set_allow_partial(o, true);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_judge(o, a->all_tests, a->min_ns, a->factor, a->compile_ns);
    if (rc == SBX_OK && a->exec_per_test)
        rc = sbx_eval_opts_set_exec_per_test(o, true);
    if (rc == SBX_OK)
        rc = sbx_eval_opts_set_evalplus_time(o, a->ep_min_ns, a->ep_factor);
    if (rc != SBX_OK) {
        cli_err("%s: cannot set the evaluation options (%s)", a->cmd, sbx_strerror(rc));
        sbx_eval_opts_free(o);
        return NULL;
    }
    return o;
}

bool cli_eval_pass_at_k(const sbx_eval_summary *sum, unsigned k, char *buf, size_t size)
{
    double v, lo, hi;

    if (!sbx_eval_summary_pass_at_k(sum, k, &v, NULL)) {
        snprintf(buf, size, "n/a");
        return false;
    }
    if (sbx_eval_summary_pass_at_k_ci(sum, k, &lo, &hi))
        snprintf(buf, size, "%.4f [%.4f, %.4f]", v, lo, hi);
    else
        snprintf(buf, size, "%.4f", v);
    return true;
}

void cli_eval_ms(uint64_t ns, char *buf, size_t size)
{
    double ms = (double)ns / 1e6;

    if (ms >= 1000.0)
        snprintf(buf, size, "%.2f s", ms / 1000.0);
    else
        snprintf(buf, size, "%.1f ms", ms);
}

/* The limits some samples ran without (allowed by unenforced_limits). */
static void print_unenforced(FILE *f, const sbx_eval_summary *sum)
{
    uint64_t bits = 0;
    size_t n = 0;

    for (size_t i = 0; i < sbx_eval_summary_total(sum); i++) {
        const sbx_eval_record *r = sbx_eval_summary_record(sum, i);
        uint64_t b = r ? sbx_eval_record_unenforced_limits(r) : 0;
        bits |= b;
        n += b != 0;
    }
    if (!bits)
        return;
    fputs("unenforced: ", f);
    for (int i = 0, first = 1; i < 64; i++)
        if ((bits & (UINT64_C(1) << i)) && sbx_unenforced_name(i)) {
            fprintf(f, "%s%s", first ? "" : ", ", sbx_unenforced_name(i));
            first = 0;
        }
    fprintf(f, " limits not enforced in %zu samples (unenforced_limits allows it)\n", n);
}

/* What provider @name's samples used (CPU, peak memory), its attempts
 * (sandboxes, sandbox errors, time) and, when it has a price table, cost. */
static void print_use(FILE *f, const char *name, const sbx_eval_usage *u)
{
    char total[32], mean[32];

    fprintf(f, "usage:      %s: ", name);
    if (u->cpu_samples) {
        cli_eval_ms(u->cpu_total_ns, total, sizeof total);
        cli_eval_ms(u->cpu_mean_ns, mean, sizeof mean);
        fprintf(f, "CPU %s total, %s mean", total, mean);
    } else {
        fputs("CPU not measured", f);
    }
    if (u->peak_memory_max >= 0)
        fprintf(f, ", peak memory %.1f MiB", (double)u->peak_memory_max / (1024.0 * 1024.0));
    /* its attempts' sandboxes, failed ones too, and the time they took:
     * what a price is paid for */
    cli_eval_ms(u->sandbox_ns, total, sizeof total);
    fprintf(f, " (%zu samples, %zu sandboxes", u->samples, u->sandboxes);
    if (u->sandbox_errors)
        fprintf(f, ", %zu sandbox errors", u->sandbox_errors);
    fprintf(f, ", %s in sandboxes)\n", total);
    if (!u->priced)
        return;
    fprintf(f, "cost:       %s: %.6g %s", name, u->cost_total, u->currency);
    if (!u->samples) {      /* failed attempts alone: paid for, nothing graded */
        fputs(", no sample graded there\n", f);
        return;
    }
    fprintf(f, ", %.6g per sample", u->cost_per_sample);
    if (u->cost_per_pass >= 0)
        fprintf(f, ", %.6g per passing sample\n", u->cost_per_pass);
    else
        fputs(", no passing sample\n", f);
}

/* Each provider's usage (and cost). */
static void print_usage(FILE *f, const sbx_eval_summary *sum)
{
    sbx_eval_usage u;

    for (size_t i = 0; i < sbx_eval_summary_provider_count(sum); i++) {
        const char *name = sbx_eval_summary_provider(sum, i);
        if (sbx_eval_summary_usage(sum, name, &u))
            print_use(f, name, &u);
    }
}

bool cli_eval_has_base(const sbx_eval_summary *sum)
{
    for (size_t i = 0; i < sbx_eval_summary_total(sum); i++)
        if (sbx_eval_record_base_verdict(sbx_eval_summary_record(sum, i), NULL))
            return true;
    return false;
}

void cli_eval_print_summary(FILE *f, const cli_eval_args *a, const sbx_eval_summary *sum,
                            unsigned jobs, const char *results)
{
    bool plus = cli_eval_has_base(sum);
    size_t done = sbx_eval_summary_done(sum);
    size_t errors = sbx_eval_summary_count(sum, SBX_VERDICT_SANDBOX_ERROR);
    size_t none = sbx_eval_summary_count(sum, SBX_VERDICT_NO_TEMPLATE);
    char p50[32], p90[32], p95[32], p99[32], wall[32];
    bool first = true;

    fprintf(f, "dataset:    %s (%zu tasks with samples)\n", a->dataset,
            sbx_eval_summary_task_count(sum));
    fprintf(f, "samples:    %zu, done %zu (%zu resumed), graded %zu, sandbox errors %zu",
            sbx_eval_summary_total(sum), done, sbx_eval_summary_resumed(sum),
            sbx_eval_summary_graded(sum), errors);
    if (none)
        fprintf(f, ", no template %zu", none);
    fputc('\n', f);
    fputs("verdicts:  ", f);
    for (int v = 0; v < SBX_VERDICT_COUNT; v++) {
        size_t n = sbx_eval_summary_count(sum, (sbx_eval_verdict)v);
        if (n == 0 && v != SBX_VERDICT_PASSED)
            continue;
        fprintf(f, "%s %s %zu", first ? "" : ",", sbx_eval_verdict_name((sbx_eval_verdict)v),
                n);
        first = false;
    }
    fputc('\n', f);
    for (size_t i = 0; i < a->n_ks; i++) {
        double v;
        size_t used;
        char label[32];
        snprintf(label, sizeof label, "pass@%u:", a->ks[i]);
        /* EvalPlus reports both: "base" and "base + extra" */
        if (plus && sbx_eval_summary_pass_at_k_base(sum, a->ks[i], &v, &used))
            fprintf(f, "%-11s %.4f (base; %zu of %zu tasks)\n", label, v, used,
                    sbx_eval_summary_task_count(sum));
        if (sbx_eval_summary_pass_at_k(sum, a->ks[i], &v, &used)) {
            char ci[96];
            cli_eval_pass_at_k(sum, a->ks[i], ci, sizeof ci);
            fprintf(f, "%-11s %s (%s%zu of %zu tasks; 95%% bootstrap interval)\n", label, ci,
                    plus ? "base + extra; " : "", used, sbx_eval_summary_task_count(sum));
        }
        else
            fprintf(f, "%-11s not computable: no task has %u graded samples\n", label,
                    a->ks[i]);
    }
    cli_eval_ms(sbx_eval_summary_latency(sum, 50), p50, sizeof p50);
    cli_eval_ms(sbx_eval_summary_latency(sum, 90), p90, sizeof p90);
    cli_eval_ms(sbx_eval_summary_latency(sum, 95), p95, sizeof p95);
    cli_eval_ms(sbx_eval_summary_latency(sum, 99), p99, sizeof p99);
    cli_eval_ms(sbx_eval_summary_wall_ns(sum), wall, sizeof wall);
    fprintf(f, "latency:    p50 %s, p90 %s, p95 %s, p99 %s\n", p50, p90, p95, p99);
    print_usage(f, sum);
    fprintf(f, "throughput: %.1f samples/s (wall %s, %u workers)\n",
            sbx_eval_summary_throughput(sum), wall, jobs);
    if (results)
        fprintf(f, "results:    %s\n", results);
    print_unenforced(f, sum);
    if (errors) {
        fputs("sandbox errors (retried, not graded, not in pass@k):\n", f);
        for (size_t i = 0; i < sbx_eval_summary_total(sum); i++) {
            const sbx_eval_record *r = sbx_eval_summary_record(sum, i);
            if (!r || sbx_eval_record_verdict(r) != SBX_VERDICT_SANDBOX_ERROR)
                continue;
            if (sbx_eval_record_attempts(r) == 0)   /* no sandbox could run it */
                fprintf(f, "  sample %zu (%s), not run: %s\n", i, sbx_eval_record_task_id(r),
                        sbx_eval_record_reason(r) ? sbx_eval_record_reason(r) : "?");
            else
                fprintf(f, "  sample %zu (%s) on %s after %u attempts: %s\n", i,
                        sbx_eval_record_task_id(r), sbx_eval_record_provider(r),
                        sbx_eval_record_attempts(r),
                        sbx_eval_record_reason(r) ? sbx_eval_record_reason(r) : "?");
        }
    }
    if (none) {
        fputs("no template (not run, not graded, not in pass@k):\n", f);
        for (size_t i = 0; i < sbx_eval_summary_total(sum); i++) {
            const sbx_eval_record *r = sbx_eval_summary_record(sum, i);
            if (r && sbx_eval_record_verdict(r) == SBX_VERDICT_NO_TEMPLATE)
                fprintf(f, "  sample %zu (%s): %s\n", i, sbx_eval_record_task_id(r),
                        sbx_eval_record_reason(r) ? sbx_eval_record_reason(r) : "?");
        }
    }
}
