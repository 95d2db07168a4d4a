#!/bin/sh
# tests/server/backpressure.sh - the server under more than it takes: a
# body over max_body is a 413 (announced or chunked); with every worker
# busy and the queue full a run is a 429 with Retry-After, while probes,
# status and metrics still answer and count the rejects; slow clients
# (slowloris: headers a byte at a time; a body that trickles) hold no
# worker and are cut off by the connection and request timeouts.
. "$top_srcdir/tests/server/lib.sh"

plan 14

check "polysandboxd starts (1 worker, queue 1, 1K bodies, 2 s timeouts)" \
    srv_start -o server.workers=1 -o server.queue=1 -o server.max_body=1K \
    -o server.connection_timeout=2s -o server.request_timeout=2s -o server.retry_after=3s

big=$("$PY" -c 'print("x" * 2000)')
post /v1/run "{\"shell\":\"$big\"}"
check "a body over max_body: 413 before it is read" err_is 413 payload_too_large
post /v1/run "{\"shell\":\"$big\"}" -H 'Transfer-Encoding: chunked'
check "a chunked body over max_body: 413" err_is 413 payload_too_large

# One run takes the worker, one waits in the queue: the next is refused.
# The first holds its worker until its client goes (a disconnect cancels
# it), so a loaded machine cannot end it before the checks look.
curl -sS -o "$tmp/a" "$base/v1/run" -d '{"argv":["sleep","60"]}' &
a=$!
wait_status 'j["workers"]["busy"] == 1'
curl -sS -o "$tmp/b" "$base/v1/run" -d '{"argv":["sleep","1"]}' &
b=$!
wait_status 'j["queue"]["depth"] == 1'
post /v1/run '{"argv":["true"]}'
check "worker and queue full: 429 queue_full with Retry-After: 3" \
    eval 'err_is 429 queue_full && [ "$(header Retry-After)" = 3 ]'
req GET /healthz
check "/healthz still answers at once" is 200
req GET /v1/status
check "/v1/status: the worker busy, one queued, one reject" \
    eval 'is 200 && json_check "j[\"workers\"][\"busy\"] == 1 and j[\"queue\"][\"depth\"] == 1 and j[\"rejects\"][\"queue_full\"] >= 1"'
kill $a 2>/dev/null
wait $b
check "the queued run was served in turn" json_check_file "$tmp/b" 'j["status"] == "ok"'
req GET /metrics
check "/metrics counts the reject by route and reason" \
    grep -q 'polysandboxd_rejects_total{route="/v1/run",reason="queue_full"} [1-9]' "$tmp/out"
check "/metrics has the run histogram by provider, template and status" \
    grep -q 'polysandboxd_run_duration_seconds_count{provider="local",template="",status="ok"} [1-9]' "$tmp/out"

# Slowloris: a connection sending its headers a byte a second.
port=${base##*:}
"$PY" - "$port" >"$tmp/slow" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t0 = time.time()
try:
    for c in b"POST /v1/run HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 30:
        s.send(bytes([c]))
        time.sleep(1.5)
    print("still open after %.0f s" % (time.time() - t0))
except OSError:
    print("closed by the server after %.0f s" % (time.time() - t0))
EOF
slow=$!
sleep 1
post /v1/run '{"argv":["true"]}'
check "while a slow client dribbles its headers, runs are served" \
    eval 'is 200 && json_check "j[\"status\"] == \"ok\""'
wait $slow
check "the slow client is cut off at request_timeout" grep -q 'closed by the server' "$tmp/slow"

# A body that trickles in (each byte within the idle timeout).
"$PY" - "$port" >"$tmp/trickle" 2>&1 <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
body = b'{"argv":["true"]}' + b" " * 40
s.sendall(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
t0 = time.time()
try:
    for c in body:
        s.send(bytes([c]))
        time.sleep(0.25)
    s.settimeout(5)
    answer = s.recv(4096)
    print("answered after %.1f s: %r" % (time.time() - t0, answer[:40]))
except OSError:
    print("closed by the server after %.0f s" % (time.time() - t0))
EOF
check "a body trickling in past request_timeout: the connection is closed" \
    eval 'grep -q "closed by the server after [23] s" "$tmp/trickle" || { cat "$tmp/trickle"; false; }'
check "the log says why" grep -q 'took longer than request_timeout to arrive' "$tmp/server.log"
req GET /healthz
check "the server still answers" is 200
done_testing
