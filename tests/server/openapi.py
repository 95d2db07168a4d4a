#!/usr/bin/env python3
"""tests/server/openapi.py - polysandboxd against its OpenAPI document

Usage: openapi.py BASE TOKEN DOC ROUTES

BASE is the server's http://127.0.0.1:PORT, TOKEN a valid bearer token,
DOC core/server/openapi.json, ROUTES the output of polysandboxd --routes.
Prints TAP.  Checks that the document lists exactly the routes the server
serves and that /openapi.json is that document; then drives every route
into the answers it documents (and some it must refuse) and checks each
answer: its path and method are in the document, its status is a
documented response of that operation, its Content-Type one the response
lists, and its body valid against the response's schema (a JSON Schema
subset: $ref, type, enum, properties, required, additionalProperties,
items, oneOf, minimum, exclusiveMinimum, maximum, minItems, maxLength,
pattern).  Standard library only.
"""
import http.client
import json
import re
import sys
import threading
import time
import urllib.parse

BASE, TOKEN, DOC_PATH, ROUTES_PATH = sys.argv[1:5]
URL = urllib.parse.urlparse(BASE)
DOC = json.load(open(DOC_PATH))
n = 0
failed = 0


def tap(good, desc, why=""):
    global n, failed
    n += 1
    print(("ok" if good else "not ok") + " %d - %s" % (n, desc))
    if not good:
        failed = 1
        for line in str(why).splitlines()[:15]:
            print("# " + line)
    sys.stdout.flush()


def resolve(node):
    while isinstance(node, dict) and "$ref" in node:
        parts = node["$ref"].lstrip("#/").split("/")
        node = DOC
        for p in parts:
            node = node[p]
    return node


TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(v, schema, where="$"):
    """A list of what does not match (empty: valid)."""
    s = resolve(schema)
    errs = []
    if "oneOf" in s:
        ok = [o for o in s["oneOf"] if not validate(v, o, where)]
        if len(ok) != 1:
            return ["%s: matches %d of oneOf" % (where, len(ok))]
    t = s.get("type")
    if t is not None:
        ts = t if isinstance(t, list) else [t]
        if not any(TYPES[x](v) for x in ts):
            return ["%s: %r is not of type %s" % (where, v, t)]
    if "enum" in s and v not in s["enum"]:
        errs.append("%s: %r not in %s" % (where, v, s["enum"]))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "minimum" in s and v < s["minimum"]:
            errs.append("%s: %r < minimum %r" % (where, v, s["minimum"]))
        if "maximum" in s and v > s["maximum"]:
            errs.append("%s: %r > maximum %r" % (where, v, s["maximum"]))
        if "exclusiveMinimum" in s and v <= s["exclusiveMinimum"]:
            errs.append("%s: %r <= exclusiveMinimum" % (where, v))
    if isinstance(v, str):
        if "maxLength" in s and len(v) > s["maxLength"]:
            errs.append("%s: longer than %d" % (where, s["maxLength"]))
        if "pattern" in s and not re.search(s["pattern"], v):
            errs.append("%s: %r does not match %s" % (where, v, s["pattern"]))
    if isinstance(v, dict):
        props = s.get("properties", {})
        for k in s.get("required", []):
            if k not in v:
                errs.append("%s: missing %r" % (where, k))
        for k, x in v.items():
            if k in props:
                errs += validate(x, props[k], where + "." + k)
            else:
                ap = s.get("additionalProperties", True)
                if ap is False:
                    errs.append("%s: unexpected key %r" % (where, k))
                elif isinstance(ap, dict):
                    errs += validate(x, ap, where + "." + k)
    if isinstance(v, list):
        if "minItems" in s and len(v) < s["minItems"]:
            errs.append("%s: fewer than %d items" % (where, s["minItems"]))
        if "items" in s:
            for i, x in enumerate(v):
                errs += validate(x, s["items"], "%s[%d]" % (where, i))
    return errs


def template_of(path):
    """The document's path template matching a request path, or None."""
    path = urllib.parse.unquote(path.split("?")[0])
    for tpl in DOC["paths"]:
        rx = "^" + re.sub(r"\\\{path\\\}", "(.+)", re.sub(r"\\\{(?!path)[a-z_]+\\\}", "([^/]+)",
                                                           re.escape(tpl))) + "$"
        if re.match(rx, path):
            return tpl
    return None


