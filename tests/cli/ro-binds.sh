#!/bin/sh
# tests/cli/ro-binds.sh - the local provider's ro_binds: a host path shown
# read-only in every sandbox, and the entries it refuses (a private host
# tree, a path that is not clean, and one below /work or /var/tmp, which
# each sandbox covers with its own and so would never show).
. "$top_srcdir/tests/cli/lib.sh"

plan 7

mkdir -p "$tmp/cfg"
cp -R "$POLYSANDBOX_CONFIG_DIR/." "$tmp/cfg/"
ini="$tmp/cfg/providers.d/local.ini"
cp "$ini" "$tmp/local.ini"
# with_binds VALUE: the local provider's settings with ro_binds = VALUE.
with_binds() {
    cp "$tmp/local.ini" "$ini"
    printf '\n[settings]\nro_binds = %s\n' "$1" >>"$ini"
}

with_binds /work/cache
cli --config-dir "$tmp/cfg" run -- true
check "below /work: refused, naming the entry and what covers it" \
    eval 'is_rc 125 && err_has "ro_binds entry '\''/work/cache'\'' lies below /work"'
with_binds /var/tmp/cache
cli --config-dir "$tmp/cfg" run -- true
check "below /var/tmp: refused, naming the entry and what covers it" \
    eval 'is_rc 125 && err_has "ro_binds entry '\''/var/tmp/cache'\'' lies below /var/tmp"'
with_binds /etc/shadow
cli --config-dir "$tmp/cfg" run -- true
check "a private host tree: refused" \
    rc_and_err 125 "ro_binds entry '/etc/shadow' would expose a private host tree"
with_binds /opt/../etc
cli --config-dir "$tmp/cfg" run -- true
check "a path that is not clean: refused" \
    rc_and_err 125 "ro_binds entry '/opt/../etc' is not a clean absolute path"
# /workspace only shares a prefix with /work: not covered.
with_binds /workspace-ps-none
cli --config-dir "$tmp/cfg" run -- true
check "a path that only begins with the letters of /work is not refused" rc_and_out 0 ""

# A bound tree the sandbox reads and cannot write.  Below /var/cache:
# the build tree may be under /work, which the sandbox covers.
if dir=$(mktemp -d /var/cache/ps-ro-binds.XXXXXX 2>/dev/null); then
    trap 'rm -rf "$tmp" "$dir"' EXIT
    chmod 755 "$dir"
    echo "bound $$" >"$dir/file"
    chmod 644 "$dir/file"
    with_binds "$dir"
    cli --config-dir "$tmp/cfg" run -- cat "$dir/file"
    check "a bound directory is seen in the sandbox" rc_and_out 0 "bound $$"
    cli --config-dir "$tmp/cfg" run -- sh -c "echo x >>'$dir/file' || echo refused"
    check "... read-only: the sandbox cannot write to it" \
        eval 'out_has refused && [ "$(cat "$dir/file")" = "bound $$" ]'
else
    ok "# SKIP no directory can be made in /var/cache (not root)"
    ok "# SKIP no directory can be made in /var/cache (not root)"
fi

done_testing
