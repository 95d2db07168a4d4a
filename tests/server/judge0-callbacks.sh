#!/bin/sh
# tests/server/judge0-callbacks.sh - Judge0's callback_url when the
# receiver is not there: one that accepts and never answers holds one
# sending thread only (another callback still arrives) and does not hold
# the server's stop (SIGTERM leaves it, kept, to the next start); one
# that is down (its port takes no connection) when the server is killed
# (SIGKILL) gets the callback, the submission's JSON, once the receiver
# and the server are back; a callback's file that is not one is
# reported and left, never sent.
. "$top_srcdir/tests/server/lib.sh"

plan 27

state="$tmp/state"
cbdir="$state/judge0-callbacks"
# receiver DIR [PORT]: start callback-receiver.py (r_pid), which keeps
# each PUT it answers as DIR/PATH-with-_ and holds the first try of a path
# under /hold/ unanswered (DIR/held_..., then DIR/closed_... when the
# server closes it); wait for its port in DIR/port.
receiver() {
    mkdir -p "$1"
    "$PY" "$top_srcdir/tests/server/callback-receiver.py" "$1" ${2:+"$2"} &
    r_pid=$!
    within 20 test -s "$1/port"
}
# arrived FILE: FILE is there within 60 s (a bound on a hang only).
arrived() { within 60 test -f "$1"; }
# kept: how many callbacks' files the state directory holds.
kept() { ls "$cbdir" 2>/dev/null | grep -c '\.json$'; }
kept_is() { [ "$(kept)" = "$1" ]; }
# same_json A B: the JSON texts in files A and B are equal.
same_json() {
    "$PY" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' "$1" "$2"
}
# body_of RECORD OUT: the body a receiver's record holds, into OUT.
body_of() { "$PY" -c 'import json, sys; open(sys.argv[2], "w").write(json.load(open(sys.argv[1]))["body"])' "$1" "$2"; }
# sub SOURCE URL: a bash submission (base64, as Judge0's clients send it)
# with a callback to URL; its answer in $tmp/out.
sub() {
    post "/submissions?wait=true&base64_encoded=true" '{"language_id":46,"source_code":"'"$(printf '%s' "$1" | base64)"'","callback_url":"'"$2"'"}'
}

receiver "$tmp/r1" || { echo "Bail out! the receiver did not start"; exit 1; }
r1_pid=$r_pid
url1="http://127.0.0.1:$(cat "$tmp/r1/port")"
# A grace time longer than any test: the stop must not need it.
srv_start -o server.state_dir="$state" -o server.grace=120s ||
    { echo "Bail out! polysandboxd did not start"; exit 1; }

# 1. A receiver that never answers holds one thread, not the others.
sub "echo held" "$url1/hold/1"
check "a callback to a receiver that never answers is under way" arrived "$tmp/r1/held_hold_1"
sub "echo other" "$url1/cb/2"
cp "$tmp/out" "$tmp/sub2.json"
check "another callback arrives meanwhile" arrived "$tmp/r1/cb_2"
check "... while the first is still held (its connection open)" test ! -f "$tmp/r1/closed_hold_1"
body_of "$tmp/r1/cb_2" "$tmp/body2.json"
check "... a PUT of the submission's JSON (base64, default fields)" same_json "$tmp/body2.json" "$tmp/sub2.json"
check "the delivered callback's file is removed, the held one's kept" within 30 kept_is 1

# SIGTERM: the held PUT is abandoned at once (no try more), its callback
# kept for the next start; the stop does not wait for the grace time.
kill -TERM "$srv_pid"
alive() { kill -0 "$srv_pid" 2>/dev/null; }
check "SIGTERM with a callback held: the server stops" gone_within 60 alive
wait "$srv_pid"
srv_rc=$?
srv_pid=
srv_sanitized || exit 1
check "... exit 0, the held connection closed by it" \
    eval '[ "$srv_rc" = 0 ] && within 30 test -f "$tmp/r1/closed_hold_1"'
check "... after one try only, the callback kept for the next start" eval '
    grep -q "callback is kept for the next start" "$tmp/server.log" && test ! -f "$tmp/r1/hold_1" &&
    ! grep -q "could not be delivered" "$tmp/server.log" && kept_is 1'

