#!/bin/sh
# tests/bench/summary-test.sh - the summary of `make bench` judges issue 3's
# latency targets on the default path (the daemon's figures) where they
# were measured, else on the in-process ones, and shows the other beside
# (TAP).  Figures files written here; no benchmark runs.
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-summary.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/lib/tap.sh"
plan 5

cat >"$tmp/off" <<'EOF2'
median.polysandbox=5.74
median.unshare=3.10
median.bwrap=31.61
ratio.polysandbox/unshare=1.85
ratio.polysandbox/bwrap=0.18
ratio.sbx-python/python=1.51
EOF2
cat >"$tmp/auto" <<'EOF2'
median.polysandbox-locald=3.92
median.unshare=3.30
ratio.polysandbox-locald/unshare=1.19
ratio.polysandbox-locald/bwrap=0.12
ratio.sbx-locald-python/python=1.23
EOF2
summary() { python3 "$top_srcdir/tests/bench/summary.py" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
line() { grep -F -- "$1" "$tmp/out"; }

summary "$tmp/off" "$tmp/auto"
check "with the daemon's figures: unshare judged on them (1.19x, met)" \
    eval 'is_rc 0 && line "within 1.5x of unshare (daemon)" | grep -q "1.19x (3.92 ms vs 3.30 ms) *met$"'
check "... the in-process figure shown beside, not judged" \
    eval 'line "(in-process, daemon = off)" | grep -q "1.85x.*figure$" && ! grep -q "NOT met" "$tmp/out"'
summary "$tmp/off" "$tmp/missing"
check "no daemon figures (section skipped): judged in-process, 1.85x NOT met" \
    eval 'is_rc 0 && line "within 1.5x of unshare (in-process)" | grep -q "1.85x.*NOT met$"'
check "... python judged in-process too (1.51x NOT met)" \
    eval 'line "within 1.3x of bare (in-process)" | grep -q "1.51x.*NOT met$"'
summary "$tmp/missing"
check "a missing figures file: exit 2 naming it" rc_and_err 2 "$tmp/missing"
done_testing