def request(method, path, body=None, headers=None, token=True, timeout=60):
    c = http.client.HTTPConnection(URL.hostname, URL.port, timeout=timeout)
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + TOKEN
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
        h.setdefault("Content-Type", "application/json")
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def sse_events(data):
    events = []
    for block in data.decode().split("\n\n"):
        ev = {}
        for line in block.split("\n"):
            if line.startswith("event: "):
                ev["event"] = line[7:]
            elif line.startswith("data: "):
                ev["data"] = json.loads(line[6:])
        if "event" in ev:
            events.append(ev)
    return events


def wait_status(cond):
    """Poll /v1/status until cond(j) holds (30 s at most): the tests that
    need work in flight wait for it rather than guess a time."""
    for _ in range(300):
        st, _, data = request("GET", "/v1/status")
        if st == 200 and cond(json.loads(data)):
            return True
        time.sleep(0.1)
    return False


def check(method, path, status, body=None, headers=None, token=True, want=None):
    """One request, checked against the document; returns the parsed body."""
    got, hdrs, data = request(method, path, body, headers, token)
    desc = "%s %s -> %s" % (method, path.split("?")[0], status)
    why = []
    if got != status:
        why.append("status %d, expected %d: %s" % (got, status, data[:300]))
    if "x-request-id" not in hdrs:
        why.append("no X-Request-ID")
    tpl = template_of(path)
    ctype = hdrs.get("content-type", "").split(";")[0]
    parsed = None
    if tpl is None:
        if got == 404:
            why += validate(json.loads(data), {"$ref": "#/components/schemas/Error"})
        else:
            why.append("the path is not in the document")
    elif method.lower() not in DOC["paths"][tpl]:
        if got != 405 or "allow" not in hdrs:
            why.append("the method is not in the document, and the answer is %d" % got)
        why += validate(json.loads(data), {"$ref": "#/components/schemas/Error"})
    else:
        op = DOC["paths"][tpl][method.lower()]
        resp = op["responses"].get(str(got))
        if resp is None:
            why.append("status %d is not a documented response of %s %s" % (got, method, tpl))
        else:
            resp = resolve(resp)
            content = resp.get("content", {})
            if ctype not in content:
                why.append("Content-Type %r is not one of %s" % (ctype, list(content)))
            elif ctype == "application/json":
                parsed = json.loads(data)
                why += validate(parsed, content[ctype]["schema"])
            elif ctype == "text/event-stream":
                parsed = sse_events(data)
                for ev in parsed:
                    schema = {"stdout": "OutputEvent", "stderr": "OutputEvent",
                              "result": "Result", "error": "Error", "item": "JobItem",
                              "progress": "JobProgress", "done": "Job"}.get(ev["event"])
                    if schema is None:
                        why.append("unknown event %r" % ev["event"])
                    else:
                        why += validate(ev.get("data"), {"$ref": "#/components/schemas/" + schema})
            else:
                parsed = data
            for h in resp.get("headers", {}):
                if h.lower() in ("retry-after", "allow", "www-authenticate") and h.lower() not in hdrs:
                    if got in (429, 405, 401):
                        why.append("no %s header" % h)
    if want is not None and parsed is not None and not want(parsed):
        why.append("the answer is not what was expected: %s" % str(parsed)[:300])
    tap(not why, desc, "\n".join(why))
    return parsed


# ---- the document and the routes --------------------------------------------------

served = set()
for line in open(ROUTES_PATH):
    if line.strip():
        p, m = line.split()
        served.add((p, m.lower()))
documented = {(p, m) for p, ops in DOC["paths"].items() for m in ops if m != "parameters"}
tap(served == documented, "the document lists exactly the routes the server serves (%d)" % len(served),
    "served only: %s\ndocumented only: %s" % (sorted(served - documented), sorted(documented - served)))
status, hdrs, data = request("GET", "/openapi.json")
tap(status == 200 and json.loads(data) == DOC, "GET /openapi.json is the document in the tree")

