#!/bin/sh
# tests/server/list.sh - listing the sandboxes of every provider while
# one of them is down: GET /v1/sandboxes and the Python package's
# sandboxes() (in the process and through the server) give the others'
# sandboxes and name the one that failed with its error, never fail as a
# whole; asked for that provider alone, the error is the answer.  The
# docker provider is "down" by pointing it at a socket nobody serves.
. "$top_srcdir/tests/server/lib.sh"

plan 6

cfg="$tmp/config"
cp -R "$POLYSANDBOX_CONFIG_DIR" "$cfg" || exit 99
chmod -R u+w "$cfg"
sed -i "s|^socket *=.*|socket = unix://$tmp/nobody.sock|" "$cfg/providers.d/docker.ini"
grep -q "nobody.sock" "$cfg/providers.d/docker.ini" || { echo "Bail out! docker.ini has no socket"; exit 1; }
POLYSANDBOX_CONFIG_DIR=$cfg
export POLYSANDBOX_CONFIG_DIR

check "polysandboxd starts with the docker provider pointed at nothing" srv_start
tag=list-$$
post /v1/sandboxes "{\"provider\":\"local\",\"labels\":{\"t\":\"$tag\"}}"
box=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$tmp/out")
req GET "/v1/sandboxes?label=t%3D$tag"
cp "$tmp/out" "$tmp/all.json"
check "every provider: 200, the local sandbox listed, docker named in unlisted with its error" \
    eval 'is 200 && json_check_file "$tmp/all.json" "[s[\"id\"] for s in j[\"sandboxes\"]] == [\"$box\"] and [u[\"provider\"] for u in j[\"unlisted\"]] == [\"docker\"] and \"nobody.sock\" in j[\"unlisted\"][0][\"error\"]"'
req GET "/v1/sandboxes?provider=docker"
check "docker alone: its error is the answer, not an empty list" \
    eval '[ "$code" -ge 400 ] && grep -q nobody.sock "$tmp/out"'
req GET "/v1/sandboxes?provider=local&label=t%3D$tag"
check "local alone: no unlisted" \
    eval 'is 200 && json_check_file "$tmp/out" "\"unlisted\" not in j and len(j[\"sandboxes\"]) == 1"'

# The Python package, both ways (tests/python/unlisted.py).
(
    PYTHON_TEST=unlisted.py UNLISTED_ARGS="$base $tag $box $cfg"
    export UNLISTED_ARGS
    . "$top_srcdir/tests/python/run-python.sh"
) >"$tmp/py.out" 2>&1 </dev/null
sed 's/^/# /' "$tmp/py.out"
check "Python, in the process: the local sandbox, and a RuntimeWarning naming docker" \
    grep -q '^local True True' "$tmp/py.out"
check "Python, through polysandboxd: the same" grep -q '^client True True' "$tmp/py.out"
"$PS" destroy "$box" >/dev/null 2>&1
done_testing
