#!/bin/sh
# tests/cli/info.sh - providers, templates and doctor
. "$top_srcdir/tests/cli/lib.sh"

plan 13

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
check "doctor prints only OK/WARN/MISSING lines" \
    eval '[ -s "$tmp/out" ] && ! grep -v -E "^(OK|WARN|MISSING) " "$tmp/out" >/dev/null'
check "doctor marks advice as WARN, never OK" \
    eval '! grep -E "^(OK|MISSING) .*advice:" "$tmp/out" >/dev/null'
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
# The system provider directory is searched after the test's path: an
# installed kubernetes.so (make install before make check) lists the
# provider as disabled, and makes the module not missing.
check "the shipped kubernetes.ini loads, disabled (not listed, or listed disabled)" \
    eval 'is_rc 0 && json_check "all(p[\"state\"] == \"disabled\" for p in j if p[\"name\"] == \"kubernetes\")"'
installed=$("${PY:-python3}" -c 'import json, sys; print(any(p["name"] == "kubernetes" and p.get("path") for p in json.load(open(sys.argv[1]))))' "$tmp/out")
sed -i -e 's/^enabled = false/enabled = true/' -e 's/^optional = true/optional = false/' \
    "$tmp/conf/providers.d/kubernetes.ini"
cli --config-dir "$tmp/conf" providers --json
if [ "$installed" = True ]; then
    # The installed module would be found: name one that is not there.
    sed -i "s|^\\[provider\\]|[provider]\\nmodule = $tmp/none/kubernetes.so|" \
        "$tmp/conf/providers.d/kubernetes.ini"
    cli --config-dir "$tmp/conf" providers --json
    check "enabled, not optional, its module missing: kubernetes unavailable with a reason naming kubernetes.so" \
        json_check 'any(p["name"] == "kubernetes" and p["state"] == "unavailable" and "kubernetes.so: cannot open" in p["reason"] for p in j)'
else
    check "enabled, not optional, without its module: kubernetes unavailable with a reason naming kubernetes.so" \
        json_check 'any(p["name"] == "kubernetes" and p["state"] == "unavailable" and "no kubernetes.so in" in p["reason"] for p in j)'
fi

done_testing
