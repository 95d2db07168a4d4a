# tests/templates/lib.sh - set-up of the template tests (sourced)
#
# A test runs each template's programs with `try`, then `report` checks
# every result in one Python process (its start-up is slow on a loaded
# machine) and prints the TAP lines.  A template whose runtime is not on
# this host is a skip with the reason `polysandbox templates` gives.
. "$top_srcdir/tests/cli/lib.sh"

"$PS" templates --json >"$tmp/templates.json" 2>"$tmp/err" || {
    echo "Bail out! polysandbox templates --json failed: $(cat "$tmp/err")"
    exit 99
}
python3 - "$tmp/templates.json" >"$tmp/unusable" <<'PY' || exit 99
import json, sys
for t in json.load(open(sys.argv[1])):
    local = t["providers"].get("local")
    if local is None:
        print(t["name"], "the local provider is not enabled")
    elif not local["usable"]:
        print(t["name"], local["reason"])
PY
: >"$tmp/runs"

# try hello|broken NAME FILE: run FILE (its extension picks template NAME)
# on the local provider, keeping its JSON and exit status for report.
try() {
    why=$(sed -n "s/^$2 //p" "$tmp/unusable")
    if [ -n "$why" ]; then
        printf '%s %s skip %s\n' "$1" "$2" "$why" >>"$tmp/runs"
        return
    fi
    "$PS" run --json -t 120s "$3" </dev/null >"$tmp/$2.$1.json" 2>"$tmp/$2.$1.err"
    printf '%s %s %s\n' "$1" "$2" "$?" >>"$tmp/runs"
}

# report: the TAP lines of every try, in order.
#  hello NAME: the file printed "hello NAME", status ok, exit 0; with a
#    compile step, that step's own status is ok and it is a phase of its
#    own in the timings.
#  broken NAME: a compiled template says compile_error (exit 1) with the
#    compiler's status and output and no run; an interpreted one is the
#    interpreter's nonzero exit with its message, and no compile phase.
report() {
    python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
n = failed = 0
for line in open(os.path.join(tmp, "runs")):
    kind, name, rc = line.rstrip("\n").split(" ", 2)
    n += 1
    what = f"{name}: hello world" if kind == "hello" else f"{name}: a compile error"
    if rc.startswith("skip "):
        print(f"ok {n} - {what} # SKIP {rc[5:]}")
        continue
    rc = int(rc)
    base = os.path.join(tmp, f"{name}.{kind}")
    why = ""
    try:
        j = json.load(open(base + ".json"))
        t, c = j["timings_ns"], j["compile"]
        if kind == "hello":
            good = (rc == 0 and j["status"] == "ok" and j["stdout"] == f"hello {name}\n"
                    and t["exec"] > 0 and
                    (t["compile"] == 0 if c is None else
                     c["status"] == "ok" and t["compile"] == c["time_ns"] > 0))
        elif c is None:
            what = f"{name}: a syntax error is the interpreter's nonzero exit"
            good = (rc != 0 and j["status"] == "nonzero_exit" and j["stderr"] != ""
                    and t["compile"] == 0)
        else:
            what = f"{name}: a compile error is its own status, the run never starts"
            good = (rc == 1 and j["status"] == "compile_error" and
                    c["status"] == "nonzero_exit" and c["stdout"] + c["stderr"] != "" and
                    j["stderr"] == c["stderr"] and t["compile"] > 0 and t["exec"] == 0)
    except (OSError, ValueError, KeyError, TypeError) as e:
        good, why = False, repr(e)
    if good:
        print(f"ok {n} - {what}")
        continue
    failed = 1
    print(f"not ok {n} - {what}")
    print(f"# status {rc} {why}")
    for ext in (".json", ".err"):
        try:
            for l in open(base + ext).read()[:1500].splitlines():
                print("# " + l)
        except OSError:
            pass
sys.exit(failed)
PY
}
