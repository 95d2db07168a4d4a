#!/bin/sh
# tests/secrets/cli.sh - polysandbox secret init|seal|check, and where a
# sealed credential may never show up: log lines, error messages, --json,
# a sandbox's environment, any process's cmdline or environ, a core file.
#
# The probe provider (tests/provider/probe.c) borrows [settings] api_key
# through the host table and prints its length and BLAKE2b-256, never it.

. "$top_srcdir/tests/cli/lib.sh"

SECRET='pSbx-Test-Secret-7f3a9c-never-show-me'
export POLYSANDBOX_PROVIDER_PATH="$top_builddir/tests/secrets/.libs:$POLYSANDBOX_PROVIDER_PATH"
unset POLYSANDBOX_LOG

# A configuration directory of our own: the suite's, plus the probe.
mkconf() {
    mkdir -p "$1/providers.d" || exit 99
    cp "$top_srcdir/tests/config/polysandbox.ini" "$1/" || exit 99
    cp "$top_srcdir/tests/config/providers.d/local.ini" "$1/providers.d/" || exit 99
}
A="$tmp/a"
B="$tmp/b"
mkconf "$A"
mkconf "$B"
# probe_ini DIR LINE...: providers.d/probe.ini with these [settings] lines.
probe_ini() {
    d=$1
    shift
    { echo "[settings]"; for l in "$@"; do echo "$l"; done; } >"$d/providers.d/probe.ini"
}
# no_secret FILE...: none of the files holds the secret.
no_secret() { ! grep -q -F -- "$SECRET" "$@"; }
expected_b2=$(printf '%s' "$SECRET" | b2sum -l 256 | cut -d' ' -f1)
expected_len=${#SECRET}

plan 50

# ---- usage -------------------------------------------------------------------
cli secret --help
check "secret --help" eval 'is_rc 0 && out_has "Usage: polysandbox secret init" && out_has "seal" && out_has "check"'
cli help secret
check "help secret" eval 'is_rc 0 && out_has "Usage: polysandbox secret"'
cli secret
check "secret without a subcommand: exit 2" rc_and_err 2 "missing subcommand"
cli secret frob
check "an unknown subcommand: exit 2 naming it" rc_and_err 2 "frob"
cli secret init --bogus
check "an unknown option: exit 2 naming it" rc_and_err 2 "bogus"

# ---- init --------------------------------------------------------------------
cli --config-dir "$A" secret init
check "secret init creates the key pair" is_rc 0
check "secret.key is mode 0600" [ "$(stat -c %a "$A/secret.key")" = 600 ]
check "secret.pub is mode 0644" [ "$(stat -c %a "$A/secret.pub")" = 644 ]
cp "$A/secret.key" "$tmp/key.before"
cli --config-dir "$A" secret init
check "a second init is refused (exit 1), naming the key file" \
    rc_and_err 1 "$A/secret.key already exists"
check "and the key is untouched" cmp -s "$A/secret.key" "$tmp/key.before"
cli --config-dir "$A" secret init --force
check "init --force replaces it" eval 'is_rc 0 && ! cmp -s "$A/secret.key" "$tmp/key.before"'
check "still mode 0600 after --force" [ "$(stat -c %a "$A/secret.key")" = 600 ]
POLYSANDBOX_CONFIG_DIR="$B" "$PS" secret init >/dev/null 2>&1
check "POLYSANDBOX_CONFIG_DIR chooses where the key goes" test -f "$B/secret.key"

# ---- seal ----------------------------------------------------------------------
printf '%s\n' "$SECRET" >"$tmp/in"
cli_in "$tmp/in" --config-dir "$A" secret seal
sealed=$(out)
check "secret seal prints sealed:v1:..." eval 'is_rc 0 && case $sealed in sealed:v1:*) true;; *) false;; esac'
check "the sealed value does not hold the secret" no_secret "$tmp/out" "$tmp/err"
: >"$tmp/empty"
cli_in "$tmp/empty" --config-dir "$A" secret seal
check "an empty value is refused" rc_and_err 1 "empty"
cli --config-dir "$A" secret seal "$SECRET"
check "a value on the command line is refused" rc_and_err 2 "never from the command line"
# A public key another user could replace: everything sealed later would
# be theirs to open.
chmod 664 "$A/secret.pub"
cli_in "$tmp/in" --config-dir "$A" secret seal
check "a group-writable secret.pub is refused, naming it" \
    rc_and_err 125 "host public key $A/secret.pub is writable by its group"
chmod 644 "$A/secret.pub"

# ---- check and use -----------------------------------------------------------------
probe_ini "$A" "api_key = $sealed"
cli --config-dir "$A" secret check
check "secret check opens it" eval 'is_rc 0 && out_has "OK       probe.api_key (sealed) $A/providers.d/probe.ini:2"'
cli --config-dir "$A" secret check --json
check "secret check --json" eval 'is_rc 0 && json_check "j[\"ok\"] and j[\"credentials\"][0][\"key\"] == \"api_key\" and j[\"credentials\"][0][\"line\"] == 2"'
check "secret check never prints the secret" no_secret "$tmp/out" "$tmp/err"

POLYSANDBOX_LOG=debug cli --config-dir "$A" run --provider probe -- probe
check "the provider got exactly the sealed value (length and BLAKE2b)" \
    eval 'is_rc 0 && out_has "len=$expected_len b2=$expected_b2 "'
check "the process was not dumpable while it held the value" out_has "dumpable=0"
check "debug log output never holds the secret" no_secret "$tmp/out" "$tmp/err"
cli --config-dir "$A" run --json --provider probe -- probe
check "--json output never holds the secret" eval 'is_rc 0 && no_secret "$tmp/out" "$tmp/err"'
cli --config-dir "$A" providers --json
check "providers --json never holds it" no_secret "$tmp/out" "$tmp/err"

# A long secret (a 1000-byte token) seals to a line far over inih's 200.
long=$(python3 -c 'print("k" * 1000)')
printf '%s\n' "$long" >"$tmp/in"
cli_in "$tmp/in" --config-dir "$A" secret seal
probe_ini "$A" "api_key = $(out)"
cli --config-dir "$A" run --provider probe -- probe
check "a sealed 1000-byte secret on one long ini line reaches the provider whole" \
    eval 'is_rc 0 && out_has "len=1000 b2=$(printf %s "$long" | b2sum -l 256 | cut -d" " -f1) "'
probe_ini "$A" "api_key = $sealed"

# ---- a wrong key, a corrupt value, a truncated value ------------------------------------
probe_ini "$B" "note = x" "api_key = $sealed"
cli --config-dir "$B" run --provider probe -- probe
check "sealed for another key: named, with file:line and key" \
    rc_and_err 125 "$B/providers.d/probe.ini:3: api_key: sealed for another key (key id"
check "that error does not hold the secret" no_secret "$tmp/out" "$tmp/err"
cli --config-dir "$B" secret check
check "secret check reports it and exits 1" \
    eval 'is_rc 1 && out_has "FAILED   probe.api_key (sealed): $B/providers.d/probe.ini:3: api_key: sealed for another key"'
cli --config-dir "$B" secret check --json
check "secret check --json: ok false, the error names file:line" \
    eval 'is_rc 1 && json_check "not j[\"ok\"] and \"probe.ini:3: api_key: sealed for another key\" in j[\"credentials\"][0][\"error\"]"'

# Change one character in the middle of the box.
mid=$(( ${#sealed} / 2 + 10 ))
c=$(printf '%s' "$sealed" | cut -c"$mid")
if [ "$c" = A ]; then r=B; else r=A; fi
corrupt="$(printf '%s' "$sealed" | cut -c1-$((mid - 1)))$r$(printf '%s' "$sealed" | cut -c$((mid + 1))-)"
probe_ini "$A" "api_key = $corrupt"
cli --config-dir "$A" run --provider probe -- probe
check "a corrupt value: named, with file:line and key" \
    rc_and_err 125 "$A/providers.d/probe.ini:2: api_key: sealed value is corrupt"
cli --config-dir "$A" secret check
check "secret check: corrupt, exit 1" eval 'is_rc 1 && out_has "FAILED" && out_has "corrupt"'

probe_ini "$A" "api_key = $(printf '%s' "$sealed" | cut -c1-$(( ${#sealed} - 7 )))"
cli --config-dir "$A" run --provider probe -- probe
check "a truncated value: named, with file:line and key" \
    rc_and_err 125 "$A/providers.d/probe.ini:2: api_key: sealed value is truncated"
check "no such error holds the secret" no_secret "$tmp/out" "$tmp/err"

probe_ini "$A" "note = $sealed"
cli --config-dir "$A" secret check
check "a sealed value for a key that is not a credential is an error" \
    eval 'is_rc 1 && out_has "probe.ini:2: '"'"'note'"'"' of provider '"'"'probe'"'"' holds a sealed value but is not a credential"'
cli --config-dir "$A" run --provider probe -- probe
check "and the provider is unavailable for it" rc_and_err 125 "is not a credential"

# ---- env: and file: ----------------------------------------------------------------------
printf '%s\n' "$SECRET" >"$tmp/secret.txt"
probe_ini "$A" "api_key = file:$tmp/secret.txt"
cli --config-dir "$A" run --provider probe -- probe
check "file:PATH (trailing newline dropped)" \
    eval 'is_rc 0 && out_has "len=$expected_len b2=$expected_b2 "'
# Another user who could change the file would choose the credential.
chmod 666 "$tmp/secret.txt"
cli --config-dir "$A" run --provider probe -- probe
check "a file: secret writable by everyone is refused, naming it and the fix" \
    rc_and_err 125 "secret file $tmp/secret.txt is writable by everyone: refused (chmod go-w"
chmod 644 "$tmp/secret.txt"
if [ "$(id -u)" = 0 ]; then
    chown 65534 "$tmp/secret.txt"
    cli --config-dir "$A" run --provider probe -- probe
    check "a file: secret owned by another user is refused, naming the owner" \
        rc_and_err 125 "secret file $tmp/secret.txt is owned by uid 65534"
    chown 0 "$tmp/secret.txt"
else
    ok "# SKIP chown needs root"
fi
probe_ini "$A" "api_key = env:PS_TEST_SECRET"
PS_TEST_SECRET=$SECRET cli --config-dir "$A" run --provider probe -- probe
check "env:NAME" eval 'is_rc 0 && out_has "len=$expected_len b2=$expected_b2 "'
unset PS_TEST_SECRET
cli --config-dir "$A" run --provider probe -- probe
check "env:NAME unset: named, with file:line" \
    rc_and_err 125 "probe.ini:2: api_key: environment variable PS_TEST_SECRET is not set"

# ---- a sandbox's environment ------------------------------------------------------------------
# The secret is in polysandbox's own environment (env:) and configured;
# a sandbox must see neither.
probe_ini "$A" "api_key = env:PS_TEST_SECRET" "spare_key = $sealed"
PS_TEST_SECRET=$SECRET cli --config-dir "$A" run --provider local -- env
check "a sandbox's environment does not hold it" eval 'is_rc 0 && no_secret "$tmp/out"'

# ---- every process's cmdline and environ during a run ----------------------------------------
# scan_during: run the probe holding its credential, and meanwhile look
# for the secret in every process's cmdline and environ.  Sets held,
# found (the files that hold it), scanned and rc.
scan_during() {
    marker="$tmp/holding"
    "$PS" --config-dir "$A" run --provider probe -- hold "$marker" >"$tmp/hold.out" 2>"$tmp/hold.err" &
    bg=$!
    i=0
    while [ ! -e "$marker" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
    found=
    scanned=0
    for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
        # Processes come and go, and some are not ours to read: skip those.
        { tr '\0' '\n' <"$f" >"$tmp/proc"; } 2>/dev/null || continue
        scanned=$((scanned + 1))
        if grep -q -F -- "$SECRET" "$tmp/proc"; then
            found="$found $f"
        fi
    done
    held=no
    [ -e "$marker" ] && held=yes
    rm -f "$marker"
    wait $bg
    rc=$?
}
# The control: an env: credential is in polysandbox's environ, and found.
probe_ini "$A" "api_key = env:PS_TEST_SECRET"
PS_TEST_SECRET=$SECRET scan_during
check "control: the scan finds a secret that is in an environment ($found)" \
    eval '[ "$held" = yes ] && [ -n "$found" ]'
probe_ini "$A" "api_key = $sealed"
scan_during
check "the provider held the secret during the scan" [ "$held" = yes ]
check "no process's cmdline or environ holds it ($scanned files scanned)" [ -z "$found" ]
check "the run then succeeded" eval '[ $rc -eq 0 ] && grep -q "b2=$expected_b2" "$tmp/hold.out"'

# ---- a user other than root -----------------------------------------------------------------
# Configuring a sealed value must not cost such a user the local provider
# (an undumpable process cannot write its child's uid_map).
nr_ok=no
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    nr=$(mktemp -d /tmp/ps-secrets-nr.XXXXXX) || exit 99
    trap 'rm -rf "$tmp" "$nr"' EXIT
    chmod 755 "$nr" && mkconf "$nr/conf" && mkdir "$nr/state" && chown 65534 "$nr/state" &&
        chmod -R a+rX "$nr/conf" || exit 99
    asnobody() {
        setpriv --reuid=65534 --regid=65534 --clear-groups \
            env POLYSANDBOX_STATE_DIR="$nr/state" HOME="$nr" \
            "$PS" --config-dir "$nr/conf" -o core.unenforced_limits=allow "$@" \
            </dev/null >"$tmp/out" 2>"$tmp/err"
        rc=$?
    }
    asnobody run --provider local -- echo hi
    is_rc 0 && nr_ok=yes
fi
if [ $nr_ok = yes ]; then
    probe_ini "$nr/conf" "api_key = $sealed"
    chmod a+r "$nr/conf/providers.d/probe.ini"
    asnobody run --provider local -- echo hi
    check "a user other than root still runs local sandboxes with a sealed value configured" \
        rc_and_out 0 hi
else
    ok "# SKIP local sandboxes need root here (or no setpriv)"
fi

# ---- core dumps ----------------------------------------------------------------------------------
# A process killed by SIGABRT while it holds the secret leaves no core
# file: it is not dumpable and RLIMIT_CORE is 0.  Proven against a control
# that does dump here (skipped where this host writes no core files).
mkdir "$tmp/dump" "$tmp/control"
sh -c 'cd "$1" && ulimit -c unlimited && sh -c "kill -ABRT \$\$"' sh "$tmp/control" >/dev/null 2>&1
if ls "$tmp/control" | grep -q '^core'; then
    (cd "$tmp/dump" && ulimit -c unlimited && exec "$PS" --config-dir "$A" run --provider probe -- abort) \
        >/dev/null 2>&1
    rc=$?
    check "the provider aborted while holding the secret (status $rc)" [ "$rc" -eq 134 ]
    check "and no core file was written" [ -z "$(ls "$tmp/dump")" ]
else
    ok "# SKIP no core files on this host (core_pattern $(cat /proc/sys/kernel/core_pattern))"
    ok "# SKIP no core files on this host"
fi

done_testing
