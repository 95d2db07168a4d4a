#!/bin/sh
# tests/limits/core.sh - a limit a provider cannot enforce is refused, or
# run without where unenforced_limits allows it, and then said (TAP)
#
# With the providers of tests/provider/unenf.c: unenf reports memory and
# pids unenforced (host->limits_unenforced, ABI 1.5); minor2 is a
# provider built against ABI 1.2, which must keep loading.
. "$top_srcdir/tests/cli/lib.sh"

plan 26

POLYSANDBOX_PROVIDER_PATH="$top_builddir/tests/limits/.libs"
POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_PROVIDER_PATH POLYSANDBOX_STATE_DIR
# conf DIR [PROVIDER-LINE] [CORE-LINE] [SETTINGS-LINE]: a configuration of
# unenf (the default) and minor2.
conf() {
    mkdir -p "$1/providers.d" "$1/templates.d" || exit 99
    cp "$top_srcdir/tests/config/templates.d/sh.ini" "$1/templates.d/" || exit 99
    printf '[core]\ndefault_provider = unenf\n%s\n' "${3:-}" >"$1/polysandbox.ini"
    printf '[provider]\nenabled = true\n%s\n[settings]\n%s\n' "${2:-}" "${4:-}" \
        >"$1/providers.d/unenf.ini"
    printf '[provider]\nenabled = true\n' >"$1/providers.d/minor2.ini"
}
conf "$tmp/refuse"
conf "$tmp/allow" "unenforced_limits = allow"
conf "$tmp/some" "unenforced_limits = memory"
conf "$tmp/both" "unenforced_limits = memory, pids"
conf "$tmp/global" "" "unenforced_limits = allow"
conf "$tmp/local-refuses" "unenforced_limits = refuse" "unenforced_limits = allow"
conf "$tmp/bad" "unenforced_limits = maybe"
conf "$tmp/disobey" "" "" "obey = no"

# ---- refused by default ----
cli --config-dir "$tmp/refuse" run -- true
check "a limit the provider cannot enforce: refused (125), nothing run" \
    eval 'is_rc 125 && ! out_has ran'
check "the error names the limits and their values" \
    err_has "cannot enforce the memory (512 MiB), pids (128) limits here"
check "... why (the provider's words)" err_has "the test says so"
check "... and the setting that allows it, where" \
    eval 'err_has "unenforced_limits = allow (or = memory, pids)" && err_has "providers.d/unenf.ini"'
cli --config-dir "$tmp/refuse" run --json -- true
check "--json: a sandbox error with code SBX_E_PERM (16)" \
    json_check 'j["status"] == "sandbox_error" and j["error_code"] == 16 and "memory (512 MiB)" in j["error"]'
cli --config-dir "$tmp/refuse" run --memory 64M -- true
check "the refusal names the value asked for" err_has "memory (64 MiB)"

# ---- allowed: and then said ----
cli --config-dir "$tmp/allow" run -- true
check "unenforced_limits = allow in [provider]: it runs" rc_and_out 0 ran
check "a note on stderr names the limits and why" \
    eval 'err_has "note: the sandbox ran without the memory and pids limits" && err_has "the test says so"'
cli --config-dir "$tmp/allow" run --json -- true
check "--json: unenforced_limits and unenforced_reason" \
    json_check 'j["status"] == "ok" and j["unenforced_limits"] == ["memory", "pids"] and "memory, pids: the test says so" == j["unenforced_reason"]'
cli --config-dir "$tmp/allow" -q run -- true
check "-q: no note" eval 'is_rc 0 && [ ! -s "$tmp/err" ]'
cli --config-dir "$tmp/some" run -- true
check "= memory: refused for pids alone" \
    eval 'is_rc 125 && err_has "the pids (128) limit here" && ! err_has "memory ("'
cli --config-dir "$tmp/both" run -- true
check "= memory, pids: it runs" rc_and_out 0 ran
cli --config-dir "$tmp/global" run -- true
check "[core] unenforced_limits = allow: it runs" rc_and_out 0 ran
cli --config-dir "$tmp/local-refuses" run -- true
check "[provider] refuse wins over [core] allow" is_rc 125
cli --config-dir "$tmp/refuse" -o provider.unenf.unenforced_limits=allow run -- true
check "-o provider.NAME.unenforced_limits=allow: it runs" rc_and_out 0 ran
cli --config-dir "$tmp/refuse" -o core.unenforced_limits=memory,pids run -- true
check "-o core.unenforced_limits=memory,pids: it runs" rc_and_out 0 ran
cli --config-dir "$tmp/bad" run -- true
check "a bad value: 125 naming FILE:LINE and the choices" \
    eval 'is_rc 125 && err_has "providers.d/unenf.ini:3" && err_has "use refuse, allow"'
cli --config-dir "$tmp/disobey" run -- true
check "a provider that goes on after the refusal: the core refuses all the same" \
    eval 'is_rc 125 && ! out_has ran && err_has "cannot enforce"'

# ---- a sandbox opened again ----
cli --config-dir "$tmp/allow" create
check "create with allow" rc_and_out 0 unenf-1
cli --config-dir "$tmp/allow" exec unenf-1 -- true
check "exec in it, opened by another process: the note again" \
    eval 'rc_and_out 0 ran && err_has "ran without the memory and pids limits"'
cli --config-dir "$tmp/refuse" exec unenf-1 -- true
check "exec in it where it is not allowed: refused, nothing run" \
    eval 'is_rc 125 && ! out_has ran && err_has "cannot enforce"'
cli --config-dir "$tmp/refuse" destroy unenf-1
check "... and it can still be destroyed" is_rc 0

# ---- eval records ----
printf '{"task_id": "t1", "language": "sh", "prompt": "", "test": "exit 0"}\n' >"$tmp/ds.jsonl"
printf '{"task_id": "t1", "completion": "true"}\n' >"$tmp/s.jsonl"
cli --config-dir "$tmp/allow" eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" \
    --out "$tmp/r.jsonl"
check "eval: the summary says which limits went unenforced" \
    eval 'is_rc 0 && out_has "unenforced: memory, pids limits not enforced in 1 samples"'
check "eval: each record carries them" \
    python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); sys.exit(r.get("unenforced_limits") != ["memory", "pids"])' "$tmp/r.jsonl"

# ---- a provider built against ABI 1.2 ----
cli --config-dir "$tmp/refuse" providers
check "a 1.2 provider still loads (ready)" eval 'is_rc 0 && grep -q "^minor2  *ready" "$tmp/out"'
cli --config-dir "$tmp/refuse" run --provider minor2 --json -- true
check "and runs, with no limit said unenforced" \
    json_check 'j["status"] == "ok" and j["unenforced_limits"] == [] and j["unenforced_reason"] is None'

done_testing