# 2. A receiver that is down: its port is bound, its queue of connections
# full, so a connection is never made (the server's tries time out).
receiver "$tmp/down" down || { echo "Bail out! no port for the receiver that is down"; exit 1; }
down_pid=$r_pid
url2="http://127.0.0.1:$(cat "$tmp/down/port")"
srv_start -o server.state_dir="$state" -o server.grace=120s ||
    { echo "Bail out! polysandboxd did not start again"; exit 1; }
# (the held callback goes again to /hold/1, answered this time)
check "the callback kept at the stop arrives after the restart, its second try" eval '
    arrived "$tmp/r1/hold_1" && grep -q "\"tries\": 2" "$tmp/r1/hold_1"'
sub "echo durable" "$url2/down/3"
cp "$tmp/out" "$tmp/sub3.json"
tok3=$(sed -n 's/.*"token":"\([0-9a-f-]*\)".*/\1/p' "$tmp/sub3.json")
check "a callback to a receiver that is down is kept in the state directory" \
    within 30 test -f "$cbdir/$tok3.json"
srv_stop KILL
kill "$down_pid"
wait "$down_pid" 2>/dev/null || :

# A file that is not a callback's, and one whose URL is not http(s):
# reported and left as they are, never sent.
echo '{"token": "00000000-0000-0000-0000-0000000' >"$cbdir/00000000-0000-0000-0000-000000000001.json"
printf '{"token":"%s","url":"file:///etc/passwd","body":"{}"}\n' \
    00000000-0000-0000-0000-000000000002 >"$cbdir/00000000-0000-0000-0000-000000000002.json"

sum_corrupt=$(cat "$cbdir"/00000000-* | cksum)
# The receiver is back on its port, then the server.
receiver "$tmp/r2" "$(cat "$tmp/down/port")" || { echo "Bail out! the receiver did not come back"; exit 1; }
r2_pid=$r_pid
check "after SIGKILL, the server starts again with a corrupt callback's file" \
    srv_start -o server.state_dir="$state" -o server.grace=120s
check "the callback arrives once the receiver and the server are back" arrived "$tmp/r2/down_3"
body_of "$tmp/r2/down_3" "$tmp/body3.json"
check "... exactly the submission's JSON, a PUT of application/json, first try" "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1])); sub = json.load(open(sys.argv[2]))
sys.exit(not (json.loads(r["body"]) == sub and r["method"] == "PUT" and
              r["type"] == "application/json" and r["tries"] == 1 and
              sub["stdout"] == "ZHVyYWJsZQo=\n"))' "$tmp/r2/down_3" "$tmp/sub3.json"
check "... its file removed; the corrupt ones left, each reported" eval '
    within 30 test ! -f "$cbdir/$tok3.json" && kept_is 2 &&
    [ "$(grep -c "Judge0 callbacks: cannot load .*; left as it is" "$tmp/server.log")" = 2 ]'
srv_stop TERM
check "SIGTERM: exit 0" [ "$srv_rc" = 0 ]
check "the corrupt files are as they were" eval '[ "$(cat "$cbdir"/00000000-* | cksum)" = "$sum_corrupt" ]'
kill "$r1_pid" "$r2_pid" 2>/dev/null
wait "$r1_pid" "$r2_pid" 2>/dev/null || :

# 3. More callbacks than the queue holds, to a receiver that is down:
# with a queue of 2 and room for 8 files, 2 are in memory, 6 wait in
# their files, the 9th is refused (logged, counted); none is dropped.
# A try's timeout longer than the test: a callback is given up by none.
state="$tmp/state3"
cbdir="$state/judge0-callbacks"
small() {
    srv_start -o server.state_dir="$state" -o server.judge0_callbacks_pending=2 \
        -o server.judge0_callbacks_kept=8 "$@"
}
# metric NAME: its value in /metrics.
metric() {
    curl -sS --max-time 60 "$base/metrics" | sed -n "s/^$1 //p"
}
receiver "$tmp/down3" down || { echo "Bail out! no port for the receiver that is down"; exit 1; }
down_pid=$r_pid
port3=$(cat "$tmp/down3/port")
small -o server.judge0_callbacks_timeout=600s || { echo "Bail out! polysandboxd did not start"; exit 1; }
ok201=0
for i in 1 2 3 4 5 6 7 8 9; do
    sub "echo $i" "http://127.0.0.1:$port3/d/$i"
    [ "$code" = 201 ] && ok201=$((ok201 + 1))
    [ "$i" = 9 ] && tok9=$(sed -n 's/.*"token":"\([0-9a-f-]*\)".*/\1/p' "$tmp/out")
