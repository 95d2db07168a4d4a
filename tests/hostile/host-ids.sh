#!/bin/sh
# tests/hostile/host-ids.sh - each root-mode sandbox its own host id (TAP)
#
# As root the sandbox user maps to a host uid.  When every sandbox shared
# 65534, any host process running as nobody could signal (and trace)
# every sandbox's processes.  Now each init (in-process, the daemon's
# prepared sandbox, a zygote) takes its own id from the range of the
# settings uid/gid/ids (plugins/local/local-ids.c): sandboxes running at
# once have different ids, none is 65534, and a host process of another
# id, in the range or out of it, cannot signal them (one of the same id
# can: the control).  Files in /work belong to the sandbox user across
# execs of different ids, and all ids of a small range in use is an
# error naming the setting.  Needs root.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP per-sandbox host ids are for root"; exit 0; fi
command -v setpriv >/dev/null 2>&1 || { echo "1..0 # SKIP setpriv is missing"; exit 0; }
DAEMON_BIN="$top_builddir/plugins/local/polysandbox-locald"
hostile_need host-ids "$DAEMON_BIN"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-host-ids.XXXXXX") || exit 99
bg=""
cleanup() {
    for p in $bg; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    pid=$(cat "$(readlink "$POLYSANDBOX_STATE_DIR/local/run-dir" 2>/dev/null)/locald.lock" 2>/dev/null)
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    rm -rf "$tmp" "$POLYSANDBOX_STATE_DIR"
}
trap cleanup EXIT
FIRST=1879048192 COUNT=4096 # the defaults (plugins/local/local.c)
export POLYSANDBOX_LOCALD="$DAEMON_BIN" POLYSANDBOX_LOCALD_IDLE=5

