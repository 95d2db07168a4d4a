#!/bin/sh
# tests/pool/pools.sh - polysandbox pools, and pool configuration errors
# through the command line
. "$top_srcdir/tests/cli/lib.sh"

POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_STATE_DIR
mkdir "$POLYSANDBOX_STATE_DIR" || exit 99

plan 12

count() { ls "$POLYSANDBOX_STATE_DIR/local" 2>/dev/null | grep -c '^lcl-'; }

cli pools
check "no pool configured: exit 0 and a note" eval 'is_rc 0 && err_has "no pool is configured"'

cli -o pool.a.size=2 -o pool.b.size=1 -o pool.b.template=python pools --wait --json
check "pools --wait --json: both pools filled" \
    eval 'is_rc 0 && json_check "[(p[\"name\"], p[\"ready\"], p[\"created\"], p[\"active\"]) for p in j] == [(\"a\", 2, 2, True), (\"b\", 1, 1, True)]"'
check "the key is shown" json_check 'j[1]["template"] == "python" and j[0]["template"] is None and j[0]["provider"] == "local"'
check "nothing is left once the command is done" eval '[ "$(count)" -eq 0 ]'

cli -o pool.a.size=1 pools --wait=1m
check "the table names the pool, running" eval 'is_rc 0 && out_has NAME && grep -q "^a .* running" "$tmp/out"'

cli -o pool.a.size=1 -o core.pools=false pools
check "core.pools=false: the pool is stopped, exit 1" \
    eval 'is_rc 1 && grep -q "^a .*stopped: pools are off" "$tmp/out"'

cli -o pool.a.size=lots pools
check "a bad size on the command line exits 125 naming it" \
    eval 'is_rc 125 && err_has "command line" && err_has size'

mkdir -p "$tmp/conf/pools.d" "$tmp/conf/providers.d"
cp "$top_srcdir/tests/config/polysandbox.ini" "$tmp/conf/"
cp "$top_srcdir/tests/config/providers.d/local.ini" "$tmp/conf/providers.d/"
printf '[pool]\nsize = 1\nreuse = maybe\n' >"$tmp/conf/pools.d/py.ini"
cli --config-dir "$tmp/conf" pools
check "a bad pools.d file exits 125 naming FILE:LINE" \
    eval 'is_rc 125 && err_has "pools.d/py.ini:3:" && err_has reuse'
cli --config-dir "$tmp/conf" run -- true
check "every command reports a bad pool configuration" rc_and_err 125 "pools.d/py.ini:3:"

printf '[pool]\nsize = 2\n' >"$tmp/conf/pools.d/py.ini"
cli --config-dir "$tmp/conf" run -- sh -c 'ls /nonexistent-dir 2>/dev/null; echo ran'
check "a one-shot run with a pool configured runs" rc_and_out 0 ran
cli --config-dir "$tmp/conf" pools --wait=bad
check "a bad --wait exits 2" rc_and_err 2 "--wait"
cli pools --help
check "pools --help exits 0 with a usage line" eval 'is_rc 0 && out_has "Usage: polysandbox pools"'

done_testing
