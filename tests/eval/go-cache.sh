#!/bin/sh
# tests/eval/go-cache.sh - the Go build cache `make install` builds
# (contrib/go-cache-warm.sh), bound read-only by the local provider
# (cache_dir) and read by the shipped go template through GOENV: Go
# samples judge as before, the template builds cold when it is absent,
# and nothing a sandbox runs (go itself, or a program trying on purpose)
# can change what the next sample reads.
. "$top_srcdir/tests/eval/lib.sh"

command -v go >/dev/null || {
    [ "${CI:-}" = true ] && { echo "Bail out! quickstart installs go, yet it is missing"; exit 1; }
    echo "1..0 # SKIP go is not installed"; exit 0
}
# as /var/cache/polysandbox is: not under /tmp (refused), /work (each
# sandbox's work directory hides it) nor /var/tmp (the sandbox's /tmp)
top=$(mktemp -d /var/cache/ps-go-cache.XXXXXX 2>/dev/null) || {
    echo "1..0 # SKIP cannot make a directory in /var/cache (not root)"; exit 0
}
chmod 755 "$top"
cache="$top/go"
trap 'chmod -R u+w "$top" 2>/dev/null; rm -rf "$tmp" "$top"' EXIT
plan 12
"$top_srcdir/contrib/go-cache-warm.sh" "$cache" fmt testing os/exec >"$tmp/warm" 2>&1
rc=$?
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/warm"
check "go-cache-warm.sh builds a read-only cache, its go env file and version" \
    sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2/env")" = "GOCACHE=$2/build" ] &&
        [ -d "$2/build" ] && grep -q "^go version" "$2/version" &&
        [ -z "$(find "$2" -perm /222 -print -quit)" ]' sh "$rc" "$cache"

# the eval configuration with the local provider's cache_dir here, and
# the shipped go template as `make install` rewrites it for a prefix
# whose cache directory is $top
config() { # config DIR CACHE_DIR
    cp -RL "$top_srcdir/tests/eval/config" "$1"
    chmod -R u+w "$1"
    printf '\n[settings]\ncache_dir = %s\n' "$2" >>"$1/providers.d/local.ini"
    sed "s|/var/cache/polysandbox/|$top/|" "$top_srcdir/etc/templates.d/go.ini" \
        >"$1/templates.d/go.ini"
}
config "$tmp/warm-config" "$top"
config "$tmp/cold-config" "$top/absent"
POLYSANDBOX_CONFIG_DIR="$tmp/warm-config"

digest() { (cd "$top" && find . -printf '%p %m %s\n' -type f -exec sha256sum {} + | sort); }
digest >"$tmp/before"

grep '"go_test.go"' "$data/multipl-e-langs-samples.jsonl" >"$tmp/smp.jsonl"
# generous: bounds a hang under load
cli eval --dataset "$data/multipl-e-langs.jsonl" --samples "$tmp/smp.jsonl" --allow-partial \
    --out "$tmp/r.jsonl" -k 1 --timeout 120s
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -20
check "with the read-only cache the right Go completion passes, the wrong one fails" \
    python3 - "$tmp/r.jsonl" "$tmp/smp.jsonl" <<'PY'
import json, sys
res = {}
for l in open(sys.argv[1]):
    r = json.loads(l); res[r["sample"]] = r
smp = [json.loads(l) for l in open(sys.argv[2])]
bad = 0
for i, s in enumerate(smp):
    r = res.get(i)
    if not r or r["verdict"] != s["expect"]:
        print("# %s: %s" % (s["case"], r)); bad = 1
sys.exit(bad or len(smp) != 2)
PY

# which cache the template's go takes, seen from a Go program it built
cat >"$tmp/main.go" <<'EOF'
package main

import (
	"fmt"
	"os/exec"
)

func main() {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	fmt.Printf("%s%v", out, err)
}
EOF
cli run --timeout 120s "$tmp/main.go"
check "the go template takes the bound cache by default" out_is "$cache/build
<nil>"
POLYSANDBOX_CONFIG_DIR="$tmp/cold-config" cli run --timeout 120s "$tmp/main.go"
check "without it, the go template builds cold in the sandbox's /tmp, as before" \
    out_is "/tmp/go-build