# ---- every route ------------------------------------------------------------------------

check("GET", "/healthz", 200, token=False)
check("GET", "/readyz", 200, token=False)
check("GET", "/", 200, token=False)
check("GET", "/web/app.js", 200, token=False)
check("GET", "/web/app.css", 200, token=False)
check("GET", "/web/nosuch.js", 404, token=False)
check("GET", "/v1/providers", 200, want=lambda j: any(p["name"] == "local" for p in j["providers"]))
check("GET", "/v1/providers", 401, token=False)
check("GET", "/v1/templates", 200, want=lambda j: any(
    t["name"] == "python" and t["network"] == "none" and t["compiled"] is False
    for t in j["templates"]) and any(t["name"] == "c" and t["compiled"] is True
                                   for t in j["templates"]))
check("GET", "/v1/pools", 200)
check("GET", "/v1/status", 200)
check("GET", "/metrics", 200)
check("GET", "/openapi.json", 200)
check("GET", "/v1/nowhere", 404)
check("DELETE", "/v1/run", 405)

check("POST", "/v1/run", 200, {"language": "python", "code": "print(6*7)"},
      want=lambda j: j["stdout"] == "42\n")
check("POST", "/v1/run", 200, {"argv": ["sh", "-c", "printf '\\377'; exit 2"]},
      want=lambda j: j["status"] == "nonzero_exit" and j["stdout_encoding"] == "base64")
check("POST", "/v1/run", 200, {"shell": "echo a; echo b >&2"}, {"Accept": "text/event-stream"},
      want=lambda ev: [e["event"] for e in ev][-1] == "result" and len(ev) >= 3)
check("POST", "/v1/run", 400, '{"argv": [')
check("POST", "/v1/run", 400, {"argv": "true"})
check("POST", "/v1/run", 400, {"argv": ["true"], "limits": {"memory": "12Q"}})
check("POST", "/v1/run", 422, {"language": "cobol", "code": "x"})
check("POST", "/v1/run", 422, {"argv": ["true"], "provider": "nosuch"})
check("POST", "/v1/run", 422, {"argv": ["true"], "limits": {"memory": "1T"}})
check("POST", "/v1/run", 413, {"shell": "x" * 70000})
check("POST", "/v1/run", 401, {"argv": ["true"]}, token=False)

# Idempotency: the same key never runs twice; 409 while it runs; 422 for another body.
key = "openapi-%d" % time.time_ns()
first = check("POST", "/v1/run", 200, {"shell": "echo $$"}, {"Idempotency-Key": key})
check("POST", "/v1/run", 200, {"shell": "echo $$"}, {"Idempotency-Key": key},
      want=lambda j: first is not None and j == first)
check("POST", "/v1/run", 422, {"shell": "echo other"}, {"Idempotency-Key": key})
slow_key = key + "-slow"
t = threading.Thread(target=request, args=("POST", "/v1/run", {"argv": ["sleep", "4"]},
                                           {"Idempotency-Key": slow_key}))
t.start()
wait_status(lambda j: j["workers"]["busy"] == 1)
check("POST", "/v1/run", 409, {"argv": ["sleep", "4"]}, {"Idempotency-Key": slow_key})

# 429: one worker and a queue of one (the server runs with those), both busy.
t2 = threading.Thread(target=request, args=("POST", "/v1/run", {"argv": ["sleep", "1"]}))
t2.start()
wait_status(lambda j: j["queue"]["depth"] == 1)
check("POST", "/v1/run", 429, {"argv": ["true"]})
t.join()
t2.join()

# ---- sandboxes ------------------------------------------------------------------------------

label = "openapi%d" % time.time_ns()
made = check("POST", "/v1/sandboxes", 201, {"labels": {"t": label}})
sid = made["id"] if made else "none"
check("POST", "/v1/sandboxes", 200, {"labels": {"t": label}, "get_or_create": True},
      want=lambda j: j["id"] == sid and j["created"] is False)
check("POST", "/v1/sandboxes", 400, {"labels": {"t": label}, "persistent": False})
check("POST", "/v1/sandboxes", 422, {"provider": "nosuch"})
check("GET", "/v1/sandboxes?label=t=" + label, 200,
      want=lambda j: [s["id"] for s in j["sandboxes"]] == [sid])
