/* core/server/compat-fusion-data.c - SandboxFusion's dataset routes,
 * judged by the engine of `polysandbox eval` (<polysandbox/eval.h>)
 *
 *   GET  /list_datasets     the dataset ids this server judges
 *   POST /list_ids          {dataset, config}            -> [id]
 *   POST /get_prompts       {dataset, config, offset, limit} -> [{id, prompt, labels}]
 *   POST /get_prompt_by_id  {dataset, id, config}        -> {id, prompt, labels}
 *   POST /submit            {dataset, id, completion, config} -> EvalResult
 *   POST /get_metrics       {dataset, config, results: [EvalResult]} -> pass@k
 *   POST /get_metrics_function {dataset, config}       -> {function: null}
 *
 * The server keeps no problems of its own: they come in
 * config.provided_data (one row, or a list), as SandboxFusion lets a
 * client submit problems it does not store.  The dataset id (or
 * config.dataset_type) says how to judge them: "humaneval..." rows are
 * HumanEval's (task_id, prompt, test, entry_point), "mbpp..." rows
 * MBPP's (task_id, text, test_list, test_setup_code); others are our
 * generic format (task_id, language, prompt, test, ...).  A row's "id"
 * serves as its task_id when it has none.
 *
 * /submit extracts the code as SandboxFusion does (the first fenced
 * block, or what follows an unclosed fence, else the whole completion;
 * for MBPP cut at [DONE], before "\nassert" or "\n\"\"\"", and before
 * "if __name__ =="), then the engine builds the program (the reference
 * harness's layout) and grades it as `polysandbox eval` would: one run,
 * the marker check, one test entry.  A sandbox error is a SandboxError
 * exec_info, never accepted.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <polysandbox/eval.h>

#include "compat-fusion.h"

/* The dataset ids GET /list_datasets names: each is judged with rows
 * given in config.provided_data. */
static const char *const dataset_ids[] = { "humaneval_python", "mbpp" };

static sbx_eval_format format_of(const char *dataset, json_t *config)
{
    const char *type = json_string_value(json_object_get(config, "dataset_type"));
    const char *name = type ? type : dataset;

    if (!strncasecmp(name, "humaneval", 9) || strstr(name, "HumanEval"))
        return SBX_EVAL_FORMAT_HUMANEVAL;
    if (!strncasecmp(name, "mbpp", 4) || strstr(name, "MBPP"))
        return SBX_EVAL_FORMAT_MBPP;
    return SBX_EVAL_FORMAT_AUTO;
}

/* The rows of config.provided_data (new reference), or NULL having
 * replied 422. */
static json_t *rows_of(srv_req *r, json_t *config)
{
    json_t *pd = json_object_get(config, "provided_data"), *rows;

    if (!pd || json_is_null(pd)) {
        srv_fusion_detail(r, "missing", "config", "config.provided_data is required: this "
                          "server stores no problems, give them with the request", config);
        return NULL;
    }
    rows = json_is_object(pd) ? json_pack("[O]", pd) : json_is_array(pd) ? json_incref(pd) : NULL;
    if (!rows || json_array_size(rows) == 0) {
        json_decref(rows);
        srv_fusion_detail(r, "list_type", "config", "config.provided_data must be a row "
                          "(an object) or a non-empty list of rows", pd);
        return NULL;
    }
    for (size_t i = 0; i < json_array_size(rows); i++)
        if (!json_is_object(json_array_get(rows, i))) {
            json_decref(rows);
            srv_fusion_detail(r, "dict_type", "config", "each row of config.provided_data "
                              "must be an object", pd);
            return NULL;
        }
    return rows;
}

/* @v (a string or an integer) as text in @buf, or NULL. */
static const char *id_text(json_t *v, char *buf, size_t size)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    return NULL;
}

/* SandboxFusion asks by "id", MBPP's rows name it "task_id": either. */
/* A row's id as text ("task_id", else "id"), in @buf. */
static const char *row_id(json_t *row, char *buf, size_t size)
{
    json_t *v = json_object_get(row, "task_id");

    return id_text(v && !json_is_null(v) ? v : json_object_get(row, "id"), buf, size);
}

