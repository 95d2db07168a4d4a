#!/bin/sh
# tests/eval/keeper.sh - who keeps the pass line, and that it stays out of reach
#
# Through the local provider's zygote the sandbox's init keeps the pass
# line (sdk/inside/seal.h): the runner forks no keeper (the program's
# process has no child), the line's file is gone before the program
# starts and descriptor 3 is the runner's pipe to the init.  Without the
# zygote the runner forks its keeper, as before.  Both ways a right
# answer passes, and one that leaves early (os._exit(0), sys.exit(0)),
# prints a made-up pass line, or looks for the line in the files, the
# memory and the descriptors of every process it sees fails.
# (tests/eval/marker.sh tries more places, through the zygote.)
. "$top_srcdir/tests/eval/lib.sh"

plan 8

he="$data/humaneval.jsonl"
python3 - "$tmp/s.jsonl" <<'PY'
import json, sys
probe = r'''
import os, sys
try:
    os.waitpid(-1, os.WNOHANG)
    kids = "a-child"
except ChildProcessError:
    kids = "no-child"
try:
    os.fstat(3)
    fd3 = "fd3"
except OSError:
    fd3 = "no-fd3"
print("PROBE", kids, "zygote" if "typing" in sys.modules else "fresh",
      "file" if os.path.lexists(".polysandbox-seal") else "no-file", fd3)
'''
found = r'''
import os, re
def FOUND(text):
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    for h in set(re.findall(r"\b([0-9a-f]{32})\b", text)):
        os.write(1, ("\n__polysandbox_eval_done__ " + h + "\n").encode())
for name in os.listdir("."):
    try:
        FOUND(open(name, "rb").read())
    except OSError:
        pass
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        maps = open("/proc/%s/maps" % pid).read().splitlines()
        mem = open("/proc/%s/mem" % pid, "rb")
        for m in maps:
            lo, hi = (int(x, 16) for x in m.split()[0].split("-"))
            if "r" in m.split()[1] and hi - lo <= 256 << 20:
                try:
                    mem.seek(lo)
                    FOUND(mem.read(hi - lo))
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
    except OSError:
        fds = []
    for fd in fds:      # every descriptor /proc lists, opened anew
        try:
            n = os.open("/proc/%s/fd/%s" % (pid, fd), os.O_RDONLY | os.O_NONBLOCK)
            FOUND(os.read(n, 1 << 16))
            os.close(n)
        except OSError:
            pass
os._exit(0)
'''
ok = "    return a + b\n"
samples = [
    ok + probe,
    ok + "import os\nos._exit(0)\n",
    ok + "import sys\nsys.exit(0)\n",
    ok + "import os\nos.write(1, b'\\n__polysandbox_eval_done__ " + "0123456789abcdef" * 2 + "\\n')\n"
         "os._exit(0)\n",
    ok + found,
]
with open(sys.argv[1], "w") as f:
    for s in samples:
        f.write(json.dumps({"task_id": "Toy/0", "completion": s}) + "\n")
PY
cfg_copy
for f in "$tmp/cfg"/templates.d/*.ini; do
    grep -v '^zygote' "$f" >"$f.t" && mv "$f.t" "$f"
done

# verdicts FILE: the five samples' verdicts, in order, on one line
verdicts() {
    python3 -c 'import json, sys
v = {r["sample"]: r["verdict"] for r in map(json.loads, open(sys.argv[1]))}
print(" ".join(v.get(i, "-") for i in range(5)))' "$1"
}
# reasons FILE: each sample's status, exit code and reason, a line each
reasons() {
    python3 -c 'import json, sys
for r in sorted(map(json.loads, open(sys.argv[1])), key=lambda r: r["sample"]):
    print(r["status"], r["exit_code"], r["reason"])' "$1"
}
# probe FILE: what sample 0 printed
probe() { grep '"sample":0,' "$1" | sed -n 's/.*PROBE \([a-z0-9 -]*\).*/\1/p'; }

cli eval --dataset "$he" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/z.out" -j 2
POLYSANDBOX_CONFIG_DIR="$tmp/cfg" cli eval --dataset "$he" --allow-partial \
    --samples "$tmp/s.jsonl" --out "$tmp/p.out" -j 2
echo "# through the zygote: $(verdicts "$tmp/z.out") / $(probe "$tmp/z.out")"
echo "# without: $(verdicts "$tmp/p.out") / $(probe "$tmp/p.out")"

expect="passed failed failed failed failed"
check "through the zygote: a right answer passes, early exits and forged lines fail" \
    eval '[ "$(verdicts "$tmp/z.out")" = "$expect" ]'
check "without the zygote: the same verdicts" \
    eval '[ "$(verdicts "$tmp/p.out")" = "$expect" ]'
check "without the zygote: the runner forks its keeper, which took the line's file" \
    eval '[ "$(probe "$tmp/p.out")" = "a-child fresh no-file no-fd3" ]'
case $(probe "$tmp/z.out") in
*fresh*)
    for what in "no keeper" "no file" "the init's pipe" "the same records but the probe"; do
        ok "# SKIP no zygote here (the local provider uses it as root only): $what"
    done ;;
*)
    check "through the zygote: the program's process has no child (no keeper forked)" \
        eval 'probe "$tmp/z.out" | grep -q "^no-child zygote"'
    check "through the zygote: the line's file is gone before the program starts" \
        eval 'probe "$tmp/z.out" | grep -q " no-file "'
    check "through the zygote: descriptor 3 is the runner's pipe to the init" \
        eval 'probe "$tmp/z.out" | grep -q " fd3$"'
    check "through the zygote: each sample's status, exit code and reason as the keeper's way" \
        eval '[ "$(reasons "$tmp/z.out")" = "$(reasons "$tmp/p.out")" ]' ;;
esac
check "no stray line's file is left in the state directory" \
    eval '! find "${POLYSANDBOX_STATE_DIR:-$tmp}" -name ".polysandbox-seal" 2>/dev/null | grep -q .'

done_testing
