#!/bin/sh
# tests/cli/info.sh - providers, templates and doctor
. "$top_srcdir/tests/cli/lib.sh"

plan 12

cli providers
check "providers lists local as ready" \
    eval 'is_rc 0 && grep -q "^local  *ready " "$tmp/out"'
cli providers --json
check "providers --json: local, ready, with capabilities and a path" \
    json_check 'any(p["name"] == "local" and p["state"] == "ready" and "files" in p["capabilities"] and p["path"] for p in j)'
check "providers --json: every entry has every field" \
    json_check 'all(all(k in p for k in ("name", "state", "priority", "version", "capabilities", "path", "reason")) for p in j)'

cli templates
check "templates lists python with .py" \
    eval 'is_rc 0 && grep -q "^python .*\.py" "$tmp/out"'
cli templates --json
check "templates --json: python with .py" \
    json_check 'any(t["name"] == "python" and ".py" in t["extensions"] for t in j)'

cli doctor --provider local
check "doctor prints only OK/MISSING lines" \
    eval '[ -s "$tmp/out" ] && ! grep -v -E "^(OK|MISSING) " "$tmp/out" >/dev/null'
check "doctor exits 0 exactly when nothing is MISSING" \
    eval 'if grep -q "^MISSING" "$tmp/out"; then is_rc 1; else is_rc 0; fi'
check "doctor names the provider on each line" \
    eval '! grep -v " local: " "$tmp/out" >/dev/null'
# The host settings it reads are the ones this kernel has; core_pattern and
# swap exist on every Linux.
check "doctor reports host settings: core_pattern and swap" \
    eval 'grep -q "host setting: kernel.core_pattern = " "$tmp/out" && grep -q " local: swap: " "$tmp/out"'
cli doctor --provider nosuch-provider
check "doctor of an unknown provider: exit 125 naming it" \
    rc_and_err 125 nosuch-provider

# The shipped providers.d/ keeps kubernetes, a reserved name, disabled.
mkdir "$tmp/conf" && cp -RL "$top_srcdir/tests/config/." "$tmp/conf/" &&
    cp "$top_srcdir"/etc/providers.d/*.ini "$tmp/conf/providers.d/" || exit 99
cli --config-dir "$tmp/conf" providers --json
check "the reserved name loads, disabled (not listed as a provider)" \
    eval 'is_rc 0 && json_check "not any(p[\"name\"] == \"kubernetes\" for p in j)"'
sed -i 's/^enabled = false/enabled = true/' "$tmp/conf/providers.d/kubernetes.ini"
cli --config-dir "$tmp/conf" providers --json
check "enabled, kubernetes is unavailable with a reason saying the name is reserved" \
    json_check 'any(p["name"] == "kubernetes" and p["state"] == "unavailable" and "reserved" in p["reason"] for p in j)'

done_testing
