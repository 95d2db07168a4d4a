/* core/eval/eval-provenance.c - what a results record was graded against: the
 * digests of the dataset and the samples as parsed, and the options that
 * change verdicts; each record carries it ("run"), so that a resume can
 * tell results of another run from its own (sbx_eval_journal_check)
 *
 * The digests are of the parsed fields, not of the files' bytes, so that
 * the same records read from a .jsonl, its .gz or a request body digest
 * alike, and a samples file's extra fields (a model's metadata) do not
 * count: only what decides a verdict does.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

typedef crypto_hash_sha256_state hstate;

/* Fields are length-prefixed, NULL apart from "": no two inputs hash alike. */
static void put_u64(hstate *h, uint64_t v)
{
    unsigned char b[8];

    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    crypto_hash_sha256_update(h, b, sizeof b);
}

static void put_mem(hstate *h, const void *p, size_t n)
{
    put_u64(h, n);
    crypto_hash_sha256_update(h, p, n);
}

static void put_str(hstate *h, const char *s)
{
    if (!s) {
        put_u64(h, UINT64_MAX);
        return;
    }
    put_mem(h, s, strlen(s));
}

static void put_f64(hstate *h, double d)
{
    uint64_t v;

    memcpy(&v, &d, sizeof v);
    put_u64(h, v);
}

static void put_task(hstate *h, const core_eval_task *t)
{
    put_str(h, t->id);
    put_str(h, t->lang);
    put_str(h, t->prompt);
    put_str(h, t->canonical);
    put_str(h, t->test);
    put_str(h, t->entry_point);
    put_str(h, t->setup);
    for (size_t i = 0; t->tests && t->tests[i]; i++)
        put_str(h, t->tests[i]);
    put_str(h, NULL);
    put_str(h, t->test_command);
    put_str(h, t->program_file);
    put_u64(h, t->n_files);
    for (size_t i = 0; i < t->n_files; i++) {
        put_str(h, t->files[i].path);
        put_mem(h, t->files[i].data, t->files[i].len);
    }
    put_u64(h, t->n_cases);
    for (size_t i = 0; i < t->n_cases; i++) {
        put_mem(h, t->cases[i].in, t->cases[i].in_len);
        put_mem(h, t->cases[i].out, t->cases[i].out_len);
    }
    put_u64(h, (uint64_t)t->cmp);
    put_f64(h, t->tolerance);
    put_u64(h, t->ref_ns);
    put_str(h, t->canonical_lang);
    put_str(h, t->inputs);
    put_f64(h, t->atol);
    put_u64(h, t->no_template);
}

static void hex_of(hstate *h, char *hex)
{
    unsigned char out[crypto_hash_sha256_BYTES];

    crypto_hash_sha256_final(h, out);
    sodium_bin2hex(hex, 2 * sizeof out + 1, out, sizeof out);
}

static void dataset_digest(const sbx_eval_dataset *ds, char *hex)
{
    hstate h;

    crypto_hash_sha256_init(&h);
    put_str(&h, sbx_eval_format_name(ds->fmt));
    put_u64(&h, ds->n);
    for (size_t i = 0; i < ds->n; i++)
        put_task(&h, &ds->tasks[i]);
    hex_of(&h, hex);
}

/* By task id rather than position: the same samples against a dataset
 * whose tasks moved still name the same tasks. */
static void samples_digest(const sbx_eval_dataset *ds, const sbx_eval_samples *s, char *hex)
{
    hstate h;

    crypto_hash_sha256_init(&h);
    put_u64(&h, s->n);
    for (size_t i = 0; i < s->n; i++) {
        put_str(&h, ds->tasks[s->v[i].task].id);
        put_str(&h, s->v[i].completion);
        put_str(&h, s->v[i].lang);
        put_u64(&h, s->v[i].whole);
    }
    hex_of(&h, hex);
}

