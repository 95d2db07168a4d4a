#!/bin/sh
# tests/eval/multipl-e-langs.sh - MultiPL-E rows of Go, Rust, Ruby, PHP,
# Perl, Lua, R and TypeScript, written in the shape MultiPL-E's
# translators give them (dataset_builder/humaneval_to_*.py): per language
# a right completion passes and a wrong one fails by the tests, with the
# failure the tests report; and the output MultiPL-E's evaluator reads to
# fail a program that exited 0 (eval_pl.py: ERROR on stdout or stderr;
# eval_php.py: "PHP Parse error" on stdout; eval_go.py's FAIL cannot be
# printed by a passing go test, so test-eval-stats checks it).
#
# A language whose toolchain (or test library) is not on this host is a
# skip saying so; under CI=true it is a failure, quickstart installs them.
. "$top_srcdir/tests/eval/lib.sh"

plan 10

ds="$data/multipl-e-langs.jsonl"
"$PS" templates --json >"$tmp/templates.json" 2>"$tmp/err" || {
    echo "Bail out! polysandbox templates --json failed: $(cat "$tmp/err")"
    exit 99
}

# what a language needs beyond its template's runtime: the test library
# its translated tests load (Debian package in quickstart's list)
has_lib() {
    case $1 in
    pl) perl -MTest::Deep -e 1 2>/dev/null || echo "Perl's Test::Deep is not installed (libtest-deep-perl)" ;;
    lua) lua5.4 -e "require('luaunit')" 2>/dev/null || echo "luaunit is not installed (lua-unit)" ;;
    rb) ruby -rtest/unit -e 'Test::Unit::AutoRunner.need_auto_run = false' 2>/dev/null ||
            echo "Ruby's test/unit is not installed" ;;
    esac
}
: >"$tmp/missing"
for code in go_test.go:go rs:rust rb:ruby php:php pl:perl lua:lua r:r ts:typescript; do
    why=$(python3 - "$tmp/templates.json" "${code#*:}" <<'PY'
import json, sys
t = [t for t in json.load(open(sys.argv[1])) if t["name"] == sys.argv[2]]
local = t[0]["providers"].get("local") if t else None
if not t:
    print("no template '%s'" % sys.argv[2])
elif local is None:
    print("the local provider is not enabled")
elif not local["usable"]:
    print(local["reason"])
PY
)
    [ -n "$why" ] || why=$(has_lib "${code%%:*}")
    [ -z "$why" ] || printf '%s %s\n' "${code%%:*}" "$why" >>"$tmp/missing"
done
# the samples of the languages this host runs
python3 - "$data/multipl-e-langs-samples.jsonl" "$tmp/missing" >"$tmp/smp.jsonl" <<'PY'
import sys
gone = {l.split(" ", 1)[0] for l in open(sys.argv[2])}
for l in open(sys.argv[1]):
    if not any('"language": "%s"' % c in l for c in gone):
        sys.stdout.write(l)
PY

# generous: bounds a hang under load (tsc and a cold go test take seconds)
if [ -s "$tmp/smp.jsonl" ]; then
    cli eval --dataset "$ds" --samples "$tmp/smp.jsonl" --allow-partial --out "$tmp/r.jsonl" \
        -k 1 --timeout 120s
    [ "$rc" -eq 0 ] || { sed 's/^/# /' "$tmp/err" | tail -20; }
else
    : >"$tmp/r.jsonl"
fi

# row CODE NAME FIELD TEXT: CODE's right sample passed and its wrong one
# failed, the records' FIELD (output: stdout, stderr_tail) holding TEXT,
# the tests' own report of the failure
row() {
    why=$(sed -n "s/^$1 //p" "$tmp/missing")
    if [ -n "$why" ]; then
        if [ "${CI:-}" = true ]; then
            not_ok "$2: quickstart installs its toolchain, yet: $why"
        else
            tap_n=$((tap_n + 1))
            echo "ok $tap_n # SKIP $2: $why"
        fi
        return
    fi
    check "$2: the right completion passes, the wrong one fails by its tests" \
        python3 - "$tmp/smp.jsonl" "$tmp/r.jsonl" "$1" "$3" "$4" <<'PY'
import json, sys
smp = [json.loads(l) for l in open(sys.argv[1])]
res = {}
for l in open(sys.argv[2]):
    r = json.loads(l); res[r["sample"]] = r
code, field, text = sys.argv[3:6]
bad = 0
mine = [i for i, s in enumerate(smp) if s["language"] == code and s["case"].startswith(code.split("_")[0] + " ")]
for i in mine:
    r, want = res.get(i), smp[i]["expect"]
    if not r or r["verdict"] != want:
        print("# %s: %s, expected %s" % (smp[i]["case"], r and r["verdict"], want)); bad = 1
        if r:
            print("# " + str(r.get("reason")) + " " + (r.get("stderr_tail") or "")[-300:].replace("\n", "\n# "))
    elif want == "failed" and text not in (r.get(field) or ""):
        print("# %s: %r not in %s: %r" % (smp[i]["case"], text, field, r.get(field))); bad = 1
sys.exit(bad or len(mine) != 2)
PY
}
row go_test.go Go output "--- FAIL: TestAdd"
row rs Rust stderr_tail "assertion failed: \`(left == right)\`"
row rb Ruby output "Failure: test_add"
row php PHP stderr_tail "Uncaught Exception: Test failed!"
row pl Perl status nonzero_exit
row lua Lua output "expected: 1"
row r R stderr_tail "isTRUE(all.equal(candidate(0, 1), 1)) is not TRUE"
row ts TypeScript stderr_tail "ERR_ASSERTION"

# rule CODE DESC: the samples of CODE whose case names an exit 0 have
# their expected verdict, a failure's reason naming what was printed
rule() {
    if grep -q "^$1 " "$tmp/missing"; then
        tap_n=$((tap_n + 1))
        echo "ok $tap_n # SKIP $2: $(sed -n "s/^$1 //p" "$tmp/missing")"
        return
    fi
    check "$2" python3 - "$tmp/smp.jsonl" "$tmp/r.jsonl" "$1" "$3" <<'PY'
import json, sys
smp = [json.loads(l) for l in open(sys.argv[1])]
res = {}
for l in open(sys.argv[2]):
    r = json.loads(l); res[r["sample"]] = r
mine = [i for i, s in enumerate(smp) if s["case"].startswith(sys.argv[3] + ": ")]
bad = 0
for i in mine:
    r, want = res.get(i), smp[i]["expect"]
    if (not r or r["verdict"] != want or r["exit_code"] != 0 or
            (want == "failed" and sys.argv[4] not in (r.get("reason") or ""))):
        print("# %s: %s" % (smp[i]["case"], r)); bad = 1
sys.exit(bad or len(mine) < 2)
PY
}
rule pl "Perl: ERROR on stdout or on stderr fails a run that exited 0 (eval_pl.py)" "printed ERROR"
rule php "PHP: \"PHP Parse error\" on stdout fails a run that exited 0, on stderr not (eval_php.py)" \
    "PHP Parse error"

done_testing
