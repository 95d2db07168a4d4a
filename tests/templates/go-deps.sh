#!/bin/sh
# tests/templates/go-deps.sh - polysandbox run --deps main.go: the
# modules of the go.mod beside it fetched in the sandbox before the build,
# from a GOPROXY this test serves on the host's 127.0.0.1 (python3 -m
# http.server over a directory in the proxy's layout, reached through
# slirp's 10.0.2.2), never the internet; refused where the template
# does not allow egress; go.sum checked.
. "$top_srcdir/tests/cli/lib.sh"

command -v go >/dev/null 2>&1 || { echo "1..0 # SKIP go is not installed"; exit 0; }
[ -x /usr/bin/slirp4netns ] || [ -x /usr/local/bin/slirp4netns ] || [ -x /bin/slirp4netns ] ||
    { echo "1..0 # SKIP slirp4netns is not installed"; exit 0; }

plan 4

conf="$tmp/conf"
mkdir -p "$conf/templates.d" "$conf/providers.d"
cp "$top_srcdir/tests/config/polysandbox.ini" "$conf/"
cp "$top_srcdir/tests/config/providers.d/local.ini" "$conf/providers.d/"
printf '[settings]\negress_loopback = true\n' >>"$conf/providers.d/local.ini"
cp "$top_srcdir/etc/templates.d/go.ini" "$conf/templates.d/"
sed -e 's/^extensions.*/extensions = .gonet\nnetwork = egress/' \
    "$top_srcdir/etc/templates.d/go.ini" >"$conf/templates.d/gonet.ini"
PS_CONF="--config-dir $conf"

# The proxy's files (module example.com/greet v1.0.0) and the app's
# go.mod and go.sum, with the hashes go computes (dirhash h1).
mkdir -p "$tmp/app" "$tmp/proxy"
python3 - "$tmp" <<'PY' || exit 99
import base64, hashlib, io, os, sys, zipfile
tmp = sys.argv[1]
mod, ver = "example.com/greet", "v1.0.0"
gomod = b"module example.com/greet\n\ngo 1.19\n"
files = {"go.mod": gomod,
         "greet.go": b'package greet\n\nfunc Hello() string { return "hello from a module" }\n'}
def h1(named):
    lines = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in sorted(named.items()))
    return "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()
prefix = f"{mod}@{ver}/"
zipped = {prefix + n: d for n, d in files.items()}
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    for n, d in sorted(zipped.items()):
        z.writestr(n, d)
v = os.path.join(tmp, "proxy", mod, "@v")
os.makedirs(v)
for name, data in ((f"{ver}.zip", buf.getvalue()), (f"{ver}.mod", gomod), ("list", b"v1.0.0\n"),
                   (f"{ver}.info", b'{"Version":"v1.0.0","Time":"2020-01-01T00:00:00Z"}')):
    with open(os.path.join(v, name), "wb") as f:
        f.write(data)
app = os.path.join(tmp, "app")
with open(os.path.join(app, "go.mod"), "w") as f:
    f.write(f"module example.com/app\n\ngo 1.19\n\nrequire {mod} {ver}\n")
with open(os.path.join(app, "go.sum"), "w") as f:
    f.write(f"{mod} {ver} {h1(zipped)}\n{mod} {ver}/go.mod {h1({'go.mod': gomod})}\n")
with open(os.path.join(app, "main.gonet"), "w") as f:
    f.write('package main\n\nimport (\n\t"fmt"\n\n\t"example.com/greet"\n)\n\n'
            'func main() { fmt.Println(greet.Hello()) }\n')
PY
cp "$tmp/app/main.gonet" "$tmp/app/main.go"

python3 -u -m http.server --bind 127.0.0.1 --directory "$tmp/proxy" 0 >"$tmp/http.log" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do grep -q "port [0-9]" "$tmp/http.log" && break; sleep 0.1; done
port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$tmp/http.log" | head -n1)
[ -n "$port" ] || { echo "Bail out! the GOPROXY server did not start"; exit 99; }
GO_ENV="-e GOPROXY=http://10.0.2.2:$port -e GOSUMDB=off"

cli $PS_CONF run -t 120s $GO_ENV --deps "$tmp/app/main.gonet"
check "run --deps: go.mod's module fetched from the local GOPROXY, built and run" \
    rc_and_out 0 "hello from a module"

cli $PS_CONF run -t 120s $GO_ENV --deps "$tmp/app/main.go"
check "run --deps of a template of network none: refused (exit 2), nothing run" eval \
    'is_rc 2 && err_has "does not allow" && ! out_has hello'

sed -i 's/h1:[A-Za-z0-9+\/]/h1:AAAA/' "$tmp/app/go.sum"
cli $PS_CONF run -t 120s $GO_ENV --deps "$tmp/app/main.gonet"
check "run --deps: a go.sum that does not match is refused by go, the program never runs" eval \
    '! is_rc 0 && err_has "go mod download" && ! out_has hello'

mkdir "$tmp/nomod"
cp "$tmp/app/main.gonet" "$tmp/nomod/"
cli $PS_CONF run $GO_ENV --deps "$tmp/nomod/main.gonet"
check "run --deps without a go.mod beside FILE: exit 2, naming it" eval \
    'is_rc 2 && err_has "go.mod"'

done_testing