static bool id_matches(json_t *row, json_t *id)
{
    char a[32], b[32], c[32];
    const char *want = id_text(id, a, sizeof a);
    const char *tid = id_text(json_object_get(row, "task_id"), b, sizeof b);
    const char *rid = id_text(json_object_get(row, "id"), c, sizeof c);

    return want && ((tid && !strcmp(tid, want)) || (rid && !strcmp(rid, want)));
}

static json_t *find_row(json_t *rows, json_t *id)
{
    for (size_t i = 0; i < json_array_size(rows); i++)
        if (id_matches(json_array_get(rows, i), id))
            return json_array_get(rows, i);
    return NULL;
}

static char *join_tests(json_t *row)
{
    json_t *t = json_object_get(row, "test_list");
    srv_bytes b = {0};

    for (size_t i = 0; i < json_array_size(t); i++) {
        const char *s = json_string_value(json_array_get(t, i));
        if (s && (srv_bytes_add(&b, s, strlen(s)) != 0 || srv_bytes_add(&b, "\n", 1) != 0)) {
            srv_bytes_free(&b);
            return NULL;
        }
    }
    if (srv_bytes_add(&b, "", 1) != 0) {
        srv_bytes_free(&b);
        return NULL;
    }
    return b.data;
}

/* The prompt a model is asked with, as SandboxFusion's datasets phrase it. */
static json_t *prompt_of(json_t *row, sbx_eval_format fmt)
{
    json_t *id = json_object_get(row, "id") ? json_object_get(row, "id")
                                            : json_object_get(row, "task_id");
    json_t *o = json_pack("{s:O, s:{}}", "id", id ? id : json_null(), "labels");
    json_t *prompt = json_object_get(row, "prompt");

    if (fmt == SBX_EVAL_FORMAT_MBPP) {
        const char *text = json_string_value(json_object_get(row, "text"));
        char *tests = join_tests(row), *p = NULL;
        if (tests && asprintf(&p, "You are an expert Python programmer, and here is your "
                              "task: %s Your code should pass these tests:\n\n%s",
                              text ? text : "", tests) < 0)
            p = NULL;
        json_object_set_new(o, "prompt", p ? json_string(p) : json_null());
        free(p);
        free(tests);
    } else {
        json_object_set_new(o, "prompt", prompt ? json_incref(prompt) : json_string(""));
    }
    return o;
}

/* ---- code extraction ---------------------------------------------------------------- */

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* SandboxFusion's extraction: *type is fenced, incomplete_fenced,
 * heuristic or empty.  (transfer full) or NULL on ENOMEM. */
static char *extract(const char *completion, sbx_eval_format fmt, const char **type)
{
    size_t len = strlen(completion);
    const char *fence = strstr(completion, "```"), *start = completion, *end = completion + len;
    char *code;

    if (fmt == SBX_EVAL_FORMAT_MBPP) {
        const char *done = strstr(completion, "[DONE]");
        if (done)
            end = done;
    }
    *type = "heuristic";
    if (fence && fence < end) {
        const char *nl = memchr(fence, '\n', (size_t)(end - fence));
        const char *close = nl ? strstr(nl + 1, "```") : NULL;
        start = nl ? nl + 1 : end;
        if (close && close <= end) {
            end = close;
            *type = "fenced";
        } else {
            *type = "incomplete_fenced";
        }
    }
    if (fmt == SBX_EVAL_FORMAT_MBPP) {
        static const char *const stops[] = { "\nassert", "\n\"\"\"", "\nif __name__ ==" };
        for (size_t i = 0; i < 3; i++) {
            const char *s = strstr(start, stops[i]);
            if (s && s < end)
                end = s;
        }
    }
    if (!(code = dup_n(start, (size_t)(end - start))))
        return NULL;
    if (!code[strspn(code, " \t\r\n")])
        *type = "empty";
    return code;
}

/* ---- the engine ----------------------------------------------------------------------- */

