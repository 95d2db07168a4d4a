#!/bin/sh
# tests/resilience/check.sh - polysandbox providers --check against the
# flaky test providers: health, exit status, JSON, optional providers.
. "$top_srcdir/tests/cli/lib.sh"

plan 11

libs="$top_builddir/tests/resilience/.libs"
# conf DIR FLAKY2_PROVIDER_LINES FLAKY2_SETTINGS
conf() {
    mkdir -p "$1/providers.d" || exit 99
    printf '[core]\nprovider_path = %s\nstate_dir = %s/state\ndefault_provider = flaky\n' \
        "$libs" "$1" >"$1/polysandbox.ini"
    printf '[provider]\nenabled = false\n' >"$1/providers.d/local.ini"
    printf '[provider]\nenabled = true\n' >"$1/providers.d/flaky.ini"
    printf '[provider]\nenabled = true\n%s\n[settings]\n%s\n' "$2" "$3" \
        >"$1/providers.d/flaky2.ini"
}
# Only our modules: the suite's provider path would add local.
unset POLYSANDBOX_PROVIDER_PATH

conf "$tmp/good" "" ""
cli --config-dir "$tmp/good" providers --check
check "all healthy: exit 0" is_rc 0
check "a line per provider, healthy" sh -c "[ \$(grep -c ' healthy ' '$tmp/out') -eq 2 ]"

conf "$tmp/bad" "" "health = fail"
cli --config-dir "$tmp/bad" providers --check
check "one unhealthy: exit 1" is_rc 1
check "it is named with its reason" out_has "backend unreachable"
check "the healthy one is still listed healthy" sh -c "grep -q '^flaky .* healthy ' '$tmp/out'"

cli --config-dir "$tmp/bad" providers --check --json
check "--json: exit 1 too" is_rc 1
check "--json: healthy, status, latency, reason and breaker per provider" json_check \
    'len(j) == 2 and [p["healthy"] for p in j if p["name"] == "flaky2"] == [False] and all("latency_ms" in p and p["breaker"] == "closed" for p in j) and "unreachable" in [p for p in j if p["name"] == "flaky2"][0]["reason"]'

conf "$tmp/opt" "optional = true" "health = fail"
cli --config-dir "$tmp/opt" providers --check
check "an optional provider's failure does not fail the check" is_rc 0

cli --config-dir "$tmp/good" providers --json
check "providers --json shows each breaker" json_check \
    'all(p["breaker"] == "closed" and p["breaker_failures"] == 0 for p in j)'

# A run whose first create gets a 5xx and whose first stream drops still
# runs once to the end (tiny backoff: this one really sleeps).
mkdir -p "$tmp/run/providers.d"
printf '[core]\nprovider_path = %s\nstate_dir = %s/state\ndefault_provider = flaky\n[retry]\nbase = 1ms\n' \
    "$libs" "$tmp/run" >"$tmp/run/polysandbox.ini"
printf '[provider]\nenabled = false\n' >"$tmp/run/providers.d/local.ini"
printf '[provider]\nenabled = true\n[settings]\ncreate_fail_first = 1\nexec_drop_first = 1\n' \
    >"$tmp/run/providers.d/flaky.ini"
cli --config-dir "$tmp/run" run --json -- sample 6
check "run --json through a 5xx and a dropped stream: the program's own result" \
    json_check 'j["status"] == "nonzero_exit" and j["exit_code"] == 1 and j["stdout"] == "6 squared is 36\n"'
# Streamed output already reached the terminal: never run twice.
cli --config-dir "$tmp/run" run -- sample 5
check "a streamed run whose stream dropped is a sandbox error, not repeated" \
    rc_and_err 125 "dropped stream"

done_testing
