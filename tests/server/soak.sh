#!/bin/sh
# tests/server/soak.sh - memory and fds stay flat: after a warm-up, 3000
# more requests from 16 keep-alive clients (runs, SSE runs, bad bodies,
# unknown routes, idempotent retries past the key store's bound, status
# and metrics) leave the server's fds as they were and its resident
# memory within 4 MiB.
. "$top_srcdir/tests/server/lib.sh"

plan 5

check "polysandboxd starts (an Idempotency-Key store of 50)" \
    srv_start -o server.idempotency_keys=50 -o server.workers=4

# load N: N requests from 16 threads, each with its own connection.
load() {
    "$PY" - "$base" "$1" <<'EOF'
import http.client, json, sys, threading, urllib.parse
u = urllib.parse.urlparse(sys.argv[1]); total = int(sys.argv[2])
lock = threading.Lock(); state = {"next": 0, "bad": 0}
kinds = [
    ("POST", "/v1/run", {"argv": ["/bin/true"]}, {}, 200),
    ("POST", "/v1/run", {"shell": "echo x"}, {"Accept": "text/event-stream"}, 200),
    ("POST", "/v1/run", '{"argv": [', {}, 400),
    ("POST", "/v1/run", {"language": "cobol", "code": "x"}, {}, 422),
    ("GET", "/v1/nowhere", None, {}, 404),
    ("GET", "/v1/status", None, {}, 200),
    ("GET", "/metrics", None, {}, 200),
    ("POST", "/v1/run", {"argv": ["/bin/true"]}, {"Idempotency-Key": "k"}, 200),
]
def worker():
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    while True:
        with lock:
            i = state["next"]; state["next"] += 1
        if i >= total:
            return
        m, p, b, h, want = kinds[i % len(kinds)]
        h = dict(h)
        if "Idempotency-Key" in h:
            h["Idempotency-Key"] = "key-%d" % (i // 16)   # many keys, each retried
        if isinstance(b, dict):
            b = json.dumps(b)
        try:
            c.request(m, p, body=b, headers=h)
            r = c.getresponse(); r.read()
            ok = r.status == want or (want == 200 and r.status == 409)
        except Exception as e:
            ok = False
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        if not ok:
            with lock:
                state["bad"] += 1
ts = [threading.Thread(target=worker) for _ in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
print(state["bad"])
EOF
}
rss() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$srv_pid/status"; }
nfds() { ls "/proc/$srv_pid/fd" | wc -l; }

bad=$(load 1000)
sleep 1
rss1=$(rss)
fds1=$(nfds)
check "the warm-up: every answer as expected" [ "$bad" = 0 ]
bad=$(load 3000)
sleep 1
rss2=$(rss)
fds2=$(nfds)
check "3000 more: every answer as expected" [ "$bad" = 0 ]
check "the fds are as they were ($fds1, $fds2)" [ "$fds1" = "$fds2" ]
if asan_build; then
    echo "ok $((tap_n += 1)) - # SKIP resident memory: AddressSanitizer keeps freed memory"
else
    check "resident memory grew by less than 4 MiB ($rss1 KiB, then $rss2 KiB)" \
        [ $((rss2 - rss1)) -lt 4096 ]
fi
done_testing
