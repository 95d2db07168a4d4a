#!/bin/sh
# tests/cli/json.sh - polysandbox run --json: one object, every field
. "$top_srcdir/tests/cli/lib.sh"

plan 10

fields='["status", "exit_code", "signal", "stdout", "stdout_encoding",
 "stdout_truncated", "stderr", "stderr_encoding", "stderr_truncated",
 "timings_ns", "cpu_ns", "peak_memory_bytes", "provider", "sandbox_id",
 "error", "error_code", "compile"]'

cli run --json --lang python -c 'print(6*7)'
check "--json: exit 0" is_rc 0
check "--json: stdout is exactly one JSON object" \
    json_check 'isinstance(j, dict)'
check "--json: every field is there" \
    json_check "all(k in j for k in $fields)"
check "--json: timings has create, start, compile, exec, total" \
    json_check 'all(k in j["timings_ns"] for k in ("create", "start", "compile", "exec", "total"))'
check "--json: status ok, stdout 42, provider local" \
    json_check 'j["status"] == "ok" and j["exit_code"] == 0 and j["stdout"] == "42\n" and j["provider"] == "local"'
check "--json: nothing on stderr for an ok run" eval '[ ! -s "$tmp/err" ]'

cli run --json -- sh -c 'echo oops >&2; exit 3'
check "--json nonzero exit: status nonzero_exit, exit 3" \
    eval 'is_rc 3 && json_check "j[\"status\"] == \"nonzero_exit\" and j[\"exit_code\"] == 3 and j[\"stderr\"] == \"oops\\n\""'

cli run --json -t 1s -- sleep 60
check "--json timeout: status timeout, exit 124" \
    eval 'is_rc 124 && json_check "j[\"status\"] == \"timeout\""'

cli run --json -- sh -c 'kill -TERM $$'
check "--json signal: status signal, signal 15, exit 143" \
    eval 'is_rc 143 && json_check "j[\"status\"] == \"signal\" and j[\"signal\"] == 15"'

cli run --json -- printf '\377\376\000A'
check "--json binary output is base64 and exact" \
    json_check 'j["stdout_encoding"] == "base64" and base64.b64decode(j["stdout"]) == b"\xff\xfe\x00A"'

done_testing
