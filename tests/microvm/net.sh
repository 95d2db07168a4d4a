#!/bin/sh
# tests/microvm/net.sh - a microVM's network: none unless its template
# allows egress (then QEMU's user-mode network, slirp, alone).  A guest
# of a template with `network = egress` fetches a page from an HTTP
# server this test starts on the host's 127.0.0.1 (slirp's 10.0.2.2),
# with eth0 at slirp's addresses and its DNS in /etc/resolv.conf (one
# cold boot), and so does a kept sandbox of it, whose jailed QEMU keeps
# the host's network namespace alone (a second boot); --network none
# narrows egress, and a guest of a template without it has a loopback
# alone and no way out (two restores, or boots).  Egress is refused, nothing started,
# while egress_loopback is not true (QEMU's slirp cannot cut the host's
# loopback off) and under vmm = firecracker.  Only the host's loopback is
# ever a target.  Skips as run.sh does (tests/microvm/guest.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/microvm/guest.sh"

plan 12
CLI_TIMEOUT=600

# The suite's python template, and a copy of it that allows egress.
conf=$POLYSANDBOX_CONFIG_DIR
sed -e 's/^extensions.*/extensions = .pynet\nnetwork = egress/' -e '/^zygote/d' \
    "$conf/templates.d/python.ini" > "$conf/templates.d/pynet.ini" || exit 99

# An HTTP server on the host's loopback: each request's path written
# down, one line of body answered.
python3 - "$tmp/port" "$tmp/asked" <<'PY' &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write(self.path + "\n")
        body = b"hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".t", "w") as f:
    f.write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".t", sys.argv[1])
s.serve_forever()
PY
srv=$! id=
trap 'kill $srv 2>/dev/null
      [ -n "$id" ] && "$PS" destroy --provider microvm "$id" >/dev/null 2>&1
      rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port") || { echo "Bail out! the test's server did not start"; exit 99; }

# The client: the guest's interfaces, its resolv.conf, and the page (or
# why there is none).
cat > "$tmp/client.py" <<PY
import os, socket
print("net:", " ".join(sorted(os.listdir("/sys/class/net"))))
try:
    print("resolv:", open("/etc/resolv.conf").read().strip())
except OSError:
    print("resolv: none")
try:
    c = socket.create_connection(("10.0.2.2", $port), timeout=20)
    c.sendall(b"GET /from-guest HTTP/1.0\r\n\r\n")
    data = b""
    while True:
        b = c.recv(4096)
        if not b:
            break
        data += b
    print("body:", data.decode().split("\r\n\r\n", 1)[1], end="")
except OSError as e:
    print("no connection:", e)
PY
cp "$tmp/client.py" "$tmp/client.pynet"

cli run --provider microvm "$tmp/client.pynet"
check "egress without egress_loopback = true: refused, naming the setting, nothing run" eval \
    '! is_rc 0 && err_has "egress_loopback = true" && ! out_has "net:" && ! [ -s "$tmp/asked" ]'

cp -r "$conf" "$tmp/fc" || exit 99
printf 'vmm = firecracker\nfirecracker = /bin/false\n' >> "$tmp/fc/providers.d/microvm.ini"
cli --config-dir "$tmp/fc" run --provider microvm "$tmp/client.pynet"
check "vmm = firecracker refuses egress by name" eval \
    '! is_rc 0 && err_has "vmm = firecracker gives a VM no network device" && ! out_has "net:"'

printf 'egress_loopback = true\n' >> "$conf/providers.d/microvm.ini"
cli doctor --provider microvm
check "doctor says what network = egress gives" sh -c \
    "grep -q 'network.*egress_loopback = true' '$tmp/out' '$tmp/err'"

t0=$(date +%s)
cli run --provider microvm "$tmp/client.pynet"
echo "# egress (one boot): $(($(date +%s) - t0)) s"
sed 's/^/# out: /' "$tmp/out"
sed 's/^/# err: /' "$tmp/err" | tail -n 5
check "egress: the guest has eth0 beside lo" eval 'is_rc 0 && out_has "net: eth0 lo"'
check "egress: slirp's DNS in the command's /etc/resolv.conf" out_has "resolv: nameserver 10.0.2.3"
check "egress: the guest fetched the page from the host's loopback server (10.0.2.2)" eval \
    'out_has "body: hello from the host" && grep -qx /from-guest "$tmp/asked"'

: > "$tmp/asked"
t0=$(date +%s)
cli create --provider microvm --template pynet --label suite=mvnet-$$
id=$(cat "$tmp/out")
echo "# create (one boot): $(($(date +%s) - t0)) s"
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' \
      "$POLYSANDBOX_STATE_DIR/microvm/sandboxes/$id/vm.json" 2>/dev/null)
check "a kept egress sandbox: its QEMU has the host's network namespace, its own mount and pid ones" \
    sh -c '[ -n "$1" ] && [ "$(readlink /proc/$1/ns/net)" = "$(readlink /proc/$$/ns/net)" ] &&
           [ "$(readlink /proc/$1/ns/mnt)" != "$(readlink /proc/$$/ns/mnt)" ] &&
           [ "$(readlink /proc/$1/ns/pid)" != "$(readlink /proc/$$/ns/pid)" ]' sh "$pid"
cli upload "$id" "$tmp/client.py" client.py
cli exec "$id" -- python3 client.py
sed 's/^/# out: /' "$tmp/out"
check "a kept egress sandbox fetches the page too" eval \
    'is_rc 0 && out_has "body: hello from the host" && grep -qx /from-guest "$tmp/asked"'
cli destroy --provider microvm "$id"
# (gone, or a zombie its reaper, not us, has yet to collect)
check "destroy stops it" eval 'is_rc 0 && [ -n "$pid" ] && { ! [ -e "/proc/$pid" ] ||
    [ "$(cut -d")" -f2 "/proc/$pid/stat" | awk "{print \$1}")" = Z ]; }'
id=

: > "$tmp/asked"
cli run --provider microvm --network none "$tmp/client.pynet"
sed 's/^/# out: /' "$tmp/out"
check "--network none narrows the template's egress: a loopback alone" eval \
    'is_rc 0 && out_has "net: lo" && ! out_has "eth0" && out_has "no connection:"'

: > "$tmp/asked"
t0=$(date +%s)
cli run --provider microvm "$tmp/client.py"
echo "# none: $(($(date +%s) - t0)) s"
sed 's/^/# out: /' "$tmp/out"
check "network none: the guest has a loopback alone" eval 'is_rc 0 && out_has "net: lo" &&
    ! out_has "eth0"'
check "network none: no way to the host's server" eval \
    'out_has "no connection:" && ! out_has "hello from the host" && ! [ -s "$tmp/asked" ]'
done_testing