<nil>"

# every way of writing, each one must fail
e=$(cd "$cache/build" && find . -type f -name '*-d' | head -1)
cli run -- sh -c '
t=$1 c=$1/go/build e=$2 n=0
touch "$c/new" "$t/new" "$t/go/new" 2>/dev/null && n=$((n+1))
mkdir "$c/zz" 2>/dev/null && n=$((n+1))
echo poison 2>/dev/null >>"$c/$e" && n=$((n+1))
echo poison 2>/dev/null >"$c/$e" && n=$((n+1))
echo GOCACHE=/tmp 2>/dev/null >"$t/go/env" && n=$((n+1))
rm -f "$c/$e" 2>/dev/null && [ ! -e "$c/$e" ] && n=$((n+1))
mv "$c/$e" "$c/moved" 2>/dev/null && n=$((n+1))
mv "$t/go" "$t/moved" 2>/dev/null && n=$((n+1))
chmod u+w "$c" "$c/$e" 2>/dev/null && [ -w "$c/$e" ] && n=$((n+1))
mount -o remount,rw "$t" 2>/dev/null && n=$((n+1))
mount -o remount,rw "$c" 2>/dev/null && n=$((n+1))
[ -r "$c/$e" ] || n=$((n+100))
echo "writes=$n"' sh "$top" "$e"
check "a sandboxed program can read the cache and write nothing to it" out_is "writes=0"
cli run -- sh -c 'grep " $1 " /proc/self/mountinfo | cut -d" " -f6' sh "$top"
check "the cache directory is a read-only mount in the sandbox" \
    sh -c 'grep -q "^ro" "$1/out"' sh "$tmp"

digest >"$tmp/after"
check "the cache is unchanged after the samples and the attempts" cmp -s "$tmp/before" "$tmp/after"

cli doctor --provider local
check "doctor: the cache is bound, and which go built it" \
    out_has "OK       local: go build cache: $cache, bound read-only (built by go version go"
POLYSANDBOX_CONFIG_DIR="$tmp/cold-config" cli doctor --provider local
check "doctor: without it, advice on building it" \
    out_has "WARN     local: go build cache: none in $top/absent: advice: "

# a cache_dir that is no clean absolute path, or a private tree: refused
cp -R "$tmp/cold-config" "$tmp/bad-config"
sed -i 's|^cache_dir = .*|cache_dir = var/cache|' "$tmp/bad-config/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR="$tmp/bad-config" cli run -p local -- true
check "a relative cache_dir is refused, named" \
    sh -c '[ "$1" -ne 0 ] && grep -q "cache_dir entry .var/cache. is not a clean absolute path" "$2/err"' \
    sh "$rc" "$tmp"
sed -i 's|^cache_dir = .*|cache_dir = /root/x|' "$tmp/bad-config/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR="$tmp/bad-config" cli run -p local -- true
check "a cache_dir in a private tree is refused, named" \
    sh -c '[ "$1" -ne 0 ] && grep -q "cache_dir entry ./root/x. would expose a private host tree" "$2/err"' \
    sh "$rc" "$tmp"

# the built-in cache_dir (no cache_dir set): where a sandbox could not see
# it (a build whose prefix lies below /work, as make distcheck's may), it
# is skipped and doctor says so; elsewhere doctor never says it.
cp -R "$tmp/cold-config" "$tmp/builtin-config"
sed -i '/^cache_dir = /d' "$tmp/builtin-config/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR="$tmp/builtin-config" cli doctor --provider local
case "${pkgcachedir:?pkgcachedir is not set (run through make check)}" in
/work | /work/* | /var/tmp | /var/tmp/*)
    check "doctor: a built-in cache_dir below /work or /var/tmp is skipped, with advice" \
        out_has "WARN     local: go build cache: none: advice: the built-in cache_dir $pkgcachedir lies below" ;;
*)
    check "doctor: the built-in cache_dir ($pkgcachedir) is not reported as skipped" \
        sh -c '! grep -q "the built-in cache_dir" "$1/out" && grep -q "local: go build cache: " "$1/out"' \
        sh "$tmp" ;;
esac

done_testing
