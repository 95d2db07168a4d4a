#!/bin/sh
# tests/templates/list.sh - `polysandbox templates` (every template, and
# whether it is usable on each enabled provider and why not), run FILE
# picking the template from its extension, and an --image the local
# provider cannot run refused (exit 2), never ignored.
. "$top_srcdir/tests/cli/lib.sh"

plan 9

# A configuration of its own: the shipped templates plus one whose
# interpreter is nowhere on this host, and the local provider only.
conf="$tmp/conf"
mkdir -p "$conf/templates.d" "$conf/providers.d"
cp "$top_srcdir/tests/config/polysandbox.ini" "$conf/"
cp "$top_srcdir/tests/config/providers.d/local.ini" "$conf/providers.d/"
cp "$top_srcdir"/etc/templates.d/*.ini "$conf/templates.d/"
cat >"$conf/templates.d/nosuch.ini" <<'INI'
[template]
extensions = .nosuch
run = nosuch-interpreter-$$ main.nosuch
INI
sed -i "s/\\\$\\\$/$$/" "$conf/templates.d/nosuch.ini"
PS_CONF="--config-dir $conf"

cli $PS_CONF templates --json
check "templates --json: exit 0, every shipped template listed" eval 'is_rc 0 && json_check "
sorted(t[\"name\"] for t in j) == sorted([\"bash\", \"c\", \"cpp\", \"go\", \"java\", \"lua\",
 \"node\", \"nosuch\", \"perl\", \"php\", \"python\", \"python-data\", \"r\", \"ruby\",
 \"rust\", \"sh\",
 \"typescript\"])"'
check "templates --json: compiled says which have a compile step" json_check '
sorted(t["name"] for t in j if t["compiled"]) == ["c", "cpp", "go", "java", "rust", "typescript"]'
check "templates --json: a missing interpreter is unusable on local, and named" json_check '
([t["providers"]["local"] for t in j if t["name"] == "nosuch"] ==
 [{"usable": False, "reason": "nosuch-interpreter-'$$' is not on the host (looked in /usr/local/bin:/usr/bin:/bin)"}])'
check "templates --json: sh is usable on local (its shell is on every host)" json_check '
[t["providers"]["local"]["usable"] for t in j if t["name"] == "sh"] == [True]'

cli $PS_CONF templates
check "templates: a column per enabled provider, a line saying why not" eval \
    'is_rc 0 && out_has "NAME" && grep -q "^nosuch .* no *\$" "$tmp/out" &&
     out_has "nosuch on local: nosuch-interpreter-$$ is not on the host"'

printf 'echo from the nosuch file\n' >"$tmp/x.nosuch"
cli $PS_CONF run "$tmp/x.nosuch"
check "run FILE of an unusable template: an error, not a crash" eval \
    '! is_rc 0 && ! is_rc 139 && [ -s "$tmp/err" ]'

printf 'echo picked by its extension\n' >"$tmp/x.bash"
cli run "$tmp/x.bash"
check "run FILE: the extension picks the template" rc_and_out 0 "picked by its extension"

cli run --image debian:12-slim -- echo ran
check "--image NAME on local: refused with exit 2, naming the option and the provider" eval \
    'is_rc 2 && err_has "--image debian:12-slim" && err_has "provider local" && ! out_has ran'

cli create --image debian:12-slim
check "create --image NAME on local: refused the same" eval \
    'is_rc 2 && err_has "--image debian:12-slim" && err_has "provider local"'

done_testing
