#!/usr/bin/env python3
"""tests/bench/eval-gen.py - write a synthetic HumanEval-format dataset.

The real HumanEval cannot be downloaded here, so this writes N tasks (164
by default, as HumanEval) of the same shape: a prompt with a signature and
docstring, a canonical solution, a test defining check(candidate) with
several asserts, and an entry point.  The expected values in the asserts
are computed here by running each canonical solution, so every task passes
when scored with --canonical.  Deterministic for a given N.

Usage: eval-gen.py [-n N] OUT.jsonl
"""
import argparse
import json

# (name, signature, docstring, body, argument lists); {i} varies per task
KINDS = [
    ("add_scaled_{i}", "(a: int, b: int) -> int", "Return a + b * {k}.",
     "    return a + b * {k}\n", ["(1, 2)", "(-3, 4)", "({i}, {k})", "(0, 0)"]),
    ("count_vowels_{i}", "(s: str) -> int", "Count the vowels of s, and {k} more.",
     "    return sum(1 for ch in s.lower() if ch in 'aeiou') + {k}\n",
     ["('hello')", "('')", "('AEIOU xyz')", "('polysandbox{i}')"]),
    ("running_max_{i}", "(xs: list) -> list", "The running maximum of xs, each plus {k}.",
     "    out, m = [], None\n    for x in xs:\n        m = x if m is None or x > m else m\n"
     "        out.append(m + {k})\n    return out\n",
     ["([1, 3, 2, 5, 4])", "([])", "([-1, -2, -3])", "(list(range({k})))"]),
    ("is_prime_{i}", "(n: int) -> bool", "Whether n + {k} is prime.",
     "    n += {k}\n    if n < 2:\n        return False\n    d = 2\n    while d * d <= n:\n"
     "        if n % d == 0:\n            return False\n        d += 1\n    return True\n",
     ["(1)", "(10)", "(97)", "({i} * 7919)"]),
    ("fib_mod_{i}", "(n: int) -> int", "The n-th Fibonacci number modulo {m}.",
     "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, (a + b) % {m}\n    return a\n",
     ["(0)", "(1)", "(50)", "(2000)"]),
    ("words_sorted_{i}", "(s: str) -> list", "The words of s sorted by length then text, the first {k}.",
     "    return sorted(s.split(), key=lambda w: (len(w), w))[:{k}]\n",
     ["('the quick brown fox jumps')", "('')", "('b a c bb aa')", "('x' * {k} + ' y')"]),
    ("digit_sum_{i}", "(n: int) -> int", "The sum of the digits of n ** {p}.",
     "    return sum(int(d) for d in str(abs(n) ** {p}))\n",
     ["(0)", "(12)", "(-345)", "({i})"]),
    ("collatz_len_{i}", "(n: int) -> int", "Steps of the Collatz sequence from n + {k} to 1.",
     "    n, steps = n + {k}, 0\n    while n != 1:\n        n = n // 2 if n % 2 == 0 else 3 * n + 1\n"
     "        steps += 1\n    return steps\n",
     ["(1)", "(6)", "(27)", "({i})"]),
]


def task(i):
    name, sig, doc, body, args = KINDS[i % len(KINDS)]
    p = dict(i=i, k=i % 7 + 1, m=1000 + i, p=i % 5 + 2)
    name, doc, body = name.format(**p), doc.format(**p), body.format(**p)
    args = [a.format(**p) for a in args]
    prompt = "def %s%s:\n    \"\"\"%s\n    \"\"\"\n" % (name, sig, doc)
    env = {}
    exec(prompt + body, env)
    fn = env[name]
    asserts = "".join("    assert candidate%s == %r\n" % (a, fn(*eval("(%s,)" % a[1:-1]) if a != "()" else ()))
                      for a in args)
    test = "\n\nMETADATA = {'author': 'eval-gen', 'dataset': 'synthetic'}\n\n\ndef check(candidate):\n" + asserts
    return {"task_id": "Synthetic/%d" % i, "prompt": prompt, "canonical_solution": body,
            "test": test, "entry_point": name}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=164)
    ap.add_argument("out")
    a = ap.parse_args()
    with open(a.out, "w") as f:
        for i in range(a.n):
            f.write(json.dumps(task(i)) + "\n")


if __name__ == "__main__":
    main()
