#!/usr/bin/env python3
"""tests/e2b/fake-protocol.py - the E2B fake's wire protocol, byte by byte.

Talks raw HTTP/1.1 to tests/fakes/e2b.py (started by fake.sh with
--max-page 2) and checks what wire-apis.md section 3 says E2B does:
status codes, error shapes, paging headers, the Connect envelopes, the
proto3-JSON quirks, the files API and the injected faults.  Prints TAP.
"""
import base64
import http.client
import json
import socket
import struct
import sys
import threading
import time
import urllib.parse

PORT, KEY = int(sys.argv[1]), sys.argv[2]
n = 0
failed = False


def check(desc, cond, info=None):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))
    if not cond:
        failed = True
        if info is not None:
            print("# got: %r" % (info,))
    sys.stdout.flush()


def req(method, path, body=None, headers=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    c.request(method, path, body, h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def api(method, path, body=None, key=KEY):
    h = {"X-API-KEY": key} if key else {}
    return req(method, path, body, h)


def jbody(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def envelope(msg, flags=0):
    b = json.dumps(msg).encode()
    return bytes([flags]) + struct.pack(">I", len(b)) + b


def frames(data):
    out, i = [], 0
    while i + 5 <= len(data):
        fl, ln = data[i], struct.unpack(">I", data[i + 1:i + 5])[0]
        out.append((fl, json.loads(data[i + 5:i + 5 + ln])))
        i += 5 + ln
    return out, i == len(data)


class Box:
    def __init__(self, sid, token):
        self.sid, self.token = sid, token

    def headers(self, extra=None):
        h = {"E2b-Sandbox-Id": self.sid, "E2b-Sandbox-Port": "49983",
             "X-Access-Token": self.token, "Connect-Protocol-Version": "1"}
        h.update(extra or {})
        return h

    def unary(self, method, msg, token=None):
        h = self.headers({"Content-Type": "application/json"})
        if token is not None:
            h["X-Access-Token"] = token
        return req("POST", method, json.dumps(msg).encode(), h)

    def start(self, cmd, args=(), stdin=False, timeout_ms=None, keepalive=None, extra=None):
        h = self.headers({"Content-Type": "application/connect+json"})
        if timeout_ms is not None:
            h["Connect-Timeout-Ms"] = str(timeout_ms)
        if keepalive is not None:
            h["Keepalive-Ping-Interval"] = str(keepalive)
        h.update(extra or {})
        msg = {"process": {"cmd": cmd, "args": list(args)}, "stdin": stdin}
        return req("POST", "/process.Process/Start", envelope(msg), h)


def events(fr):
    return [m.get("event", {}) for fl, m in fr if fl == 0]


def output(fr, name="stdout"):
    return b"".join(base64.b64decode(e["data"][name]) for e in events(fr)
                    if "data" in e and name in e["data"])


def main():
    # ---- control plane ----
    r, d = api("POST", "/v2/sandboxes", {"templateID": "base"}, key=None)
    j = jbody(d)
    check("create without X-API-KEY: 401 {code, message}",
          r.status == 401 and j and j.get("code") == 401 and j.get("message"), (r.status, d))
    r, d = api("POST", "/v2/sandboxes", {"templateID": "base"}, key="wrong")
    check("create with a wrong key: 401", r.status == 401, r.status)
    r, d = api("POST", "/v2/sandboxes", b"{not json")
    check("create with a body that is not JSON: 400", r.status == 400 and jbody(d)["code"] == 400, d)
    r, d = api("POST", "/v2/sandboxes", {"templateID": "no-such-template"})
    check("create of an unknown template: 404", r.status == 404, r.status)
    r, d = api("POST", "/v2/sandboxes", {"templateID": "base", "timeout": 10 ** 9})
    check("create with a timeout past the maximum: 400", r.status == 400, r.status)

    boxes = []
    for i in range(5):
        r, d = api("POST", "/v2/sandboxes", {"templateID": "base", "timeout": 120,
                                             "metadata": {"owner": "me & you", "n": str(i)},
                                             "envVars": {"FOO": "bar"}})
        boxes.append(jbody(d))
    j = boxes[0]
    check("create: 201 Sandbox with sandboxID, envdAccessToken, envdVersion, domain null",
          r.status == 201 and all(k in j for k in ("sandboxID", "envdAccessToken", "envdVersion",
                                                    "templateID", "clientID"))
          and j["domain"] is None, j)
    b = Box(j["sandboxID"], j["envdAccessToken"])

    r, d = api("GET", "/sandboxes/" + b.sid)
    j = jbody(d)
    check("get: 200 SandboxDetail with state, metadata, startedAt, envdAccessToken",
          r.status == 200 and j["state"] == "running" and j["metadata"]["owner"] == "me & you"
          and j["startedAt"].endswith("Z") and j["envdAccessToken"] == b.token, j)
    r, d = api("GET", "/sandboxes/inosuchsandbox")
    check("get of an unknown id: 404 {code, message}",
          r.status == 404 and jbody(d)["code"] == 404, (r.status, d))

    # metadata filter, encoded as E2B's SDK does (tests/sdk/e2b.sh): each
    # key and value with encodeURIComponent, the pairs as a form, the whole
    # again as the parameter's value
    def uri(x):
        return urllib.parse.quote(x, safe="-_.!~*'()")
    inner = urllib.parse.urlencode({uri("owner"): uri("me & you"), uri("n"): uri("3")})
    r, d = api("GET", "/v2/sandboxes?metadata=" + urllib.parse.quote(inner, safe=""))
    j = jbody(d)
    check("list with an encoded metadata filter: only the match",
          r.status == 200 and [x["sandboxID"] for x in j] == [boxes[3]["sandboxID"]], j)
    # encoded once too few times, the '&' of the value splits the pair (as
    # the service's parseFilters does)
    inner = urllib.parse.urlencode({"owner": "me & you", "n": "3"})
    r, d = api("GET", "/v2/sandboxes?metadata=" + urllib.parse.quote(inner, safe=""))
    check("a filter encoded once too few times: 400, as the service answers",
          r.status == 400 and "metadata" in jbody(d)["message"], (r.status, d))
    seen, tok, pages = [], None, 0
    while True:
        path = "/v2/sandboxes?state=running,paused&limit=100" + \
            ("&nextToken=" + urllib.parse.quote(tok) if tok else "")
        r, d = api("GET", path)
        pages += 1
        seen += [x["sandboxID"] for x in jbody(d)]
        tok = r.getheader("X-Next-Token")
        if not tok or pages > 10:
            break
    check("list pages of 2 through X-Next-Token, every sandbox once",
          pages == 3 and sorted(seen) == sorted(x["sandboxID"] for x in boxes), (pages, seen))
    check("list: X-Total-Running", r.getheader("X-Total-Running") == "5", r.getheader("X-Total-Running"))
    r, d = api("GET", "/v2/sandboxes?state=gone")
    check("list with an unknown state: 400", r.status == 400, r.status)
    r, d = api("POST", "/sandboxes/%s/timeout" % b.sid, {"timeout": 60})
    check("set timeout: 204", r.status == 204 and d == b"", (r.status, d))

    # ---- envd ----
    r, d = req("GET", "/health", headers={"E2b-Sandbox-Id": b.sid})
    check("envd /health: 204", r.status == 204, r.status)
    r, d = b.unary("/process.Process/List", {}, token="wrong")
    check("envd with a wrong X-Access-Token: 401 {code: unauthenticated}",
          r.status == 401 and jbody(d)["code"] == "unauthenticated", (r.status, d))
    r, d = req("POST", "/process.Process/List", b"{}", b.headers({"Content-Type": "application/json",
                                                                  "Connect-Protocol-Version": ""}))
    check("unary call without Connect-Protocol-Version: 400 invalid_argument",
          r.status == 400 and jbody(d)["code"] == "invalid_argument", (r.status, d))
    r, d = req("POST", "/process.Process/Start", b"{}", b.headers({"Content-Type": "application/json"}))
    check("Start with application/json: 415", r.status == 415, r.status)

    r, d = b.start("/bin/sh", ["-c", "printf 'a\\000b'; echo e >&2; echo $FOO"])
    fr, whole = frames(d)
    ev = events(fr)
    check("Start: 200 application/connect+json, whole envelopes",
          r.status == 200 and r.getheader("Content-Type") == "application/connect+json" and whole,
          (r.status, r.getheader("Content-Type")))
    check("Start: the start event (pid a number) comes first",
          "start" in ev[0] and isinstance(ev[0]["start"]["pid"], int), ev[:1])
    check("Start: stdout and stderr as base64 bytes (NULs kept), create envVars seen",
          output(fr) == b"a\0bbar\n" and output(fr, "stderr") == b"e\n", (output(fr), output(fr, "stderr")))
    end = ev[-1].get("end")
    check("exit 0: the end event omits exitCode (proto3 zero value)",
          end is not None and "exitCode" not in end and end.get("exited") is True
          and end.get("status") == "exit status 0", end)
    check("the stream closes with a 0x02 end-of-stream message {}",
          fr[-1][0] == 2 and fr[-1][1] == {}, fr[-1])

    r, d = b.start("/bin/sh", ["-c", "exit 3"])
    fr, _ = frames(d)
    end = events(fr)[-1].get("end", {})
    check("exit 3: exitCode 3, exited, status 'exit status 3'",
          end.get("exitCode") == 3 and end.get("exited") is True and end.get("status") == "exit status 3", end)
    r, d = b.start("/bin/sh", ["-c", "kill -TERM $$"])
    fr, _ = frames(d)
    end = events(fr)[-1].get("end", {})
    check("killed by SIGTERM: exitCode -1, no exited, status 'signal: terminated'",
          end.get("exitCode") == -1 and "exited" not in end and end.get("status") == "signal: terminated", end)
    r, d = b.start("/nonexistent/cmd")
    fr, _ = frames(d)
    check("a missing command: HTTP 200, an end-of-stream error and no event",
          r.status == 200 and len(fr) == 1 and fr[0][0] == 2 and fr[0][1]["error"]["code"]
          and "no such file" in fr[0][1]["error"]["message"], fr)
    r, d = b.start("/bin/sleep", ["10"], timeout_ms=500)
    fr, _ = frames(d)
    ev = events(fr)
    check("Connect-Timeout-Ms kills the process: signal: killed, then deadline_exceeded",
          ev[-1].get("end", {}).get("status") == "signal: killed"
          and fr[-1][0] == 2 and fr[-1][1]["error"]["code"] == "deadline_exceeded", fr)
    r, d = b.start("/bin/sleep", ["1.5"], keepalive=1)
    fr, _ = frames(d)
    check("Keepalive-Ping-Interval: keepalive events while idle",
          any("keepalive" in e for e in events(fr)), events(fr))

    # stdin: Start with stdin true, then SendInput and CloseStdin beside it
    res = {}

    def reader():
        res["r"], res["d"] = b.start("/bin/cat", stdin=True)
    t = threading.Thread(target=reader)
    t.start()
    pid = None
    for _ in range(100):
        r, d = b.unary("/process.Process/List", {})
        procs = [p for p in jbody(d).get("processes", []) if p["config"]["cmd"] == "/bin/cat"]
        if procs:
            pid = procs[0]["pid"]
            break
        time.sleep(0.05)
    r1, _ = b.unary("/process.Process/SendInput",
                    {"process": {"pid": pid}, "input": {"stdin": base64.b64encode(b"in\0put").decode()}})
    r2, _ = b.unary("/process.Process/CloseStdin", {"process": {"pid": pid}})
    t.join(30)
    fr, _ = frames(res.get("d", b""))
    check("SendInput (base64) and CloseStdin reach the process",
          r1.status == 200 and r2.status == 200 and output(fr) == b"in\0put", (r1.status, r2.status, output(fr)))
    r, d = b.unary("/process.Process/SendSignal", {"process": {"pid": 1}, "signal": "SIGNAL_SIGKILL"})
    check("SendSignal to an unknown pid: 404 {code: not_found}",
          r.status == 404 and jbody(d)["code"] == "not_found", (r.status, d))

    # reattach with Connect
    res = {}

    def reader2():
        res["r"], res["d"] = b.start("/bin/sh", ["-c", "sleep 1; echo late"])
    t = threading.Thread(target=reader2)
    t.start()
    pid = None
    for _ in range(100):
        r, d = b.unary("/process.Process/List", {})
        procs = jbody(d).get("processes", [])
        if procs:
            pid = procs[0]["pid"]
            break
        time.sleep(0.05)
    h = b.headers({"Content-Type": "application/connect+json"})
    r, d = req("POST", "/process.Process/Connect", envelope({"process": {"pid": pid}}), h)
    t.join(30)
    fr, _ = frames(d)
    check("Connect reattaches to a running process's events",
          output(fr) == b"late\n" and fr[-1][0] == 2, fr)

    # ---- files ----
    blob = bytes(range(256)) * 10
    r, d = req("POST", "/files?path=%2Fhome%2Fuser%2Fd%2Fblob&username=user", blob,
               b.headers({"Content-Type": "application/octet-stream"}))
    j = jbody(d)
    check("upload (octet-stream): 200 [{path, name, type}]",
          r.status == 200 and j == [{"path": "/home/user/d/blob", "name": "blob", "type": "file"}], (r.status, d))
    r, d = req("GET", "/files?path=d/blob&username=user", headers=b.headers())
    check("download (home-relative path): the bytes", r.status == 200 and d == blob, r.status)
    bd = "XyZ"
    mp = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/home/user/m.txt\"\r\n"
          "Content-Type: application/octet-stream\r\n\r\nmulti\r\n--%s--\r\n" % (bd, bd)).encode()
    r, d = req("POST", "/files?username=user", mp,
               b.headers({"Content-Type": "multipart/form-data; boundary=" + bd}))
    r2, d2 = req("GET", "/files?path=/home/user/m.txt", headers=b.headers())
    check("upload (multipart, filename = target path)", r.status == 200 and d2 == b"multi", (r.status, d2))
    r, d = req("GET", "/files?path=/home/user/none", headers=b.headers())
    check("download of a missing file: 404 {code: 404, message}",
          r.status == 404 and jbody(d)["code"] == 404, (r.status, d))
    r, d = req("GET", "/files?path=/home/user/d", headers=b.headers())
    check("download of a directory: 400", r.status == 400, r.status)
    b.start("/bin/ln", ["-s", "d/blob", "lnk"])
    r, d = b.unary("/filesystem.Filesystem/Stat", {"path": "/home/user/lnk"})
    e = jbody(d).get("entry", {})
    check("Stat of a link: FILE_TYPE_SYMLINK, symlinkTarget (the link itself)",
          e.get("type") == "FILE_TYPE_SYMLINK" and e.get("symlinkTarget") == "d/blob", e)
    r, d = b.unary("/filesystem.Filesystem/Stat", {"path": "/home/user/d/blob"})
    e = jbody(d).get("entry", {})
    check("Stat: int64 size as a JSON string", e.get("size") == str(len(blob)), e)
    r, d = b.unary("/filesystem.Filesystem/Stat", {"path": "/home/user/none"})
    check("Stat of a missing path: 404 not_found", r.status == 404 and jbody(d)["code"] == "not_found", d)

    # ---- faults ----
    req("POST", "/_fake/faults", {"error_rate": 1.0, "status": 429, "retry_after": 3, "count": 1})
    r, d = api("GET", "/v2/sandboxes")
    r2, d2 = api("GET", "/v2/sandboxes")
    check("fault 429: Retry-After and the error shape, then (count 1) normal again",
          r.status == 429 and r.getheader("Retry-After") == "3" and jbody(d)["code"] == 429
          and r2.status == 200, (r.status, r.getheader("Retry-After"), r2.status))
    req("POST", "/_fake/faults", {"error_rate": 1.0, "status": 503, "count": 1, "paths": "^/process"})
    r, d = b.unary("/process.Process/List", {})
    check("fault 503 on envd: a Connect error {code: unavailable}",
          r.status == 503 and jbody(d)["code"] == "unavailable", (r.status, d))
    req("POST", "/_fake/faults", {"drop_stream_rate": 1.0, "count": 1, "paths": "Start"})
    try:
        r, d = b.start("/bin/sh", ["-c", "sleep 0.3; echo x"])
        cut = False
    except (http.client.IncompleteRead, http.client.RemoteDisconnected, ConnectionError) as ex:
        cut, d = True, ex
    check("fault drop_stream: the stream is cut before its end", cut, d)
    req("POST", "/_fake/faults", {"latency_ms": 300})
    t0 = time.time()
    r, d = api("GET", "/sandboxes/" + b.sid)
    lat = time.time() - t0
    check("fault latency: the answer still comes, later", r.status == 200 and lat >= 0.3, lat)
    req("POST", "/_fake/reset")

    # ---- pause / connect ----
    r, d = api("POST", "/sandboxes/%s/pause" % b.sid)
    r2, d2 = api("POST", "/sandboxes/%s/pause" % b.sid)
    r3, d3 = b.unary("/process.Process/List", {})
    check("pause: 204, then 409; envd answers 502 while paused",
          r.status == 204 and r2.status == 409 and r3.status == 502, (r.status, r2.status, r3.status))
    r, d = api("POST", "/v2/sandboxes/%s/connect" % b.sid, {"timeout": 60})
    r2, d2 = api("POST", "/v2/sandboxes/%s/connect" % b.sid, {"timeout": 60})
    check("connect: 201 resumed (with envdAccessToken), then 200 running",
          r.status == 201 and jbody(d)["envdAccessToken"] == b.token and r2.status == 200,
          (r.status, r2.status))

    # ---- kill ----
    r, d = api("DELETE", "/sandboxes/" + b.sid)
    r2, d2 = api("DELETE", "/sandboxes/" + b.sid)
    check("kill: 204, then 404", r.status == 204 and r2.status == 404, (r.status, r2.status))
    r, d = b.unary("/process.Process/List", {})
    check("envd of a killed sandbox: 502 from the edge", r.status == 502, r.status)
    for x in boxes[1:]:
        api("DELETE", "/sandboxes/" + x["sandboxID"])
    r, d = req("GET", "/_fake/state")
    check("no sandbox left", jbody(d)["sandboxes"] == [], d)

    print("1..%d" % n)
    sys.exit(1 if failed else 0)


main()
