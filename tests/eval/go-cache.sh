#!/bin/sh
# tests/eval/go-cache.sh - a Go build cache warmed once outside the
# sandbox (contrib/go-cache-warm.sh), bound read-only into each local
# sandbox (ro_binds) and named by the go template's GOCACHE: Go samples
# judge as before, and nothing a sandbox runs (go itself, or a program
# trying on purpose) can change what the next sample reads.
. "$top_srcdir/tests/eval/lib.sh"

command -v go >/dev/null || {
    [ "${CI:-}" = true ] && { echo "Bail out! quickstart installs go, yet it is missing"; exit 1; }
    echo "1..0 # SKIP go is not installed"; exit 0
}
# not under /tmp (ro_binds refuses it), /work (each sandbox's work
# directory hides it) nor /var/tmp (a link to the sandbox's /tmp)
top=$(mktemp -d /var/cache/ps-go-cache.XXXXXX 2>/dev/null) || {
    echo "1..0 # SKIP cannot make a directory in /var/cache (not root)"; exit 0
}
chmod 755 "$top"
cache="$top/cache"
trap 'chmod -R u+w "$top" 2>/dev/null; rm -rf "$tmp" "$top"' EXIT
plan 4
check "go-cache-warm.sh builds a read-only cache" \
    "$top_srcdir/contrib/go-cache-warm.sh" "$cache" fmt testing

# the eval configuration, with the cache bound and named
cp -RL "$top_srcdir/tests/eval/config" "$tmp/config"
chmod -R u+w "$tmp/config"
printf '\n[settings]\nro_binds = %s\n' "$cache" >>"$tmp/config/providers.d/local.ini"
sed "s|^GOCACHE = .*|GOCACHE = $cache|" "$top_srcdir/tests/eval/config/templates.d/go.ini" \
    >"$tmp/config/templates.d/go.ini"
POLYSANDBOX_CONFIG_DIR="$tmp/config"

digest() { (cd "$cache" && find . -printf '%p %m %s\n' -type f -exec sha256sum {} + | sort); }
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

# every way of writing, each one must fail
e=$(cd "$cache" && find . -type f -name '*-d' | head -1)
cli run -- sh -c '
c=$1 e=$2 n=0
touch "$c/new" 2>/dev/null && n=$((n+1))
mkdir "$c/zz" 2>/dev/null && n=$((n+1))
echo poison 2>/dev/null >>"$c/$e" && n=$((n+1))
echo poison 2>/dev/null >"$c/$e" && n=$((n+1))
rm -f "$c/$e" 2>/dev/null && [ ! -e "$c/$e" ] && n=$((n+1))
mv "$c/$e" "$c/moved" 2>/dev/null && n=$((n+1))
chmod u+w "$c" "$c/$e" 2>/dev/null && [ -w "$c/$e" ] && n=$((n+1))
mount -o remount,rw "$c" 2>/dev/null && n=$((n+1))
[ -r "$c/$e" ] || n=$((n+100))
echo "writes=$n"' sh "$cache" "$e"
check "a sandboxed program can read the cache and write nothing to it" out_is "writes=0"

digest >"$tmp/after"
check "the cache is unchanged after the samples and the attempts" cmp -s "$tmp/before" "$tmp/after"

done_testing
