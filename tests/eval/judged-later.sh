#!/bin/sh
# tests/eval/judged-later.sh - a judged test cannot see a later test's input
#
# The tests after the first run one after another in one exec (the
# static runner core/eval/eval-judge-runner.c for C++, the Python runner
# core/eval/eval-judge-driver.py for Python), which holds the later tests'
# input on its stdin while a test runs.  A task of three tests: the
# first prints what it read; the second ("probe") must print "clean";
# the third's input is a random token.  The probe looks for the token
# everywhere a test's program could: its own stdin past its input, every
# descriptor it inherited, the files of the sandbox (work directory,
# /tmp, /dev/shm, /var/tmp, /run, home), and the descriptors, memory,
# environment and command line of every process /proc shows (the
# runner among them, if it could be seen).  It prints "clean" only on
# its first run, under a runner (its file beside the program), having
# found nothing; a leak ("LEAK"), no runner, or a second run (the core
# runs a test that failed in the runner again on an exec of its own)
# print something else, and the sample fails.  So the samples pass
# through both runners, and fail with --exec-per-test (no runner).
. "$top_srcdir/tests/eval/lib.sh"

plan 4

python3 - "$tmp/ds.jsonl" "$tmp/s.jsonl" <<'PY'
import json, secrets, sys
token = "SECRET-" + secrets.token_hex(8)
probe = r'''
import os, re, stat, sys
PAT = re.compile(b"SEC" b"RET-[0-9a-f]{16}")
hits = []
def look(data, where):
    if isinstance(data, str):
        data = data.encode("latin-1", "replace")
    for m in PAT.findall(data or b""):
        hits.append("%s %s" % (where, m.decode()))
def read_fd(fd, where):
    try:
        os.set_blocking(fd, False)
        look(os.read(fd, 1 << 20), where)
    except OSError:
        pass
def read_path(path, where, most=4 << 20):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size <= most or not stat.S_ISREG(st.st_mode):
            read_fd(fd, where)
    finally:
        os.close(fd)
if os.path.exists("ran2"):
    print("second run")
    sys.exit(0)
open("ran2", "w").close()
read_fd(0, "stdin")
for fd in range(3, 1024):
    read_fd(fd, "fd %d" % fd)
for top in (".", "/work", "/tmp", "/dev/shm", "/var/tmp", "/run", "/home", "/root"):
    for d, dirs, files in os.walk(top):
        for f in files:
            read_path(os.path.join(d, f), "file " + os.path.join(d, f))
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for name in ("environ", "cmdline"):
        read_path("/proc/%s/%s" % (pid, name), "/proc/%s/%s" % (pid, name))
    try:
        for fd in os.listdir("/proc/%s/fd" % pid):
            read_path("/proc/%s/fd/%s" % (pid, fd), "/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        pass
    try:
        maps = open("/proc/%s/maps" % pid).read().splitlines()
        with open("/proc/%s/mem" % pid, "rb") as mem:
            for m in maps:
                lo, hi = (int(x, 16) for x in m.split()[0].split("-"))
                if "r" in m.split()[1] and hi - lo <= 256 << 20:
                    try:
                        mem.seek(lo)
                        look(mem.read(hi - lo), "/proc/%s/mem" % pid)
                    except (OSError, ValueError, OverflowError):
                        pass
    except OSError:
        pass
runner = os.path.exists(".polysandbox-judge") or os.path.exists(".polysandbox-judge.py")
print("LEAK %s" % hits[0] if hits else "clean" if runner else "no runner")
'''
py = ("import sys\nline = sys.stdin.readline().strip()\n"
      "if line == 'first':\n    print('first')\n"
      "elif line.startswith('SEC' 'RET-'):\n    print('ok')\n"
      "else:\n    sys.stdout.flush()\n    exec(compile(%r, 'probe', 'exec'))\n" % probe)
cpp = ("#include <cstdio>\n#include <cstring>\n#include <unistd.h>\n"
       "static const char probe[] = %s;\n"
       "int main() {\n    char line[256] = \"\";\n"
       "    if (!fgets(line, sizeof line, stdin)) return 1;\n"
       "    if (!strcmp(line, \"first\\n\")) { puts(\"first\"); return 0; }\n"
       "    if (!strncmp(line, \"SEC\" \"RET-\", 7)) { puts(\"ok\"); return 0; }\n"
       "    fflush(stdout);\n"
       "    execlp(\"python3\", \"python3\", \"-c\", probe, (char *)0);\n"
       "    return 127;\n}\n" % json.dumps(probe))
tests = [{"input": "first\n", "output": "first\n"}, {"input": "probe\n", "output": "clean\n"},
         {"input": token + "\n", "output": "ok\n"}]
with open(sys.argv[1], "w") as f:
    for lang in ("python", "cpp"):
        f.write(json.dumps({"task_id": "later-" + lang, "language": lang, "compare": "exact",
                            "prompt": "no later input", "tests": tests}) + "\n")
with open(sys.argv[2], "w") as f:
    f.write(json.dumps({"task_id": "later-python", "completion": py}) + "\n")
    f.write(json.dumps({"task_id": "later-cpp", "language": "cpp", "completion": cpp}) + "\n")
PY

# verdicts FILE: each sample's verdict and reason, a line each
verdicts() {
    python3 -c 'import json, sys
for r in sorted(map(json.loads, open(sys.argv[1])), key=lambda r: r["sample"]):
    print(r["task_id"], r["verdict"], r["reason"], (r.get("output") or "").strip()[:200])' "$1"
}

cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" -k 1 \
    --all-tests --timeout 20s
verdicts "$tmp/r.jsonl" | sed 's/^/# /'
check "the Python runner: a test finds nothing of the next test's input" \
    eval 'verdicts "$tmp/r.jsonl" | grep -q "^later-python passed"'
check "the static runner (C++): a test finds nothing of the next test's input" \
    eval 'verdicts "$tmp/r.jsonl" | grep -q "^later-cpp passed"'
cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/e.jsonl" -k 1 \
    --all-tests --timeout 20s --exec-per-test
verdicts "$tmp/e.jsonl" | sed 's/^/# /'
check "--exec-per-test: the probe says there was no runner (Python)" \
    eval 'verdicts "$tmp/e.jsonl" | grep -q "^later-python failed test 2 of 3: wrong answer"'
check "--exec-per-test: the probe says there was no runner (C++)" \
    eval 'verdicts "$tmp/e.jsonl" | grep -q "^later-cpp failed test 2 of 3: wrong answer"'

done_testing
