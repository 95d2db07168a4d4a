#!/usr/bin/env python3
"""tests/kube/python-client.py - the Kubernetes fake as Debian's
python3-kubernetes (the official Python client, urllib3 + websocket-client)
sees it: create, list with selectors, watch, stream() exec with stdout,
stderr, exit status and stdin (v4.channel.k8s.io), errors as ApiException,
delete.  Prints TAP.  Run by python-client.sh with $KUBECONFIG set.
"""
import os
import sys
import time

try:
    from kubernetes import client, config, watch
    from kubernetes.stream import stream
except ImportError as e:
    print("1..0 # SKIP python3-kubernetes is not installed (%s)" % e)
    sys.exit(0)

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


print("1..11")
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
v1 = client.CoreV1Api()
NS = "default"

pod = client.V1Pod(
    metadata=client.V1ObjectMeta(name="pyp", labels={"who": "py", "n": "1"}),
    spec=client.V1PodSpec(restart_policy="Never", automount_service_account_token=False,
                          containers=[client.V1Container(name="c", image="debian:12",
                                                         command=["sleep", "600"])]))
made = v1.create_namespaced_pod(NS, pod)
check("create_namespaced_pod answers the stored pod (uid, resourceVersion, Pending)",
      made.metadata.uid and made.metadata.resource_version and made.status.phase == "Pending",
      (made.metadata.uid, made.metadata.resource_version, made.status.phase))

phases = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_pod, NS, label_selector="who=py",
                   resource_version=made.metadata.resource_version, timeout_seconds=30):
    phases.append((ev["type"], ev["object"].status.phase))
    if ev["object"].status.phase == "Running":
        w.stop()
check("a watch from its resourceVersion sees it become Running",
      phases and phases[-1] == ("MODIFIED", "Running"), phases)

items = v1.list_namespaced_pod(NS, label_selector="who=py,n notin (2,3)").items
check("list with a set-based selector", [p.metadata.name for p in items] == ["pyp"],
      [p.metadata.name for p in items])
items = v1.list_namespaced_pod(NS, label_selector="who=py,n=2").items
check("a selector matching nothing lists nothing", items == [], items)

r = stream(v1.connect_get_namespaced_pod_exec, "pyp", NS,
           command=["sh", "-c", "echo out; echo err >&2; exit 5"],
           stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
r.run_forever(timeout=20)
check("stream() exec: stdout", r.read_stdout() == "out\n")
check("stream() exec: stderr", r.read_stderr() == "err\n")
check("stream() exec: the exit status from the status channel (5)", r.returncode == 5,
      r.returncode)

r = stream(v1.connect_get_namespaced_pod_exec, "pyp", NS, command=["head", "-n", "1"],
           stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
r.write_stdin("hello from stdin\n")
got = ""
end = time.time() + 20
while r.is_open() and time.time() < end:
    r.update(timeout=1)
    got += r.read_stdout()
r.close()
check("stream() exec with stdin", got == "hello from stdin\n", got)

try:
    v1.read_namespaced_pod("no-such-pod", NS)
    check("a missing pod is an ApiException 404 with a Status body", False)
except client.exceptions.ApiException as e:
    check("a missing pod is an ApiException 404 with a Status body",
          e.status == 404 and '"reason":"NotFound"' in e.body.replace(" ", ""), e.body)

try:
    v1.create_namespaced_pod(NS, pod)
    check("creating it again is a 409 AlreadyExists", False)
except client.exceptions.ApiException as e:
    check("creating it again is a 409 AlreadyExists",
          e.status == 409 and "AlreadyExists" in e.body, e.body)

v1.delete_namespaced_pod("pyp", NS, grace_period_seconds=0,
                         propagation_policy="Foreground")
gone = False
for _ in range(100):
    try:
        v1.read_namespaced_pod("pyp", NS)
        time.sleep(0.1)
    except client.exceptions.ApiException as e:
        gone = e.status == 404
        break
check("delete (Foreground, grace 0): the pod goes", gone)
sys.exit(1 if failed else 0)