check("GET", "/v1/sandboxes?colour=red", 400)
check("GET", "/v1/sandboxes?provider=nosuch", 422)
check("GET", "/v1/sandboxes/" + sid, 200, want=lambda j: j["labels"]["t"] == label)
check("GET", "/v1/sandboxes/lcl-0000000000000000", 404)
check("POST", "/v1/sandboxes/%s/exec" % sid, 200, {"shell": "echo kept > f; echo ok"},
      want=lambda j: j["stdout"] == "ok\n")
check("POST", "/v1/sandboxes/%s/exec" % sid, 200, {"shell": "cat f"}, {"Accept": "text/event-stream"},
      want=lambda ev: ev[0]["data"]["data"] == "kept\n" and ev[-1]["event"] == "result")
check("POST", "/v1/sandboxes/lcl-0000000000000000/exec", 404, {"argv": ["true"]})
check("POST", "/v1/sandboxes/%s/exec" % sid, 400, {"argv": ["true"], "limits": {}})
check("PUT", "/v1/sandboxes/%s/files/d/x.bin?mode=0600" % sid, 200, b"\x00\x01\xff",
      {"Content-Type": "application/octet-stream"}, want=lambda j: j["bytes"] == 3)
check("GET", "/v1/sandboxes/%s/files/d/x.bin" % sid, 200, want=lambda b: b == b"\x00\x01\xff")
check("GET", "/v1/sandboxes/%s/files/d/none" % sid, 404)
check("GET", "/v1/sandboxes/%s/files/%%2e%%2e/etc/passwd" % sid, 400)
check("PUT", "/v1/sandboxes/%s/files/a/%%2e%%2e/%%2e%%2e/b" % sid, 400, b"x")
check("GET", "/v1/sandboxes/%s/files?path=d" % sid, 200,
      want=lambda j: [e["name"] for e in j["entries"]] == ["x.bin"])
check("GET", "/v1/sandboxes/%s/files?path=d/%%2e%%2e" % sid, 400)
check("GET", "/v1/sandboxes/%s/files?path=none" % sid, 404)
check("DELETE", "/v1/sandboxes/" + sid, 200, want=lambda j: j["destroyed"] is True)
check("DELETE", "/v1/sandboxes/" + sid, 404)

# ---- jobs ------------------------------------------------------------------------------------


def job_end(jid):
    """Wait for the job to end (30 s at most)."""
    for _ in range(300):
        status, hdrs, data = request("GET", "/v1/jobs/%s?limit=0" % jid)
        if status != 200 or json.loads(data)["state"] in ("succeeded", "failed", "cancelled"):
            return
        time.sleep(0.1)


NOJOB = "/v1/jobs/j000000000000000000000000"
job = check("POST", "/v1/batch", 202, {"items": [{"argv": ["true"]}, {"shell": "echo hi"}]},
            want=lambda j: j["progress"]["total"] == 2)
jid = job["id"] if job else "none"
job_end(jid)
check("GET", "/v1/jobs/" + jid, 200, want=lambda j: j["state"] == "succeeded" and len(j["items"]) == 2)
check("GET", "/v1/jobs/%s?offset=1&limit=1" % jid, 200,
      want=lambda j: j["items"][0]["record"]["result"]["stdout"] == "hi\n" and j["next"] is None)
check("GET", "/v1/jobs/%s?limit=x" % jid, 400)
check("GET", NOJOB, 404)
check("GET", "/v1/jobs/%s/events" % jid, 200,
      want=lambda ev: [e["event"] for e in ev] == ["item", "progress", "item", "progress", "done"])
