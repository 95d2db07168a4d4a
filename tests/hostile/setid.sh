#!/bin/sh
# tests/hostile/setid.sh - a set-id program embedding the library takes
# nothing from its caller's environment (TAP)
#
# A copy of tests/hostile/setid-probe, set-user-ID root, is run by nobody
# with POLYSANDBOX_LOCALD naming a program of the caller's (it would run
# as root: the local provider starts its daemon) and POLYSANDBOX_LOG=debug
# (the provider's log would tell the caller about root's sandboxes).  The
# library reads every variable with secure_getenv: neither may act.  The
# same probe run plainly (not set-id) with the same environment runs the
# program and logs (the control: the variables do act where allowed).
# Needs root (a set-user-ID root copy).

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root for a set-user-ID root copy"; exit 0; fi
command -v setpriv >/dev/null 2>&1 || { echo "1..0 # SKIP setpriv is missing"; exit 0; }
probe="$top_builddir/tests/hostile/setid-probe"
[ -x "$top_builddir/tests/hostile/.libs/setid-probe" ] && probe="$top_builddir/tests/hostile/.libs/setid-probe"
hostile_need setid "$probe"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-setid.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# The configuration the program chose: the build's local provider, a state
# directory of its own, the daemon on.
conf="$tmp/conf"
mkdir -p "$conf/providers.d" &&
    printf '[core]\ndefault_provider = local\nprovider_path = %s\nstate_dir = %s\n' \
        "$top_builddir/plugins/local/.libs" "$tmp/state" >"$conf/polysandbox.ini" &&
    printf '[provider]\nenabled = true\n[settings]\ndaemon = auto\n' \
        >"$conf/providers.d/local.ini" || exit 99
cp "$probe" "$tmp/probe" && chmod 4755 "$tmp/probe" || exit 99
# The caller's "daemon": it only leaves a mark.
printf '#!/bin/sh\ntouch %s/evil-ran\n' "$tmp" >"$tmp/evil.sh" && chmod 755 "$tmp/evil.sh"

echo "1..3"

# run WHO: the probe with the caller's variables, twice: `echo ok` (the
# daemon is started on first use) into $tmp/out and $tmp/err, then a
# command that is not there (logged at debug) into $tmp/err2.
run() {
    rm -f "$tmp/evil-ran"
    if [ "$1" = nobody ]; then
        set -- setpriv --reuid=65534 --regid=65534 --clear-groups
    else
        set --
    fi
    (cd "$tmp" && env -u POLYSANDBOX_CONFIG_DIR -u POLYSANDBOX_PROVIDER_PATH \
        -u POLYSANDBOX_STATE_DIR POLYSANDBOX_LOCALD="$tmp/evil.sh" POLYSANDBOX_LOG=debug \
        POLYSANDBOX_LOCAL_DAEMON=auto "$@" "$tmp/probe" "$conf") </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    (cd "$tmp" && env POLYSANDBOX_LOG=debug "$@" "$tmp/probe" "$conf" no-such-command-here) \
        </dev/null >/dev/null 2>"$tmp/err2"
    sleep 0.5 # the daemon is started in the background
}

run root
if [ "$rc" = 0 ] && [ -f "$tmp/evil-ran" ] && grep -q "debug:" "$tmp/err2"; then
    ok "control: not set-id, POLYSANDBOX_LOCALD and POLYSANDBOX_LOG act"
else
    not_ok "control run (not set-id)" "exit $rc, program ran: $([ -f "$tmp/evil-ran" ] && echo yes || echo no)" \
        "$(cat "$tmp/out" "$tmp/err" "$tmp/err2")"
fi

run nobody
evil=no
[ -f "$tmp/evil-ran" ] && evil=yes
if [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = ok ]; then
    ok "set-user-ID root, run by nobody: the sandbox runs"
else
    not_ok "the set-id run" "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
fi
if [ "$evil" = no ] && ! grep -q "debug:" "$tmp/err" "$tmp/err2" &&
    grep -q "status not_found" "$tmp/err2"; then
    ok "set-id: the caller's POLYSANDBOX_LOCALD is not run, POLYSANDBOX_LOG not obeyed"
else
    not_ok "the caller's environment in a set-id run" "program ran: $evil" \
        "$(cat "$tmp/err" "$tmp/err2")"
fi