/* @row in our format's fields, as one JSONL line (transfer full). */
static char *dataset_line(json_t *row, sbx_eval_format fmt, const char *id)
{
    json_t *o = json_deep_copy(row);
    char *text;

    if (!o)
        return NULL;
    json_object_set_new(o, "task_id", json_string(id));
    if (fmt == SBX_EVAL_FORMAT_MBPP && !json_is_string(json_object_get(o, "text")) &&
        json_is_string(json_object_get(o, "content")))
        json_object_set(o, "text", json_object_get(o, "content"));
    json_object_del(o, "id");
    text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

struct judged {
    sbx_eval_dataset *ds;
    sbx_eval_samples *s;
    sbx_eval_summary *sum;
    char *program;
    json_t *record;           /* the journal line of the graded sample */
};

static void judged_free(struct judged *jd)
{
    sbx_eval_summary_free(jd->sum);
    sbx_eval_samples_free(jd->s);
    sbx_eval_dataset_free(jd->ds);
    free(jd->program);
    json_decref(jd->record);
}

/* Grade @code for @row with the engine.  -1 having replied. */
static int judge(srv_req *r, json_t *row, sbx_eval_format fmt, const char *id,
                 const char *code, double run_timeout, struct judged *jd)
{
    char *line = dataset_line(row, fmt, id), *sample = NULL;
    sbx_eval_opts *o = NULL;
    const char *lang;
    int rc = SBX_E_NOMEM;

    memset(jd, 0, sizeof *jd);
    {
        json_t *sj = json_pack("{s:s, s:s}", "task_id", id, "completion", code);
        sample = sj ? json_dumps(sj, JSON_COMPACT) : NULL;
        json_decref(sj);
    }
    if (!line || !sample)
        goto fail;
    rc = sbx_eval_dataset_parse(r->s->ctx, "config.provided_data", line, strlen(line), fmt,
                                &jd->ds);
    if (rc == SBX_OK)
        rc = sbx_eval_samples_parse(r->s->ctx, jd->ds, "completion", sample, strlen(sample),
                                    &jd->s);
    if (rc != SBX_OK) {
        srv_fusion_detail(r, "value_error", "config",
                          sbx_error_message(sbx_ctx_last_error(r->s->ctx)), row);
        goto out;
    }
    rc = SBX_E_NOMEM;
    if (!(o = sbx_eval_opts_new()))
        goto fail;
    sbx_eval_opts_set_jobs(o, 1);
    sbx_eval_opts_set_timeout(o, (uint64_t)(run_timeout * 1e9));
    sbx_eval_opts_set_allow_partial(o, true);   /* one problem, one completion */
    /* a client that goes away stops its run, as on /v1/run */
    sbx_eval_opts_set_cancel(o, r->cancel);
    /* The program as it runs (the runner the engine adds left out). */
    if ((jd->program = sbx_eval_program(jd->ds, jd->s, 0, &lang))) {
        char *runner = strstr(jd->program, "\n# ---- main.py");
        if (runner)
            runner[1] = '\0';
    }
    rc = sbx_eval_run(r->s->ctx, jd->ds, jd->s, o, &jd->sum);
    if (rc != SBX_OK) {
        srv_fusion_detail(r, "value_error", "config",
                          sbx_error_message(sbx_ctx_last_error(r->s->ctx)), row);
        goto out;
    }
    {
        const sbx_eval_record *rec = sbx_eval_summary_record(jd->sum, 0);
        char *text = rec ? sbx_eval_record_to_json(rec) : NULL;
        jd->record = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
    }
    if (!jd->record) {
        srv_error(r, 500, "internal", NULL, "the sample was not graded");
        rc = SBX_E_INTERNAL;
        goto out;
    }
    rc = SBX_OK;
    goto out;
fail:
    srv_error(r, 500, "nomem", NULL, "out of memory");
out:
    sbx_eval_opts_free(o);
    free(line);
    free(sample);
    if (rc != SBX_OK) {
        judged_free(jd);
        memset(jd, 0, sizeof *jd);
        return -1;
    }
    return 0;
}

/* The graded run as a RunCodeResponse. */
static json_t *exec_info(json_t *rec)
{
    const char *verdict = json_string_value(json_object_get(rec, "verdict"));
    const char *reason = json_string_value(json_object_get(rec, "reason"));
    json_t *tail = json_object_get(rec, "stderr_tail"), *code = json_object_get(rec, "exit_code");
    const char *err = json_is_string(tail) ? json_string_value(tail) : "";
    json_t *sig = json_object_get(rec, "signal");
    bool sandbox_error = verdict && !strcmp(verdict, "sandbox_error");
    bool tle = verdict && (!strcmp(verdict, "timeout") || !strcmp(verdict, "cpu_limit"));
    json_t *rc;

    if (tle || sandbox_error)
        rc = json_null();
    else if (verdict && !strcmp(verdict, "memory_limit"))
        rc = json_integer(137);
    else if (json_is_integer(code))
        rc = json_incref(code);
    else
        rc = json_is_integer(sig) ? json_integer(-json_integer_value(sig)) : json_null();
    return json_pack("{s:s, s:s, s:n, s:{s:s, s:f, s:o, s:s, s:s}, s:n, s:{}}",
                     "status", sandbox_error ? "SandboxError"
                               : verdict && !strcmp(verdict, "passed") ? "Success" : "Failed",
                     "message", sandbox_error && reason ? reason : "",
                     "compile_result",
                     "run_result", "status", sandbox_error ? "Error" : tle ? "TimeLimitExceeded"
                                                                          : "Finished",
                     "execution_time", (double)json_integer_value(json_object_get(rec,
                                                                 "time_ns")) / 1e9,
                     "return_code", rc, "stdout", "", "stderr", err,
                     "executor_pod_name", "files");
}

/* ---- routes -------------------------------------------------------------------------- */

/* dataset and config of a request; -1 having replied. */
static int common(srv_req *r, json_t *j, const char **dataset, json_t **config)
{
    json_t *d = json_object_get(j, "dataset");

    if (!json_is_string(d)) {
        srv_fusion_detail(r, d ? "string_type" : "missing", "dataset",
                          d ? "Input should be a valid string" : "Field required", d ? d : j);
        return -1;
    }
    *dataset = json_string_value(d);
    *config = json_object_get(j, "config");
    if (!json_is_object(*config)) {
        srv_fusion_detail(r, *config ? "dict_type" : "missing", "config",
                          *config ? "Input should be a valid dictionary" : "Field required",
                          *config ? *config : j);
        return -1;
    }
    return 0;
}

static void list_datasets(srv_req *r)
{
    json_t *a = json_array();

    for (size_t i = 0; i < sizeof dataset_ids / sizeof dataset_ids[0]; i++)
        json_array_append_new(a, json_string(dataset_ids[i]));
    srv_reply_json(r, 200, a);
}

static void list_ids(srv_req *r)
{
    json_t *j = srv_fusion_body(r), *config, *rows = NULL, *ids;
    const char *dataset;

    if (!j || common(r, j, &dataset, &config) != 0 || !(rows = rows_of(r, config)))
        goto out;
    ids = json_array();
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i), *id = json_object_get(row, "id");
        if (!id)
            id = json_object_get(row, "task_id");
        json_array_append_new(ids, id ? json_incref(id) : json_null());
    }
    srv_reply_json(r, 200, ids);
