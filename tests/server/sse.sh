#!/bin/sh
# tests/server/sse.sh - runs streamed as server-sent events: output
# events arrive while the program still runs, in order, before the
# result; a UTF-8 character cut between two writes arrives whole, bytes
# that are not UTF-8 as base64; silent stretches get heartbeats; an error
# after the stream began is an error event; an exec in a sandbox streams
# the same way.
. "$top_srcdir/tests/server/lib.sh"

plan 10

check "polysandboxd starts (heartbeat 1 s)" srv_start -o server.heartbeat=1s

# sse BODY [PATH]: POST with Accept: text/event-stream; prints one JSON
# line per event or comment, with the seconds since the request.
sse() {
    "$PY" - "$base" "$1" "${2:-/v1/run}" <<'EOF'
import http.client, json, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
t0 = time.time()
c.request("POST", sys.argv[3], body=sys.argv[2],
          headers={"Accept": "text/event-stream", "Content-Type": "application/json"})
r = c.getresponse()
print(json.dumps({"status": r.status, "type": r.getheader("Content-Type"),
                  "cache": r.getheader("Cache-Control"), "t": 0}))
ev = {}
while True:
    line = r.readline()
    if not line:
        break
    line = line.decode().rstrip("\n")
    t = round(time.time() - t0, 2)
    if line.startswith(":"):
        print(json.dumps({"comment": line, "t": t}))
    elif line.startswith("event: "):
        ev["event"] = line[7:]
    elif line.startswith("id: "):
        ev["id"] = int(line[4:])
    elif line.startswith("data: "):
        ev["data"] = json.loads(line[6:])
    elif line == "" and ev:
        ev["t"] = t
        print(json.dumps(ev))
        ev = {}
print(json.dumps({"eof": round(time.time() - t0, 2)}))
EOF
}
# ev_check FILE EXPR: EXPR with e = the list of events (the first line
# is the response's status and headers, h).
ev_check() {
    "$PY" -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
h, e = lines[0], [x for x in lines[1:] if "event" in x]
c = [x for x in lines[1:] if "comment" in x]
ended = "eof" in lines[-1]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" || { sed 's/^/# /' "$1"; false; }
}

sse '{"shell":"echo one; sleep 1; echo two >&2; sleep 1; echo three"}' >"$tmp/s1"
check "200 text/event-stream, no-store" \
    ev_check "$tmp/s1" 'h["status"] == 200 and h["type"] == "text/event-stream" and h["cache"] == "no-store"'
check "stdout, stderr, stdout, then the result, in order with rising ids, then the body ends" \
    ev_check "$tmp/s1" '[x["event"] for x in e] == ["stdout", "stderr", "stdout", "result"] and [x["id"] for x in e] == sorted(x["id"] for x in e) and ended and lines[-1]["eof"] - e[-1]["t"] < 15'
check "the first chunk arrived while the program still ran (1.5 s before the result)" \
    ev_check "$tmp/s1" 'e[-1]["t"] - e[0]["t"] >= 1.5'
check "the chunks and the result agree" \
    ev_check "$tmp/s1" 'e[0]["data"] == {"data": "one\n", "encoding": "utf-8"} and e[1]["data"]["data"] == "two\n" and e[-1]["data"]["stdout"] == "one\nthree\n" and e[-1]["data"]["status"] == "ok"'

sse '{"shell":"printf \"\\303\"; sleep 1; printf \"\\251\\n\"; sleep 1; printf \"\\377\\n\""}' >"$tmp/s2"
check "a character cut between two writes arrives whole; bytes that are not UTF-8 as base64" \
    ev_check "$tmp/s2" '[x["data"] for x in e if x["event"] == "stdout"] == [{"data": "\u00e9\n", "encoding": "utf-8"}, {"data": "/wo=", "encoding": "base64"}]'

sse '{"shell":"sleep 2.5; echo late"}' >"$tmp/s3"
check "a silent run gets heartbeat comments" \
    ev_check "$tmp/s3" 'len(c) >= 1 and c[0]["comment"] == ": ping" and e[-1]["event"] == "result"'

sse '{"argv":["true"],"limits":{"memory":"1T"}}' >"$tmp/s4"
check "an error once the stream began is an error event" \
    ev_check "$tmp/s4" '[x["event"] for x in e] == ["error"] and e[0]["data"]["error"]["code"] == "limit"'

post /v1/sandboxes '{}'
sid=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$tmp/out")
sse '{"shell":"echo a; sleep 1; echo b"}' "/v1/sandboxes/$sid/exec" >"$tmp/s5"
check "an exec in a sandbox streams too" \
    ev_check "$tmp/s5" '[x["event"] for x in e] == ["stdout", "stdout", "result"] and e[-1]["t"] - e[0]["t"] >= 0.8'
req DELETE "/v1/sandboxes/$sid"
check "the sandbox is destroyed" is 200
done_testing
