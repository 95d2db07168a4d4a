#!/bin/sh
# tests/cli/local-settings.sh - the local provider's [settings] are read by
# the core (host->settings_read): a bad value is refused before anything
# runs, naming the file, the line, the key and the value; cross-key rules
# (the ids) stay the provider's.
. "$top_srcdir/tests/cli/lib.sh"

plan 7

cfg_copy || exit 99
ini="$tmp/cfg/providers.d/local.ini"
cp "$ini" "$tmp/local.ini"
# with KEY VALUE: the local provider's settings with KEY = VALUE alone.
with() {
    cp "$tmp/local.ini" "$ini"
    printf '\n[settings]\n%s = %s\n' "$1" "$2" >>"$ini"
    line=$(grep -c '' "$ini")
}

for kv in "uid abc" "network open" "cgroup_root a/b" "daemon maybe" "work_inodes 0" \
          "egress_loopback perhaps"; do
    key=${kv%% *} value=${kv#* }
    with "$key" "$value"
    cli --config-dir "$tmp/cfg" run -- true
    check "$key = '$value': refused, naming the file, line, key and value" \
        eval 'is_rc 125 && err_has "providers.d/local.ini:$line: $key = '\''$value'\''"'
done

# A good set of the same keys runs.
cp "$tmp/local.ini" "$ini"
printf '\n[settings]\nnetwork = none\ndaemon = off\nwork_inodes = 20000\negress_loopback = no\n' \
    >>"$ini"
cli --config-dir "$tmp/cfg" run -- sh -c 'echo ran'
check "good values of the same keys: the run goes on" eval 'is_rc 0 && out_has ran'
