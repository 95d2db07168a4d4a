#!/bin/sh
# tests/clouds/providers.sh - polysandbox providers lists every provider
# with its state: with the providers.d files as installed and every module
# built, each provider is listed (local ready, the others disabled as
# shipped) and no placeholder of a name still to come is; enabled with
# nothing set, each is listed again, ready or unavailable with its reason.
# (tests/clouds/compare.sh lists the clouds ready against their fakes.)
. "$top_srcdir/tests/clouds/lib.sh"
plan 5

# The providers.d/ of an installation: every plugin's NAME.ini, and the
# reserved names' files of etc/providers.d/.
rm -f "$tmp/config/providers.d/local.ini"
cp "$top_srcdir"/etc/providers.d/*.ini "$top_srcdir"/plugins/*/*.ini "$tmp/config/providers.d/" || exit 99
built=
POLYSANDBOX_PROVIDER_PATH=
for so in "$top_builddir"/plugins/*/.libs/*.so; do
    n=$(basename "$so" .so)
    [ "$so" = "$top_builddir/plugins/$n/.libs/$n.so" ] || continue
    built="$built $n"
    POLYSANDBOX_PROVIDER_PATH="$POLYSANDBOX_PROVIDER_PATH${POLYSANDBOX_PROVIDER_PATH:+:}$top_builddir/plugins/$n/.libs"
done
export POLYSANDBOX_PROVIDER_PATH
echo "# modules built:$built"

cli providers --json
check "as installed: every provider built is listed, and only those" \
    json_check "sorted(p['name'] for p in j) == sorted('$built'.split())"
check "...local ready, every other one disabled (as shipped)" \
    json_check "all(p['state'] == ('ready' if p['name'] == 'local' else 'disabled') for p in j)"
cli providers
check "the table says the same, a line per provider with its state" \
    "$PY" - "$tmp/out" "$built" <<'PYEOF'
import sys
rows = {l.split()[0]: l.split()[1] for l in open(sys.argv[1])
        if l.strip() and not l.startswith((" ", "NAME", "default:"))}
sys.exit(0 if sorted(rows) == sorted(sys.argv[2].split()) and
         all(s in ("ready", "disabled") for s in rows.values()) else 1)
PYEOF

# Enabled, not optional, nothing set: listed, ready or unavailable with why.
for f in "$tmp"/config/providers.d/*.ini; do
    sed -i -e 's/^enabled = false/enabled = true/' -e 's/^optional = true/optional = false/' "$f"
done
cli providers --json
check "enabled with nothing set: every provider listed again" \
    json_check "set('$built'.split()) <= set(p['name'] for p in j)"
check "...each ready, or unavailable with a reason naming its configuration" \
    json_check "all(p['state'] == 'ready' or (p['state'] == 'unavailable' and p['reason'] and '.ini' in p['reason']) for p in j)"
sed -n 's/^/# /p' "$tmp/out" | grep -E '"(name|state|reason)"' | head -40
done_testing
