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

plan 16

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
"$PY" - "$tmp/down-port" <<'DOWN' &
import os, socket, sys, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(0)
filler = socket.create_connection(s.getsockname())   # the queue is full
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait(300)
DOWN
down_pid=$!
within 20 test -s "$tmp/down-port" || { echo "Bail out! no port for the receiver that is down"; exit 1; }
url2="http://127.0.0.1:$(cat "$tmp/down-port")"
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
receiver "$tmp/r2" "$(cat "$tmp/down-port")" || { echo "Bail out! the receiver did not come back"; exit 1; }
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
