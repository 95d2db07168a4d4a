/* core/eval/eval-evalplus.c - HumanEval+ and MBPP+ (EvalPlus): the reader of
 * their records and the keeper's part of the runner that grades a sample
 * on the base inputs, then on the extra ones.
 *
 * As EvalPlus does, the expected outputs are the canonical solution's on
 * each input (prompt + canonical_solution, called with a deep copy of the
 * arguments), computed in the sandbox by the runner's own process, which
 * never runs the completion; the completion answers calls in a child, as
 * with --isolated-check, so nothing of its objects reaches the
 * comparison.  An answer matches as EvalPlus decides: when it equals the
 * expected one, or, with a tolerance (the task's atol, or 1e-6 once an
 * expected answer is a float when atol is 0), when it has the same type
 * and length and every number is within atol + 1e-7 x |expected|
 * (numpy.allclose's test); a few tasks have EvalPlus's special oracles
 * instead (any root of find_zero, answers compared as sets...).
 * A sample passes "base" when every base input matches; "base + extra"
 * when the plus inputs match too.  Each call has EvalPlus's limit,
 * max(floor, factor x the reference's time on that input, timed in the
 * same run); one over it is stopped and the keeper prints a timeout line
 * (with the run's marker, so the completion cannot forge it) that makes
 * the verdict a timeout.  The task's own "test" or "assertion"
 * code (MBPP+ ships one) is not run: EvalPlus grades by the inputs.
 */
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

/* EvalPlus's special oracles: the tasks whose answers it does not compare
 * for equality, keyed as it keys them, by the dataset (here the task id's
 * prefix) and the entry point.  The names are the keeper's (below) and
 * polysandbox-eval(1) lists each with its task id. */
static const struct oracle {
    const char *prefix, *entry, *name;
} oracles[] = {
    { "HumanEval/", "find_zero", "poly_root" },          /* HumanEval/32 */
    { "Mbpp/", "are_equivalent", "any" },                /* Mbpp/164 */
    { "Mbpp/", "sum_div", "or_zero" },                   /* Mbpp/295 */
    { "Mbpp/", "surface_Area", "surface_area" },         /* Mbpp/581 */
    { "Mbpp/", "digit_distance_nums", "digit_distance" },/* Mbpp/558 */
    { "Mbpp/", "similar_elements", "set_eq" },           /* Mbpp/2 */
    { "Mbpp/", "find_char_long", "set_eq" },             /* Mbpp/7 */
    { "Mbpp/", "common_in_nested_lists", "set_eq" },     /* Mbpp/111 */
    { "Mbpp/", "extract_singly", "set_eq" },             /* Mbpp/140 */
    { "Mbpp/", "larg_nnum", "set_eq" },                  /* Mbpp/232 */
    { "Mbpp/", "intersection_array", "set_eq" },         /* Mbpp/249 */
    { "Mbpp/", "find_dissimilar", "set_eq" },            /* Mbpp/579 */
    { "Mbpp/", "Diff", "set_eq" },                       /* Mbpp/769 */
    { "Mbpp/", "check_str", "not_none" },                /* Mbpp/737 */
    { "Mbpp/", "text_match_three", "not_none" },         /* Mbpp/787 */
    { "Mbpp/", "text_starta_endb", "not_none" },         /* Mbpp/794 */
};

/* The special oracle of @t, or NULL when its answers are compared. */
static const char *oracle_of(const core_eval_task *t)
{
    for (size_t i = 0; i < sizeof oracles / sizeof oracles[0]; i++)
        if (t->id && t->entry_point &&
            strncmp(t->id, oracles[i].prefix, strlen(oracles[i].prefix)) == 0 &&
            strcmp(t->entry_point, oracles[i].entry) == 0)
            return oracles[i].name;
    return NULL;
}

/* MBPP+ inputs that EvalPlus reshapes after reading them
 * (mbpp_deserialize_inputs), JSON having no tuples, sets or complex
 * numbers: the shape's name (the keeper's _reshape) and the task numbers,
 * each list ended by 0.  polysandbox-eval(1) lists them. */
