#!/bin/sh
# tests/bench/go-cache.sh - one MultiPL-E Go sample scored by `polysandbox
# eval` with the read-only Go build cache (warm: as `make install` sets it
# up, bound by the local provider's cache_dir, named by the go template's
# GOENV) and without it (cold: the same template, no cache directory),
# alternating in one run (run by `make bench`).
#
# Prints how long contrib/go-cache-warm.sh took to build the cache (wall
# and CPU), the
# median and each wall time of both ways, and the ratio warm / cold.
# Asserts nothing about speed; exits 1 only when a run fails or its
# verdict is wrong.  Knobs: BENCH_GO_RUNS (per way, 3).  Needs go, and
# root (the cache lives under /var/cache, as installed).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
runs=${BENCH_GO_RUNS:-3}
PS="$top_builddir/polysandbox"

say_skip() { echo "go cache bench: skipped ($1)"; exit 0; }
[ -x "$PS" ] || { echo "go cache bench: build first ($PS missing)"; exit 1; }
command -v go >/dev/null || say_skip "go is not installed"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-bench-go.XXXXXX") || exit 1
top=$(mktemp -d /var/cache/ps-bench-go.XXXXXX 2>/dev/null) || {
    rm -rf "$tmp"; say_skip "cannot make a directory in /var/cache (not root)"
}
trap 'chmod -R u+w "$top" 2>/dev/null; rm -rf "$tmp" "$top"' EXIT
trap 'exit 130' INT TERM HUP
chmod 755 "$top"

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs"
export POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_LOCALD="$top_builddir/plugins/local/polysandbox-locald"

ms() { echo $(($(date +%s%N) / 1000000)); }

# wall and CPU (user + system, of all its processes): the CPU is what it
# costs an idle machine, make install's share
t0=$(ms)
cpu=$(python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:], stdout=sys.stderr)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%d" % ((r.ru_utime + r.ru_stime) * 1000))
sys.exit(rc)' "$top_srcdir/contrib/go-cache-warm.sh" "$top/go" 2>"$tmp/warm.log") || {
    echo "go cache bench: go-cache-warm.sh failed"; sed 's/^/# /' "$tmp/warm.log"; exit 1
}
echo "== the Go build cache: go-cache-warm.sh took $(($(ms) - t0)) ms wall, $cpu ms CPU ($(du -sh "$top/go" | cut -f1))"

# warm and cold: the shipped go template with GOENV where this cache is,
# the local provider's cache_dir here or on a directory that is absent
for way in warm cold; do
    mkdir -p "$tmp/$way/providers.d"
    cp -L "$top_srcdir/tests/config/polysandbox.ini" "$tmp/$way/"
    cp -RL "$top_srcdir/etc/templates.d" "$tmp/$way/"
    sed "s|/var/cache/polysandbox/|$top/|" "$top_srcdir/etc/templates.d/go.ini" \
        >"$tmp/$way/templates.d/go.ini"
    { cat "$top_srcdir/tests/config/providers.d/local.ini"
      printf '\n[settings]\ncache_dir = %s\n' "$top"; } >"$tmp/$way/providers.d/local.ini"
done
sed -i "s|^cache_dir = .*|cache_dir = $top/absent|" "$tmp/cold/providers.d/local.ini"

data="$top_srcdir/tests/eval/data"
grep '"go_test.go"' "$data/multipl-e-langs-samples.jsonl" | grep '"expect": *"passed"' |
    head -1 >"$tmp/smp.jsonl"
[ -s "$tmp/smp.jsonl" ] || { echo "go cache bench: no passing Go sample in $data"; exit 1; }

one() { # one WAY: prints its wall time in ms
    t=$(ms)
    POLYSANDBOX_CONFIG_DIR="$tmp/$1" "$PS" eval --dataset "$data/multipl-e-langs.jsonl" \
        --samples "$tmp/smp.jsonl" --allow-partial --out "$tmp/r.jsonl" --force -k 1 --timeout 120s \
        >"$tmp/out" 2>"$tmp/err" || { echo "fail"; return; }
    grep -q '"verdict": *"passed"' "$tmp/r.jsonl" || { echo "fail"; return; }
    echo $(($(ms) - t))
}

status=0
warm="" cold=""
i=0
echo "== one MultiPL-E Go sample (go test) through polysandbox eval, warm and cold cache, alternating ($runs each)"
while [ "$i" -lt "$runs" ]; do
    for way in warm cold; do
        t=$(one "$way")
        if [ "$t" = fail ]; then
            echo "go cache bench: the $way run failed"; sed 's/^/# /' "$tmp/err" | tail -5
            status=1; continue
        fi
        eval "$way=\"\$$way $t\""
    done
    i=$((i + 1))
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
mw=$(median "$warm") mc=$(median "$cold")
echo "       warm: median ${mw:-?} ms   (runs:$warm)"
echo "       cold: median ${mc:-?} ms   (runs:$cold)"
[ -n "$mw" ] && [ -n "$mc" ] && awk -v w="$mw" -v c="$mc" \
    'BEGIN { printf "ratio warm/cold: %.2f\n", w / c }'
exit "$status"