out:
    json_decref(rows);
    json_decref(j);
}

/* A whole number >= 0 in @field, left alone when absent; -1 having
 * replied 422. */
static int count_field(srv_req *r, json_t *j, const char *field, json_int_t *out)
{
    json_t *v = json_object_get(j, field);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        srv_fusion_detail(r, "int_type", field, "Input should be an integer >= 0", v);
        return -1;
    }
    *out = json_integer_value(v);
    return 0;
}

static void get_prompts(srv_req *r)
{
    json_t *j = srv_fusion_body(r), *config, *rows = NULL, *out;
    const char *dataset;
    json_int_t offset = 0, limit = -1;

    if (!j || common(r, j, &dataset, &config) != 0 || !(rows = rows_of(r, config)))
        goto done;
    if (count_field(r, j, "offset", &offset) != 0 || count_field(r, j, "limit", &limit) != 0)
        goto done;
    out = json_array();
    for (size_t i = (size_t)offset; i < json_array_size(rows) &&
                                    (limit < 0 || (json_int_t)json_array_size(out) < limit); i++)
        json_array_append_new(out, prompt_of(json_array_get(rows, i), format_of(dataset, config)));
    srv_reply_json(r, 200, out);
done:
    json_decref(rows);
    json_decref(j);
}

static void get_prompt_by_id(srv_req *r)
{
    json_t *j = srv_fusion_body(r), *config, *rows = NULL, *row, *id;
    const char *dataset;

    if (!j || common(r, j, &dataset, &config) != 0 || !(rows = rows_of(r, config)))
        goto out;
    id = json_object_get(j, "id");
    if (!(row = find_row(rows, id))) {
        srv_fusion_detail(r, "value_error", "id", "no row of config.provided_data has this "
                          "id", id ? id : j);
        goto out;
    }
    srv_reply_json(r, 200, prompt_of(row, format_of(dataset, config)));
out:
    json_decref(rows);
    json_decref(j);
}

