"""kubefake/tables.py - server-side printing (meta.k8s.io/v1 Table).

kubectl get asks for `application/json;as=Table;v=v1;g=meta.k8s.io`; the
columns here are the real server's for pods (NAME READY STATUS RESTARTS AGE
IP NODE ...) and NAME/AGE for everything else.
"""
import calendar
import time


def age(ts):
    if not ts:
        return "<unknown>"
    try:
        t = calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "<unknown>"
    s = max(0, int(time.time() - t))
    if s < 120:
        return "%ds" % s
    if s < 3600 * 3:
        return "%dm" % (s // 60)
    if s < 86400 * 2:
        return "%dh" % (s // 3600)
    return "%dd" % (s // 86400)


def pod_status(p):
    st = p.get("status") or {}
    reason = st.get("reason") or st.get("phase") or "Unknown"
    for cs in st.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state:
            t = state["terminated"]
            reason = t.get("reason") or ("Signal:%d" % t["signal"] if t.get("signal")
                                         else "ExitCode:%d" % t.get("exitCode", 0))
    if st.get("reason"):
        reason = st["reason"]
    if (p.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Terminating"
    return reason


def pod_row(p):
    st = p.get("status") or {}
    css = st.get("containerStatuses") or []
    total = len((p.get("spec") or {}).get("containers") or [])
    ready = sum(1 for c in css if c.get("ready"))
    restarts = sum(c.get("restartCount", 0) for c in css)
    return [p["metadata"]["name"], "%d/%d" % (ready, total), pod_status(p), restarts,
            age(p["metadata"].get("creationTimestamp")), st.get("podIP") or "<none>",
            (p.get("spec") or {}).get("nodeName") or "<none>", "<none>", "<none>"]


POD_COLUMNS = [("Name", "string", "name"), ("Ready", "string", ""), ("Status", "string", ""),
               ("Restarts", "string", ""), ("Age", "string", ""), ("IP", "string", ""),
               ("Node", "string", ""), ("Nominated Node", "string", ""),
               ("Readiness Gates", "string", "")]


def table(kind, objs, rv=None, cont=None, with_headers=True):
    if kind == "Pod":
        cols, rowf = POD_COLUMNS, pod_row
    else:
        cols = [("Name", "string", "name"), ("Age", "string", "")]
        rowf = lambda o: [o["metadata"]["name"], age(o["metadata"].get("creationTimestamp"))]
    rows = []
    for o in objs:
        meta = {k: v for k, v in o["metadata"].items() if k != "managedFields"}
        rows.append({"cells": rowf(o), "object": {"kind": "PartialObjectMetadata",
                                                  "apiVersion": "meta.k8s.io/v1",
                                                  "metadata": meta}})
    t = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "rows": rows}
    if with_headers:
        t["columnDefinitions"] = [{"name": n, "type": ty, "format": fmt, "description": "",
                                   "priority": 0 if i < 5 else 1}
                                  for i, (n, ty, fmt) in enumerate(cols)]
    else:
        t["columnDefinitions"] = []
    if rv is not None:
        t["metadata"]["resourceVersion"] = str(rv)
    if cont:
        t["metadata"]["continue"] = cont
    return t
