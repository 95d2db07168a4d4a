#!/usr/bin/env python3
# tests/daytona/wire.py - the Daytona fake's own wire behaviour, checked
# with raw HTTP (no provider): paths, auth, error shapes, states,
# execute quirks of the current daemon and of an older one, files,
# pagination, fault injection.  Prints TAP.
# Usage: wire.py BASE_URL API_KEY LEGACY_BASE_URL
#   LEGACY_BASE_URL: a second fake, started with --legacy-daemon
import http.client
import json
import sys
import time
import urllib.parse

BASE, KEY, LEGACY = sys.argv[1], sys.argv[2], sys.argv[3]
HOST = urllib.parse.urlsplit(BASE)
n = 0
failed = 0


def check(desc, cond, detail=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc))
    if not cond:
        failed = 1
        if detail:
            print("# " + str(detail)[:500].replace("\n", "\n# "))


def req(method, path, body=None, key=KEY, ctype=None, raw=False, timeout=30, host=None):
    host = host or HOST
    c = http.client.HTTPConnection(host.hostname, host.port, timeout=timeout)
    h = {}
    if key is not None:
        h["Authorization"] = "Bearer " + key
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
        ctype = ctype or "application/json"
    if ctype:
        h["Content-Type"] = ctype
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    hdrs = dict(r.getheaders())
    c.close()
    if raw:
        return r.status, data, hdrs
    try:
        j = json.loads(data) if data else None
    except ValueError:
        j = data
    return r.status, j, hdrs


def ctl(path, body=None):
    return req("POST" if body is not None else "GET", path, body, key=None)[1]


def started(sid, host=None):
    for _ in range(100):
        st, j, _ = req("GET", "/api/sandbox/" + sid, host=host)
        if j.get("state") == "started":
            return j
        time.sleep(0.05)
    return j


st, j, _ = req("GET", "/api/sandbox", key="wrong")
check("401 with the API's error shape for a wrong key",
      st == 401 and j.get("statusCode") == 401 and "message" in j, j)
st, j, _ = req("GET", "/api/sandbox", key=None)
check("401 without a key", st == 401, j)

st, j, _ = req("POST", "/api/sandbox", {"labels": {"a": "b"}, "env": {"FOO": "bar"},
                                        "autoStopInterval": 15})
check("create answers 200 with a Sandbox in state creating",
      st == 200 and j.get("state") == "creating" and j.get("id"), j)
sid = j["id"]
check("the Sandbox carries toolboxProxyUrl, labels and env",
      j.get("toolboxProxyUrl", "").endswith("/toolbox") and j["labels"] == {"a": "b"}
      and j["env"] == {"FOO": "bar"}, j)
j = started(sid)
check("it reaches state started", j.get("state") == "started", j)
st, j, _ = req("POST", "/api/sandbox", {"labels": {"a": 1}})
check("bad labels: 400 with a message", st == 400 and "labels" in j.get("message", ""), j)
st, j, _ = req("GET", "/api/sandbox/no-such-id")
check("unknown sandbox: 404 'not found'", st == 404 and "not found" in j["message"], j)

T = "/toolbox/" + sid
# ---- process/execute of the current daemon: through a shell ----
st, j, _ = req("POST", T + "/process/execute",
               {"command": "echo $FOO; echo err >&2; exit 3", "timeout": 5})
check("execute: combined output, exitCode, create env",
      st == 200 and j == {"exitCode": 3, "result": "bar\nerr\n"}, j)
st, j, _ = req("POST", T + "/process/execute",
               {"command": "x=1; echo a\\ b 'c  d' $((x + 1)) \"e'f\" | cat"})
check("execute: through a shell (escapes, quotes, expansion, a pipe)",
      st == 200 and j["result"] == "a b c  d 2 e'f\n", j)
st, j, _ = req("POST", T + "/process/execute", {"command": "cat\nthe rest of the script"})
check("execute: the command is the shell's stdin (a reader gets the rest)",
      st == 200 and j["result"] == "the rest of the script", j)
st, j, _ = req("POST", T + "/process/execute",
               {"command": "echo \"$X|$FOO\"", "envs": {"X": "a b", "FOO": "over"}})
check("execute: envs honoured, over the sandbox's env", st == 200 and j["result"] == "a b|over\n", j)
st, j, _ = req("POST", T + "/process/execute", {"command": "true", "envs": {"1X": "a"}})
check("execute: an invalid envs name is 400, naming it",
      st == 400 and "1X" in j.get("message", ""), j)
st, body, _ = req("POST", T + "/process/execute",
                  {"command": "printf '\\377<&>'", "timeout": 5}, raw=True)