static const struct shape {
    const char *name;
    unsigned short ids[24];
} shapes[] = {
    { "tuples", { 2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579,
                  596, 616, 630, 726, 740, 744, 809, 0 } },
    { "inner_tuples", { 63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614,
                        780, 0 } },
    { "first_inner_tuples", { 75, 413, 444, 753, 0 } },
    { "second_tuple", { 106, 750, 0 } },
    { "sets", { 115, 0 } },
    { "float_complex", { 124, 0 } },
    { "first_tuple", { 250, 307, 405, 446, 617, 720, 763, 808, 0 } },
    { "tuple_of_tuples", { 259, 401, 445, 0 } },
    { "first_items_tuples", { 278, 0 } },
    { "complex", { 252, 0 } },
    { "dict_tuples", { 722, 0 } },
    { "all_tuples", { 580, 615, 791, 0 } },
};

/* The reshaping of @t's inputs, or NULL: for "Mbpp/N" rows only. */
static const char *shape_of(const core_eval_task *t)
{
    const char *p;
    char *end;
    unsigned long n;

    if (!t->id || strncmp(t->id, "Mbpp/", 5) != 0)
        return NULL;
    p = t->id + 5;
    if (*p < '0' || *p > '9')
        return NULL;
    n = strtoul(p, &end, 10);
    if (*end)
        return NULL;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (const unsigned short *id = shapes[i].ids; *id; id++)
            if (*id == n)
                return shapes[i].name;
    return NULL;
}

/* The keeper's code: from the runner of --isolated-check (core/eval/eval-program.c)
 * it has _hear (the completion's "ok"), _proxy (a call in the completion's
 * process), _literal (a literal read back), _m (the marker) and ENTRY; it sets _st, 0 on a pass of every
 * input, and prints the base line when the base inputs all matched.
 * EvalPlus's decision on one answer is _match's: equality, or the task's
 * special oracle, then numpy.allclose when a tolerance applies. */
static const char keeper_head[] =
    "import cmath, copy, json, math, signal, time, traceback\n"
    "_INPUTS = json.loads(\"";
