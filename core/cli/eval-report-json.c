/* core/cli/eval-report-json.c - compare's report as one JSON object
 * (polysandbox compare --json), for scripts and CI: the same figures as
 * the Markdown table, from each column's summary, and the samples whose
 * verdicts differ. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "eval-report.h"

/* A string or null; false on ENOMEM. */
static bool set_str(json_t *o, const char *key, const char *s)
{
    return json_object_set_new(o, key, s ? json_string(s) : json_null()) == 0;
}

/* "PREFIX.EXT" as a JSON string, or NULL on ENOMEM. */
static json_t *path_of(const char *prefix, const char *ext)
{
    size_t n = strlen(prefix) + strlen(ext) + 1;
    char *p = malloc(n);
    json_t *j;

    if (!p)
        return NULL;
    snprintf(p, n, "%s%s", prefix, ext);
    j = json_string(p);
    free(p);
    return j;
}

static json_t *column_json(const cli_report *r, const cli_column *c)
{
    const cli_eval_args *a = r->args;
    json_t *o = json_object(), *set = json_array(), *sum = NULL;
    char *s = sbx_eval_summary_to_json(c->sum, a->ks, a->n_ks);
    size_t graded = sbx_eval_summary_done(c->sum) -
                    sbx_eval_summary_count(c->sum, SBX_VERDICT_SANDBOX_ERROR);
    bool ok = o && set && s && (sum = json_loads(s, 0, NULL));

    for (size_t i = 0; ok && i < c->n_settings; i++)
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

static json_t *diff_json(const cli_report *r, size_t i)
{
    json_t *o = json_object(), *v = json_object(), *why = json_object(), *out = json_object();
    const sbx_eval_record *first = NULL;
    bool ok = o && v && why && out;

    for (size_t c = 0; ok && c < r->n_cols; c++) {
        const sbx_eval_record *rec = sbx_eval_summary_record(r->cols[c].sum, i);
        if (rec && !first)
            first = rec;
        ok = set_str(v, r->cols[c].label,
                     rec ? sbx_eval_verdict_name(sbx_eval_record_verdict(rec)) : NULL) &&
             set_str(why, r->cols[c].label, rec ? sbx_eval_record_reason(rec) : NULL) &&
             set_str(out, r->cols[c].label, rec ? sbx_eval_record_output(rec) : NULL);
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

int cli_report_json(const cli_report *r, FILE *f)
{
    const cli_eval_args *a = r->args;
    json_t *o = json_object(), *cols = json_array(), *diffs = json_array();
    json_t *files = json_object(), *meta = r->meta ? cli_eval_meta_json(r->meta) : json_null();
    bool ok = o && cols && diffs && files && meta;
    int rc = 0;

    for (size_t c = 0; ok && c < r->n_cols; c++)
        ok = json_array_append_new(cols, column_json(r, &r->cols[c])) == 0;
    for (size_t d = 0; ok && d < r->n_diffs; d++)
        ok = json_array_append_new(diffs, diff_json(r, r->diffs[d])) == 0;
    ok = ok && json_object_set_new(files, "markdown", path_of(r->prefix, ".md")) == 0 &&
         json_object_set_new(files, "html", path_of(r->prefix, ".html")) == 0;
    ok = ok && set_str(o, "dataset", a->dataset) && set_str(o, "samples_file", a->samples) &&
         json_object_set_new(o, "canonical", json_boolean(a->canonical)) == 0 &&
         json_object_set_new(o, "samples",
                             json_integer((json_int_t)sbx_eval_samples_count(r->samples))) == 0 &&
         json_object_set(o, "columns", cols) == 0 &&
         json_object_set_new(o, "agree", json_boolean(r->n_diffs == 0)) == 0 &&
         json_object_set(o, "differences", diffs) == 0 &&
         json_object_set(o, "report", files) == 0 && json_object_set(o, "meta", meta) == 0;
    if (!ok)
        rc = ENOMEM;
    else if (json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(10)) != 0 || fputc('\n', f) == EOF)
        rc = EIO;
    json_decref(cols);
    json_decref(diffs);
    json_decref(files);
    json_decref(meta);
    json_decref(o);
    return rc;
}
