#!/bin/sh
# tests/eval/marker.sh - the pass marker is out of the program's reach
#
# A sample passes when its runner prints the run's random marker after
# every test returned.  Hostile completions look for the marker wherever
# the code under test could: the runner's file and the marker's, the frames
# and objects of the interpreter, standard input, the environment, the memory and the
# descriptors of every process it can see (the runner's keeper among
# them); each one prints what it finds as a pass line and exits 0, and
# none may pass.  Then what grading in the same interpreter cannot
# stop (a returned object whose __eq__ always says True; writing the
# runner's "done" byte to its keeper): it passes there, as with the reference
# harness, and fails with --isolated-check, where the verdict comes from
# a process the completion never runs in (see doc/security.md).
. "$top_srcdir/tests/eval/lib.sh"

plan 14

he="$data/humaneval.jsonl"
# Each hostile sample: Toy/0 (add), whose completion ends the function and
# then, at the top level, looks for the marker; FOUND(text) prints every
# 32-hex-digit string after the marker's prefix in text as a pass line and
# leaves with status 0 (os._exit, before any test runs).
python3 - "$tmp/hostile.jsonl" <<'PY'
import json, sys
found = r'''
import os, re, sys
def FOUND(text):
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    hits = set(re.findall(r"__polysandbox_eval_done__ ([0-9a-f]{32})", text))
    hits |= set(re.findall(r"\b([0-9a-f]{32})\b", text))
    for h in hits:
        os.write(1, ("\n__polysandbox_eval_done__ " + h + "\n").encode())
    return bool(hits)
'''
attacks = {
    "the runner's file": "FOUND(open('main.py').read()); FOUND(open(sys.argv[0]).read())",
    "the marker's file": """
for name in os.listdir("."):
    try:
        FOUND(name); FOUND(open(name, "rb").read())
    except OSError:
        pass
FOUND(open(".polysandbox-marker").read())""",
    "frames": """
f = sys._getframe()
while f:
    for c in f.f_code.co_consts:
        FOUND(repr(c))
    for v in list(f.f_globals.values()) + list(f.f_locals.values()):
        FOUND(repr(v))
    f = f.f_back""",
    "gc objects": """
import gc
for o in gc.get_objects():
    try:
        FOUND(repr(o)[:100000])
    except Exception:
        pass""",
    "standard input": "FOUND(sys.stdin.read()); FOUND(os.read(0, 4096))",
    "the environment": "FOUND(repr(dict(os.environ)))",
    "the memory of every process": """
for pid in ["self"] + [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        maps = open("/proc/%s/maps" % pid).read().splitlines()
        mem = open("/proc/%s/mem" % pid, "rb")
    except OSError:
        continue
    for m in maps:
        lo, hi = (int(x, 16) for x in m.split()[0].split("-"))
        if "r" not in m.split()[1] or hi - lo > 256 << 20:
            continue
        try:
            mem.seek(lo)
            FOUND(mem.read(hi - lo))
        except (OSError, ValueError, OverflowError):
            pass""",
    "the descriptors of every process": """
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for fd in range(0, 16):
        try:
            with open("/proc/%s/fd/%d" % (pid, fd), "rb") as f:
                os.set_blocking(f.fileno(), False)
                FOUND(f.read(4096) or b"")
        except (OSError, TypeError):
            pass""",
}
with open(sys.argv[1], "w") as f:
    for name, code in attacks.items():
        body = "    return a + b\n" + found + code + "\nos._exit(0)\n"
        f.write(json.dumps({"task_id": "Toy/0", "completion": body, "case": name}) + "\n")
PY
cli eval --dataset "$he" --allow-partial --samples "$tmp/hostile.jsonl" --out "$tmp/hostile.out" -j 2 --timeout 20s
check "the hostile samples ran" eval '[ "$(wc -l <"$tmp/hostile.out")" -eq 8 ]'
for i in 0 1 2 3 4 5 6 7; do
    case $i in
    0) what="the runner's file" ;; 1) what="the marker's file" ;; 2) what="frames" ;;
    3) what="gc objects" ;; 4) what="standard input" ;; 5) what="the environment" ;;
    6) what="the memory of every process" ;; 7) what="the descriptors of every process" ;;
    esac
    check "the marker is not in $what: no pass forged" \
        eval 'grep "\"sample\":'$i'," "$tmp/hostile.out" | grep -v -q "\"verdict\":\"passed\""'
done
cli eval --dataset "$he" --allow-partial --samples "$tmp/hostile.jsonl" --show-program 0
check "--show-program: the runner holds no marker, not even a placeholder" \
    eval 'is_rc 0 && out_has "__polysandbox_eval_done__" && ! grep -q "[0-9a-fx]\{32\}" "$tmp/out"'

# What the same interpreter cannot stop: an __eq__ that always says True,
# and the runner's "done" byte to its keeper written early.
python3 - "$tmp/limits.jsonl" <<'PY'
import json, sys
eq = ("    class Yes:\n        def __eq__(self, other):\n            return True\n"
      "    return Yes()\n")
done = ("    return a + b\nimport gc, os, sys\n"
        "for fd in range(3, 64):\n"
        "    try:\n        os.fstat(fd)\n    except OSError:\n        continue\n"
        "    try:\n        os.write(fd, b'1')\n    except OSError:\n        pass\n"
        "os._exit(0)\n")
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"task_id": "Toy/0", "completion": eq}) + "\n")
    f.write(json.dumps({"task_id": "Toy/0", "completion": done}) + "\n")
    f.write(json.dumps({"task_id": "Toy/0", "completion": "    return a + b\n"}) + "\n")
PY
cli eval --dataset "$he" --allow-partial --samples "$tmp/limits.jsonl" --out "$tmp/same.out" -j 2
check "same interpreter: an always-equal object passes (as with the reference harness)" \
    eval 'grep "\"sample\":0," "$tmp/same.out" | grep -q "\"verdict\":\"passed\""'
cli eval --dataset "$he" --allow-partial --samples "$tmp/limits.jsonl" --out "$tmp/iso.out" -j 2 --isolated-check
check "--isolated-check: the always-equal object fails, the early completion byte too" \
    eval 'grep "\"sample\":0," "$tmp/iso.out" | grep -q "\"verdict\":\"failed\"" && grep "\"sample\":1," "$tmp/iso.out" | grep -q "\"verdict\":\"failed\""'
check "--isolated-check: a right answer passes" \
    eval 'grep "\"sample\":2," "$tmp/iso.out" | grep -q "\"verdict\":\"passed\""'
cli eval --dataset "$he" --canonical --isolated-check
check "--isolated-check: every reference solution passes" \
    eval 'is_rc 0 && out_has "passed 4"'

done_testing
