#!/bin/sh
# tests/cli/locate.sh - an id opened without --provider: create records
# where it was made, exec and destroy use the record once it is verified,
# and a record that lies costs a listing, never a wrong answer.
. "$top_srcdir/tests/cli/lib.sh"

plan 9

# Our own state directory: the records are looked at as files.
export POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs"
hints="$tmp/state/sandbox-ids"
id=
trap '[ -n "$id" ] && "$PS" destroy -p local "$id" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

cli create
id=$(cat "$tmp/out")
check "create keeps a sandbox and says its id" eval 'is_rc 0 && [ -n "$id" ]'
check "create records the id under its provider, private" \
    eval '[ -f "$hints/local/$id" ] && [ "$(stat -c %a "$hints/local" "$hints/local/$id" | tr "\n" " ")" = "700 600 " ]'
cli exec "$id" -- echo found
check "exec ID without --provider opens it" rc_and_out 0 found

# A record naming a provider that has no such sandbox: the open there
# fails, the record goes, the listing finds the sandbox where it is.
mv "$hints/local/$id" "$tmp/saved-hint"
mkdir -p "$hints/other" && chmod 700 "$hints/other"
: >"$hints/other/$id"
cli exec "$id" -- echo listed
check "a record of an unknown provider: found by listing" rc_and_out 0 listed
mv "$tmp/saved-hint" "$hints/local/$id"

# A record of an id no provider has: exit 2 as before, and it is dropped.
: >"$hints/local/lcl-0123456789abcdef"
cli exec lcl-0123456789abcdef -- true
check "a stale record: exit 2 naming the id" \
    eval 'is_rc 2 && err_has lcl-0123456789abcdef && err_has "not found on any enabled provider"'
check "a stale record is removed once the open finds nothing" \
    eval '[ ! -e "$hints/local/lcl-0123456789abcdef" ]'

# A link is not a record (it could point anywhere): ignored, still found.
mv "$hints/local/$id" "$tmp/saved-hint"
ln -s "$tmp/saved-hint" "$hints/local/$id"
cli exec "$id" -- echo linked
check "a record that is a symbolic link is not trusted, the id still found" \
    eval 'rc_and_out 0 linked && [ -L "$hints/local/$id" ]'
rm -f "$hints/local/$id"
mv "$tmp/saved-hint" "$hints/local/$id"

cli destroy "$id"
check "destroy ID without --provider removes the record" \
    eval 'is_rc 0 && [ ! -e "$hints/local/$id" ]'
cli exec "$id" -- true
check "the destroyed id: exit 2" rc_and_err 2 "not found on any enabled provider"
id=
done_testing
