#!/bin/sh
# tests/cli/exit.sh - the caller's mistakes exit 2 (as bad usage does),
# polysandbox's and the sandbox's own failures 125: an unknown language,
# a limit or timeout above its maximum, an unknown or malformed sandbox
# id (exec, destroy, upload, download) and a --cwd that is not there
# are the caller's.
. "$top_srcdir/tests/cli/lib.sh"

plan 12

cli run --lang nosuchlang -c 'x'
check "an unknown language: exit 2 naming it" rc_and_err 2 "nosuchlang"
cli run --memory 100G -- true
check "a limit above its maximum: exit 2 naming it" \
    eval 'rc_and_err 2 "memory limit" && err_has "max_memory"'
cli run -t 1h -- true
check "a timeout above its maximum: exit 2 naming it" rc_and_err 2 "max_wall"

cli exec lcl-0000000000000000 -- true
check "exec in an unknown sandbox: exit 2 naming it" rc_and_err 2 "lcl-0000000000000000"
cli exec 'bad id!' -- true
check "exec with a malformed id: exit 2 naming it" rc_and_err 2 "bad id!"
cli destroy lcl-0000000000000000
check "destroy of an unknown sandbox: exit 2 naming it" rc_and_err 2 "lcl-0000000000000000"
echo x >"$tmp/f"
cli upload lcl-0000000000000000 "$tmp/f" f
check "upload to an unknown sandbox: exit 2" rc_and_err 2 "lcl-0000000000000000"
cli download lcl-0000000000000000 f "$tmp/g"
check "download from an unknown sandbox: exit 2, nothing written" \
    eval 'rc_and_err 2 "lcl-0000000000000000" && [ ! -e "$tmp/g" ]'

cli run --cwd /no/such/dir -- true
check "run --cwd of a directory that is not there: exit 2 naming it" \
    rc_and_err 2 "/no/such/dir"
cli run --cwd /etc/hostname -- true
check "run --cwd of a file: exit 2" rc_and_err 2 "not a directory"
cli run --json --cwd /no/such/dir -- true
check "--json: the result says why, with exit 2" \
    eval 'is_rc 2 && json_check "j[\"status\"] == \"sandbox_error\" and \"/no/such/dir\" in j[\"error\"]"'

# A sandbox error that is not the caller's still exits 125.
cli -o provider.local.cgroup_root=bad/name run --provider local -- true
check "a provider that cannot start: exit 125" is_rc 125

done_testing
