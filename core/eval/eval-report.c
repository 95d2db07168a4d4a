/* core/eval/eval-report.c - the side-by-side report of the same samples graded
 * on several providers (polysandbox compare --json), built here so that
 * the command and the bindings (python/) give the same object: per column
 * its settings and summary, the samples whose verdicts differ with each
 * column's reason and output, and the run's metadata (tool, date, host,
 * inputs with their digests, limits). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "eval-report-int.h"
#include "error.h"
#include "strv.h"

int sbx_eval_input_digest(const char *path, int64_t *size, char *sha256_hex)
{
    crypto_hash_sha256_state st;
    unsigned char buf[65536], out[crypto_hash_sha256_BYTES];
    struct stat sst;
    FILE *f;
    size_t n;
    int fd, rc = SBX_OK;

    core_error_clear();
    *size = -1;
    sha256_hex[0] = '\0';
    if (!path)
        return core_error_set(SBX_E_INVAL, NULL, "digest: no file named");
    if (sodium_init() < 0)
        return core_error_set(SBX_E_INTERNAL, NULL, "digest: libsodium did not start");
    /* a regular file only: a pipe (<(zcat ...)) was read once already, and
     * opening it again would wait for a writer that never comes */
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return core_error_set(SBX_E_IO, NULL, "%s: %s", path, strerror(errno));
    if (fstat(fd, &sst) != 0 || !S_ISREG(sst.st_mode) || !(f = fdopen(fd, "rb"))) {
        close(fd);
        return core_error_set(SBX_E_INVAL, NULL, "%s: not a regular file", path);
    }
    crypto_hash_sha256_init(&st);
    *size = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        crypto_hash_sha256_update(&st, buf, n);
        *size += (int64_t)n;
    }
    if (ferror(f)) {
        *size = -1;
        rc = core_error_set(SBX_E_IO, NULL, "%s: read error", path);
    } else {
        crypto_hash_sha256_final(&st, out);
        sodium_bin2hex(sha256_hex, 65, out, sizeof out);
    }
    fclose(f);
    return rc;
}

static char *dup_or_null(const char *s, bool *ok)
{
    char *d = s ? strdup(s) : NULL;

    if (s && !d)
        *ok = false;
    return d;
}

int sbx_eval_report_new(const sbx_eval_samples *s, const char *dataset,
                        const char *samples_file, sbx_eval_report **out)
{
    sbx_eval_report *r;
    bool ok = true;

    core_error_clear();
    if (!out)
        return core_error_set(SBX_E_INVAL, NULL, "report: no place for the report");
    *out = NULL;
    if (!s || !dataset)
        return core_error_set(SBX_E_INVAL, NULL, "report: no %s", s ? "dataset" : "samples");
    if (!(r = calloc(1, sizeof *r)))
        return core_error_set(SBX_E_NOMEM, NULL, "report: out of memory");
    r->samples = s;
    r->dataset = dup_or_null(dataset, &ok);
    r->samples_file = dup_or_null(samples_file, &ok);
    if (!ok) {
        sbx_eval_report_free(r);
        return core_error_set(SBX_E_NOMEM, NULL, "report: out of memory");
    }
    *out = r;
    return SBX_OK;
}

void sbx_eval_report_free(sbx_eval_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_cols; i++) {
        free(r->cols[i].label);
        free(r->cols[i].provider);
        free(r->cols[i].results);
        core_strv_free(r->cols[i].settings);
    }
    free(r->cols);
    free(r->dataset);
    free(r->samples_file);
    free(r->prefix);
    free(r->dataset_name);
    free(r->samples_name);
    free(r);
}

char *sbx_eval_report_label(const char *const *names, size_t i)
{
    size_t same = 1;
    char *label;

    if (!names || !names[i]) {
        errno = EINVAL;
        return NULL;
    }
    for (size_t k = 0; k < i; k++)
        same += names[k] && !strcmp(names[k], names[i]);
    if (asprintf(&label, same > 1 ? "%s#%zu" : "%s", names[i], same) < 0) {
        errno = ENOMEM;
        return NULL;
    }
    return label;
}

/* What column @c is named after: its provider, else its results file
 * (NULL: neither is known). */
static const char *column_name(const char *provider, const char *results)
{
    return provider && *provider ? provider : results;
}

/* The label the report gives a column added with none (or with its
 * provider's name): sbx_eval_report_label over the columns' names.
 * NULL on ENOMEM, or when the column has no name. */
