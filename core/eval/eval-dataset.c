/* core/eval/eval-dataset.c - datasets (HumanEval, MBPP, generic, ...) and samples */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"
#include "strv.h"

static const char *const format_names[] = {
    "auto", "humaneval", "mbpp", "generic", "judged", "codecontests", "apps", "livecodebench",
    "evalplus", "multipl-e"
};

const char *sbx_eval_format_name(sbx_eval_format f)
{
    if ((unsigned)f >= sizeof format_names / sizeof format_names[0])
        return NULL;
    return format_names[f];
}

static void task_free(core_eval_task *t)
{
    free(t->id);
    free(t->lang);
    free(t->prompt);
    free(t->canonical);
    free(t->test);
    free(t->entry_point);
    free(t->setup);
    core_strv_free(t->tests);
    free(t->test_command);
    free(t->program_file);
    for (size_t i = 0; i < t->n_files; i++) {
        free(t->files[i].path);
        free(t->files[i].data);
    }
    free(t->files);
    free(t->canonical_lang);
    free(t->inputs);
    core_eval_judged_free(t);
}

void sbx_eval_dataset_free(sbx_eval_dataset *ds)
{
    if (!ds)
        return;
    for (size_t i = 0; i < ds->n; i++)
        task_free(&ds->tasks[i]);
    free(ds->tasks);
    free(ds->path);
    free(ds);
}

sbx_eval_format sbx_eval_dataset_format(const sbx_eval_dataset *ds)
{
    return ds ? ds->fmt : SBX_EVAL_FORMAT_AUTO;
}

size_t sbx_eval_dataset_size(const sbx_eval_dataset *ds)
{
    return ds ? ds->n : 0;
}

const char *sbx_eval_dataset_task_id(const sbx_eval_dataset *ds, size_t i)
{
    return ds && i < ds->n ? ds->tasks[i].id : NULL;
}

bool core_eval_judged(const sbx_eval_dataset *ds)
{
    return ds->fmt >= SBX_EVAL_FORMAT_JUDGED && ds->fmt <= SBX_EVAL_FORMAT_LIVECODEBENCH;
}

size_t core_eval_find_task(const sbx_eval_dataset *ds, const char *id)
{
    /* Linear: datasets hold hundreds of tasks and this runs once per
     * sample line at load time. */
    for (size_t i = 0; i < ds->n; i++)
        if (!strcmp(ds->tasks[i].id, id))
            return i;
    return (size_t)-1;
}

/* ---- loading ---------------------------------------------------------------- */

struct load {
    sbx_ctx *ctx;
    sbx_eval_dataset *ds;
    size_t cap;
};

static sbx_eval_format guess_format(json_t *o)
{
    /* the judged shapes first: LiveCodeBench has "platform", APPS
     * "difficulty", and the native one "language" as the generic one */
    if (json_object_get(o, "question_id") && json_object_get(o, "public_test_cases"))
        return SBX_EVAL_FORMAT_LIVECODEBENCH;
    if (json_object_get(o, "public_tests") && json_object_get(o, "name"))
        return SBX_EVAL_FORMAT_CODECONTESTS;
    if (json_object_get(o, "input_output") && json_object_get(o, "problem_id"))
        return SBX_EVAL_FORMAT_APPS;
    if (json_is_array(json_object_get(o, "tests")) && json_object_get(o, "language"))
        return SBX_EVAL_FORMAT_JUDGED;
    /* MultiPL-E's tests are one string, and its rows are named */
    if (json_is_string(json_object_get(o, "tests")) && json_object_get(o, "name") &&
        json_object_get(o, "language") && json_object_get(o, "prompt"))
        return SBX_EVAL_FORMAT_MULTIPLE;
    /* HumanEval+ and MBPP+ carry HumanEval's (or MBPP's) fields too */
    if (json_object_get(o, "base_input") && json_object_get(o, "plus_input"))
        return SBX_EVAL_FORMAT_EVALPLUS;
    if (json_object_get(o, "entry_point") && json_object_get(o, "prompt"))
        return SBX_EVAL_FORMAT_HUMANEVAL;
    if (json_object_get(o, "test_list"))
        return SBX_EVAL_FORMAT_MBPP;
    if (json_object_get(o, "language"))
        return SBX_EVAL_FORMAT_GENERIC;
    return SBX_EVAL_FORMAT_AUTO;
}