json_t *core_eval_provenance(const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                             const sbx_eval_opts *o)
{
    char dh[2 * crypto_hash_sha256_BYTES + 1], sh[sizeof dh];
    json_t *p, *limits = json_object();
    int bad;

    if (sodium_init() < 0 || !limits)
        return json_decref(limits), NULL;
    dataset_digest(ds, dh);
    samples_digest(ds, s, sh);
    for (int i = 0; i < SBX_LIMIT_COUNT; i++)
        if (o->limits[i] && json_object_set_new(limits, sbx_limit_name((sbx_limit)i),
                                                json_integer((json_int_t)o->limits[i])) != 0)
            return json_decref(limits), NULL;
    /* MultiPL-E without a timeout of the caller's: its own, per task (0) */
    p = json_pack("{s:s, s:s, s:s, s:I, s:b, s:o}", "dataset", dh, "samples", sh,
                  "format", sbx_eval_format_name(ds->fmt), "timeout_ns",
                  (json_int_t)(ds->fmt == SBX_EVAL_FORMAT_MULTIPLE && !o->timeout_set
                                   ? 0 : o->timeout_ns),
                  "isolated_check", (int)o->isolated, "limits", limits);
    if (p && ds->fmt == SBX_EVAL_FORMAT_EVALPLUS) {
        /* EvalPlus's per-input limits decide its verdicts */
        bad = json_object_set_new(p, "evalplus_min_time_ns",
                                  json_integer((json_int_t)o->ep_min_ns)) |
              json_object_set_new(p, "evalplus_time_factor", json_real(o->ep_factor));
        if (bad)
            return json_decref(p), NULL;
    }
    if (!p || !core_eval_judged(ds))
        return p;
    /* the options of judged problems decide only theirs */
    bad = json_object_set_new(p, "all_tests", json_boolean(o->all_tests)) |
          json_object_set_new(p, "min_time_ns", json_integer((json_int_t)o->min_ns)) |
          json_object_set_new(p, "time_factor", json_real(o->factor)) |
          json_object_set_new(p, "compile_timeout_ns", json_integer((json_int_t)o->compile_ns));
    if (bad)
        return json_decref(p), NULL;
    return p;
}

/* A value as the message shows it: a digest shortened, others as JSON. */
static char *shown(const char *key, json_t *v)
{
    if (!v)
        return strdup("none");
    if (json_is_string(v) && (!strcmp(key, "dataset") || !strcmp(key, "samples"))) {
        const char *s = json_string_value(v);
        char *t = malloc(32);
        if (t)
            snprintf(t, 32, "sha256 %.12s...", s);
        return t;
    }
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
}

/* The first key of @a that @b lacks or holds otherwise, or NULL. */
static const char *first_difference(json_t *a, json_t *b)
{
    const char *key;
    json_t *v;

    json_object_foreach(a, key, v)
        if (!json_equal(v, json_object_get(b, key)))
            return key;
    return NULL;
}

int core_eval_provenance_check(const json_t *want, json_t *rec, const char *path,
                               size_t lineno)
{
    static const char *const what[][2] = {
        { "dataset", "another dataset" }, { "samples", "other samples" },
        { "format", "another dataset format" }, { "timeout_ns", "another timeout" },
        { "isolated_check", "another isolated check setting" },
        { "limits", "other limits" }, { "all_tests", "another all_tests setting" },
        { "min_time_ns", "another min_time" }, { "time_factor", "another time_factor" },
        { "compile_timeout_ns", "another compile_timeout" },
        { "evalplus_min_time_ns", "another evalplus_min_time" },
        { "evalplus_time_factor", "another evalplus_time_factor" },
    };
    json_t *got = json_object_get(rec, "run"), *w = (json_t *)want;
    const char *key, *label;
    char *was, *now;
    int rc;

    /* records written before 0.3 carry none: only their samples are checked */
    if (!got || !want)
        return SBX_OK;
    if (!json_is_object(got))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: not a result record (\"run\" is not "
                              "an object)", path, lineno);
    if (!(key = first_difference(w, got)) && !(key = first_difference(got, w)))
        return SBX_OK;
    label = key;
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++)
        if (!strcmp(what[i][0], key))
            label = what[i][1];
    was = shown(key, json_object_get(got, key));
    now = shown(key, json_object_get(w, key));
    rc = core_error_set(SBX_E_INVAL, NULL, "%s:%zu: these results were graded with %s "
                        "(\"%s\": %s in the results, %s now): give the same, or start "
                        "afresh", path, lineno, label, key, was ? was : "?", now ? now : "?");
    free(was);
    free(now);
    return rc;
}