done
check "9 submissions with a callback to a receiver that is down: each answered" [ "$ok201" = 9 ]
check "... 8 kept in the state directory (judge0_callbacks_kept), the 9th's not" eval '
    kept_is 8 && test ! -f "$cbdir/$tok9.json"'
check "... the 9th refused with a log line naming the setting" \
    grep -q "Judge0 submission $tok9: its callback was refused: 8 are kept in .*judge0_callbacks_kept" \
    "$tmp/server.log"
check "... /metrics: 2 in memory, 8 kept, 6 of them on disk only, 1 refused" eval '
    [ "$(metric polysandboxd_judge0_callbacks_queued)" = 2 ] &&
    [ "$(metric polysandboxd_judge0_callbacks_kept)" = 8 ] &&
    [ "$(metric polysandboxd_judge0_callbacks_on_disk)" = 6 ] &&
    [ "$(metric "polysandboxd_judge0_callbacks_total{end=\"refused\"}")" = 1 ] &&
    [ "$(metric "polysandboxd_judge0_callbacks_total{end=\"dropped\"}")" = 0 ]'
srv_stop KILL
kill "$down_pid"
wait "$down_pid" 2>/dev/null || :
# The receiver comes up on its port; the server starts again with the 8
# files and a queue of 2: they are taken in batches as places free.
receiver "$tmp/r3" "$port3" || { echo "Bail out! the receiver did not come up"; exit 1; }
r3_pid=$r_pid
small || { echo "Bail out! polysandboxd did not start again"; exit 1; }
all8() { for i in 1 2 3 4 5 6 7 8; do test -f "$tmp/r3/d_$i" || return 1; done; }
check "after a restart with a queue of 2, the 8 kept callbacks all arrive" within 60 all8
check "... each once, at its first try (none was tried while down), the 9th never" eval '
    [ "$(grep -l "\"tries\": 1" "$tmp/r3"/d_* | wc -l)" = 8 ] && test ! -f "$tmp/r3/d_9"'
check "... their files removed, counted as delivered" eval '
    within 30 kept_is 0 &&
    [ "$(metric "polysandboxd_judge0_callbacks_total{end=\"delivered\"}")" = 8 ]'

# 4. Tries are counted across a restart: a callback whose first try got
# no answer is written again with "tries": 1 before its second; killed
# during that one, the server starts with 2 tries left for it, not 3.
sub "echo tried" "http://127.0.0.1:$port3/fail/t"
tokt=$(sed -n 's/.*"token":"\([0-9a-f-]*\)".*/\1/p' "$tmp/out")
check "a callback's first try got no answer: its file says 1 try, then the second" eval '
    arrived "$tmp/r3/held_fail_t" && "$PY" -c "
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not (j[\"tries\"] == 1 and j[\"next\"] >= j[\"created\"] > 0))" "$cbdir/$tokt.json"'
# And a file whose tries were all made before a kill.
spent=00000000-0000-0000-0000-000000000003
printf '{"token":"%s","url":"http://127.0.0.1:%s/spent/x","body":"{}","tries":3}\n' \
    "$spent" "$port3" >"$cbdir/$spent.json"
srv_stop KILL
small || { echo "Bail out! polysandboxd did not start again"; exit 1; }
check "after the restart it gets its 2 tries left only: 4 PUTs in all, given up" eval '
    within 60 grep -q "Judge0 submission $tokt: .*given up after 3 tries" "$tmp/server.log" &&
    [ "$(cat "$tmp/r3/seen_fail_t")" = 4 ] && within 30 test ! -f "$cbdir/$tokt.json"'
check "a file whose 3 tries were made is removed at start, logged, never sent" eval '
    test ! -f "$cbdir/$spent.json" && test ! -f "$tmp/r3/spent_x" &&
    grep -q "Judge0 submission $spent: its callback.s 3 tries were made before the restart" \
        "$tmp/server.log"'
srv_stop TERM
check "SIGTERM: exit 0" [ "$srv_rc" = 0 ]
kill "$r3_pid" 2>/dev/null
wait "$r3_pid" 2>/dev/null || :