static char *name_column(const sbx_eval_report *r, const char *provider, const char *results)
{
    const char **names = calloc(r->n_cols + 2, sizeof *names);
    char *label = NULL;

    if (!names)
        return NULL;
    for (size_t i = 0; i < r->n_cols; i++)
        names[i] = column_name(r->cols[i].provider, r->cols[i].results);
    names[r->n_cols] = column_name(provider, results);
    if (names[r->n_cols])
        label = sbx_eval_report_label(names, r->n_cols);
    free(names);
    return label;
}

int sbx_eval_report_add(sbx_eval_report *r, const char *label, const char *provider,
                        const char *results, const char *const *settings,
                        const sbx_eval_summary *sum)
{
    report_column *c, *nc;
    size_t n_set = 0;
    bool ok = true, named = !label || !*label || (provider && !strcmp(label, provider));
    char *own;

    core_error_clear();
    if (!r || !sum || (named && !column_name(provider, results)))
        return core_error_set(SBX_E_INVAL, NULL, "report: a column needs a label, a "
                              "provider or a results file, and a summary");
    if (sum->n_samples != sbx_eval_samples_count(r->samples))
        return core_error_set(SBX_E_INVAL, NULL, "report: column '%s' graded %zu samples, "
                              "not the report's %zu",
                              named ? column_name(provider, results) : label, sum->n_samples,
                              sbx_eval_samples_count(r->samples));
    own = named ? name_column(r, provider, results) : strdup(label);
    if (!own || !(nc = realloc(r->cols, (r->n_cols + 1) * sizeof *nc))) {
        free(own);
        return core_error_set(SBX_E_NOMEM, NULL, "report: out of memory");
    }
    r->cols = nc;
    c = &nc[r->n_cols];
    memset(c, 0, sizeof *c);
    c->sum = sum;
    c->label = own;
    c->provider = dup_or_null(provider ? provider : "", &ok);
    c->results = dup_or_null(results, &ok);
    for (const char *const *p = settings; p && *p; p++)
        n_set++;
    if (ok && !(c->settings = calloc(n_set + 1, sizeof *c->settings)))
        ok = false;
    for (size_t i = 0; ok && i < n_set; i++)
        c->settings[i] = dup_or_null(settings[i], &ok);
    if (!ok) {
        free(c->label);
        free(c->provider);
        free(c->results);
        core_strv_free(c->settings);
        return core_error_set(SBX_E_NOMEM, NULL, "report: out of memory");
    }
    r->n_cols++;
    return SBX_OK;
}

int sbx_eval_report_set_opts(sbx_eval_report *r, const sbx_eval_opts *o)
{
    core_error_clear();
    if (!r)
        return core_error_set(SBX_E_INVAL, NULL, "report: no report");
    r->have_opts = o != NULL;
    if (o) {
        /* the values only: the pointers (providers, journal) stay the
         * caller's and are never read */
        r->limits = *o;
        r->limits.providers = NULL;
        r->limits.journal = NULL;
        r->limits.cancel = NULL;
        r->limits.cb = NULL;
        r->limits.gate = NULL;
    }
    return SBX_OK;
}

int sbx_eval_report_set_files(sbx_eval_report *r, const char *prefix)
{
    char *p = NULL;

    core_error_clear();
    if (!r)
        return core_error_set(SBX_E_INVAL, NULL, "report: no report");
    if (prefix && !(p = strdup(prefix)))
        return core_error_set(SBX_E_NOMEM, NULL, "report: out of memory");
    free(r->prefix);
    r->prefix = p;
    return SBX_OK;
}

int sbx_eval_report_set_input_names(sbx_eval_report *r, const char *dataset,
                                    const char *samples)
{
    bool ok = true;
    char *d, *s;

    core_error_clear();
    if (!r)
        return core_error_set(SBX_E_INVAL, NULL, "report: no report");
    d = dup_or_null(dataset, &ok);
    s = dup_or_null(samples, &ok);
    if (!ok) {
        free(d);
        free(s);
        return core_error_set(SBX_E_NOMEM, NULL, "report: out of memory");
    }
    free(r->dataset_name);
    free(r->samples_name);
    r->dataset_name = d;
    r->samples_name = s;
    return SBX_OK;
}

bool sbx_eval_report_differs(const sbx_eval_report *r, size_t sample)
{
    const sbx_eval_record *a;

    if (!r || r->n_cols == 0 || sample >= sbx_eval_samples_count(r->samples))
        return false;
    a = sbx_eval_summary_record(r->cols[0].sum, sample);
    for (size_t c = 1; c < r->n_cols; c++) {
        const sbx_eval_record *b = sbx_eval_summary_record(r->cols[c].sum, sample);
        if (!a || !b || sbx_eval_record_verdict(a) != sbx_eval_record_verdict(b))
            return true;
    }
    return false;
}