check("GET", "/v1/jobs/%s/events" % jid, 400, headers={"Last-Event-ID": "x"})
check("GET", NOJOB + "/events", 404)
check("DELETE", "/v1/jobs/" + jid, 200, want=lambda j: j["state"] == "succeeded")
check("DELETE", NOJOB, 404)
check("POST", "/v1/batch", 400, {"items": []})
check("POST", "/v1/batch", 422, {"items": [{"language": "cobol", "code": "x"}]})
check("POST", "/v1/batch", 401, {"items": [{"argv": ["true"]}]}, token=False)
def canonical_eval(task, solution, wait=True, **more):
    """A job scoring the canonical solution of a one-task sh dataset (202),
    waited for to its end unless not @wait; its id."""
    job = check("POST", "/v1/eval", 202, dict({"dataset": [{"task_id": task, "language": "sh",
                                                            "canonical_solution": solution}],
                                               "canonical": True, "k": [1]}, **more))
    jid_ = job["id"] if job else "none"
    if wait:
        job_end(jid_)
    return jid_


eid = canonical_eval("a", "exit 0")
check("GET", "/v1/jobs/" + eid, 200, want=lambda j: j["pass_at_k"] == {"1": 1.0})
check("GET", "/v1/jobs?kind=eval", 200, want=lambda j: [x["id"] for x in j["jobs"]] == [eid])
eid2 = canonical_eval("a", "exit 0")
check("POST", "/v1/compare", 200, {"jobs": [eid, eid2]},
      want=lambda c: c["agree"] and [x["label"] for x in c["columns"]] == ["local", "local#2"] and
      [x["summary"]["pass_at_k"] for x in c["columns"]] == [{"1": 1.0}] * 2)
# the HTML page: a task id is hostile text, never markup
xid, xid2 = (canonical_eval("<script>alert(1)</script>", "exit 0") for _ in range(2))
check("POST", "/v1/compare", 200, {"jobs": [xid, xid2]}, headers={"Accept": "text/html"},
      want=lambda h: h.startswith(b"<!DOCTYPE html>") and b"<script" not in h and
      b"&lt;script&gt;alert(1)&lt;/script&gt;" in h and b'id="meta-dataset">(inline)' in h)
# the Markdown page: the inputs named as given, the columns as labelled
check("POST", "/v1/compare", 200, {"jobs": [xid, xid2]}, headers={"Accept": "text/markdown"},
      want=lambda h: h[:1] not in (b"<", b"{") and b"\n|" in h and b"(inline)" in h and
      b"local#2" in h and b"&lt;script&gt;" not in h)
check("POST", "/v1/compare", 400, {"jobs": [eid]})
check("POST", "/v1/compare", 404, {"jobs": [eid, NOJOB.split("/")[-1]]})
check("POST", "/v1/compare", 422, {"jobs": [eid, jid]},
      want=lambda e: "is a batch job" in e["error"]["message"])
check("POST", "/v1/compare", 400, {"jobs": [eid, eid2], "k": [1, 1]})
oid = canonical_eval("b", "exit 0")
check("POST", "/v1/compare", 422, {"jobs": [eid, oid]},
      want=lambda e: "scored other inputs" in e["error"]["message"])
sid_ev = canonical_eval("a", "sleep 30", wait=False, timeout="60s")
check("POST", "/v1/compare", 409, {"jobs": [eid, sid_ev]},
      want=lambda e: e["error"]["code"] == "not_ended")
check("DELETE", "/v1/jobs/" + sid_ev, 200, want=lambda j: j["state"] == "cancelled")
check("GET", "/v1/jobs?state=sleeping", 400)
check("POST", "/v1/eval", 403, {"dataset": "x.jsonl", "canonical": True})
check("POST", "/v1/eval", 400, {"dataset": [{"task_id": "a", "language": "sh"}],
                                "samples": [{"task_id": "b", "completion": ""}]})
check("POST", "/v1/eval", 422, {"dataset": [{"task_id": "a", "language": "sh"}],
                                "canonical": True, "providers": ["nosuch"]})
slow = check("POST", "/v1/batch", 202, {"items": [{"argv": ["sleep", "30"]}]})
time.sleep(0.5)
check("DELETE", "/v1/jobs/" + (slow["id"] if slow else "none"), 200,
      want=lambda j: j["state"] == "cancelled")
# The compatibility routes (their own file, run here with check()).
exec(open(DOC_PATH.replace("core/server/openapi.json", "tests/server/openapi_compat.py")).read())

print("1..%d" % n)
sys.exit(failed)