static void submit(srv_req *r)
{
    json_t *j = srv_fusion_body(r), *config, *rows = NULL, *row, *id, *c, *v, *o;
    const char *dataset, *type, *tid;
    char *code = NULL, *tests = NULL, buf[32];
    double run_timeout;
    sbx_eval_format fmt;
    struct judged jd = {0};
    bool judged = false;

    if (!j || common(r, j, &dataset, &config) != 0)
        goto out;
    c = json_object_get(j, "completion");
    id = json_object_get(j, "id");
    if (!json_is_string(c)) {
        srv_fusion_detail(r, c ? "string_type" : "missing", "completion",
                          c ? "Input should be a valid string" : "Field required", c ? c : j);
        goto out;
    }
    if (!json_is_string(id) && !json_is_integer(id)) {
        srv_fusion_detail(r, id ? "int_type" : "missing", "id",
                          id ? "Input should be an integer or a string" : "Field required",
                          id ? id : j);
        goto out;
    }
    if (!(rows = rows_of(r, config)))
        goto out;
    if (!(row = json_array_size(rows) == 1 ? json_array_get(rows, 0) : find_row(rows, id))) {
        srv_fusion_detail(r, "value_error", "id", "no row of config.provided_data has this "
                          "id", id);
        goto out;
    }
    fmt = format_of(dataset, config);
    {
        const char *lang = json_string_value(json_object_get(config, "language"));
        if (fmt != SBX_EVAL_FORMAT_AUTO && lang && strcmp(lang, "python") != 0) {
            srv_fusion_detail(r, "literal_error", "config", "HumanEval and MBPP problems are "
                              "judged in python here (config.language)",
                              json_object_get(config, "language"));
            goto out;
        }
    }
    run_timeout = fmt == SBX_EVAL_FORMAT_MBPP ? 20 : 10;
    if ((v = json_object_get(config, "run_timeout")) && !json_is_null(v)) {
        if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6) {
            srv_fusion_detail(r, "float_parsing", "config", "config.run_timeout must be a "
                              "number of seconds greater than 0", v);
            goto out;
        }
        run_timeout = json_number_value(v);
    }
    if (!(tid = row_id(row, buf, sizeof buf))) {
        srv_fusion_detail(r, "missing", "config", "the row has no task_id or id", row);
        goto out;
    }
    if (!(code = extract(json_string_value(c), fmt, &type))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        goto out;
    }
    if (judge(r, row, fmt, tid, code, run_timeout, &jd) != 0)
        goto out;
    judged = true;
    if (sbx_eval_record_verdict(sbx_eval_summary_record(jd.sum, 0)) == SBX_VERDICT_SANDBOX_ERROR &&
        sbx_cancel_fired(r->cancel)) {
        srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
        goto out;
    }
    tests = fmt == SBX_EVAL_FORMAT_MBPP ? join_tests(row) : NULL;
    o = json_pack("{s:O, s:b, s:s, s:s?, s:s?, s:[{s:b, s:o, s:{}}], s:s, s:{s:O, s:O, s:O}}",
                  "id", id, "accepted", json_is_true(json_object_get(jd.record, "passed")),
                  "extracted_code", code, "full_code", jd.program, "test_code",
                  tests ? tests : json_string_value(json_object_get(row, "test")),
                  "tests", "passed", json_is_true(json_object_get(jd.record, "passed")),
                  "exec_info", exec_info(jd.record), "test_info",
                  "extracted_type", type, "extra",
                  "verdict", json_object_get(jd.record, "verdict"),
                  "status", json_object_get(jd.record, "status"),
                  "reason", json_object_get(jd.record, "reason"));
    srv_reply_json(r, 200, o);