j = json.loads(body)
check("execute: invalid UTF-8 replaced, HTML characters escaped as Go does",
      j["result"] == "\ufffd<&>" and b"\\u003c" in body and b"\\u0026" in body, body)
st, j, _ = req("POST", T + "/process/execute", {"command": "kill -TERM $$"})
check("execute: a signal is exitCode -1", st == 200 and j["exitCode"] == -1, j)
st, j, _ = req("POST", T + "/process/execute", {"command": "no-such-cmd-xyz"})
check("execute: a missing command is the shell's 127",
      st == 200 and j["exitCode"] == 127 and "not found" in j["result"], j)
st, j, _ = req("POST", T + "/process/execute", {"command": "true", "cwd": "no-such-dir"})
check("execute: a start failure (no such cwd) is 200 with exitCode -1",
      st == 200 and j["exitCode"] == -1 and "chdir" in j["result"], j)
t0 = time.time()
st, j, _ = req("POST", T + "/process/execute", {"command": "sleep 20", "timeout": 1})
check("execute: timeout is 408 with the daemon's error shape",
      st == 408 and j.get("statusCode") == 408 and j.get("code") == "REQUEST_TIMEOUT"
      and time.time() - t0 < 15, j)
st, j, _ = req("POST", T + "/process/execute", {"command": "pwd"})
check("execute: default cwd is the work dir", st == 200 and j["result"].rstrip().endswith(
    "/home/daytona"), j)
st, j, _ = req("POST", T + "/process/execute", {"command": " \n "})
check("execute: an empty or blank command is 400", st == 400, j)
st, j, _ = req("POST", T + "/process/code-run",
               {"code": "import sys\nprint(sys.argv[1:])\nsys.exit(2)", "language": "python",
                "argv": ["a"], "timeout": 20})
check("code-run (python): exitCode and output", st == 200 and j.get("exitCode") == 2
      and j.get("result") == "['a']\n", j)
st, j, _ = req("POST", T + "/process/code-run", {"code": "1", "language": "cobol"})
check("code-run: an unknown language is 400", st == 400 and "cobol" in j.get("message", ""), j)

# ---- files ----
bnd = "xyzBOUNDARY"
mp = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n"
      "Content-Type: application/octet-stream\r\n\r\n" % bnd).encode() + b"\x00\x01bin" + \
    ("\r\n--%s--\r\n" % bnd).encode()
st, data, _ = req("POST", T + "/files/upload?path=d/e/f.bin", mp,
                  ctype="multipart/form-data; boundary=" + bnd, raw=True)
check("upload (multipart): empty 200, parents made", st == 200 and data == b"", data)
st, data, h = req("GET", T + "/files/download?path=d/e/f.bin", raw=True)
check("download: the raw bytes, octet-stream",
      st == 200 and data == b"\x00\x01bin" and h.get("Content-Type") == "application/octet-stream",
      data)
st, data, _ = req("POST", T + "/files/upload?path=raw.txt", b"raw body",
                  ctype="application/octet-stream", raw=True)
check("upload of a raw body: empty 200", st == 200 and data == b"", data)
st, j, _ = req("POST", T + "/files/upload-v2?path=raw2.txt", b"raw body",
               ctype="application/octet-stream")
check("upload-v2 (raw body): {name, path, type}", st == 200 and j.get("type") == "file"
      and j.get("name") == "raw2.txt" and j.get("path", "").endswith("/raw2.txt"), j)
mp = ("--%s\r\nContent-Disposition: form-data; name=\"files[0].path\"\r\n\r\nb/one.txt\r\n"
      "--%s\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"b/one.txt\"\r\n"
      "Content-Type: application/octet-stream\r\n\r\nONE\r\n--%s--\r\n" % (bnd, bnd, bnd)).encode()
st, j, _ = req("POST", T + "/files/bulk-upload", mp, ctype="multipart/form-data; boundary=" + bnd)
check("bulk-upload: files[i].path then files[i].file", st == 200
      and j == {"files": [{"path": "b/one.txt", "bytes": 3}]}, j)
st, data, h = req("POST", T + "/files/bulk-download", {"paths": ["b/one.txt", "b/none"]}, raw=True)
check("bulk-download: a multipart answer, a file part and an error part",
      st == 200 and h.get("Content-Type") == "multipart/form-data; boundary=DAYTONA-FILE-BOUNDARY"
      and b'name="file"; filename="b/one.txt"' in data and b"\r\n\r\nONE\r\n" in data
      and b'name="error"; filename="b/none"' in data and b'"code":"FILE_NOT_FOUND"' in data, data)
st, j, _ = req("GET", T + "/files/download?path=nope")
check("download of a missing file: 404", st == 404, j)
st, j, _ = req("GET", T + "/files/download?path=d")
check("download of a directory: 400 'path must be a file'",
      st == 400 and j["message"] == "path must be a file", j)
