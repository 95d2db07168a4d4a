#!/bin/sh
# tests/server/config.sh - polysandboxd's command line and [server]: help
# and version, usage errors (exit 2), [server] keys checked with FILE:LINE,
# -o server.KEY=VALUE, the listen address, and the polysandbox command
# reading the same file without minding [server].
. "$top_srcdir/tests/server/lib.sh"

plan 16

CLI_TIMEOUT=20   # a server that starts by mistake is stopped
PS_SAVED=$PS
PS=$PSD
cli --help
check "--help: exit 0, the usage and the man page on stdout" \
    eval 'is_rc 0 && out_has "Usage: polysandboxd" && out_has "polysandboxd(8)"'
cli --version
check "--version: exit 0, the version" eval 'is_rc 0 && out_has "polysandboxd 0."'
cli --bogus
check "an unknown option: exit 2 and a hint" rc_and_err 2 "polysandboxd --help"
cli extra
check "an argument: exit 2 naming it" rc_and_err 2 "unexpected argument 'extra'"
cli -o server.workers
check "-o without =: exit 2" rc_and_err 2 "expected SECTION.KEY=VALUE"
cli --routes -o server.workers=0
check "-o server.workers=0: exit 2 naming the key" rc_and_err 2 "for workers in [server]"
cli --routes -o server.colour=red
check "-o server.colour: exit 2, an unknown key listing the known ones" \
    eval 'is_rc 2 && err_has "unknown key '\''colour'\'' in [server]" && err_has "token_file"'
cli --listen 127.0.0.1
check "--listen without a port: exit 2" rc_and_err 2 "invalid listen address '127.0.0.1'"
cli --listen localhost:80
check "--listen with a name: exit 2" rc_and_err 2 "invalid listen address 'localhost:80'"
cli --token-file "$tmp/none"
check "a missing token file: exit 2 naming it" rc_and_err 2 "$tmp/none"

cp -r "$POLYSANDBOX_CONFIG_DIR" "$tmp/config"
printf '\n[server]\nworkers = 3\nqueue = lots\n' >>"$tmp/config/polysandbox.ini"
line=$(grep -n '^queue' "$tmp/config/polysandbox.ini" | cut -d: -f1)
cli --config-dir "$tmp/config" --routes
check "a bad [server] value: exit 2 naming FILE:LINE" \
    rc_and_err 2 "$tmp/config/polysandbox.ini:$line: invalid value 'lots' for queue in [server]"
cli --config-dir "$tmp/config" --routes -o server.queue=9
check "-o overrides the file's value" eval 'is_rc 0 && out_has "/v1/run POST"'

sed -i 's/^queue = lots/queue = 9/' "$tmp/config/polysandbox.ini"
PS=$PS_SAVED
cli --config-dir "$tmp/config" run -- true
check "polysandbox runs with a [server] section in the file" is_rc 0

PS=$PSD
port_taken() {
    srv_start --config-dir "$tmp/config" -o server.workers=2
}
check "polysandboxd starts with the file's [server]" port_taken
req GET /v1/status
check "[server] workers and queue apply" \
    eval 'is 200 && json_check "j[\"workers\"][\"total\"] == 2 and j[\"queue\"][\"capacity\"] == 9"'
cli --listen "${base#http://}"
check "an address in use: exit 1 naming it" rc_and_err 1 "cannot listen on ${base#http://}"
done_testing