/* A string field: *out (transfer full) or NULL when absent and optional. */
static int get_str(const struct load *l, json_t *o, size_t line, const char *key,
                   bool required, char **out)
{
    json_t *v = json_object_get(o, key);

    *out = NULL;
    if (!v || json_is_null(v)) {
        if (!required)
            return SBX_OK;
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: missing field \"%s\" (%s format)",
                              l->ds->path, line, key, sbx_eval_format_name(l->ds->fmt));
    }
    if (!json_is_string(v))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"%s\" is not a string",
                              l->ds->path, line, key);
    if (!(*out = strdup(json_string_value(v))))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return SBX_OK;
}

static int get_str_list(const struct load *l, json_t *o, size_t line, const char *key,
                        char ***out)
{
    json_t *v = json_object_get(o, key), *e;
    size_t i;

    *out = NULL;
    if (!v)
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: missing field \"%s\" (%s format)",
                              l->ds->path, line, key, sbx_eval_format_name(l->ds->fmt));
    if (!json_is_array(v))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"%s\" is not a list",
                              l->ds->path, line, key);
    if (!(*out = calloc(1, sizeof **out)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    json_array_foreach(v, i, e) {
        if (!json_is_string(e))
            return core_error_set(SBX_E_INVAL, NULL,
                                  "%s:%zu: item %zu of \"%s\" is not a string",
                                  l->ds->path, line, i, key);
        if (core_strv_push(out, json_string_value(e)) != SBX_OK)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    return SBX_OK;
}

static int get_files(const struct load *l, json_t *o, size_t line, core_eval_task *t)
{
    json_t *v = json_object_get(o, "files"), *e;
    const char *k;

    if (!v || json_is_null(v))
        return SBX_OK;
    if (!json_is_object(v))
        return core_error_set(SBX_E_INVAL, NULL,
                              "%s:%zu: field \"files\" is not an object of path: text",
                              l->ds->path, line);
    if (!(t->files = calloc(json_object_size(v) + 1, sizeof *t->files)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    json_object_foreach(v, k, e) {
        core_eval_file *f = &t->files[t->n_files];
        if (!json_is_string(e))
            return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: files[\"%s\"] is not a string",
                                  l->ds->path, line, k);
        if (!*k || k[0] == '/' || strstr(k, ".."))
            return core_error_set(SBX_E_INVAL, NULL,
                                  "%s:%zu: files: \"%s\" is not a relative path inside "
                                  "the work directory", l->ds->path, line, k);
        f->path = strdup(k);
        f->len = json_string_length(e);
        f->data = malloc(f->len + 1);
        if (!f->path || !f->data) {
            free(f->path);
            free(f->data);
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        }
        memcpy(f->data, json_string_value(e), f->len + 1);
        t->n_files++;
    }
    return SBX_OK;
}

/* The field that names a task in each format. */
static const char *id_key(sbx_eval_format fmt)
{
    switch (fmt) {
    case SBX_EVAL_FORMAT_CODECONTESTS:
    case SBX_EVAL_FORMAT_MULTIPLE: return "name";
    case SBX_EVAL_FORMAT_APPS: return "problem_id";
    case SBX_EVAL_FORMAT_LIVECODEBENCH: return "question_id";
    default: return "task_id";
    }
}

static int parse_task(struct load *l, json_t *o, size_t line, core_eval_task *t)
{
    sbx_eval_dataset *ds = l->ds;
    const char *key = id_key(ds->fmt);
    int rc = SBX_OK;

    t->line = line;
    if (!json_object_get(o, key))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: missing field \"%s\" (%s format)",
                              ds->path, line, key, sbx_eval_format_name(ds->fmt));
    if (!(t->id = core_jsonl_field_id(o, key)))
        return core_error_set(SBX_E_INVAL, NULL,
                              "%s:%zu: field \"%s\" is not a string or an integer",
                              ds->path, line, key);
    if (core_eval_judged(ds))
        return core_eval_judged_task(l->ctx, ds->path, ds->fmt, o, line, t);
    switch (ds->fmt) {
    case SBX_EVAL_FORMAT_EVALPLUS:
        rc = core_eval_evalplus_task(ds->path, o, line, t);
        break;
    case SBX_EVAL_FORMAT_MULTIPLE:
        rc = core_eval_multiple_task(l->ctx, ds->path, o, line, t);
        break;
    case SBX_EVAL_FORMAT_HUMANEVAL:
        if (!(t->lang = strdup("python")))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        if (rc == SBX_OK) rc = get_str(l, o, line, "prompt", true, &t->prompt);
        if (rc == SBX_OK) rc = get_str(l, o, line, "test", true, &t->test);
        if (rc == SBX_OK) rc = get_str(l, o, line, "entry_point", true, &t->entry_point);
        if (rc == SBX_OK) rc = get_str(l, o, line, "canonical_solution", false, &t->canonical);
        if (rc == SBX_OK && !t->entry_point[0])
            rc = core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"entry_point\" is empty",
                                ds->path, line);
        break;
    case SBX_EVAL_FORMAT_MBPP:
        if (!(t->lang = strdup("python")))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        if (rc == SBX_OK) rc = get_str_list(l, o, line, "test_list", &t->tests);
        if (rc == SBX_OK) rc = get_str(l, o, line, "code", false, &t->canonical);
        if (rc == SBX_OK) rc = get_str(l, o, line, "test_setup_code", false, &t->setup);
        if (rc == SBX_OK) rc = get_str(l, o, line, "text", false, &t->prompt);
        break;
    case SBX_EVAL_FORMAT_GENERIC:
    default:
        if (rc == SBX_OK) rc = get_str(l, o, line, "language", true, &t->lang);
        if (rc == SBX_OK) rc = get_str(l, o, line, "prompt", false, &t->prompt);
        if (rc == SBX_OK) rc = get_str(l, o, line, "test", false, &t->test);
        if (rc == SBX_OK) rc = get_str(l, o, line, "canonical_solution", false, &t->canonical);
        if (rc == SBX_OK) rc = get_str(l, o, line, "test_command", false, &t->test_command);
        if (rc == SBX_OK) rc = get_str(l, o, line, "program_file", false, &t->program_file);
        if (rc == SBX_OK) rc = get_files(l, o, line, t);
        if (rc == SBX_OK && t->test_command && !t->program_file)
            rc = core_error_set(SBX_E_INVAL, NULL,
                                "%s:%zu: \"test_command\" needs \"program_file\", the file "
                                "the program is written to", ds->path, line);
        if (rc == SBX_OK && t->program_file &&
            (!t->program_file[0] || t->program_file[0] == '/' || strstr(t->program_file, "..")))
            rc = core_error_set(SBX_E_INVAL, NULL,
                                "%s:%zu: \"program_file\" must be a relative path inside the "
                                "work directory", ds->path, line);
        if (rc == SBX_OK && !sbx_ctx_find_template(l->ctx, t->lang)) {
            const char *known = NULL;
            char buf[512] = "";
            size_t off = 0;
            for (size_t i = 0; i < sbx_ctx_template_count(l->ctx) && off < sizeof buf; i++)
                off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? ", " : "",
                                        sbx_template_name(sbx_ctx_template(l->ctx, i)));
            known = off ? buf : "none";
            rc = core_error_set(SBX_E_INVAL, NULL,
                                "%s:%zu: unknown language '%s' (templates: %s)",
                                ds->path, line, t->lang, known);
        }
        break;
    }
    return rc;
}

static int dataset_line(void *ud, json_t *o, size_t line)
{
    struct load *l = ud;
    sbx_eval_dataset *ds = l->ds;
    core_eval_task *t;
    int rc;

    if (ds->fmt == SBX_EVAL_FORMAT_AUTO && (ds->fmt = guess_format(o)) == SBX_EVAL_FORMAT_AUTO)
        return core_error_set(SBX_E_INVAL, NULL,
                              "%s:%zu: cannot tell the dataset's format: expected the fields "
                              "of HumanEval (prompt, test, entry_point), MBPP (test_list), "
                              "the judged format (language, tests), CodeContests (name, "
                              "public_tests), APPS (problem_id, input_output), "
                              "LiveCodeBench (question_id, public_test_cases), EvalPlus "
                              "(base_input, plus_input), MultiPL-E (name, language, prompt, "
                              "tests) or the generic format (language)", ds->path, line);
    if (ds->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        core_eval_task *nt = realloc(ds->tasks, ncap * sizeof *nt);
        if (!nt)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        ds->tasks = nt;
        l->cap = ncap;
    }
    t = &ds->tasks[ds->n++];
    memset(t, 0, sizeof *t);
    if ((rc = parse_task(l, o, line, t)) != SBX_OK)
        return rc;
    for (size_t i = 0; i + 1 < ds->n; i++)
        if (!strcmp(ds->tasks[i].id, t->id))
            return core_error_set(SBX_E_INVAL, NULL,
                                  "%s:%zu: duplicate task_id \"%s\" (first on line %zu)",
                                  ds->path, line, t->id, ds->tasks[i].line);
    return SBX_OK;
}

/* From the file @path, or from @len bytes at @data named @path. */
static int dataset_read(sbx_ctx *ctx, const char *path, const char *data, size_t len,
                        sbx_eval_format fmt, sbx_eval_dataset **out)
{
    struct load l = { ctx, NULL, 0 };
    core_jsonl_caps caps;
    int rc;

    core_error_clear();
    if (!ctx || !path || !out || !sbx_eval_format_name(fmt) || (len && !data))
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_dataset_load: bad argument");
    *out = NULL;
    if (!(l.ds = calloc(1, sizeof *l.ds)) || !(l.ds->path = strdup(path))) {
        sbx_eval_dataset_free(l.ds);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    l.ds->fmt = fmt;
    core_jsonl_caps_of(ctx, &caps);
    rc = data ? core_jsonl_parse(path, data, len, &caps, dataset_line, &l)
              : core_jsonl_read(path, &caps, dataset_line, &l, &l.ds->file);
    if (rc == SBX_OK && l.ds->n == 0)
        rc = core_error_set(SBX_E_INVAL, NULL, "%s: no tasks in the dataset", path);
    if (rc != SBX_OK) {
        sbx_eval_dataset_free(l.ds);
        return rc;
    }
    *out = l.ds;
    return SBX_OK;
}

int sbx_eval_dataset_load(sbx_ctx *ctx, const char *path, sbx_eval_format fmt,
                          sbx_eval_dataset **out)
{
    return dataset_read(ctx, path, NULL, 0, fmt, out);
}

int sbx_eval_dataset_parse(sbx_ctx *ctx, const char *name, const void *data, size_t len,
                           sbx_eval_format fmt, sbx_eval_dataset **out)
{
    return dataset_read(ctx, name, data ? data : "", len, fmt, out);
}

/* ---- samples ---------------------------------------------------------------- */

void sbx_eval_samples_free(sbx_eval_samples *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].completion);
        free(s->v[i].lang);
    }
    free(s->v);
    free(s->path);
    free(s);
}