# payload_of TAG: the pid of the sandboxed `sleep TAG`, waited for (60 s
# at most: a loaded machine).  Tags carry this run's pid: a concurrent run's are others.
payload_of() {
    i=0
    while [ $i -lt 600 ]; do
        for s in /proc/[0-9]*/cmdline; do
            if [ "$({ tr '\0' ' ' <"$s"; } 2>/dev/null)" = "sleep $1 " ]; then
                p=${s#/proc/}
                p=${p%/cmdline}
                u=$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
                # Ours: the sandboxed one (not the polysandbox command).
                if [ -n "$u" ] && [ "$u" != 0 ]; then echo "$p"; return 0; fi
            fi
        done
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
uid_of() { awk '/^Uid:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
in_range() { [ -n "$1" ] && [ "$1" -ge $FIRST ] && [ "$1" -lt $((FIRST + COUNT)) ]; }
# can_signal UID PID: a host process of UID may signal PID.
can_signal() { setpriv --reuid="$1" --regid="$1" --clear-groups kill -0 "$2" 2>/dev/null; }
# guarded PID: nobody and another id of the range cannot signal it; its own
# id can (the control).
guarded() {
    u=$(uid_of "$1")
    other=$((FIRST + (u - FIRST + 1) % COUNT))
    in_range "$u" && ! can_signal 65534 "$1" && ! can_signal "$other" "$1" && can_signal "$u" "$1"
}
# start MODE TAG CMD...: a run in the background, its payload's pid in $pl.
start() {
    mode=$1 tag=$2
    shift 2
    case $mode in
    in-process) POLYSANDBOX_LOCAL_DAEMON=off "$PS" run -t 90s "$@" </dev/null >/dev/null 2>&1 & ;;
    daemon) POLYSANDBOX_LOCAL_DAEMON=auto POLYSANDBOX_LOCALD_STRICT=1 "$PS" run -t 90s "$@" \
        </dev/null >/dev/null 2>"$tmp/daemon.err" & ;;
    esac
    bg="$bg $!"
    pl=$(payload_of "$tag")
}

echo "1..7"

# 1-2. Two in-process sandboxes at once.
start in-process 41.${$}1 -- sh -c "exec sleep 41.${$}1"
a=$pl
start in-process 41.${$}2 -- sh -c "exec sleep 41.${$}2"
b=$pl
ua=$(uid_of "$a") ub=$(uid_of "$b")
if in_range "$ua" && in_range "$ub" && [ "$ua" != "$ub" ]; then
    ok "two sandboxes at once run as two host ids of the range ($ua, $ub), not 65534"
else
    not_ok "two sandboxes' host ids" "uids: ${ua:-?} ${ub:-?} (pids ${a:-none} ${b:-none})"
fi
if [ -n "$a" ] && guarded "$a" && guarded "$b"; then
    ok "nobody and another id of the range cannot signal them; their own id can"
else
    not_ok "signals from other host ids" "uid ${ua:-?}: nobody $(can_signal 65534 "$a" && echo can)" \
        "own id: $(can_signal "$ua" "$a" && echo can || echo cannot)"
fi

# 3. Through polysandbox-locald (strict: served by a prepared sandbox).
start daemon 42.${$}3 -- sh -c "exec sleep 42.${$}3"
d=$pl
ud=$(uid_of "$d")
if [ -n "$d" ] && guarded "$d" && [ "$ud" != "$ua" ] && [ "$ud" != "$ub" ]; then
    ok "a daemon's sandbox has its own id too ($ud), guarded the same"
else
    not_ok "the daemon's sandbox's id" "uid ${ud:-?} (others $ua $ub)" "$(cat "$tmp/daemon.err")"
fi

# 4. Through a python zygote.
POLYSANDBOX_LOCAL_DAEMON=off "$PS" run -t 90s --lang python \
    -c 'import time; time.sleep(43.5)' </dev/null >/dev/null 2>"$tmp/zyg.err" &
bg="$bg $!"
z=""
i=0
while [ $i -lt 200 ] && [ -z "$z" ]; do
    for s in /proc/[0-9]*/status; do
        u=$({ awk '/^Uid:/ {print $2}' <"$s"; } 2>/dev/null)
        p=${s#/proc/}
        p=${p%/status}
        if in_range "$u" && [ "$u" != "$ua" ] && [ "$u" != "$ub" ] && [ "$u" != "$ud" ] &&
            { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q polysandbox-zygote; then
            z=$p
        fi
    done
    sleep 0.1
    i=$((i + 1))
done
if [ -n "$z" ] && guarded "$z"; then
    ok "a zygote's sandbox has its own id too ($(uid_of "$z")), guarded the same"
else
    not_ok "the zygote's sandbox's id" "pid ${z:-none found}" "$(cat "$tmp/zyg.err")"
fi
for p in $bg; do kill -9 "$p" 2>/dev/null; done
wait 2>/dev/null
bg=""

# 5. The work directory's files belong to the sandbox user whatever id
# each exec runs as: written by one exec, appended to by the next (also
# through the daemon), an upload writable; stored as 1000 on the host.
id=$("$PS" create </dev/null 2>"$tmp/c.err")
echo up >"$tmp/up.txt"
POLYSANDBOX_LOCAL_DAEMON=off "$PS" exec "$id" -- sh -c 'echo one >/work/f' </dev/null >/dev/null 2>&1
POLYSANDBOX_LOCAL_DAEMON=auto POLYSANDBOX_LOCALD_STRICT=1 "$PS" exec "$id" -- \
    sh -c 'echo two >>/work/f' </dev/null >/dev/null 2>&1
"$PS" upload "$id" "$tmp/up.txt" up.txt </dev/null >/dev/null 2>&1
out=$(POLYSANDBOX_LOCAL_DAEMON=off "$PS" exec "$id" -- \
    sh -c 'echo more >>/work/up.txt && cat /work/f /work/up.txt && stat -c "%u:%g" /work/f' \
    </dev/null 2>"$tmp/e.err")
host=$(stat -c '%u:%g' "$POLYSANDBOX_STATE_DIR/local/$id/work/f" 2>/dev/null)
"$PS" destroy "$id" >/dev/null 2>&1
if [ "$(echo $out)" = "one two up more 1000:1000" ] && [ "$host" = 1000:1000 ]; then
    ok "files in /work stay the sandbox user's across execs of different ids (host: $host)"
else
    not_ok "files across execs" "inside: $out" "host: $host" "$(cat "$tmp/c.err" "$tmp/e.err")"
fi

# 6-7. A range of 2: two at once, a third is refused naming the setting.
# Above the default range, at a place of this run's own (a concurrent run
# of this test must not take our two).
base=$((1879052288 + ($$ % 4096) * 2))
cfg="$tmp/config"
mkdir -p "$cfg" && cp -R "$POLYSANDBOX_CONFIG_DIR"/. "$cfg/" || exit 99
printf '\n[settings]\nuid = %s\nids = 2\n' "$base" >>"$cfg/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR=$cfg POLYSANDBOX_LOCAL_DAEMON=off "$PS" run -t 90s -- sh -c "exec sleep 44.${$}5" \
    </dev/null >/dev/null 2>"$tmp/r1.err" &
bg="$bg $!"
POLYSANDBOX_CONFIG_DIR=$cfg POLYSANDBOX_LOCAL_DAEMON=off "$PS" run -t 90s -- sh -c "exec sleep 44.${$}6" \
    </dev/null >/dev/null 2>"$tmp/r2.err" &
bg="$bg $!"
p1=$(payload_of 44.${$}5) p2=$(payload_of 44.${$}6)
u1=$(uid_of "$p1") u2=$(uid_of "$p2")
if [ -n "$u1" ] && [ -n "$u2" ] && [ "$u1" != "$u2" ] &&
    [ $((u1 + u2)) = $((base * 2 + 1)) ]; then
    ok "a configured range of 2 ids: two sandboxes at once take both ($u1, $u2)"
else
    not_ok "a range of 2" "uids ${u1:-?} ${u2:-?}" "$(cat "$tmp/r1.err" "$tmp/r2.err")"
fi
POLYSANDBOX_CONFIG_DIR=$cfg POLYSANDBOX_LOCAL_DAEMON=off timeout 30 "$PS" run -- true \
    </dev/null >"$tmp/third.out" 2>"$tmp/third.err"
rc=$?
if [ -z "$u1" ] || [ -z "$u2" ]; then
    skip "a third while both are in use" "the two before it did not both run"
elif [ "$rc" = 125 ] && grep -q "ids" "$tmp/third.err" && grep -q "in use" "$tmp/third.err"; then
    ok "a third while both are in use: refused (exit 125), naming the setting"
else
    not_ok "a third sandbox with all ids in use" "exit $rc" "$(cat "$tmp/third.err")"
fi