size_t sbx_eval_report_diff_count(const sbx_eval_report *r)
{
    size_t n = 0;

    for (size_t i = 0; r && i < sbx_eval_samples_count(r->samples); i++)
        n += sbx_eval_report_differs(r, i);
    return n;
}

/* ---- JSON ----------------------------------------------------------------- */

/* A string or null; false on ENOMEM. */
static bool set_str(json_t *o, const char *key, const char *s)
{
    return json_object_set_new(o, key, s ? json_string(s) : json_null()) == 0;
}

/* "PREFIX.EXT" as a JSON string, or NULL on ENOMEM. */
static json_t *path_of(const char *prefix, const char *ext)
{
    char *p;
    json_t *j;

    if (asprintf(&p, "%s%s", prefix, ext) < 0)
        return NULL;
    j = json_string(p);
    free(p);
    return j;
}

static json_t *column_json(const report_column *c, const unsigned *ks, size_t n_ks)
{
    json_t *o = json_object(), *set = json_array(), *sum = NULL;
    char *s = sbx_eval_summary_to_json(c->sum, ks, n_ks);
    size_t graded = sbx_eval_summary_done(c->sum) -
                    sbx_eval_summary_count(c->sum, SBX_VERDICT_SANDBOX_ERROR);
    bool ok = o && set && s && (sum = json_loads(s, 0, NULL));

    for (size_t i = 0; ok && c->settings[i]; i++)
        ok = json_array_append_new(set, json_string(c->settings[i])) == 0;
    ok = ok && set_str(o, "label", c->label) && set_str(o, "provider", c->provider) &&
         set_str(o, "results", c->results) &&
         json_object_set(o, "settings", set) == 0 &&
         json_object_set_new(o, "pass_rate",
                             graded ? json_real((double)sbx_eval_summary_count(
                                                    c->sum, SBX_VERDICT_PASSED) /
                                                (double)graded)
                                    : json_null()) == 0 &&
         json_object_set(o, "summary", sum) == 0;
    free(s);
    json_decref(set);
    json_decref(sum);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *diff_json(const sbx_eval_report *r, size_t i)
{
    json_t *o = json_object(), *v = json_object(), *why = json_object(), *out = json_object();
    const sbx_eval_record *first = NULL;
    bool ok = o && v && why && out;

    for (size_t c = 0; ok && c < r->n_cols; c++) {
        const sbx_eval_record *rec = sbx_eval_summary_record(r->cols[c].sum, i);
        const char *label = r->cols[c].label;
        if (rec && !first)
            first = rec;
        ok = set_str(v, label, rec ? sbx_eval_verdict_name(sbx_eval_record_verdict(rec)) : NULL) &&
             set_str(why, label, rec ? sbx_eval_record_reason(rec) : NULL) &&
             set_str(out, label, rec ? sbx_eval_record_output(rec) : NULL);
    }
    ok = ok && json_object_set_new(o, "sample", json_integer((json_int_t)i)) == 0 &&
         set_str(o, "task_id", first ? sbx_eval_record_task_id(first) : NULL) &&
         json_object_set(o, "verdicts", v) == 0 && json_object_set(o, "reasons", why) == 0 &&
         json_object_set(o, "outputs", out) == 0;
    json_decref(v);
    json_decref(why);
    json_decref(out);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* {path, size, sha256} of an input, or null for none (canonical samples);
 * a file that is no regular file or cannot be read has null size and
 * digest (a report is not refused for that). */
static json_t *input_json(const char *path)
{
    int64_t size;
    char hex[65];

    if (!path)
        return json_null();
    (void)sbx_eval_input_digest(path, &size, hex);
    core_error_clear();
    return json_pack("{s:s, s:o, s:o}", "path", path, "size",
                     size >= 0 ? json_integer((json_int_t)size) : json_null(), "sha256",
                     hex[0] ? json_string(hex) : json_null());
}

/* The limits that applied (sbx_eval_opts_new's defaults for those not
 * set), or null for a report rebuilt from results files. */
static json_t *limits_json(const sbx_eval_opts *o)
{
    if (!o)
        return json_null();
    return json_pack("{s:f, s:o, s:i, s:b, s:b, s:f, s:f, s:f, s:f, s:f}",
                     "timeout_s", (double)o->timeout_ns / 1e9,
                     "memory_bytes", o->limits[SBX_LIMIT_MEMORY]
                         ? json_integer((json_int_t)o->limits[SBX_LIMIT_MEMORY]) : json_null(),
                     "retries", (int)o->retries, "isolated_check", o->isolated,
                     "all_tests", o->all_tests, "min_time_s", (double)o->min_ns / 1e9,
                     "time_factor", o->factor, "compile_timeout_s",
                     (double)o->compile_ns / 1e9, "evalplus_min_time_s",
                     (double)o->ep_min_ns / 1e9, "evalplus_time_factor", o->ep_factor);
}

/* The metadata of a report: tool, date, host, inputs, limits (@o, or
 * NULL for a report rebuilt from results files) and @providers. */
static json_t *meta_json(const char *dataset, const char *samples_file,
                         const sbx_eval_opts *o, const char *const *providers)
{
    struct utsname u;
    char date[32], kernel[3 * 65 + 3];
    time_t now = time(NULL);
    struct tm tm;
    json_t *provs = json_array(), *jobs = json_null();
    long cpus;

    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        !strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(date, sizeof date, "unknown");
    if (uname(&u) == 0) {
        snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    } else {
        snprintf(u.nodename, sizeof u.nodename, "unknown");
        snprintf(kernel, sizeof kernel, "unknown");
    }
    if (o) {
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = json_integer(o->jobs ? (json_int_t)o->jobs : cpus > 0 ? (json_int_t)cpus : 1);
    }
    for (const char *const *p = providers; provs && p && *p; p++)
        if (json_array_append_new(provs, json_string(*p)) != 0) {
            json_decref(provs);
            provs = NULL;
        }
    if (!provs || !jobs) {
        json_decref(provs);
        json_decref(jobs);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:o, s:b, s:o, s:o, s:b, s:o}",
                     "version", sbx_version(), "date", date, "host", "name", u.nodename,
                     "kernel", kernel, "dataset", input_json(dataset), "samples",
                     input_json(samples_file), "canonical", samples_file == NULL,
                     "limits", limits_json(o), "jobs", jobs, "rebuilt", o == NULL,
                     "providers", provs);
}

char *sbx_eval_meta_to_json(const char *dataset, const char *samples_file,
                            const sbx_eval_opts *o, const char *const *providers)
{
    json_t *m = dataset ? meta_json(dataset, samples_file, o, providers) : NULL;
    char *s = m ? json_dumps(m, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;

    json_decref(m);
    return s;
}

/* The report's metadata: its columns' providers ("?" for one unknown). */
static json_t *report_meta(const sbx_eval_report *r)
{
    const char **provs = calloc(r->n_cols + 1, sizeof *provs);
    json_t *m;

    if (!provs)
        return NULL;
    for (size_t i = 0; i < r->n_cols; i++)
        provs[i] = *r->cols[i].provider ? r->cols[i].provider : "?";
    m = meta_json(r->dataset, r->samples_file, r->have_opts ? &r->limits : NULL, provs);
    free(provs);
    return m;
}

char *sbx_eval_report_to_json(const sbx_eval_report *r, const unsigned *ks, size_t n_ks)
{
    json_t *o, *cols, *diffs, *files, *meta;
    bool ok;
    char *s = NULL;

    if (!r)
        return NULL;
    o = json_object();
    cols = json_array();
    diffs = json_array();
    files = r->prefix ? json_object() : json_null();
    meta = report_meta(r);
    ok = o && cols && diffs && files && meta;
    for (size_t c = 0; ok && c < r->n_cols; c++)
        ok = json_array_append_new(cols, column_json(&r->cols[c], ks, n_ks)) == 0;
    for (size_t i = 0; ok && i < sbx_eval_samples_count(r->samples); i++)
        if (sbx_eval_report_differs(r, i))
            ok = json_array_append_new(diffs, diff_json(r, i)) == 0;
    if (ok && r->prefix)
        ok = json_object_set_new(files, "markdown", path_of(r->prefix, ".md")) == 0 &&
             json_object_set_new(files, "html", path_of(r->prefix, ".html")) == 0;
    ok = ok && set_str(o, "dataset", r->dataset) && set_str(o, "samples_file", r->samples_file) &&
         json_object_set_new(o, "canonical", json_boolean(r->samples_file == NULL)) == 0 &&
         json_object_set_new(o, "samples",
                             json_integer((json_int_t)sbx_eval_samples_count(r->samples))) == 0 &&
         json_object_set(o, "columns", cols) == 0 &&
         json_object_set_new(o, "agree", json_boolean(json_array_size(diffs) == 0)) == 0 &&
         json_object_set(o, "differences", diffs) == 0 &&
         json_object_set(o, "report", files) == 0 && json_object_set(o, "meta", meta) == 0;
    if (ok)
        s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(cols);
    json_decref(diffs);
    json_decref(files);
    json_decref(meta);
    json_decref(o);
    return s;
}
