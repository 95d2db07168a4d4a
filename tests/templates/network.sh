#!/bin/sh
# tests/templates/network.sh - a template's network: none by default (no
# route out), egress through slirp4netns on the local provider (a server
# this test starts on the host's 127.0.0.1 answers through slirp's
# 10.0.2.2), shown by `templates`, and a run that asks wider than its
# template refused.  Only the host's loopback is ever a target.
. "$top_srcdir/tests/cli/lib.sh"

plan 9

# The shipped python template, and a copy of it (zygote and all) that
# allows egress; the local provider lets egress reach the host's
# loopback (egress_loopback), which only tests want.
conf="$tmp/conf"
mkdir -p "$conf/templates.d" "$conf/providers.d"
cp "$top_srcdir/tests/config/polysandbox.ini" "$conf/"
cp "$top_srcdir/tests/config/providers.d/local.ini" "$conf/providers.d/"
printf '[settings]\negress_loopback = true\n' >>"$conf/providers.d/local.ini"
cp "$top_srcdir/etc/templates.d/python.ini" "$conf/templates.d/"
sed -e 's/^extensions.*/extensions = .pynet\nnetwork = egress/' \
    "$top_srcdir/etc/templates.d/python.ini" >"$conf/templates.d/pynet.ini"
PS_CONF="--config-dir $conf"

# A TCP server on the host's loopback: one line to each connection.
python3 - "$tmp/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
with open(sys.argv[1] + ".t", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".t", sys.argv[1])
while True:
    c, _ = s.accept()
    c.sendall(b"hello from the host\n")
    c.close()
PY
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port") || { echo "Bail out! the test's server did not start"; exit 99; }

# The client: prints the server's line, or the error of its connect.
cat >"$tmp/client.py" <<PY
import socket
try:
    print(socket.create_connection(("10.0.2.2", $port), timeout=5).recv(100).decode(), end="")
except OSError as e:
    print("no connection:", e)
PY
cp "$tmp/client.py" "$tmp/client.pynet"

cli $PS_CONF templates --json
check "templates --json: network is none by default, egress where the template says so" \
    json_check '{t["name"]: t["network"] for t in j} == {"python": "none", "pynet": "egress"}'
cli $PS_CONF templates
check "templates: a NETWORK column" eval \
    'is_rc 0 && out_has NETWORK && grep -q "^pynet .* egress " "$tmp/out" &&
     grep -q "^python .* none " "$tmp/out"'

cli $PS_CONF run "$tmp/client.py"
check "network none: no route to the host's 10.0.2.2" eval \
    'is_rc 0 && out_has "no connection:" && ! out_has "hello from the host"'

cli $PS_CONF run --network egress "$tmp/client.py"
check "--network egress on a template of network none: refused, nothing run" eval \
    '! is_rc 0 && err_has "cannot widen" && err_has "python" && ! out_has "connection"'

if [ ! -x /usr/bin/slirp4netns ] && [ ! -x /usr/local/bin/slirp4netns ] &&
   [ ! -x /bin/slirp4netns ]; then
    for what in "egress: reaches the host's loopback server" \
                "--network none narrows egress" "egress in a kept sandbox" \
                "no slirp4netns left behind" "egress_loopback off"; do
        ok "$what # SKIP slirp4netns is not installed"
    done
    done_testing
    exit 0
fi

cli $PS_CONF run "$tmp/client.pynet"
check "network egress: a program reaches the server on the host's 127.0.0.1 as 10.0.2.2" \
    rc_and_out 0 "hello from the host"

cli $PS_CONF run --network none "$tmp/client.pynet"
check "--network none narrows a template's egress" eval \
    'is_rc 0 && out_has "no connection:"'

cli $PS_CONF create --template pynet
id=$(cat "$tmp/out")
cli_in "$tmp/client.py" $PS_CONF exec -i "$id" -- python3 -
check "egress in a kept sandbox: each exec connects out" rc_and_out 0 "hello from the host"
cli $PS_CONF destroy "$id"

# Each exec's slirp4netns goes with it: none runs on our namespace's pids.
check "no slirp4netns outlives its exec" eval \
    '! pgrep -f "slirp4netns .*--exit-fd=4" >/dev/null'

# Without egress_loopback, the host's loopback stays out of reach.
cp "$top_srcdir/tests/config/providers.d/local.ini" "$conf/providers.d/"
cli $PS_CONF run "$tmp/client.pynet"
check "egress without egress_loopback: the host's loopback is not reachable" eval \
    'is_rc 0 && out_has "no connection:"'

done_testing
