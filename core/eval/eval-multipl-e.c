/* core/eval/eval-multipl-e.c - MultiPL-E (nuprl/MultiPL-E): the reader of its
 * rows and the mapping of its language codes to our templates.
 *
 * A row is HumanEval or MBPP translated to one language: name, language
 * (a code: "py", "js", "cpp", "go_test.go", ...), prompt, tests, and
 * fields read by no evaluator (doctests, original, prompt_terminology,
 * stop_tokens, which the generator uses).  As MultiPL-E's evaluator does,
 * the program is prompt + completion + "\n" + tests and a sample passes
 * when it exits with status 0; each step has 15 s (safe_subprocess)
 * unless --timeout says otherwise.  Its per-language quirks followed
 * here: Java runs the class Problem with assertions on (java -ea, or
 * every assert is a no-op and a wrong completion passes), Go runs as a
 * test file (go test), Bash is bash.  Its evaluator also reads the output
 * of some languages and fails a run that exited 0 (eval_pl.py: "ERROR"
 * on stdout or stderr; eval_php.py: "PHP Parse error" on stdout;
 * eval_go.py: "FAIL" on stdout); so do we, over all the output kept
 * (safe_subprocess keeps about its first 2 KiB, as fast as it reads).  A
 * code that maps to no template is a verdict of each of its samples
 * (no_template, naming the code: not run, not in pass@k), so that the
 * rows of the other languages are still graded.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

typedef struct lang_map {
    const char *code;      /* MultiPL-E's */
    const char *tmpl;      /* ours */
    const char *file;      /* where the program goes when run by @command */
    const char *command;   /* a shell line run instead of the template's steps */
    const core_eval_scan *scan;
} lang_map;

static const core_eval_scan scan_pl = {
    "ERROR", true, true, "printed ERROR (MultiPL-E fails a Perl program that does)"
};
static const core_eval_scan scan_php = {
    "PHP Parse error", true, false,
    "printed \"PHP Parse error\" on stdout (MultiPL-E fails a PHP program that does)"
};
static const core_eval_scan scan_go = {
    "FAIL", true, false, "go test printed FAIL on stdout"
};

static const lang_map langs[] = {
    { "py", "python", NULL, NULL, NULL },
    { "python", "python", NULL, NULL, NULL },
    { "notypes.py", "python", NULL, NULL, NULL },
    { "js", "node", NULL, NULL, NULL },
    { "javascript", "node", NULL, NULL, NULL },
    { "ts", "typescript", NULL, NULL, NULL },
    { "sh", "bash", NULL, NULL, NULL },
    { "cpp", "cpp", NULL, NULL, NULL },
    /* the class is Problem, and the tests are assert statements */
    { "java", "java", "Problem.java",
      "javac -encoding UTF8 -d . Problem.java && "
      "java -ea -cp \".${CLASSPATH:+:$CLASSPATH}\" Problem", NULL },
    { "rs", "rust", NULL, NULL, NULL },
    { "rust", "rust", NULL, NULL, NULL },
    /* a _test.go file of "package main_test" with TestX functions */
    { "go", "go", "main_test.go", "go test main_test.go", &scan_go },
    { "go_test.go", "go", "main_test.go", "go test main_test.go", &scan_go },
    { "rb", "ruby", NULL, NULL, NULL },
    { "php", "php", NULL, NULL, &scan_php },
    { "pl", "perl", NULL, NULL, &scan_pl },
    { "lua", "lua", NULL, NULL, NULL },
    { "r", "r", NULL, NULL, NULL },
};

static const lang_map *find_lang(const char *code)
{
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++)
        if (!strcmp(langs[i].code, code))
            return &langs[i];
    return NULL;
}

static int get_string(const char *path, size_t line, json_t *o, const char *key, char **out)
{
    json_t *v = json_object_get(o, key);

    if (!v || json_is_null(v))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: missing field \"%s\" (multipl-e "
                              "format)", path, line, key);
    if (!json_is_string(v))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: field \"%s\" is not a string "
                              "(multipl-e format)", path, line, key);
    if (!(*out = strdup(json_string_value(v))))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return SBX_OK;
}

int core_eval_multiple_task(sbx_ctx *ctx, const char *path, json_t *o, size_t line,
                            core_eval_task *t)
{
    const lang_map *m;
    char *code = NULL;
    int rc;

    if ((rc = get_string(path, line, o, "language", &code)) != SBX_OK ||
        (rc = get_string(path, line, o, "prompt", &t->prompt)) != SBX_OK ||
        (rc = get_string(path, line, o, "tests", &t->test)) != SBX_OK) {
        free(code);
        return rc;
    }
    m = find_lang(code);
    /* a template named as the code runs a language we do not map */
    if (m && sbx_ctx_find_template(ctx, m->tmpl)) {
        free(code);
        t->scan = m->scan;
        if (!(t->lang = strdup(m->tmpl)) ||
            (m->file && (!(t->program_file = strdup(m->file)) ||
                         !(t->test_command = strdup(m->command)))))
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        return SBX_OK;
    }
    t->lang = code;
    t->no_template = !sbx_ctx_find_template(ctx, code);
    return SBX_OK;
}

int core_eval_multiple_no_template(const core_eval_task *t, sbx_eval_record *rec)
{
    const lang_map *m = find_lang(t->lang);
    char msg[512];

    if (m)
        snprintf(msg, sizeof msg, "MultiPL-E language \"%s\" runs in template '%s', which is "
                 "not configured here (see 'polysandbox templates')", t->lang, m->tmpl);
    else
        snprintf(msg, sizeof msg, "MultiPL-E language \"%.64s\" has no template here: the "
                 "codes with one are py, js, ts, sh, cpp, java, rs, go, rb, php, pl, lua and "
                 "r, or a template of the code's name (see polysandbox-eval(1), MULTIPL-E)",
                 t->lang);
    return core_eval_note_ungraded(rec, SBX_VERDICT_NO_TEMPLATE, "", msg);
}

const core_eval_scan *core_eval_multiple_scan_of(const char *code)
{
    const lang_map *m = find_lang(code);

    return m ? m->scan : NULL;
}

static bool holds(const void *data, size_t len, const char *text)
{
    return data && memmem(data, len, text, strlen(text)) != NULL;
}

const char *core_eval_multiple_scan(const core_eval_scan *scan, const sbx_result *r)
{
    size_t len;
    const void *out;

    if (!scan)
        return NULL;
    out = sbx_result_stdout(r, &len);
    if (scan->on_stdout && holds(out, len, scan->text))
        return scan->reason;
    out = sbx_result_stderr(r, &len);
    if (scan->on_stderr && holds(out, len, scan->text))
        return scan->reason;
    return NULL;
}
