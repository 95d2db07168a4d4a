#!/bin/sh
# tests/bench/server-summary-test.sh - the summary of tests/bench/server.sh
# judges issue 14's targets on the medians of its rounds (what the server
# adds request by request, paired within each round) and the soak's
# flatness, and says which target it could not judge (TAP).  Figures files
# written here; no benchmark runs.
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-server-summary.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/lib/tap.sh"
plan 9

# Three rounds; the medians: the server adds 0.20 ms (0.25 - 0.05, with
# one round far off), runs 400/s at 64 clients against the library's 420
# (0.95x) and the reference's 200 (2.00x), with a p99 of 200 ms against
# 400 (0.50x); the soak leaves the fds as they were and 1 MiB more memory.
cat >"$tmp/good" <<'EOF2'
srv.rt.p50=2.60
srv.rt.outside=0.25
median.lib.t1=2.40
outside.lib.t1=0.05
median.polysandbox=5.10
srv.c64.rate=400
srv.c64.p50=150
srv.c64.p99=200
srv.c64.non2xx=0
srv.c64.unexpected=0
srv.c64.errors=0
ref.c64.rate=200
ref.c64.p50=300
ref.c64.p99=400
rate.lib.t2=420
srv.rt.p50=2.50
srv.rt.outside=0.26
median.lib.t1=2.20
outside.lib.t1=0.06
srv.c64.rate=380
srv.c64.p50=160
srv.c64.p99=210
srv.c64.non2xx=0
srv.c64.unexpected=0
srv.c64.errors=0
ref.c64.rate=210
ref.c64.p50=300
ref.c64.p99=390
rate.lib.t2=410
srv.rt.p50=9.00
srv.rt.outside=3.00
median.lib.t1=2.30
outside.lib.t1=0.05
srv.c64.rate=420
srv.c64.p50=140
srv.c64.p99=190
srv.c64.non2xx=0
srv.c64.unexpected=0
srv.c64.errors=0
ref.c64.rate=190
ref.c64.p50=320
ref.c64.p99=410
rate.lib.t2=430
soak.requests=10000
soak.rate=390
soak.p50=150
soak.p99=220
soak.non2xx=0
soak.unexpected=0
soak.errors=0
soak.fds.before=12
soak.fds.after=12
soak.rss.before=20480
soak.rss.after=21504
EOF2
summary() { python3 "$top_srcdir/tests/bench/server-summary.py" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
line() { grep -F -- "$1" "$tmp/out"; }

summary --load "0.5 / 0.6" "$tmp/good"
check "the server adds the median of the rounds' differences: +0.200 ms, met" \
    eval 'is_rc 0 && line "adds at most 0.3 ms" | grep -q "+0.200 ms.* met$"'
check "64 clients: 0.95x the library, 2.00x the reference, p99 0.50x: all met" \
    eval 'line "2-thread rate" | grep -q "0.95x (400.0 vs 420.0 runs/s) *met$" &&
          line "the reference'"'"'s rate" | grep -q "2.00x .* met$" &&
          line "p99 at most" | grep -q "0.50x (200.0 vs 400.0 ms) *met$" &&
          ! grep -q "NOT met" "$tmp/out"'
check "the load average and the number of rounds are printed" \
    eval 'line "medians of 3 rounds; load average 0.5 / 0.6" >/dev/null'

check "the soak: 10000 requests, fds flat, +1.0 MiB: met" \
    eval 'line "12 -> 12, resident memory 20.0 -> 21.0 MiB" >/dev/null &&
          line "the server'"'"'s fds are flat" | grep -q "12 -> 12 *met$" &&
          line "memory grows at most 4 MiB" | grep -q "+1.0 MiB *met$"'

# One non-2xx answer in one round, a slow server, no reference, a soak
# that leaks an fd and 5 MiB.
grep -v '^ref\.' "$tmp/good" | sed -e '0,/srv.c64.non2xx=0/s//srv.c64.non2xx=1/' \
    -e 's/^srv.rt.outside=0.2[56]/srv.rt.outside=0.45/' -e 's/^srv.c64.rate=4[02]0/srv.c64.rate=300/' \
    -e 's/^soak.fds.after=12/soak.fds.after=13/' -e 's/^soak.rss.after=.*/soak.rss.after=25600/' \
    >"$tmp/bad"
summary "$tmp/bad"
check "a non-2xx answer in any round: NOT met" \
    eval 'is_rc 0 && line "no answer other than 2xx" | grep -q "non-2xx 1.*NOT met$"'
check "a server adding 0.40 ms and running 0.71x the library: NOT met" \
    eval 'line "adds at most" | grep -q "+0.400 ms.*NOT met$" && line "2-thread rate" | grep -q "0.71x.*NOT met$"'
check "the soak leaking an fd and 5 MiB: NOT met" \
    eval 'line "fds are flat" | grep -q "12 -> 13 *NOT met$" &&
          line "memory grows" | grep -q "+5.0 MiB *NOT met$"'
check "no reference: its two targets are skipped, not judged" \
    eval '[ "$(grep -c "not measured (no reference) *skipped$" "$tmp/out")" = 2 ]'
summary "$tmp/missing"
check "a missing figures file: exit 2 naming it" rc_and_err 2 "$tmp/missing"
done_testing