static const char keeper_tail[] =
    "\")\n"
    "def _reshape(shape, args):\n"
    "    # the MBPP+ arguments EvalPlus makes tuples, sets or complex numbers\n"
    "    a = list(args)\n"
    "    if shape == \"tuples\":\n"
    "        a = [tuple(x) for x in a]\n"
    "    elif shape == \"inner_tuples\":\n"
    "        a = [[tuple(y) for y in x] for x in a]\n"
    "    elif shape == \"first_inner_tuples\":\n"
    "        a[0] = [tuple(y) for y in a[0]]\n"
    "    elif shape == \"second_tuple\":\n"
    "        a[1] = tuple(a[1])\n"
    "    elif shape == \"sets\":\n"
    "        a[0] = [set(y) if isinstance(y, list) and y else {} for y in a[0]]\n"
    "    elif shape == \"float_complex\":\n"
    "        a = [float(a[0]), complex(a[1])]\n"
    "    elif shape == \"first_tuple\":\n"
    "        a[0] = tuple(a[0])\n"
    "    elif shape == \"tuple_of_tuples\":\n"
    "        a = [tuple(tuple(y) for y in x) for x in a]\n"
    "    elif shape == \"first_items_tuples\":\n"
    "        a[0] = tuple(tuple(y) if isinstance(y, list) else y for y in a[0])\n"
    "    elif shape == \"complex\":\n"
    "        a[0] = complex(a[0])\n"
    "    elif shape == \"dict_tuples\":\n"
    "        a[0] = {k: tuple(v) for k, v in a[0].items()}\n"
    "    elif shape == \"all_tuples\":\n"
    "        deep = lambda x: tuple(deep(y) for y in x) if isinstance(x, list) else x\n"
    "        a = [deep(x) for x in a]\n"
    "    return a\n"
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
    "    num = (int, float, complex)\n"
    "    if not isinstance(a, num) or not isinstance(b, num):\n"
    "        return False\n"
    "    if a == b:\n"
    "        return True\n"
    "    # numpy: an inf or a nan is close to what it equals only\n"
    "    if not all(isinstance(x, int) or cmath.isfinite(x) for x in (a, b)):\n"
    "        return False\n"
    "    return abs(a - b) <= atol + 1e-07 * abs(b)\n"
    "def _poly(xs, x):\n"
    "    # find_zero's polynomial at x, summed in EvalPlus's order\n"
    "    return sum([c * math.pow(x, i) for i, c in enumerate(xs)])\n"
    "def _surface_area(edge, height):\n"
    "    # the other reading EvalPlus accepts: height is the pyramid's own\n"
    "    slant = math.sqrt((edge / 2) ** 2 + height ** 2)\n"
    "    return round(edge ** 2 + 2 * (edge * slant))\n"
    "def _digit_distance(a, b):\n"
    "    # the other reading EvalPlus accepts: the shorter number padded with 0s\n"
    "    x, y = str(a), str(b)\n"
    "    w = max(len(x), len(y))\n"
    "    return sum(abs(int(p) - int(q)) for p, q in zip(x.zfill(w), y.zfill(w)))\n"
    "def _match(out, exp, args, atol):\n"
    "    # (matches, atol from now on, why not or None): EvalPlus raises its\n"
    "    # atol to 1e-6 on the first float answer, for the rest of the inputs\n"
    "    ok = out == exp\n"
    "    if ORACLE == \"any\":\n"
    "        ok = True\n"
    "    elif ORACLE == \"or_zero\":\n"
    "        ok = ok or out == 0\n"
    "    elif ORACLE == \"surface_area\":\n"
    "        ok = ok or abs(out - _surface_area(*args)) <= atol\n"
    "    elif ORACLE == \"digit_distance\":\n"
    "        ok = ok or out == _digit_distance(*args)\n"
    "    elif ORACLE == \"set_eq\":\n"
    "        ok = set(out) == set(exp)\n"
    "    elif ORACLE == \"not_none\":\n"
    "        ok = out == exp if isinstance(out, bool) else exp == (out is not None)\n"
    "    elif ORACLE == \"poly_root\":\n"
    "        y = abs(_poly(*args, out))\n"
    "        return y <= atol, atol, \"|poly(x)| = %r > atol %r\" % (y, atol)\n"
    "    if atol == 0 and _is_floats(exp):\n"
    "        atol = 1e-06\n"
    "    if ok or atol == 0:\n"
    "        return ok, atol, None\n"
    "    if type(out) != type(exp) or (isinstance(exp, (list, tuple)) and len(out) != len(exp)):\n"
    "        return False, atol, None\n"
    "    return _close(out, exp, atol), atol, None\n"
    "def _short(v):\n"
    "    s = repr(v)\n"
    "    return s if len(s) <= 200 else s[:200] + \"...\"\n"
    "class DatasetError(Exception):\n"
    "    pass\n"
    "class InputTimeLimit(Exception):\n"
    "    pass\n"
    "def _alarm(signum, frame):\n"
    "    raise InputTimeLimit()\n"
    "def _timed(fn, args, limit):\n"
    "    # (answer, seconds or None when over @limit): EvalPlus's time_limit,\n"
    "    # a real-time timer around the call\n"
    "    signal.signal(signal.SIGALRM, _alarm)\n"
    "    t0 = time.perf_counter()\n"
    "    try:\n"
    "        signal.setitimer(signal.ITIMER_REAL, limit)\n"
    "        try:\n"
    "            out = fn(*args)\n"
    "        finally:\n"
    "            signal.setitimer(signal.ITIMER_REAL, 0)\n"
    "    except InputTimeLimit:\n"
    "        return None, None\n"
    "    dt = time.perf_counter() - t0\n"
    "    return out, (dt if dt <= limit else None)\n"
    "def _grade(which, inputs, ref, fn):\n"
    "    atol = ATOL    # EvalPlus checks base and plus apart, each from the task's atol\n"
    "    for n, args in enumerate(inputs):\n"
    "        try:\n"
    "            if SHAPE:\n"
    "                args = _reshape(SHAPE, args)\n"
    "            ref_args = copy.deepcopy(args)\n"
    "            t0 = time.perf_counter()\n"
    "            exp = ref(*ref_args)\n"
    "            t_ref = time.perf_counter() - t0\n"
    "            if ORACLE == \"not_none\":\n"
    "                exp = exp is not None\n"
    "            exp = _literal(repr(exp))\n"
    "        except BaseException as e:\n"
    "            raise DatasetError(\"the dataset's canonical_solution failed on %s input %d \"\n"
    "                               \"(or its answer is no Python literal): %s\" %\n"
    "                               (which, n + 1, _short(e)))\n"
    "        limit = max(TMIN, TFACTOR * t_ref)\n"
    "        out, took = _timed(fn, args, limit)\n"
    "        if took is None:\n"
    "            why = (\"%s input %d of %d: %s ran past its limit %.6gs = max(min %.6gs, \"\n"
    "                   \"%.6g x reference %.6gs)\" % (which, n + 1, len(inputs), ENTRY, limit,\n"
    "                                              TMIN, TFACTOR, t_ref))\n"
    "            if _m:\n"
    "                os.write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX CORE_EVAL_MARKER_TIMEOUT "\" + _m +\n"
    "                         b\" \" + why.encode() + b\"\\n\")\n"
    "            raise InputTimeLimit(why)\n"
    "        try:\n"
    "            ok, atol, why = _match(out, exp, args, atol)\n"
    "        except Exception as e:\n"
    "            ok, why = False, \"comparing it raised %s\" % type(e).__name__\n"
    "        if not ok:\n"
    "            raise AssertionError(\"%s input %d of %d: %s returned %s, %s\" %\n"
    "                                 (which, n + 1, len(inputs), ENTRY, _short(out),\n"
    "                                  why or \"expected \" + _short(exp)))\n"
    "_st = 0\n"
    "try:\n"
    "    if _hear.readline() != b\"ok\\n\":\n"
    "        raise IsolatedCheckError(\"the completion failed before any test\")\n"
    "    with open(\"" CORE_EVAL_CHECK_FILE "\", encoding=\"utf-8\") as _f:\n"
    "        _code = compile(_f.read(), \"" CORE_EVAL_CHECK_FILE "\", \"exec\")\n"
    "    _g = {\"__name__\": \"__reference__\"}\n"
    "    exec(_code, _g)\n"
    "    _fn = _proxy(ENTRY, ORACLE == \"not_none\")\n"
    "    _grade(\"base\", _INPUTS[0], _g[ENTRY], _fn)\n"
    "    try:\n"
    "        sys.stdout.flush()\n"
    "    except Exception:\n"
    "        pass\n"
    "    if _m:\n"
    "        os.write(1, b\"\\n" CORE_EVAL_MARKER_PREFIX CORE_EVAL_MARKER_BASE "\" + _m + "
    "b\"\\n\")\n"
    "    _grade(\"plus\", _INPUTS[1], _g[ENTRY], _fn)\n"
    "except BaseException:\n"
    "    traceback.print_exc()\n"
    "    _st = 1\n";