size_t sbx_eval_samples_count(const sbx_eval_samples *s)
{
    return s ? s->n : 0;
}

struct sload {
    sbx_ctx *ctx;
    const sbx_eval_dataset *ds;
    const char *path;
    sbx_eval_samples *s;
    size_t cap;
};

static int samples_push(struct sload *l, size_t task, const char *completion,
                        const char *lang, bool whole)
{
    sbx_eval_samples *s = l->s;

    if (s->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 256;
        core_eval_sample *nv = realloc(s->v, ncap * sizeof *nv);
        if (!nv)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        s->v = nv;
        l->cap = ncap;
    }
    s->v[s->n].lang = NULL;
    s->v[s->n].whole = whole;
    if (!(s->v[s->n].completion = strdup(completion)) ||
        (lang && !(s->v[s->n].lang = strdup(lang)))) {
        free(s->v[s->n].completion);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    s->v[s->n++].task = task;
    return SBX_OK;
}

/* MultiPL-E's completions file: "completions", a list whose every
 * string is a sample of the task (their "name"). */
static int sample_list(struct sload *l, json_t *list, size_t task, size_t line)
{
    json_t *e;
    size_t i;
    int rc;

    if (!json_is_array(list))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"completions\" is not a list",
                              l->path, line);
    json_array_foreach(list, i, e) {
        if (!json_is_string(e))
            return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: item %zu of \"completions\" is "
                                  "not a string", l->path, line, i);
        if ((rc = samples_push(l, task, json_string_value(e), NULL, false)) != SBX_OK)
            return rc;
    }
    return SBX_OK;
}