st, j, _ = req("GET", T + "/files/download?path=/etc/passwd")
check("a path outside the sandbox is refused", st == 403, j)
st, j, _ = req("GET", "/api/toolbox/%s/toolbox/work-dir" % sid)
check("the legacy toolbox path on the API works", st == 200 and j["dir"].startswith("/"), j)

for i in range(4):
    req("POST", "/api/sandbox", {"labels": {"page": "yes", "i": str(i)}})
seen, cursor, pages = [], None, 0
while True:
    q = "/api/sandbox?limit=3&labels=" + urllib.parse.quote(json.dumps({"page": "yes"}))
    if cursor:
        q += "&cursor=" + urllib.parse.quote(cursor)
    st, j, _ = req("GET", q)
    seen += [x["labels"]["i"] for x in j["items"]]
    pages += 1
    cursor = j["nextCursor"]
    if not cursor:
        break
check("list: label filter and cursor pages", sorted(seen) == ["0", "1", "2", "3"] and pages == 2,
      (seen, pages))

st, j, _ = req("PUT", "/api/sandbox/%s/labels" % sid, {"labels": {"x": "y"}})
check("labels: PUT replaces all", st == 200 and j == {"labels": {"x": "y"}}, j)

st, j, _ = req("DELETE", "/api/sandbox/" + sid)
check("delete answers the Sandbox, destroying", st == 200 and j["state"] == "destroying", j)
time.sleep(0.5)
st, j, _ = req("GET", "/api/sandbox/" + sid)
check("then it is gone (404)", st == 404, j)

ctl("/_fake/faults", {"error_rate": 1, "status": 429, "retry_after": 3, "count": 2})
a = req("GET", "/api/sandbox")
b = req("GET", "/api/sandbox")
c = req("GET", "/api/sandbox")
check("faults: count limits injections; 429 carries Retry-After",
      a[0] == 429 and b[0] == 429 and c[0] == 200 and a[2].get("Retry-After") == "3", (a, c[0]))
ctl("/_fake/faults", {"drop_rate": 1, "drop_mode": "mid", "count": 1})
try:
    req("GET", "/api/sandbox")
    dropped = False
except (http.client.HTTPException, OSError):
    dropped = True
check("faults: a connection dropped mid-answer", dropped)
outs = []
for seed in (5, 5):
    ctl("/_fake/faults", {"error_rate": 0.5, "status": 503, "seed": seed})
    outs.append([req("GET", "/api/sandbox")[0] for _ in range(12)])
ctl("/_fake/faults", {})
check("faults: the same seed gives the same sequence", outs[0] == outs[1] and 503 in outs[0]
      and 200 in outs[0], outs)
# ---- an older daemon (a second fake, --legacy-daemon) ----
LH = urllib.parse.urlsplit(LEGACY)
st, j, _ = req("POST", "/api/sandbox", {"env": {"FOO": "bar"}}, host=LH)
LT = "/toolbox/" + started(j["id"], host=LH)["id"]
st, j, _ = req("POST", LT + "/process/execute", {"command": "echo a\\ b 'c d' \"e'f\""}, host=LH)
check("older daemon: split on spaces, quotes only, no escapes; \"code\"",
      st == 200 and j == {"code": 0, "result": "a\\ b c d e'f\n"}, j)
st, j, _ = req("POST", LT + "/process/execute", {"command": "echo $HOME | cat"}, host=LH)
check("older daemon: no shell (no expansion, no pipe)", j["result"] == "$HOME | cat\n", j)
st, j, _ = req("POST", LT + "/process/execute",
               {"command": "sh -c 'echo ${X-unset} $FOO'", "envs": {"X": "1"}}, host=LH)
check("older daemon: envs ignored", st == 200 and j["result"] == "unset bar\n", j)
st, j, _ = req("POST", LT + "/process/execute", {"command": "no-such-cmd-xyz"}, host=LH)
check("older daemon: a start failure is 200 with code -1", st == 200 and j["code"] == -1, j)
st, j, _ = req("POST", LT + "/files/upload?path=raw.txt", b"raw body",
               ctype="application/octet-stream", host=LH)
check("older daemon: a raw upload body is 400 (multipart field only)", st == 400, j)
st, j, _ = req("POST", LT + "/files/upload-v2?path=raw.txt", b"raw body",
               ctype="application/octet-stream", host=LH)
check("older daemon: no upload-v2 (404)", st == 404, j)
st, j, _ = req("POST", LT + "/process/code-run", {"code": "1", "language": "python"}, host=LH)
check("older daemon: no code-run (404)", st == 404, j)

print("1..%d" % n)
sys.exit(failed)
