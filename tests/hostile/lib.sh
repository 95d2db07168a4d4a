# tests/hostile/lib.sh - shared by the hostile test scripts (sourced)
#
# Sets PS (the polysandbox command) and SANENV, skips the whole script
# (TAP "1..0 # SKIP") when python3 or a needed program is missing, gives
# the script a private state directory when none is set, and defines
# jget (a field of a JSON result) and the TAP helpers ok/not_ok/skip.

: "${top_builddir:?top_builddir is not set (run through make check)}"
# HOSTILE_PROVIDER=docker (the *-docker.sh twins): every command of the
# script names that provider (a wrapper in the build tree's tests/).
HOSTILE_PROVIDER=${HOSTILE_PROVIDER:-local}
PS="$top_builddir/polysandbox"
if [ "$HOSTILE_PROVIDER" != local ]; then
    PS="$top_builddir/tests/hostile/ps-$HOSTILE_PROVIDER"
    printf '#!/bin/sh\ncmd=$1; shift\nexec "%s/polysandbox" "$cmd" --provider %s "$@"\n' \
        "$top_builddir" "$HOSTILE_PROVIDER" >"$PS.tmp" && chmod +x "$PS.tmp" &&
        mv "$PS.tmp" "$PS" || exit 99
fi
# In a sanitizer build the programs copied into sandboxes are instrumented
# too, and their leak checker needs ptrace, which the sandbox rightly denies.
SANENV="-e ASAN_OPTIONS=detect_leaks=0"

# hostile_need NAME PROGRAM...: skip unless python3 and every PROGRAM are
# there; NAME names the state directory made when none is set.
hostile_need() {
    name=$1; shift
    if ! command -v python3 >/dev/null 2>&1; then
        echo "1..0 # SKIP python3 is needed to read the JSON results"
        exit 0
    fi
    for prog in "$PS" "$@"; do
        if [ ! -x "$prog" ]; then
            echo "1..0 # SKIP $prog is not built"
            exit 0
        fi
    done
    if [ -z "${POLYSANDBOX_STATE_DIR:-}" ]; then
        POLYSANDBOX_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-$name-state.XXXXXX") || exit 99
        export POLYSANDBOX_STATE_DIR
    fi
}

# jget FILE KEY: a field of the JSON result (true/false/null as such).
jget() {
    python3 -c '
import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print(json.dumps(v) if isinstance(v, bool) or v is None else v)' "$1" "$2" 2>/dev/null
}

t=0
ok() { t=$((t + 1)); echo "ok $t - $1"; }
not_ok() { t=$((t + 1)); echo "not ok $t - $1"; shift; for l in "$@"; do printf "%s\n" "$l" | sed "s/^/# /"; done; }
skip() { t=$((t + 1)); echo "ok $t - $1 # SKIP $2"; }

# config_without_zygote DIR: the test configuration again in DIR, with no
# template declaring a zygote (the same runs, each interpreter started
# afresh).
config_without_zygote() {
    mkdir -p "$1/templates.d" &&
        cp "$POLYSANDBOX_CONFIG_DIR/polysandbox.ini" "$1/" &&
        cp -R "$POLYSANDBOX_CONFIG_DIR/providers.d" "$1/" || return 1
    for f in "$POLYSANDBOX_CONFIG_DIR"/templates.d/*.ini; do
        grep -v '^zygote' "$f" >"$1/templates.d/$(basename "$f")"
    done
}

# allow_unenforced DIR LIMITS: the rest of the script runs with a copy of
# the test configuration in DIR whose local provider may leave LIMITS
# unenforced (the core refuses it otherwise), e.g. a cgroup2 without the
# memory controller.
allow_unenforced() {
    mkdir -p "$1" && cp -RL "$POLYSANDBOX_CONFIG_DIR/." "$1/" && chmod -R u+w "$1" &&
        sed -i "s/^\[provider\]\$/&\nunenforced_limits = $2/" "$1/providers.d/local.ini" ||
        exit 99
    POLYSANDBOX_CONFIG_DIR=$1
    export POLYSANDBOX_CONFIG_DIR
}

# all_passed FILE N: the eval results file FILE holds N records, all
# passed (the others are printed as TAP comments).
all_passed() {
    python3 - "$1" "$2" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
bad = [(r["task_id"], r["verdict"], r.get("stderr_tail")) for r in rs if r["verdict"] != "passed"]
for b in bad:
    print("# %r" % (b,))
sys.exit(1 if bad or len(rs) != int(sys.argv[2]) else 0)
PY
}
# in_process: the rest of the script runs with daemon = off (every exec
# makes its sandbox in-process) unless the environment chose; the
# *-locald.sh twins run the same script with locald_on.
in_process() {
    POLYSANDBOX_LOCAL_DAEMON=${POLYSANDBOX_LOCAL_DAEMON:-off}
    export POLYSANDBOX_LOCAL_DAEMON
}
# locald_on: the rest of the script runs with daemon = auto, strict (every
# exec the daemon can take waits for it: plugins/local/launch/daemon.c),
# in a state directory of its own (so a daemon of its own), idle after 3 s.
locald_on() {
    POLYSANDBOX_LOCAL_DAEMON=auto
    POLYSANDBOX_LOCALD_STRICT=1
    POLYSANDBOX_LOCALD="$top_builddir/plugins/local/polysandbox-locald"
    POLYSANDBOX_LOCALD_IDLE=${POLYSANDBOX_LOCALD_IDLE:-3}
    POLYSANDBOX_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-locald-state.XXXXXX") || exit 99
    export POLYSANDBOX_LOCAL_DAEMON POLYSANDBOX_LOCALD_STRICT POLYSANDBOX_LOCALD \
        POLYSANDBOX_LOCALD_IDLE POLYSANDBOX_STATE_DIR
}
# daemons: pids of the daemons of our state directory (not their prepared
# sandboxes, which are their children with the same command line).
daemons() {
    python3 - "$POLYSANDBOX_STATE_DIR/local" <<'PYEOF'
import os, sys
def argv(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []
def ppid(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return "0"
def ours(a):
    return len(a) > 2 and a[0].endswith(b"polysandbox-locald") and a[1] == b"--state-dir" \
        and a[2] == sys.argv[1].encode()
for pid in os.listdir("/proc"):
    if pid.isdigit() and ours(argv(pid)) and not ours(argv(ppid(pid))):
        print(pid)
PYEOF
}
