/* core/eval-evalplus.c - HumanEval+ and MBPP+ (EvalPlus): the reader of
 * their records and the keeper's part of the runner that grades a sample
 * on the base inputs, then on the extra ones.
 *
 * As EvalPlus does, the expected outputs are the canonical solution's on
 * each input (prompt + canonical_solution, called with a deep copy of the
 * arguments), computed in the sandbox by the runner's own process, which
 * never runs the completion; the completion answers calls in a child, as
 * with --isolated-check, so nothing of its objects reaches the
 * comparison.  An answer matches when it equals the expected one or, with
 * a tolerance (the task's atol, or 1e-6 for a float answer when atol is
 * 0), when it has the same type and length and every number is within
 * atol + 1e-7 x |expected| (numpy.allclose's test, which EvalPlus uses).
 * A sample passes "base" when every base input matches; "base + extra"
 * when the plus inputs match too.  The task's own "test" or "assertion"
 * code (MBPP+ ships one) is not run: EvalPlus grades by the inputs.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "eval-int.h"

/* "PATH:LINE: ..." for the record at @line. */
static int bad_field(const char *path, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad_field(const char *path, size_t line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: %s (evalplus format)", path, line, msg);
}

static int get_string(const char *path, size_t line, json_t *o, const char *key, char **out)
{
    json_t *v = json_object_get(o, key);

    if (!v)
        return bad_field(path, line, "missing field \"%s\"", key);
    if (!json_is_string(v))
        return bad_field(path, line, "field \"%s\" is not a string", key);
    if (!(*out = strdup(json_string_value(v))))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return SBX_OK;
}

/* A list of argument lists: every item of @key must be a list. */
static int get_inputs(const char *path, size_t line, json_t *o, const char *key, json_t **out)
{
    json_t *v = json_object_get(o, key), *e;
    size_t i;

    if (!v)
        return bad_field(path, line, "missing field \"%s\"", key);
    if (!json_is_array(v))
        return bad_field(path, line, "field \"%s\" is not a list of argument lists", key);
    json_array_foreach(v, i, e)
        if (!json_is_array(e))
            return bad_field(path, line, "item %zu of \"%s\" is not a list of arguments", i, key);
    *out = v;
    return SBX_OK;
}

/* The entry point goes into the runner's code as a string: a Python
 * identifier of ASCII letters, digits and '_' only. */
static bool identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

int core_eval_evalplus_task(const char *path, json_t *o, size_t line, core_eval_task *t)
{
    json_t *base = NULL, *plus = NULL, *atol = json_object_get(o, "atol"), *both;
    int rc;

    if (!(t->lang = strdup("python")))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if ((rc = get_string(path, line, o, "prompt", &t->prompt)) != SBX_OK ||
        (rc = get_string(path, line, o, "entry_point", &t->entry_point)) != SBX_OK ||
        (rc = get_string(path, line, o, "canonical_solution", &t->canonical)) != SBX_OK ||
        (rc = get_inputs(path, line, o, "base_input", &base)) != SBX_OK ||
        (rc = get_inputs(path, line, o, "plus_input", &plus)) != SBX_OK)
        return rc;
    if (!identifier(t->entry_point))
        return bad_field(path, line, "field \"entry_point\" is not a Python identifier "
                   "(ASCII letters, digits and _)");
    if (atol && !json_is_null(atol)) {
        if (!json_is_number(atol) || !isfinite(json_number_value(atol)) ||
            json_number_value(atol) < 0)
            return bad_field(path, line, "field \"atol\" is not a finite number >= 0");
        t->atol = json_number_value(atol);
    }
    if (json_array_size(base) + json_array_size(plus) == 0)
        return bad_field(path, line, "no inputs: \"base_input\" and \"plus_input\" are both empty");
    /* ASCII: the runner embeds it in a Python string literal */
    if (!(both = json_pack("[OO]", base, plus)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    t->inputs = json_dumps(both, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    json_decref(both);
    if (!t->inputs)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    return SBX_OK;
}

/* The keeper's code: from the runner of --isolated-check (core/eval-program.c)
 * it has _hear (the completion's "ok"), _proxy (a call in the completion's
 * process), _m (the marker) and ENTRY; it sets _st, 0 on a pass of every
 * input, and prints the base line when the base inputs all matched. */
static const char keeper_head[] =
    "import copy, json, traceback\n"
    "_INPUTS = json.loads(\"";
static const char keeper_tail[] =
    "\")\n"
    "def _is_floats(x):\n"
    "    if isinstance(x, float):\n"
    "        return True\n"
    "    if isinstance(x, (list, tuple)) and x:\n"
    "        return all(isinstance(i, float) for i in x)\n"
    "    return False\n"
    "def _close(a, b, atol):\n"
    "    # numpy.allclose(a, b, rtol=1e-07, atol=atol), element by element\n"
    "    if isinstance(b, (list, tuple)):\n"
    "        return (isinstance(a, (list, tuple)) and len(a) == len(b) and\n"
    "                all(_close(x, y, atol) for x, y in zip(a, b)))\n"
    "    num = (int, float)\n"
    "    if not isinstance(a, num) or not isinstance(b, num):\n"
    "        return False\n"
    "    return a == b or abs(a - b) <= atol + 1e-07 * abs(b)\n"
    "def _same(out, exp):\n"
    "    if out == exp:\n"
    "        return True\n"
    "    atol = ATOL\n"
    "    if atol == 0 and _is_floats(exp):\n"
    "        atol = 1e-06\n"
    "    if atol == 0 or type(out) != type(exp):\n"
    "        return False\n"
    "    if isinstance(exp, (list, tuple)) and len(out) != len(exp):\n"
    "        return False\n"
    "    return _close(out, exp, atol)\n"
    "def _short(v):\n"
    "    s = repr(v)\n"
    "    return s if len(s) <= 200 else s[:200] + \"...\"\n"
    "class DatasetError(Exception):\n"
    "    pass\n"
    "def _grade(which, inputs, ref, fn):\n"
    "    for n, args in enumerate(inputs):\n"
    "        try:\n"
    "            exp = ast.literal_eval(repr(ref(*copy.deepcopy(args))))\n"
    "        except BaseException as e:\n"
    "            raise DatasetError(\"the dataset's canonical_solution failed on %s input %d \"\n"
    "                               \"(or its answer is no Python literal): %s\" %\n"
    "                               (which, n + 1, _short(e)))\n"
    "        out = fn(*args)\n"
    "        if not _same(out, exp):\n"
    "            raise AssertionError(\"%s input %d of %d: %s returned %s, expected %s\" %\n"
    "                                 (which, n + 1, len(inputs), ENTRY, _short(out),\n"
    "                                  _short(exp)))\n"
    "_st = 0\n"
    "try:\n"
    "    if _hear.readline() != b\"ok\\n\":\n"
    "        raise IsolatedCheckError(\"the completion failed before any test\")\n"
    "    with open(\"" CORE_EVAL_CHECK_FILE "\", encoding=\"utf-8\") as _f:\n"
    "        _code = compile(_f.read(), \"" CORE_EVAL_CHECK_FILE "\", \"exec\")\n"
    "    _g = {\"__name__\": \"__reference__\"}\n"
    "    exec(_code, _g)\n"
    "    _grade(\"base\", _INPUTS[0], _g[ENTRY], _proxy(ENTRY))\n"
    "    try:\n"
    "        sys.stdout.flush()\n"
    "    except Exception:\n"
    "        pass\n"
    "    if _m:\n"
    "        os.write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX CORE_EVAL_MARKER_BASE "\" + _m + "
    "b\"\\n\")\n"
    "    _grade(\"plus\", _INPUTS[1], _g[ENTRY], _proxy(ENTRY))\n"
    "except BaseException:\n"
    "    traceback.print_exc()\n"
    "    _st = 1\n";

char *core_eval_evalplus_check(const core_eval_task *t)
{
    size_t n = strlen(t->inputs), len = 0;
    char atol[64];
    int alen;
    char *s;

    /* every '\\' and '"' escaped; %.17g gives back the same double */
    alen = snprintf(atol, sizeof atol, "ATOL = float(\"%.17g\")\n", t->atol);
    if (alen < 0 || (size_t)alen >= sizeof atol ||
        !(s = malloc(sizeof keeper_head + 2 * n + sizeof keeper_tail + (size_t)alen)))
        return NULL;
    memcpy(s, atol, (size_t)alen);
    len = (size_t)alen;
    memcpy(s + len, keeper_head, sizeof keeper_head - 1);
    len += sizeof keeper_head - 1;
    for (size_t i = 0; i < n; i++) {
        if (t->inputs[i] == '\\' || t->inputs[i] == '"')
            s[len++] = '\\';
        s[len++] = t->inputs[i];
    }
    memcpy(s + len, keeper_tail, sizeof keeper_tail);
    return s;
}
