#!/bin/sh
# tests/limits/caps.sh - the core holds the output caps of a provider that
# ignores them (TAP)
#
# With the provider of tests/provider/flood.c, which writes `bytes` bytes on
# stdout and on stderr whatever the caps and whatever the sink answers:
# the core keeps the cap's worth of each stream, says they were cut, and
# reports an output limit.
. "$top_srcdir/tests/cli/lib.sh"

plan 6

POLYSANDBOX_PROVIDER_PATH="$top_builddir/tests/limits/.libs"
POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_PROVIDER_PATH POLYSANDBOX_STATE_DIR
mkdir -p "$tmp/c/providers.d" "$tmp/c/templates.d" || exit 99
cp "$top_srcdir/tests/config/templates.d/sh.ini" "$tmp/c/templates.d/" || exit 99
printf '[core]\ndefault_provider = flood\nunenforced_limits = allow\n' >"$tmp/c/polysandbox.ini"
printf '[provider]\nenabled = true\n[settings]\nbytes = 1048576\n' \
    >"$tmp/c/providers.d/flood.ini"

cli --config-dir "$tmp/c" run --output-limit 1000 -- true
check "a flood past --output-limit 1000: exit 141 (output limit)" is_rc 141
check "stdout holds exactly the cap, of what the provider wrote" \
    eval '[ "$(wc -c <"$tmp/out")" -eq 1000 ] && [ -z "$(tr -d o <"$tmp/out")" ]'
check "the cut is said" err_has "output truncated"
cli --config-dir "$tmp/c" run --json --output-limit 5000 -- true
check "--json: status output_limit, both streams cut at the cap" \
    json_check 'j["status"] == "output_limit" and j["stdout_truncated"] and j["stderr_truncated"] and len(j["stdout"]) == 5000 and len(j["stderr"]) == 5000'
cli --config-dir "$tmp/c" -o provider.flood.bytes=4096 run --json --output-limit 4096 -- true
check "output of exactly the cap: whole, not cut, ok" \
    json_check 'j["status"] == "ok" and not j["stdout_truncated"] and not j["stderr_truncated"] and len(j["stdout"]) == 4096'
cli --config-dir "$tmp/c" -o provider.flood.bytes=4097 run --json --output-limit 4096 -- true
check "one byte past the cap: cut at the cap, output_limit" \
    json_check 'j["status"] == "output_limit" and j["stdout_truncated"] and len(j["stdout"]) == 4096'

done_testing