char *core_eval_evalplus_check(const core_eval_task *t, const sbx_eval_opts *o)
{
    const char *oracle = oracle_of(t), *shape = shape_of(t);
    size_t n = strlen(t->inputs), len = 0;
    char head[320];
    int hlen;
    char *s;

    /* every '\\' and '"' escaped; %.17g gives back the same double */
    hlen = snprintf(head, sizeof head,
                    "ATOL = float(\"%.17g\")\nORACLE = %s%s%s\nSHAPE = %s%s%s\n"
                    "TMIN = float(\"%.17g\")\nTFACTOR = float(\"%.17g\")\n", t->atol,
                    oracle ? "\"" : "", oracle ? oracle : "None", oracle ? "\"" : "",
                    shape ? "\"" : "", shape ? shape : "None", shape ? "\"" : "",
                    (double)(o ? o->ep_min_ns : CORE_EVAL_EP_MIN_NS) / 1e9,
                    o ? o->ep_factor : CORE_EVAL_EP_FACTOR);
    if (hlen < 0 || (size_t)hlen >= sizeof head ||
        !(s = malloc(sizeof keeper_head + 2 * n + sizeof keeper_tail + (size_t)hlen)))
        return NULL;
    memcpy(s, head, (size_t)hlen);
    len = (size_t)hlen;
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

const char *core_eval_evalplus_timeout(const sbx_result *r, const char *marker, char *buf,
                                       size_t size)
{
    char head[sizeof CORE_EVAL_MARKER_PREFIX + sizeof CORE_EVAL_MARKER_TIMEOUT +
              CORE_EVAL_MARKER_LEN + 4];
    const char *out, *at, *end;
    size_t len, n, left;

    if (!marker || size == 0)
        return NULL;
    n = (size_t)snprintf(head, sizeof head, "\n%s%s%s ", CORE_EVAL_MARKER_PREFIX,
                         CORE_EVAL_MARKER_TIMEOUT, marker);
    out = (const char *)sbx_result_stdout(r, &len);
    if (!out || n >= sizeof head || !(at = memmem(out, len, head, n)))
        return NULL;
    at += n;
    left = len - (size_t)(at - out);
    end = memchr(at, '\n', left);
    n = end ? (size_t)(end - at) : left;
    if (n >= size)
        n = size - 1;
    memcpy(buf, at, n);
    buf[n] = '\0';
    return buf;
}