static int sample_line(void *ud, json_t *o, size_t line)
{
    struct sload *l = ud;
    json_t *c = json_object_get(o, "completion"), *lang = json_object_get(o, "language");
    bool multiple = l->ds->fmt == SBX_EVAL_FORMAT_MULTIPLE;
    /* MultiPL-E names its tasks; its completions files say "name" */
    const char *key = multiple && json_object_get(o, "name") ? "name" : "task_id";
    char *id;
    size_t task;

    if (!json_object_get(o, key))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: missing field \"%s\"",
                              l->path, line, multiple ? "name" : "task_id");
    if (!(id = core_jsonl_field_id(o, key)))
        return core_error_set(SBX_E_INVAL, NULL,
                              "%s:%zu: field \"%s\" is not a string or an integer",
                              l->path, line, key);
    task = core_eval_find_task(l->ds, id);
    if (task == (size_t)-1) {
        core_error_set(SBX_E_INVAL, NULL, "%s:%zu: unknown %s \"%s\" (not in %s)",
                       l->path, line, key, id, l->ds->path);
        free(id);
        return SBX_E_INVAL;
    }
    free(id);
    if (multiple && json_object_get(o, "completions")) {
        if (c)
            return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: both \"completion\" and "
                                  "\"completions\": which are the samples?", l->path, line);
        return sample_list(l, json_object_get(o, "completions"), task, line);
    }
    /* EvalPlus's samples may hold the whole program ("solution", which
     * its evaluate takes, when there is one, instead of prompt + completion) */
    if (l->ds->fmt == SBX_EVAL_FORMAT_EVALPLUS && json_object_get(o, "solution") &&
        !json_is_null(json_object_get(o, "solution"))) {
        if (!json_is_string(c = json_object_get(o, "solution")))
            return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"solution\" is not a "
                                  "string", l->path, line);
        return samples_push(l, task, json_string_value(c), NULL, true);
    }
    if (!c)
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: missing field \"completion\"%s",
                              l->path, line, l->ds->fmt == SBX_EVAL_FORMAT_EVALPLUS
                                                 ? " (or \"solution\")"
                                             : multiple ? " (or \"completions\")" : "");
    if (!json_is_string(c))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"completion\" is not a string",
                              l->path, line);
    /* judged problems take a program in any language a template runs */
    if (lang && !json_is_null(lang) && core_eval_judged(l->ds)) {
        if (!json_is_string(lang))
            return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"language\" is not a "
                                  "string", l->path, line);
        if (!sbx_ctx_find_template(l->ctx, json_string_value(lang)))
            return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: unknown language '%s' (no "
                                  "template of that name: see 'polysandbox templates')",
                                  l->path, line, json_string_value(lang));
    } else {
        lang = NULL;
    }
    return samples_push(l, task, json_string_value(c), lang ? json_string_value(lang) : NULL,
                        false);
}

