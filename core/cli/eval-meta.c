/* core/cli/eval-meta.c - the metadata of a report: enough to tell later
 * which tool, inputs, limits and machine gave its figures, in Markdown
 * and HTML (the JSON is the library's: sbx_eval_meta_to_json) */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "eval-meta.h"

/* sbx_eval_opts_new's defaults (core/eval-opts.c), for the options not
 * given: a report states the limits that applied, not "default". */
#define DEFAULT_TIMEOUT_NS UINT64_C(3000000000)
#define DEFAULT_RETRIES 2u
#define DEFAULT_MIN_NS UINT64_C(1000000000)
#define DEFAULT_FACTOR 3.0
#define DEFAULT_COMPILE_NS UINT64_C(30000000000)

/* A report is not refused for an input without a digest: it says so. */
static void digest(cli_eval_input *in, const char *path)
{
    int64_t size = -1;

    in->path = path;
    if (path)
        (void)sbx_eval_input_digest(path, &size, in->sha256);
    else
        in->sha256[0] = '\0';
    in->size = size;
}

void cli_eval_meta_fill(cli_eval_meta *m, const cli_eval_args *a, unsigned jobs)
{
    struct utsname u;
    time_t now = time(NULL);
    struct tm tm;

    memset(m, 0, sizeof *m);
    m->version = sbx_version();
    m->args = a;
    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        !strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(m->date, sizeof m->date, "unknown");
    if (uname(&u) == 0) {
        snprintf(m->host, sizeof m->host, "%s", u.nodename);
        snprintf(m->kernel, sizeof m->kernel, "%s %s %s", u.sysname, u.release, u.machine);
    } else {
        snprintf(m->host, sizeof m->host, "unknown");
        snprintf(m->kernel, sizeof m->kernel, "unknown");
    }
    if (jobs == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (unsigned)cpus : 1;
    }
    m->jobs = jobs;
    digest(&m->dataset, a->dataset);
    digest(&m->samples, a->canonical ? NULL : a->samples);
}

static double secs(uint64_t ns, uint64_t dflt)
{
    return (double)(ns ? ns : dflt) / 1e9;
}

/* "PATH (N bytes, sha256 HEX)" */
static void input_text(FILE *f, const cli_eval_input *in, void (*esc)(FILE *, const char *))
{
    if (!in->path) {
        fputs("the dataset's reference solutions", f);
        return;
    }
    esc(f, in->path);
    if (in->size < 0)
        fputs(" (not a regular file, or unreadable: no digest)", f);
    else
        fprintf(f, " (%lld bytes, sha256 %s)", in->size, in->sha256);
}

/* Limits on one line: "timeout 3 s, memory 128 MiB, ..." */
static void limits_text(FILE *f, const cli_eval_meta *m)
{
    const cli_eval_args *a = m->args;

    if (m->rebuilt) {
        fputs("not recorded (rebuilt from results files)", f);
        return;
    }
    fprintf(f, "timeout %g s, memory ", secs(a->timeout_ns, DEFAULT_TIMEOUT_NS));
    if (a->memory)
        fprintf(f, "%llu bytes", (unsigned long long)a->memory);
    else
        fputs("the configuration's", f);
    fprintf(f, ", retries %u, judged tests max(%g s, %g x reference), compile %g s%s%s",
            a->retries_set ? a->retries : DEFAULT_RETRIES, secs(a->min_ns, DEFAULT_MIN_NS),
            a->factor >= 0 ? a->factor : DEFAULT_FACTOR, secs(a->compile_ns, DEFAULT_COMPILE_NS),
            a->all_tests ? ", all tests" : "", a->isolated ? ", isolated check" : "");
}

static void plain(FILE *f, const char *s)
{
    fputs(s, f);
}

void cli_eval_meta_markdown(const cli_eval_meta *m, FILE *f)
{
    fprintf(f, "polysandbox %s, %s, host %s (%s), ", m->version, m->date, m->host, m->kernel);
    if (m->rebuilt)
        fputs("rebuilt from results files.\n\n", f);
    else
        fprintf(f, "%u jobs.\n\n", m->jobs);
    fputs("Dataset: ", f);
    input_text(f, &m->dataset, plain);
    fputs(".\nSamples: ", f);
    input_text(f, &m->samples, plain);
    fputs(".\nProviders: ", f);
    for (const char *const *p = m->providers; p && *p; p++)
        fprintf(f, "%s%s", p == m->providers ? "" : ", ", *p);
    fputs(".\nLimits: ", f);
    limits_text(f, m);
    fputs(".\n\n", f);
}
