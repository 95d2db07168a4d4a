#!/usr/bin/env python3
# tests/eval/evalplus-ref.py DATASET SAMPLES [MIN_TIME FACTOR] - what
# EvalPlus's rules say of each sample, worked out here in plain Python with
# no sandbox: one JSON line per sample, {"sample": i, "base": bool,
# "plus": bool, "timeout": bool}, "timeout" when a phase failed on an input
# over its time limit.
#
# The rules as evalplus/eval/__init__.py (unsafe_execute) states them,
# on MBPP+ inputs reshaped as evalplus/data/mbpp.py does: the answer is the completion's own object (no literal round trip), the
# expected one the canonical solution's on a deep copy of the inputs, the
# tolerance starts at the row's atol in each phase and becomes 1e-6 once
# an expected answer is a float (or a flat list of floats) while it is 0,
# and the special oracles are keyed by dataset and entry point.  Each call
# of the completion has EvalPlus's per-input limit (untrusted_check):
# max(MIN_TIME, FACTOR x the time the reference took on that input),
# default 1 s and 4 (evalplus/config.py), enforced with a real-time timer
# around the call as EvalPlus's time_limit does.  Only for
# the test data written for tests/eval/evalplus.sh: it runs the samples
# in this process.
import cmath
import copy
import json
import math
import signal
import sys
import time

MIN_TIME = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
FACTOR = float(sys.argv[4]) if len(sys.argv) > 4 else 4.0


class OverLimit(Exception):
    pass


def over_limit(signum, frame):
    raise OverLimit()


def timed_call(fn, inp, limit):
    """fn(*inp), or OverLimit past @limit seconds"""
    signal.signal(signal.SIGALRM, over_limit)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return fn(*inp)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)

SET_EQ = {"similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
          "larg_nnum", "intersection_array", "find_dissimilar", "Diff"}
NOT_NONE = {"check_str", "text_match_three", "text_starta_endb"}


def as_tuples(x):
    return tuple(as_tuples(i) for i in x) if isinstance(x, list) else x


# evalplus/data/mbpp.py (mbpp_deserialize_inputs): task number -> the
# arguments EvalPlus gives the function, from the JSON ones
RESHAPE = {}
for ids, f in (
        ((2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616,
          630, 726, 740, 744, 809), lambda a: [tuple(x) for x in a]),
        ((63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780),
         lambda a: [list(map(tuple, x)) for x in a]),
        ((75, 413, 444, 753), lambda a: [list(map(tuple, a[0])), a[1]]),
        ((106, 750), lambda a: [a[0], tuple(a[1])]),
        ((115,), lambda a: [[set(x) if isinstance(x, list) and len(x) else {} for x in a[0]]]),
        ((124,), lambda a: [float(a[0]), complex(a[1])]),
        ((250, 405, 446, 617, 720, 763, 808), lambda a: [tuple(a[0]), a[1]]),
        ((307,), lambda a: [tuple(a[0]), a[1], a[2]]),
        ((259, 401, 445), lambda a: [tuple(map(tuple, x)) for x in a]),
        ((278,), lambda a: [tuple(tuple(x) if isinstance(x, list) else x for x in a[0])]),
        ((252,), lambda a: [complex(a[0])]),
        ((722,), lambda a: [{k: tuple(v) for k, v in a[0].items()}] + a[1:]),
        ((580, 615, 791), as_tuples)):
    for i in ids:
        RESHAPE[i] = f


def allclose(a, b, atol):
    """numpy.allclose(a, b, rtol=1e-7, atol=atol) for numbers and nested sequences"""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            raise ValueError("shapes differ")
        return all(allclose(x, y, atol) for x, y in zip(a, b))
    if a == b:
        return True
    if not (cmath.isfinite(a) and cmath.isfinite(b)):
        return False    # numpy.isclose: non-finite values are close only when equal
    return bool(abs(a - b) <= atol + 1e-7 * abs(b))


def flat_floats(x):
    return isinstance(x, float) or (isinstance(x, (list, tuple)) and len(x) > 0 and
                                    all(isinstance(i, float) for i in x))


def phase(kind, entry, fn, ref, inputs, atol):
    """True (passed), False (failed) or None (an input over its limit)"""
    for inp in inputs:
        try:
            ref_inp = copy.deepcopy(inp)
            t0 = time.perf_counter()
            exp = ref(*ref_inp)
            t_ref = time.perf_counter() - t0
            if kind == "mbpp" and entry in NOT_NONE:
                exp = exp is not None
            try:
                out = timed_call(fn, inp, max(MIN_TIME, FACTOR * t_ref))
            except OverLimit:
                return None
            same = out == exp
            if kind == "humaneval" and entry == "find_zero":
                xs = inp[0]
                if not abs(sum(c * math.pow(out, i) for i, c in enumerate(xs))) <= atol:
                    return False
                continue
            if kind == "mbpp":
                if entry == "are_equivalent":
                    same = True
                elif entry == "sum_div":
                    same = same or out == 0
                elif entry == "surface_Area":
                    e, h = inp
                    same = same or abs(out - round(e * e + 4 * e * math.sqrt(e * e / 4 + h * h) / 2)) <= atol
                elif entry == "digit_distance_nums":
                    w = max(len(str(inp[0])), len(str(inp[1])))
                    pairs = zip(str(inp[0]).rjust(w, "0"), str(inp[1]).rjust(w, "0"))
                    same = same or out == sum(abs(int(p) - int(q)) for p, q in pairs)
                elif entry in SET_EQ:
                    same = set(out) == set(exp)
                elif entry in NOT_NONE:
                    same = out == exp if isinstance(out, bool) else exp == (out is not None)
            if atol == 0 and flat_floats(exp):
                atol = 1e-6
            if same:
                continue
            if atol == 0 or type(out) is not type(exp):
                return False
            if isinstance(exp, (list, tuple)) and len(out) != len(exp):
                return False
            if not allclose(out, exp, atol):
                return False
        except Exception:
            return False
    return True


def main():
    rows = {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        rows[r["task_id"]] = r
    for i, line in enumerate(open(sys.argv[2])):
        s = json.loads(line)
        r = rows[s["task_id"]]
        kind = s["task_id"].split("/")[0].lower()
        g_ref, g_fn = {}, {}
        exec(r["prompt"] + r["canonical_solution"], g_ref)
        exec(r["prompt"] + s["completion"], g_fn)
        ref, fn = g_ref[r["entry_point"]], g_fn[r["entry_point"]]
        shape = lambda a: a
        if kind == "mbpp":
            shape = RESHAPE.get(int(s["task_id"].split("/")[1]), shape)
        base, plus = (phase(kind, r["entry_point"], fn, ref, [shape(a) for a in r[k]], r.get("atol") or 0)
                      for k in ("base_input", "plus_input"))
        print(json.dumps({"sample": i, "base": bool(base), "plus": bool(plus),
                          "timeout": base is None or (bool(base) and plus is None)}))


main()
