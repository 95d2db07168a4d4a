"""kubefake/pods.py - what the scheduler and the kubelet do with a pod.

One node ("fake-node") with a capacity in pods, CPU and memory.  A new pod
waits the scheduling delay, then binds to the node if its requests fit
(else PodScheduled=False, reason Unschedulable, retried every second),
"pulls" its image (an image matching --missing-images fails with
ErrImagePull, then ImagePullBackOff; a malformed name with
InvalidImageName), checks runAsNonRoot, makes its emptyDir volumes and
starts its first container (runtime.py).  Status follows what the kubelet
reports: phase, conditions (PodScheduled, Initialized, ContainersReady,
Ready), containerStatuses with waiting/running/terminated states, startTime,
hostIP, podIP.  activeDeadlineSeconds ends a pod with reason
DeadlineExceeded; a node-pressure eviction (POST /_fake/evict) with reason
Evicted.  Deleting a pod kills its container (SIGTERM, the grace period,
SIGKILL) and then removes the object; a pod never bound is removed at once.

Only the first container of a pod runs (init containers, sidecars and
probes are not run); restartPolicy Always/OnFailure restarts it with a
back-off.  Every image is this host's file system, and an image without a
command sleeps (the fake's images have no entrypoints).
"""
import os
import re
import shutil
import signal
import threading
import time
import uuid

from . import quantity
from .labelsel import labels_match, parse_labels
from .runtime import Container
from .store import now_rfc3339

