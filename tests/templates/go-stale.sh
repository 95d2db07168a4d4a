#!/bin/sh
# tests/templates/go-stale.sh - a Go build cache stamped by another go
# than the host's (contrib/go-cache-warm.sh writes DIR/version): doctor
# and templates say it is stale and how to rebuild it, and a run on the
# local provider leaves it aside (GOENV=off) and still works
. "$top_srcdir/tests/cli/lib.sh"

command -v go >/dev/null || { echo "1..0 # SKIP go is not installed"; exit 0; }
plan 6

# the test configuration with a go template whose GOENV names a cache
# here: an env file and a stamp, no cache (a stale one is never read)
conf="$tmp/conf"
cp -RL "$top_srcdir/tests/config" "$conf"
chmod -R u+w "$conf"
cache="$tmp/cache/go"
mkdir -p "$cache"
echo "GOCACHE=$cache/build" >"$cache/env"
echo "go version go1.0.1 linux/amd64" >"$cache/version"
sed "s|^GOENV = .*|GOENV = $cache/env|" "$top_srcdir/etc/templates.d/go.ini" \
    >"$conf/templates.d/go.ini"
POLYSANDBOX_CONFIG_DIR=$conf
export POLYSANDBOX_CONFIG_DIR
host=$(go env GOVERSION)

cli templates
check "templates: a WARN line, both versions and the command to rebuild it" \
    eval 'is_rc 0 && out_has "WARN go: build cache $cache is stale: built by go1.0.1, the host'"'"'s go is $host" &&
          out_has "go-cache-warm.sh $cache"'
cli templates --json
check "templates --json: cache_stale says why for go, null for the others" \
    python3 -c 'import json, sys
ts = {t["name"]: t for t in json.load(open(sys.argv[1]))}
sys.exit(0 if "stale" in ts["go"]["cache_stale"] and all(t["cache_stale"] is None for n, t in ts.items() if n != "go") else 1)' "$tmp/out"
cli doctor --provider local
check "doctor: a WARN line for the go template's stale cache" \
    out_has "WARN     template go: build cache $cache is stale: built by go1.0.1"

cat >"$tmp/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println("GOENV=" + os.Getenv("GOENV")) }
EOF
cli run --timeout 120s "$tmp/main.go"
check "a run leaves the stale cache aside (GOENV=off) and works, saying why on stderr" \
    eval 'is_rc 0 && out_is "GOENV=off" && err_has "warning: build cache $cache is stale"'

# stamped by this host's go: not stale, and the template's GOENV stands
go version >"$cache/version"
cli templates
check "the host's own go in the stamp: no WARN line" eval 'is_rc 0 && ! out_has "WARN go"'
cli run --timeout 120s "$tmp/main.go"
check "... and a run keeps the template's GOENV" \
    eval 'is_rc 0 && out_is "GOENV=$cache/env"'

done_testing