out:
    if (judged)
        judged_free(&jd);
    free(code);
    free(tests);
    json_decref(rows);
    json_decref(j);
}

/* pass@k of a list of EvalResults (as /submit answers), by id. */
static void get_metrics(srv_req *r)
{
    json_t *j = srv_fusion_body(r), *results, *by = NULL, *out = NULL;
    const char *k;
    json_t *v;
    unsigned ks[] = { 1, 5, 10 };

    if (!j)
        return;
    results = json_object_get(j, "results");
    if (!json_is_array(results)) {
        srv_fusion_detail(r, results ? "list_type" : "missing", "results",
                          results ? "Input should be a valid list" : "Field required",
                          results ? results : j);
        goto done;
    }
    by = json_object();
    for (size_t i = 0; i < json_array_size(results); i++) {
        json_t *e = json_array_get(results, i), *id = json_object_get(e, "id"), *cnt;
        char key[64];
        if (!json_is_object(e) || !json_is_boolean(json_object_get(e, "accepted"))) {
            srv_fusion_detail(r, "value_error", "results", "each result needs id and "
                              "accepted (as /submit answers)", e);
            goto done;
        }
        if (json_is_integer(id))
            snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        else
            snprintf(key, sizeof key, "%.60s", json_is_string(id) ? json_string_value(id) : "");
        if (!(cnt = json_object_get(by, key)))
            json_object_set_new(by, key, cnt = json_pack("[i, i]", 0, 0));
        json_array_set_new(cnt, 0, json_integer(json_integer_value(json_array_get(cnt, 0)) + 1));
        json_array_set_new(cnt, 1, json_integer(json_integer_value(json_array_get(cnt, 1)) +
                                                json_is_true(json_object_get(e, "accepted"))));
    }
    out = json_object();
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
        double sum = 0;
        size_t n = 0;
        json_object_foreach(by, k, v) {
            double p = sbx_eval_pass_at_k((uint64_t)json_integer_value(json_array_get(v, 0)),
                                          (uint64_t)json_integer_value(json_array_get(v, 1)),
                                          ks[q]);
            if (p >= 0) {
                sum += p;
                n++;
            }
        }
        if (n) {
            char name[16];
            snprintf(name, sizeof name, "pass@%u", ks[q]);
            json_object_set_new(out, name, json_real(sum / (double)n));
        }
    }
    srv_reply_json(r, 200, out);
    out = NULL;
done:
    json_decref(out);
    json_decref(by);
    json_decref(j);
}

/* SandboxFusion answers the Python source of a function that computes a
 * dataset's metrics from EvalResults, for the few datasets that define
 * one (MHPP, EvoEval), and null for the others, HumanEval's and MBPP's
 * among them: those are the kinds judged here, whose metrics
 * /get_metrics computes. */
static void get_metrics_function(srv_req *r)
{
    json_t *j = srv_fusion_body(r), *config;
    const char *dataset;

    if (j && common(r, j, &dataset, &config) == 0)
        srv_reply_json(r, 200, json_pack("{s:n}", "function"));
    json_decref(j);
}

static const srv_route routes[] = {
    { SRV_GET, "/list_datasets", list_datasets, 0 },
    { SRV_POST, "/list_ids", list_ids, 0 },
    { SRV_POST, "/get_prompts", get_prompts, 0 },
    { SRV_POST, "/get_prompt_by_id", get_prompt_by_id, 0 },
    { SRV_POST, "/submit", submit, SRV_R_WORKER },
    { SRV_POST, "/get_metrics", get_metrics, 0 },
    { SRV_POST, "/get_metrics_function", get_metrics_function, 0 },
};

int srv_routes_fusion_data(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
