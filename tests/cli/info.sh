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

# The shipped providers.d/kubernetes.ini keeps the provider disabled (its
# module is not on the test's provider path): nothing listed, nothing
# opened.  Enabled and not optional without its module, the reason names
# what is missing (an optional one is left out of the list).
mkdir "$tmp/conf" && cp -RL "$top_srcdir/tests/config/." "$tmp/conf/" &&
    cp "$top_srcdir/plugins/kubernetes/kubernetes.ini" "$tmp/conf/providers.d/" || exit 99
cli --config-dir "$tmp/conf" providers --json
check "the shipped kubernetes.ini loads, disabled (not listed as a provider)" \
    eval 'is_rc 0 && json_check "not any(p[\"name\"] == \"kubernetes\" for p in j)"'
sed -i -e 's/^enabled = false/enabled = true/' -e 's/^optional = true/optional = false/' \
    "$tmp/conf/providers.d/kubernetes.ini"
cli --config-dir "$tmp/conf" providers --json
check "enabled, not optional, without its module: kubernetes unavailable with a reason naming kubernetes.so" \
    json_check 'any(p["name"] == "kubernetes" and p["state"] == "unavailable" and "no kubernetes.so in" in p["reason"] for p in j)'

done_testing
