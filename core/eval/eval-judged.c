/* core/eval/eval-judged.c - datasets of judged problems: the native format and
 * readers for the shapes of CodeContests, APPS and LiveCodeBench
 *
 * Every record is hostile: each field is checked for its type, nested
 * JSON (APPS and LiveCodeBench keep their tests as JSON in a string) is
 * parsed within the record's own bytes, which the line cap bounds. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

#define REF_MAX_S 3600.0       /* a reference time past an hour is a typo */

struct jload {
    const char *path;
    size_t line;
    core_eval_task *t;
    size_t cap;
};

#define BAD(l, ...) bad_field(l, __VA_ARGS__)

static int bad_field(const struct jload *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad_field(const struct jload *l, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: %s", l->path, l->line, msg);
}

static int nomem(void)
{
    return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
}

void core_eval_judged_free(core_eval_task *t)
{
    for (size_t i = 0; i < t->n_cases; i++) {
        free(t->cases[i].in);
        free(t->cases[i].out);
    }
    free(t->cases);
    t->cases = NULL;
    t->n_cases = 0;
}

/* A copy of @len bytes at @s, NUL-terminated. */
static char *dup_bytes(const char *s, size_t len)
{
    char *d = malloc(len + 1);

    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* A test's text: a string, or (APPS) a list of strings, one per line. */
static int test_text(const struct jload *l, json_t *v, const char *what, size_t i,
                     char **out, size_t *len)
{
    size_t k, total = 0;
    json_t *e;

    if (json_is_string(v)) {
        *len = json_string_length(v);
        return (*out = dup_bytes(json_string_value(v), *len)) ? SBX_OK : nomem();
    }
    if (!json_is_array(v))
        return BAD(l, "%s of test %zu is not a string (or a list of lines)", what, i);
    json_array_foreach(v, k, e) {
        if (!json_is_string(e))
            return BAD(l, "%s of test %zu: item %zu is not a string", what, i, k);
        total += json_string_length(e) + 1;
    }
    if (!(*out = malloc(total + 1)))
        return nomem();
    *len = 0;
    json_array_foreach(v, k, e) {
        memcpy(*out + *len, json_string_value(e), json_string_length(e));
        *len += json_string_length(e);
        (*out)[(*len)++] = '\n';
    }
    (*out)[*len] = '\0';
    return SBX_OK;
}

static int add_case(struct jload *l, json_t *in, json_t *out, const char *set, size_t i)
{
    core_eval_task *t = l->t;
    core_eval_case *c;
    int rc;

    if (t->n_cases == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        core_eval_case *nc = realloc(t->cases, ncap * sizeof *nc);
        if (!nc)
            return nomem();
        t->cases = nc;
        l->cap = ncap;
    }
    c = &t->cases[t->n_cases];
    memset(c, 0, sizeof *c);
    if (!in || !out)
        return BAD(l, "test %zu of \"%s\" has no %s", i, set, in ? "output" : "input");
    if ((rc = test_text(l, in, "the input", i, &c->in, &c->in_len)) != SBX_OK)
        return rc;
    if ((rc = test_text(l, out, "the output", i, &c->out, &c->out_len)) != SBX_OK) {
        free(c->in);
        return rc;
    }
    t->n_cases++;
    return SBX_OK;
}

/* A list of {"input": ..., "output": ...} objects (LiveCodeBench's also
 * carry "testtype", which must be "stdin"). */
static int case_objects(struct jload *l, json_t *v, const char *set)
{
    size_t i;
    json_t *e;
    int rc;

    if (!json_is_array(v))
        return BAD(l, "field \"%s\" is not a list of {\"input\", \"output\"}", set);
    json_array_foreach(v, i, e) {
        json_t *type = json_object_get(e, "testtype");
        if (!json_is_object(e))
            return BAD(l, "item %zu of \"%s\" is not an object", i, set);
        if (type && !(json_is_string(type) && !strcmp(json_string_value(type), "stdin")))
            return BAD(l, "test %zu of \"%s\" has testtype %s%s%s: only stdin tests are "
                       "judged (function-call tests are not supported)", i, set,
                       json_is_string(type) ? "\"" : "",
                       json_is_string(type) ? json_string_value(type) : "(not a string)",
                       json_is_string(type) ? "\"" : "");
        if ((rc = add_case(l, json_object_get(e, "input"), json_object_get(e, "output"), set,
                           i)) != SBX_OK)
            return rc;
    }
    return SBX_OK;
}

/* Parallel lists {"input": [...], "output": [...]} (CodeContests; APPS
 * names them "inputs" and "outputs"). */
static int case_lists(struct jload *l, json_t *v, const char *set, const char *in_key,
                      const char *out_key)
{
    json_t *in, *out;
    int rc;

    if (!json_is_object(v))
        return BAD(l, "field \"%s\" is not an object of \"%s\" and \"%s\" lists", set,
                   in_key, out_key);
    in = json_object_get(v, in_key);
    out = json_object_get(v, out_key);
    if (!json_is_array(in) || !json_is_array(out))
        return BAD(l, "\"%s\": \"%s\" and \"%s\" must be lists", set, in_key, out_key);
    if (json_array_size(in) != json_array_size(out))
        return BAD(l, "\"%s\": %zu inputs but %zu outputs", set, json_array_size(in),
                   json_array_size(out));
    for (size_t i = 0; i < json_array_size(in); i++)
        if ((rc = add_case(l, json_array_get(in, i), json_array_get(out, i), set, i)) != SBX_OK)
            return rc;
    return SBX_OK;
}

/* A field that holds JSON, as itself or in a string: (transfer full). */
static int nested_json(const struct jload *l, json_t *o, const char *key, json_t **out)
{
    json_t *v = json_object_get(o, key);
    json_error_t err;

    *out = NULL;
    if (!v || json_is_null(v))
        return SBX_OK;
    if (!json_is_string(v)) {
        *out = json_incref(v);
        return SBX_OK;
    }
    if (json_string_length(v) == 0)
        return SBX_OK;
    if (!(*out = json_loadb(json_string_value(v), json_string_length(v),
                            JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err)))
        return BAD(l, "field \"%s\" is a string but not JSON (%s, at character %d)", key,
                   err.text, err.position);
    return SBX_OK;
}

static int set_str(json_t *o, const char *key, char **out)
{
    json_t *v = json_object_get(o, key);

    if (!json_is_string(v))
        return SBX_OK;
    return (*out = strdup(json_string_value(v))) ? SBX_OK : nomem();
}

static int set_lang(core_eval_task *t, const char *lang)
{
    return (t->lang = strdup(lang)) ? SBX_OK : nomem();
}

/* ---- the native format ------------------------------------------------------ */

static int native(struct jload *l, json_t *o)
{
    core_eval_task *t = l->t;
    json_t *v;
    int rc;

    if (!json_is_string(v = json_object_get(o, "language")))
        return BAD(l, "%s field \"language\" (judged format)", v ? "a non-string" : "missing");
    if ((rc = set_lang(t, json_string_value(v))) != SBX_OK)
        return rc;
    if (!(v = json_object_get(o, "tests")))
        return BAD(l, "missing field \"tests\" (judged format)");
    if ((rc = case_objects(l, v, "tests")) != SBX_OK)
        return rc;
    if ((v = json_object_get(o, "compare")) && !json_is_null(v)) {
        int m = json_is_string(v) ? core_eval_cmp_from_name(json_string_value(v)) : -1;
        if (m < 0)
            return BAD(l, "field \"compare\" is not \"lines\", \"exact\" or \"numeric\"");
        t->cmp = (core_eval_cmp)m;
    }
    if ((v = json_object_get(o, "tolerance")) && !json_is_null(v)) {
        double d = json_number_value(v);
        if (!json_is_number(v) || !isfinite(d) || d < 0 || d >= 1)
            return BAD(l, "field \"tolerance\" is not a number from 0 to below 1");
        t->tolerance = d;
    }
    if ((v = json_object_get(o, "reference_time")) && !json_is_null(v)) {
        double d = json_number_value(v);
        if (!json_is_number(v) || !isfinite(d) || d <= 0 || d > REF_MAX_S)
            return BAD(l, "field \"reference_time\" is not a number of seconds above 0 "
                       "and at most %.0f", REF_MAX_S);
        t->ref_ns = (uint64_t)(d * 1e9);
        if (!t->ref_ns)
            t->ref_ns = 1;
    }
    if ((rc = set_str(o, "prompt", &t->prompt)) != SBX_OK)
        return rc;
    if ((v = json_object_get(o, "canonical_solution")) && !json_is_null(v) && !json_is_string(v))
        return BAD(l, "field \"canonical_solution\" is not a string");
    return set_str(o, "canonical_solution", &t->canonical);
}

/* ---- CodeContests (deepmind/code_contests) ------------------------------------- */

/* Its solutions' language codes: 2 is C++, 3 Python 3. */
#define CC_CPP 2
#define CC_PYTHON3 3

static int code_contests(struct jload *l, json_t *o)
{
    static const char *const sets[] = { "public_tests", "private_tests", "generated_tests" };
    core_eval_task *t = l->t;
    json_t *sol = json_object_get(o, "solutions");
    int rc;

    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(o, sets[i]);
        if (v && !json_is_null(v) && (rc = case_lists(l, v, sets[i], "input", "output")) != SBX_OK)
            return rc;
    }
    if ((rc = set_str(o, "description", &t->prompt)) != SBX_OK)
        return rc;
    /* The reference: the first Python 3 solution, else the first C++ one. */
    if (json_is_object(sol)) {
        json_t *langs = json_object_get(sol, "language"), *code = json_object_get(sol, "solution");
        for (int want = CC_PYTHON3; want >= CC_CPP && !t->canonical; want--)
            for (size_t i = 0; json_is_array(langs) && json_is_array(code) &&
                               i < json_array_size(langs) && !t->canonical; i++) {
                json_t *s = json_array_get(code, i);
                if (json_integer_value(json_array_get(langs, i)) != want || !json_is_string(s))
                    continue;
                if (!(t->canonical = strdup(json_string_value(s))))
                    return nomem();
                if (want == CC_CPP && !(t->canonical_lang = strdup("cpp")))
                    return nomem();
            }
    }
    return set_lang(t, "python");
}

/* ---- APPS (codeparrot/apps) ------------------------------------------------------- */

static int apps(struct jload *l, json_t *o)
{
    core_eval_task *t = l->t;
    json_t *io = NULL, *sols = NULL;
    int rc;

    if ((rc = nested_json(l, o, "input_output", &io)) != SBX_OK)
        return rc;
    if (!io) {
        rc = BAD(l, "field \"input_output\" is missing or empty: the problem has no tests");
    } else if (json_object_get(io, "fn_name")) {
        rc = BAD(l, "a call-based problem (\"fn_name\" in \"input_output\"): only stdin "
                 "problems are judged");
    } else {
        rc = case_lists(l, io, "input_output", "inputs", "outputs");
    }
    json_decref(io);
    if (rc == SBX_OK)
        rc = set_str(o, "question", &t->prompt);
    if (rc == SBX_OK)
        rc = nested_json(l, o, "solutions", &sols);
    if (rc == SBX_OK && json_is_string(json_array_get(sols, 0)) &&
        !(t->canonical = strdup(json_string_value(json_array_get(sols, 0)))))
        rc = nomem();
    json_decref(sols);
    return rc == SBX_OK ? set_lang(t, "python") : rc;
}

/* ---- LiveCodeBench (livecodebench/code_generation_lite) ------------------------- */

static int livecodebench(struct jload *l, json_t *o)
{
    static const char *const sets[] = { "public_test_cases", "private_test_cases" };
    core_eval_task *t = l->t;
    int rc;

    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(o, sets[i]), *cases = NULL;
        /* The release files keep private tests as base64(zlib(pickle(JSON))):
         * a pickle is code, never run here.  Decoded files hold JSON. */
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
                s++;
            if (*s && *s != '[')
                return BAD(l, "field \"%s\" is encoded (base64 of zlib of a pickle), not "
                           "JSON: decode it first (see polysandbox-eval(1), JUDGED PROBLEMS)",
                           sets[i]);
        }
        if ((rc = nested_json(l, o, sets[i], &cases)) != SBX_OK)
            return rc;
        rc = cases ? case_objects(l, cases, sets[i]) : SBX_OK;
        json_decref(cases);
        if (rc != SBX_OK)
            return rc;
    }
    if ((rc = set_str(o, "question_content", &t->prompt)) != SBX_OK)
        return rc;
    return set_lang(t, "python");
}

int core_eval_judged_task(sbx_ctx *ctx, const char *path, sbx_eval_format fmt, json_t *o,
                          size_t line, core_eval_task *t)
{
    struct jload l = { path, line, t, 0 };
    int rc;

    t->tolerance = 1e-6;
    switch (fmt) {
    case SBX_EVAL_FORMAT_CODECONTESTS: rc = code_contests(&l, o); break;
    case SBX_EVAL_FORMAT_APPS: rc = apps(&l, o); break;
    case SBX_EVAL_FORMAT_LIVECODEBENCH: rc = livecodebench(&l, o); break;
    case SBX_EVAL_FORMAT_JUDGED:
    default: rc = native(&l, o); break;
    }
    if (rc == SBX_OK && t->n_cases == 0)
        rc = BAD(&l, "no tests: a judged problem needs at least one");
    if (rc == SBX_OK && !sbx_ctx_find_template(ctx, t->lang))
        rc = BAD(&l, "unknown language '%s' (no template of that name: see "
                 "'polysandbox templates')", t->lang);
    return rc;
}