NODE = "fake-node"
HOST_IP = "10.0.0.10"
IMAGE_REF = re.compile(r"^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)"
                       r"[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
                       r"(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SLEEP_FOREVER = ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]


def _cond(ctype, status, reason=None, message=None):
    c = {"type": ctype, "status": status, "lastProbeTime": None,
         "lastTransitionTime": now_rfc3339()}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def set_condition(pod, ctype, status, reason=None, message=None):
    conds = pod["status"].setdefault("conditions", [])
    for c in conds:
        if c["type"] == ctype:
            if c["status"] != status:
                c["lastTransitionTime"] = now_rfc3339()
            c["status"] = status
            for k, v in (("reason", reason), ("message", message)):
                if v:
                    c[k] = v
                else:
                    c.pop(k, None)
            return
    conds.append(_cond(ctype, status, reason, message))


class PodRun:
    """The node's state of one pod."""

    def __init__(self, uid, ns, name):
        self.uid, self.ns, self.name = uid, ns, name
        self.container = None
        self.deleting = False
        self.done = threading.Event()       # the pod reached a terminal state or went
        self.bound = False
        self.lock = threading.Lock()
        self.ip = None
        self.restarts = 0


class PodController:
    def __init__(self, store, reg, args, log, auth=None):
        self.store, self.reg, self.args, self.log = store, reg, args, log
        self.res = reg.get("", "pods")
        self.runs = {}                       # uid -> PodRun
        self.lock = threading.Lock()
        self.missing = re.compile(args.missing_images) if args.missing_images else None
        self.next_ip = 2
        self.auth = auth
        self.on_change = None        # told of every status change (agent-sandbox)

    # -- helpers --

    def run_of(self, pod):
        with self.lock:
            return self.runs.get(pod["metadata"]["uid"])

    def _update(self, run, fn):
        def guarded(p):
            if p["metadata"]["uid"] != run.uid:
                return False
            return fn(p)
        out = self.store.mutate(self.res, run.ns, run.name, guarded)
        if self.on_change:
            self.on_change()
        return out

    def _alloc_ip(self):
        with self.lock:
            self.next_ip += 1
            n = self.next_ip
        return "10.244.%d.%d" % ((n >> 8) & 255, n & 255)

    # -- lifecycle --

    def created(self, pod):
        md = pod["metadata"]
        run = PodRun(md["uid"], md["namespace"], md["name"])
        with self.lock:
            self.runs[run.uid] = run
        threading.Thread(target=self._lifecycle, args=(run,), daemon=True,
                         name="pod-" + md["name"]).start()

    def _fits(self, pod):
        """None, or the scheduler's reason it does not fit."""
        want = {"cpu": 0, "memory": 0}
        for c in pod["spec"].get("containers") or []:
            for k, v in ((c.get("resources") or {}).get("requests") or {}).items():
                if k in want:
                    want[k] += quantity.parse(v)
        used = {"cpu": 0, "memory": 0, "pods": 0}
        for p in self.store.all_of(self.res):
            if p["spec"].get("nodeName") != NODE or p["status"].get("phase") in ("Succeeded", "Failed"):
                continue
            used["pods"] += 1
            for c in p["spec"].get("containers") or []:
                for k, v in ((c.get("resources") or {}).get("requests") or {}).items():
                    if k in want:
                        used[k] += quantity.parse(v)
        cap = {"cpu": quantity.parse(self.args.node_cpu), "memory": quantity.parse(self.args.node_memory),
               "pods": self.args.node_pods}
        why = []
        if used["pods"] + 1 > cap["pods"]:
            why.append("Too many pods")
        if used["cpu"] + want["cpu"] > cap["cpu"]:
            why.append("Insufficient cpu")
        if used["memory"] + want["memory"] > cap["memory"]:
            why.append("Insufficient memory")
        if not why:
            return None
        return ("0/1 nodes are available: %s. preemption: 0/1 nodes are available: 1 No "
                "preemption victims found for incoming pod." % ", ".join("1 " + w for w in why))

    def _lifecycle(self, run):
        try:
            self._lifecycle2(run)
        except Exception as e:   # a bug of the fake: say so, do not hang the pod
            self.log("pod %s/%s: lifecycle failed: %r" % (run.ns, run.name, e))
            raise

    def _wait(self, run, seconds):
        """Sleeps; True when the pod is being deleted meanwhile."""
        end = time.time() + seconds
        while time.time() < end:
            if run.deleting:
                return True
            time.sleep(min(0.05, max(0, end - time.time())))
        return run.deleting

    def _lifecycle2(self, run):
        if self._wait(run, self.args.schedule_delay):
            return self._finish_delete(run)
        # Scheduling.
        while True:
            pod = self.store.get(self.res, run.ns, run.name)
            if pod is None or pod["metadata"]["uid"] != run.uid:
                return
            why = self._fits(pod)
            if why is None:
                break

            def unsched(p, why=why):
                p["status"]["phase"] = "Pending"
                set_condition(p, "PodScheduled", "False", "Unschedulable", why)
            self._update(run, unsched)
            if self._wait(run, 1.0):
                return self._finish_delete(run)
        run.ip = self._alloc_ip()

        def bind(p):
            p["spec"]["nodeName"] = NODE
            st = p["status"]
            st["hostIP"] = HOST_IP
            st["hostIPs"] = [{"ip": HOST_IP}]
            st["startTime"] = now_rfc3339()
            set_condition(p, "PodScheduled", "True")
            set_condition(p, "Initialized", "True")
            set_condition(p, "Ready", "False", "ContainersNotReady",
                          "containers with unready status: [%s]" % self._names(p))
            set_condition(p, "ContainersReady", "False", "ContainersNotReady",
                          "containers with unready status: [%s]" % self._names(p))
            st["containerStatuses"] = [self._cstatus(c, {"waiting": {"reason": "ContainerCreating"}})
                                       for c in p["spec"]["containers"]]
        pod = self._update(run, bind)
        if pod is None:
            return
        run.bound = True
        started = time.time()
        deadline = pod["spec"].get("activeDeadlineSeconds")
        threading.Thread(target=self._deadline, args=(run, started, deadline), daemon=True).start() \
            if deadline else None
        c0 = pod["spec"]["containers"][0]
        image = c0.get("image", "")
        if not IMAGE_REF.match(image):
            self._waiting(run, "InvalidImageName",
                          'Failed to apply default image tag "%s": couldn\'t parse image name "%s": '
                          "invalid reference format" % (image, image))
            return self._park(run)
        if self._wait(run, self.args.pull_delay):
            return self._finish_delete(run)
        if self.missing and self.missing.search(image):
            self._waiting(run, "ErrImagePull",
                          'rpc error: code = NotFound desc = failed to pull and unpack image '
                          '"%s": failed to resolve reference "%s": not found' % (image, image))
            if self._wait(run, 1.0):
                return self._finish_delete(run)
            self._waiting(run, "ImagePullBackOff", 'Back-off pulling image "%s"' % image)
            return self._park(run)
        while True:
            pod = self.store.get(self.res, run.ns, run.name)
            if pod is None or run.deleting:
                return self._finish_delete(run)
            why = self._start(run, pod)
            if why is not None:
                return self._park(run)
            code = run.container.wait()
            if run.deleting:
                return self._finish_delete(run)
            if self._container_exited(run, code):
                return self._park(run)
            run.restarts += 1
            if self._wait(run, min(10, 0.5 * 2 ** run.restarts)):
                return self._finish_delete(run)

    def _names(self, p):
        return " ".join(c["name"] for c in p["spec"]["containers"])

    def _cstatus(self, c, state, ready=False, restarts=0, last=None):
        s = {"name": c["name"], "state": state, "lastState": last or {}, "ready": ready,
             "restartCount": restarts, "image": c.get("image", ""),
             "imageID": "", "started": "running" in state}
        if "running" in state or "terminated" in state:
            s["imageID"] = "docker.io/library/%s@sha256:%s" % (
                c.get("image", "").split(":")[0], uuid.uuid5(uuid.NAMESPACE_URL, c.get("image", "")).hex * 2)
            s["containerID"] = "containerd://" + uuid.uuid4().hex + uuid.uuid4().hex
        return s

    def _waiting(self, run, reason, message):
        def f(p):
            st = p["status"]
            st["containerStatuses"] = [self._cstatus(c, {"waiting": {"reason": reason, "message": message}})
                                       for c in p["spec"]["containers"]]
        self._update(run, f)

    def _park(self, run):
        """Waits for the pod's deletion (or its end), then finishes it."""
        while not run.deleting:
            if self.store.get(self.res, run.ns, run.name) is None:
                break
            time.sleep(0.1)
        self._finish_delete(run)

    def _env(self, pod, c):
        env = {"PATH": DEFAULT_PATH, "HOSTNAME": pod["metadata"]["name"],
               "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
               "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
               "HOME": "/root"}
        for e in c.get("env") or []:
            if "value" in e:
                env[e["name"]] = e["value"]
                continue
            ref = (e.get("valueFrom") or {}).get("fieldRef") or {}
            path = ref.get("fieldPath", "")
            vals = {"metadata.name": pod["metadata"]["name"],
                    "metadata.namespace": pod["metadata"]["namespace"],
                    "metadata.uid": pod["metadata"]["uid"],
                    "spec.nodeName": NODE, "spec.serviceAccountName": pod["spec"].get("serviceAccountName"),
                    "status.podIP": self._pod_ip(pod), "status.hostIP": HOST_IP}
            if path in vals:
                env[e["name"]] = vals[path] or ""
            elif path.startswith("metadata.labels['"):
                env[e["name"]] = (pod["metadata"].get("labels") or {}).get(path[17:-2], "")
            else:
                env[e["name"]] = ""
        return env

    def _pod_ip(self, pod):
        run = self.run_of(pod)
        return run.ip if run else None

    def isolated(self, pod):
        """True when a NetworkPolicy isolates the pod's egress and allows none."""
        netpol = self.reg.get("networking.k8s.io", "networkpolicies")
        labels = pod["metadata"].get("labels") or {}
        isolated, allowed = False, False
        for np in self.store.all_of(netpol, pod["metadata"]["namespace"]):
            spec = np.get("spec") or {}
            sel = spec.get("podSelector") or {}
            reqs = [("%s=%s" % (k, v)) for k, v in (sel.get("matchLabels") or {}).items()]
            for e in sel.get("matchExpressions") or []:
                op = {"In": "in", "NotIn": "notin"}.get(e.get("operator"))
                if op:
                    reqs.append("%s %s (%s)" % (e["key"], op, ",".join(e.get("values") or [])))
                elif e.get("operator") == "Exists":
                    reqs.append(e["key"])
                elif e.get("operator") == "DoesNotExist":
                    reqs.append("!" + e["key"])
            if not labels_match(parse_labels(",".join(reqs)), labels):
                continue
            types = spec.get("policyTypes") or (["Ingress", "Egress"] if "egress" in spec else ["Ingress"])
            if "Egress" in types:
                isolated = True
                if spec.get("egress"):
                    allowed = True
        return isolated and not allowed

    def _start(self, run, pod):
        spec = pod["spec"]
        c = spec["containers"][0]
        psc = spec.get("securityContext") or {}
        csc = c.get("securityContext") or {}
        uid = csc.get("runAsUser", psc.get("runAsUser"))
        gid = csc.get("runAsGroup", psc.get("runAsGroup"))
        non_root = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        if non_root and not uid:
            why = ("container has runAsNonRoot and image will run as root (pod: \"%s_%s(%s)\", "
                   "container: %s)" % (run.name, run.ns, run.uid, c["name"])) if uid is None else \
                  ("container's runAsUser breaks non-root policy (pod: \"%s_%s(%s)\", container: %s)"
                   % (run.name, run.ns, run.uid, c["name"]))
            self._waiting(run, "CreateContainerConfigError", why)
            return why
        pod_dir = os.path.join(self.args.state_dir, "%s_%s_%s" % (run.ns, run.name, run.uid[:8]))
        mounts = []
        vols = {v["name"]: v for v in spec.get("volumes") or []}
        for m in c.get("volumeMounts") or []:
            v = vols.get(m["name"], {})
            if "emptyDir" in v:
                host = os.path.join(pod_dir, "volumes", m["name"])
                os.makedirs(host, exist_ok=True)
                os.chmod(host, 0o777)
                mounts.append({"host": host, "path": m["mountPath"], "ro": bool(m.get("readOnly"))})
            # other volume types are not emulated: the mount point stays empty
        env = self._env(pod, c)
        if uid not in (None, 0) and not any(e.get("name") == "HOME" for e in c.get("env") or []):
            env["HOME"] = "/"   # the image's passwd has no home for an arbitrary uid
        command = list(c.get("command") or []) + list(c.get("args") or [])
        if not c.get("command"):
            command = SLEEP_FOREVER if not c.get("args") else command
        groups = [g for g in [psc.get("fsGroup")] + list(psc.get("supplementalGroups") or [])
                  if g is not None]
        cspec = {"command": command, "env": env, "uid": uid, "gid": gid if gid is not None else uid,
                 "groups": groups, "mounts": mounts, "workdir": c.get("workingDir") or "/",
                 "read_only_root": bool(csc.get("readOnlyRootFilesystem")),
                 "own_network": self.isolated(pod), "hostname": run.name,
                 "no_new_privs": csc.get("allowPrivilegeEscalation") is False,
                 "root_size": "256m"}
        if self._wait(run, 0):
            return "deleted"
        cont = Container(pod_dir, c["name"])
        why = cont.start(cspec)
        with run.lock:
            run.container = cont
        if why is not None:
            self.log("pod %s/%s: container did not start: %s" % (run.ns, run.name, why))

            def failed(p):
                now = now_rfc3339()
                st = p["status"]
                st["containerStatuses"] = [self._cstatus(
                    c, {"terminated": {"exitCode": 128, "reason": "StartError",
                                       "message": "failed to create containerd task: failed to "
                                                  "create shim task: OCI runtime create failed: "
                                                  "runc create failed: unable to start container "
                                                  "process: %s: unknown" % why,
                                       "startedAt": "1970-01-01T00:00:00Z", "finishedAt": now}},
                    restarts=run.restarts)]
                if spec.get("restartPolicy") == "Never":
                    st["phase"] = "Failed"
            self._update(run, failed)
            return why

        def running(p):
            now = now_rfc3339()
            st = p["status"]
            st["phase"] = "Running"
            st["podIP"] = run.ip
            st["podIPs"] = [{"ip": run.ip}]
            set_condition(p, "ContainersReady", "True")
            set_condition(p, "Ready", "True")
            last = (st.get("containerStatuses") or [{}])[0].get("state", {})
            st["containerStatuses"] = [self._cstatus(c, {"running": {"startedAt": now}}, True,
                                                     run.restarts,
                                                     last if "terminated" in last else None)]
        self._update(run, running)
        self.log("pod %s/%s: running (pid %s%s)" % (run.ns, run.name, cont.pid,
                                                     ", own network" if cspec["own_network"] else ""))
        return None

    def _container_exited(self, run, code):
        """Records the exit; True when the pod has ended for good."""
        def f(p):
            spec = p["spec"]
            c = spec["containers"][0]
            now = now_rfc3339()
            st = p["status"]
            prev = (st.get("containerStatuses") or [{}])[0]
            started = (prev.get("state", {}).get("running") or {}).get("startedAt", now)
            term = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                    "startedAt": started, "finishedAt": now,
                    "containerID": prev.get("containerID", "")}
            rp = spec.get("restartPolicy")
            final = rp == "Never" or (rp == "OnFailure" and code == 0)
            if p["status"].get("reason") in ("DeadlineExceeded", "Evicted"):
                final = True
            set_condition(p, "Ready", "False", "PodCompleted" if final else "ContainersNotReady")
            set_condition(p, "ContainersReady", "False", "PodCompleted" if final else "ContainersNotReady")
            if final:
                st["containerStatuses"] = [self._cstatus(c, {"terminated": term}, restarts=run.restarts)]
                if st.get("phase") != "Failed":
                    st["phase"] = "Succeeded" if code == 0 else "Failed"
            else:
                st["containerStatuses"] = [self._cstatus(
                    c, {"waiting": {"reason": "CrashLoopBackOff",
                                    "message": "back-off restarting failed container"}},
                    restarts=run.restarts + 1, last={"terminated": term})]
        self._update(run, f)
        pod = self.store.get(self.res, run.ns, run.name)
        if pod is None:
            return True
        return pod["status"].get("phase") in ("Succeeded", "Failed")

    def _deadline(self, run, started, seconds):
        while time.time() < started + seconds:
            if run.deleting or run.done.wait(min(0.5, max(0.0, started + seconds - time.time()))):
                return
        self.end(run, "DeadlineExceeded", "Pod was active on the node longer than the "
                                          "specified deadline")

    def end(self, run, reason, message):
        """The kubelet ends a pod (deadline, eviction): containers killed,
        phase Failed with the reason."""
        def f(p):
            if p["status"].get("phase") in ("Succeeded", "Failed"):
                return False
            p["status"]["phase"] = "Failed"
            p["status"]["reason"] = reason
            p["status"]["message"] = message
        if self._update(run, f) is None:
            return False
        with run.lock:
            cont = run.container
        if cont is not None:
            cont.kill()
        else:
            self._container_exited(run, 137)
        return True

    def evict(self, ns, name):
        pod = self.store.get(self.res, ns, name)
        if pod is None:
            return False
        run = self.run_of(pod)
        if run is None:
            return False
        return self.end(run, "Evicted", "The node was low on resource: memory. Threshold "
                                        "quantity: 100Mi, available: 12Mi. Container %s was using "
                                        "1Gi, request is 0, has larger consumption of memory."
                        % pod["spec"]["containers"][0]["name"])

    # -- deletion --

    def delete(self, pod, grace):
        """A DELETE was accepted (the object carries deletionTimestamp)."""
        run = self.run_of(pod)
        if run is None:
            self.store.remove(self.res, pod["metadata"]["namespace"], pod["metadata"]["name"],
                              pod["metadata"]["uid"])
            return
        run.deleting = True
        threading.Thread(target=self._terminate, args=(run, grace), daemon=True).start()

    def _terminate(self, run, grace):
        with run.lock:
            cont = run.container
        if cont is not None and cont.running():
            if grace > 0:
                cont.signal(signal.SIGTERM)
                end = time.time() + grace
                while cont.running() and time.time() < end:
                    time.sleep(0.05)
            cont.kill()
        # The lifecycle thread finishes the deletion when it sees it; make
        # sure it happens even when that thread has already ended.
        self._finish_delete(run)

    def _finish_delete(self, run):
        with run.lock:
            if run.done.is_set():
                return
            run.done.set()
            cont = run.container
        if cont is not None:
            cont.kill()
        pod = self.store.get(self.res, run.ns, run.name)
        if pod is not None and pod["metadata"]["uid"] == run.uid and \
                pod["metadata"].get("deletionTimestamp"):
            self.store.remove(self.res, run.ns, run.name, run.uid)
        elif pod is not None and pod["metadata"]["uid"] == run.uid:
            # Ended, not deleted: keep the object (and the run, for logs).
            run.done.clear()
            return
        with self.lock:
            self.runs.pop(run.uid, None)
        if cont is not None:
            cont.cleanup()
        shutil.rmtree(os.path.join(self.args.state_dir, "%s_%s_%s" % (run.ns, run.name, run.uid[:8])),
                      ignore_errors=True)

    def shutdown(self):
        with self.lock:
            runs = list(self.runs.values())
        for r in runs:
            r.deleting = True
            with r.lock:
                c = r.container
            if c is not None:
                c.kill()
