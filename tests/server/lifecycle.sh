#!/bin/sh
# tests/server/lifecycle.sh - what becomes of work when clients and the
# server go away: a client that disconnects cancels its run (its sandbox
# and processes gone within seconds, also for a silent SSE run); the
# server's fds are flat across requests; SIGTERM stops accepting, lets a
# run in flight finish and exits 0; past [server] grace it cancels what
# still runs, destroys the sandboxes it made and exits 0; with
# keep_sandboxes they stay.
. "$top_srcdir/tests/server/lib.sh"

plan 23

# A sleep duration no other test uses, so what is left is recognisably ours.
secs=$((3000 + $$ % 5000))
nfds() { ls "/proc/$srv_pid/fd" | wc -l; }

check "polysandboxd starts" srv_start -o server.grace=30s

# ---- a client that goes away -----------------------------------------------------
client "$base/v1/run" -d "{\"argv\":[\"sleep\",\"$secs\"],\"timeout\":120}"
check "a run of sleep $secs is under way" within 20 sleeping "$secs"
leave
check "its sleep is gone within 5 s of the client leaving" gone_within 5 sleeping "$secs"
check "the log says the client left and the run was cancelled" \
    grep -q 'the client closed its connection: cancelling' "$tmp/server.log"

client -N -H 'Accept: text/event-stream' "$base/v1/run" \
    -d "{\"shell\":\"sleep $((secs + 1))\",\"timeout\":120}"
check "a silent SSE run is under way" within 20 sleeping "$((secs + 1))"
leave
check "it is cancelled within 5 s of its client leaving" gone_within 5 sleeping "$((secs + 1))"
# A DELETE does not wait for an exec running in the sandbox: it stops it.
post /v1/sandboxes '{}'
box=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$tmp/out")
curl -sS -o "$tmp/interrupted" "$base/v1/sandboxes/$box/exec" \
    -d "{\"argv\":[\"sleep\",\"$((secs + 3))\"],\"timeout\":120}" &
cpid=$!
within 20 sleeping "$((secs + 3))"
t0=$(date +%s)
req DELETE "/v1/sandboxes/$box"
t1=$(date +%s)
wait "$cpid"
check "a DELETE during an exec answers 200 within 5 s ($((t1 - t0)) s)" \
    eval 'is 200 && [ $((t1 - t0)) -le 5 ]'
check "the exec it stopped was answered as cancelled, its sleep gone" \
    eval 'json_check_file "$tmp/interrupted" "j[\"error_code\"] == 21" && ! sleeping "$((secs + 3))"'

req GET /v1/status
check "nothing is in flight afterwards" eval 'is 200 && json_check "j[\"in_flight\"] == 0"'

# ---- fds are flat -----------------------------------------------------------------------
round() {
    for i in 1 2 3 4 5 6 7 8 9 10; do
        curl -sS -o /dev/null "$base/v1/run" -d '{"argv":["true"]}'
        curl -sS -o /dev/null -H 'Accept: text/event-stream' "$base/v1/run" -d '{"shell":"echo x"}'
        curl -sS -o /dev/null "$base/v1/run" -d '{"argv":' 2>/dev/null
        curl -sS -m 0.3 -o /dev/null "$base/v1/run" -d '{"argv":["sleep","5"]}' 2>/dev/null
    done
    sleep 1
}
round
fds1=$(nfds)
round
fds2=$(nfds)
check "the server's fds are the same after 40 more requests ($fds1, $fds2)" [ "$fds1" = "$fds2" ]

# ---- SIGTERM: drain --------------------------------------------------------------------------
curl -sS -o "$tmp/drained" "$base/v1/run" \
    -d "{\"shell\":\"sleep 3.$$; echo finished\",\"timeout\":120}" &
cpid=$!
within 20 sleeping "3.$$"
kill -TERM "$srv_pid"
sleep 0.3
curl -sS -m 2 -o /dev/null "$base/healthz" 2>/dev/null
check "after SIGTERM no new connection is accepted" [ $? -ne 0 ]
wait "$cpid"
check "the run in flight finished and was answered" \
    eval 'grep -q "\"stdout\":\"finished\\\\n\"" "$tmp/drained" || { cat "$tmp/drained"; false; }'
wait "$srv_pid"
srv_rc=$?
srv_pid=
check "SIGTERM after draining: exit 0" [ "$srv_rc" = 0 ]
check "the log tells the drain and the stop" \
    eval 'grep -q "no longer accepting; draining" "$tmp/server.log" && grep -q "stopped" "$tmp/server.log"'

# ---- SIGTERM: past the grace time, cancel; destroy what the server made ---------------------
check "polysandboxd starts (grace 1 s)" srv_start -o server.grace=1s
post /v1/sandboxes '{"labels":{"lifecycle":"made-here"}}'
made=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$tmp/out")
check "a sandbox is made" eval 'is 201 && [ -n "$made" ] && "$PS" list | grep -q "$made"'
curl -sS -o "$tmp/cancelled" "$base/v1/run" \
    -d "{\"argv\":[\"sleep\",\"$((secs + 2))\"],\"timeout\":120}" &
cpid=$!
within 20 sleeping "$((secs + 2))"
t0=$(date +%s)
kill -TERM "$srv_pid"
wait "$srv_pid"
srv_rc=$?
srv_pid=
t1=$(date +%s)
wait "$cpid"
check "past the grace time the server cancels and exits 0 (in $((t1 - t0)) s)" \
    eval '[ "$srv_rc" = 0 ] && [ $((t1 - t0)) -le 10 ]'
check "the cancelled run was answered as cancelled" \
    json_check_file "$tmp/cancelled" 'j["status"] == "sandbox_error" and j["error_code"] == 21'
check "its sleep is gone" eval '! sleeping "$((secs + 2))"'
check "the sandbox the server made is destroyed" eval '! "$PS" list | grep -q "$made"'
check "the log counts it" grep -q 'sandboxes made by this server: 1 destroyed' "$tmp/server.log"

# ---- keep_sandboxes ---------------------------------------------------------------------------
srv_start -o server.keep_sandboxes=true
post /v1/sandboxes '{"labels":{"lifecycle":"kept"}}'
kept=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$tmp/out")
srv_stop TERM
check "with keep_sandboxes the sandbox stays after the server stops" \
    eval '[ -n "$kept" ] && "$PS" list | grep -q "$kept"'
"$PS" destroy "$kept" >/dev/null 2>&1
check "no sandbox of these tests is left" eval '! "$PS" list | grep -q -e "$made" -e "$kept"'
done_testing