static int samples_read(sbx_ctx *ctx, const sbx_eval_dataset *ds, const char *path,
                        const char *data, size_t len, sbx_eval_samples **out)
{
    struct sload l = { ctx, ds, path, NULL, 0 };
    core_jsonl_caps caps;
    int rc;

    core_error_clear();
    if (!ctx || !ds || !path || !out || (len && !data))
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_samples_load: NULL argument");
    *out = NULL;
    if (!(l.s = calloc(1, sizeof *l.s)) || !(l.s->path = strdup(path))) {
        sbx_eval_samples_free(l.s);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    core_jsonl_caps_of(ctx, &caps);
    rc = data ? core_jsonl_parse(path, data, len, &caps, sample_line, &l)
              : core_jsonl_read(path, &caps, sample_line, &l, &l.s->file);
    if (rc == SBX_OK && l.s->n == 0)
        rc = core_error_set(SBX_E_INVAL, NULL, "%s: no samples", path);
    if (rc != SBX_OK) {
        sbx_eval_samples_free(l.s);
        return rc;
    }
    *out = l.s;
    return SBX_OK;
}

int sbx_eval_samples_load(sbx_ctx *ctx, const sbx_eval_dataset *ds, const char *path,
                          sbx_eval_samples **out)
{
    return samples_read(ctx, ds, path, NULL, 0, out);
}

int sbx_eval_samples_parse(sbx_ctx *ctx, const sbx_eval_dataset *ds, const char *name,
                           const void *data, size_t len, sbx_eval_samples **out)
{
    return samples_read(ctx, ds, name, data ? data : "", len, out);
}

int sbx_eval_samples_canonical(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                               sbx_eval_samples **out)
{
    struct sload l = { ctx, ds, NULL, NULL, 0 };

    core_error_clear();
    if (!ctx || !ds || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_samples_canonical: NULL argument");
    *out = NULL;
    if (!(l.s = calloc(1, sizeof *l.s)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    l.s->canonical = true;
    for (size_t i = 0; i < ds->n; i++) {
        int rc;
        if (!ds->tasks[i].canonical) {
            sbx_eval_samples_free(l.s);
            return core_error_set(SBX_E_INVAL, NULL,
                                  "%s:%zu: task \"%s\" has no reference solution (\"%s\")",
                                  ds->path, ds->tasks[i].line, ds->tasks[i].id,
                                  ds->fmt == SBX_EVAL_FORMAT_MBPP ? "code"
                                  : ds->fmt == SBX_EVAL_FORMAT_CODECONTESTS
                                      ? "solutions (Python 3 or C++)"
                                  : ds->fmt == SBX_EVAL_FORMAT_APPS ? "solutions"
                                  : ds->fmt == SBX_EVAL_FORMAT_MULTIPLE
                                      ? "MultiPL-E rows carry none: give --samples"
                                  : "canonical_solution");
        }
        if ((rc = samples_push(&l, i, ds->tasks[i].canonical,
                               ds->tasks[i].canonical_lang, false)) != SBX_OK) {
            sbx_eval_samples_free(l.s);
            return rc;
        }
    }
    *out = l.s;
    return SBX_OK;
}
