"""kubefake/cluster.py - the fake cluster: store, controllers and their glue.

What happens on a create, an update and a delete beyond storing: pods go
to the pod controller, namespaces get a default ServiceAccount, deletions
follow DeleteOptions (grace period for pods, propagationPolicy Foreground /
Background / Orphan, preconditions, finalizers) and the garbage collector
deletes the dependents named by ownerReferences.  The first objects: the
namespaces default, kube-system and kube-public, the cluster-admin
ClusterRole bound to group system:masters, one Node, and the RuntimeClasses
given on the command line.
"""
import os
import stat
import sys
import threading
import time

from .auth import Authenticator, Authorizer
from .errors import ApiError, not_found
from .faults import Faults
from .labelsel import labels_match, parse_labels
from .pods import NODE, PodController
from .resources import Registry
from .store import Store, now_rfc3339

TERMINAL = ("Succeeded", "Failed")


def selector_string(sel):
    reqs = ["%s=%s" % (k, v) for k, v in ((sel or {}).get("matchLabels") or {}).items()]
    for e in (sel or {}).get("matchExpressions") or []:
        op = e.get("operator")
        if op in ("In", "NotIn"):
            reqs.append("%s %s (%s)" % (e["key"], op.lower(), ",".join(e.get("values") or [])))
        elif op == "Exists":
            reqs.append(e["key"])
        elif op == "DoesNotExist":
            reqs.append("!" + e["key"])
    return ",".join(reqs)


class Cluster:
    def __init__(self, args):
        self.args = args
        self.stopping = False
        self.log_lock = threading.Lock()
        self.reg = Registry(agent_sandbox=args.agent_sandbox)
        self.store = Store(window=args.watch_window)
        self.auth = Authenticator(args.token_file)
        self.authz = Authorizer(self.store, self.reg)
        self.faults = Faults(args.seed)
        self.pods = PodController(self.store, self.reg, args, self.log, self.auth)
        self.admission_lock = threading.Lock()
        self.counts_lock = threading.Lock()
        self.counts = {}
        self.address = "127.0.0.1:0"
        self.agent = None
        if args.agent_sandbox:
            from .agentsandbox import AgentSandbox
            self.agent = AgentSandbox(self)
            self.pods.on_change = self.agent.kick.set
        self.bootstrap()

    def log(self, msg):
        if self.args.verbose:
            with self.log_lock:
                t = time.time()
                sys.stderr.write("%s.%03d kube-fake: %s\n" % (time.strftime("%H:%M:%S", time.localtime(t)),
                                                              int(t % 1 * 1000), msg))
                sys.stderr.flush()

    def count(self, verb, what):
        with self.counts_lock:
            k = "%s %s" % (verb, what)
            self.counts[k] = self.counts.get(k, 0) + 1

    def request_counts(self):
        with self.counts_lock:
            return dict(self.counts)

    # -- first objects --

    def _put(self, group, plural, ns, obj):
        res = self.reg.get(group, plural)
        out = self.store.create(res, ns, obj)
        self.created(res, out)
        return out

    def bootstrap(self):
        for ns in ["default", "kube-system", "kube-public"] + list(self.args.namespace or []):
            self._put("", "namespaces", "", {"metadata": {"name": ns},
                                              "spec": {"finalizers": ["kubernetes"]},
                                              "status": {"phase": "Active"}})
        rbac = "rbac.authorization.k8s.io"
        self._put(rbac, "clusterroles", "", {"metadata": {"name": "cluster-admin"}, "rules": [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]}]})
        self._put(rbac, "clusterrolebindings", "", {
            "metadata": {"name": "cluster-admin"},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"apiGroup": rbac, "kind": "Group", "name": "system:masters"}]})
        self._put("", "nodes", "", {"metadata": {"name": NODE, "labels": {
            "kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux"}},
            "status": {"capacity": {"cpu": self.args.node_cpu, "memory": self.args.node_memory,
                                    "pods": str(self.args.node_pods)},
                       "allocatable": {"cpu": self.args.node_cpu, "memory": self.args.node_memory,
                                       "pods": str(self.args.node_pods)},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.4-fake",
                                    "containerRuntimeVersion": "kube-fake://1"}}})
        self._put(rbac, "clusterroles", "", {"metadata": {"name": "system:basic-user"}, "rules": [
            {"apiGroups": ["authorization.k8s.io"],
             "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
             "verbs": ["create"]}]})
        self._put(rbac, "clusterrolebindings", "", {
            "metadata": {"name": "system:basic-user"},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "system:basic-user"},
            "subjects": [{"apiGroup": rbac, "kind": "Group", "name": "system:authenticated"}]})
        for rc in [c for c in (self.args.runtime_classes or "").split(",") if c]:
            self._put("node.k8s.io", "runtimeclasses", "", {"metadata": {"name": rc},
                                                              "handler": rc.replace("-", "_")})
        if self.agent:
            self.agent.bootstrap()

    # -- hooks --

    def created(self, res, obj):
        if res.kind == "Pod":
            self.pods.created(obj)
        elif res.kind == "Namespace":
            sa = self.reg.get("", "serviceaccounts")
            name = obj["metadata"]["name"]
            if self.store.get(sa, name, "default") is None:
                self.store.create(sa, name, {"metadata": {"name": "default"}})
        if self.agent:
            self.agent.created(res, obj)
        self._dangling(res, obj)

    def _dangling(self, res, obj):
        """The garbage collector's rule for a new dependent: when its owner is
        gone (or going in the foreground), it goes too.  A controller acting
        on a stale view (a pod made for a Sandbox just deleted) leaves no
        orphan behind, as on a cluster."""
        md = obj["metadata"]
        for ref in md.get("ownerReferences") or []:
            ores = self.reg.by_kind(ref.get("apiVersion"), ref.get("kind"))
            if ores is None:
                continue
            owner = self.store.peek(ores, md.get("namespace", "") if ores.namespaced else "",
                                    ref.get("name"))
            if owner is not None and owner["metadata"]["uid"] == ref.get("uid") and \
                    "foregroundDeletion" not in (owner["metadata"].get("finalizers") or []):
                continue
            self.log("gc: %s %s/%s: its owner %s %s is gone" % (res.kind, md.get("namespace", ""),
                                                               md["name"], ref.get("kind"),
                                                               ref.get("name")))

            def run(ns=md.get("namespace", ""), name=md["name"]):
                try:
                    self.delete(res, ns, name, {"propagationPolicy": "Background",
                                                "gracePeriodSeconds": 0})
                except ApiError:
                    pass
            threading.Thread(target=run, daemon=True).start()
            return

    def updated(self, res, obj):
        if self.agent:
            self.agent.updated(res, obj)

    def agent_admit(self, res, ns, obj):
        if self.agent:
            self.agent.admit(res, ns, obj)

    # -- deletion --

    def delete(self, res, ns, name, opts):
        """(answer, status code) of a DELETE."""
        obj = self.store.get(res, ns, name)
        if obj is None:
            raise not_found(res, name)
        pre = opts.get("preconditions") or {}
        md = obj["metadata"]
        if pre.get("uid") and pre["uid"] != md["uid"]:
            raise ApiError(409, "Conflict", "Precondition failed: UID in precondition: %s, UID "
                           "in object meta: %s" % (pre["uid"], md["uid"]),
                           details={"name": name, "kind": res.plural})
        if pre.get("resourceVersion") and pre["resourceVersion"] != md["resourceVersion"]:
            raise ApiError(409, "Conflict", "Precondition failed: ResourceVersion in "
                           "precondition: %s, ResourceVersion in object meta: %s"
                           % (pre["resourceVersion"], md["resourceVersion"]),
                           details={"name": name, "kind": res.plural})
        if "All" in (opts.get("dryRun") or []):
            return obj, 200
        policy = opts.get("propagationPolicy") or "Background"
        if policy not in ("Foreground", "Background", "Orphan"):
            raise ApiError(422, "Invalid", 'DeleteOptions.meta.k8s.io "" is invalid: '
                           'propagationPolicy: Unsupported value: "%s": supported values: '
                           '"Foreground", "Background", "Orphan"' % policy)
        if res.kind == "Pod":
            return self._delete_pod(res, ns, name, obj, opts, policy), 200
        if res.kind == "Namespace":
            return self._delete_namespace(res, name), 200
        if policy == "Foreground" and self._dependents(md["uid"]):
            def mark(o):
                o["metadata"]["deletionTimestamp"] = now_rfc3339()
                o["metadata"]["deletionGracePeriodSeconds"] = 0
                fz = o["metadata"].setdefault("finalizers", [])
                if "foregroundDeletion" not in fz:
                    fz.append("foregroundDeletion")
            out = self.store.mutate(res, ns, name, mark)
            threading.Thread(target=self._foreground, args=(res, ns, name, md["uid"]),
                             daemon=True).start()
            return out, 200
        if md.get("finalizers"):
            def mark(o):
                o["metadata"].setdefault("deletionTimestamp", now_rfc3339())
                o["metadata"]["deletionGracePeriodSeconds"] = 0
            return self.store.mutate(res, ns, name, mark), 200
        gone = self.store.remove(res, ns, name, md["uid"])
        if self.agent:
            self.agent.deleted(res, gone or obj)
        if policy != "Orphan":
            self._collect(md["uid"])
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": {"name": name, "group": res.group, "kind": res.plural,
                            "uid": md["uid"]}}, 200

    def _delete_pod(self, res, ns, name, obj, opts, policy):
        md = obj["metadata"]
        grace = opts.get("gracePeriodSeconds")
        if grace is None:
            grace = obj["spec"].get("terminationGracePeriodSeconds", 30)
        grace = max(0, int(grace))
        if not obj["spec"].get("nodeName") or obj["status"].get("phase") in TERMINAL:
            grace = 0
        if md.get("deletionTimestamp") and grace >= md.get("deletionGracePeriodSeconds", 0):
            return obj

        def mark(o):
            o["metadata"]["deletionTimestamp"] = now_rfc3339(time.time() + grace)
            o["metadata"]["deletionGracePeriodSeconds"] = grace
            if policy == "Foreground":
                fz = o["metadata"].setdefault("finalizers", [])
                if "foregroundDeletion" not in fz:
                    fz.append("foregroundDeletion")
        out = self.store.mutate(res, ns, name, mark)
        self.pods.delete(out, grace)
        if policy != "Orphan":
            self._collect(md["uid"])
        return out

    def _delete_namespace(self, res, name):
        def mark(o):
            o["metadata"]["deletionTimestamp"] = now_rfc3339()
            o["metadata"]["deletionGracePeriodSeconds"] = 0
            o["status"]["phase"] = "Terminating"
        out = self.store.mutate(res, "", name, mark)

        def empty():
            for r in self.reg.all:
                if not r.namespaced:
                    continue
                for o in self.store.all_of(r, name):
                    try:
                        self.delete(r, name, o["metadata"]["name"], {"gracePeriodSeconds": 0})
                    except ApiError:
                        pass
            pods = self.reg.get("", "pods")
            for _ in range(200):
                if not self.store.all_of(pods, name):
                    break
                time.sleep(0.05)
            self.store.remove(res, "", name)
        threading.Thread(target=empty, daemon=True).start()
        return out

    def _dependents(self, uid):
        out = []
        for r in self.reg.all:
            for o in self.store.all_of(r):
                if any(ref.get("uid") == uid for ref in o["metadata"].get("ownerReferences") or []):
                    out.append((r, o))
        return out

    def _collect(self, uid):
        """The garbage collector: dependents of a deleted owner go too."""
        def run():
            for r, o in self._dependents(uid):
                self.log("gc: %s %s/%s: its owner is gone" % (r.kind, o["metadata"].get("namespace", ""),
                                                             o["metadata"]["name"]))
                try:
                    self.delete(r, o["metadata"].get("namespace", ""), o["metadata"]["name"],
                                {"propagationPolicy": "Background"})
                except ApiError:
                    pass
        threading.Thread(target=run, daemon=True).start()

    def _foreground(self, res, ns, name, uid):
        deps = self._dependents(uid)
        self.log("gc: %s %s/%s goes in the foreground after %s"
                 % (res.kind, ns, name, ", ".join("%s %s" % (r.kind, o["metadata"]["name"])
                                                  for r, o in deps) or "nothing"))
        for r, o in deps:
            try:
                self.delete(r, o["metadata"].get("namespace", ""), o["metadata"]["name"],
                            {"propagationPolicy": "Foreground"})
            except ApiError:
                pass
        # A deleting owner gets no new dependents: wait for these (each
        # waits for its own before it goes), not a scan of everything.
        def left():
            for r, o in deps:
                md = o["metadata"]
                cur = self.store.peek(r, md.get("namespace", ""), md["name"])
                if cur is not None and cur["metadata"]["uid"] == md["uid"]:
                    return True
            return False
        for _ in range(600):
            if not left():
                break
            time.sleep(0.05)

        def unfinalize(o):
            fz = o["metadata"].get("finalizers") or []
            if "foregroundDeletion" in fz:
                fz.remove("foregroundDeletion")
        self.store.mutate(res, ns, name, unfinalize)

    # -- pods --

    def container_of(self, pod, cname):
        run = self.pods.run_of(pod)
        if run is None:
            return None
        with run.lock:
            c = run.container
        return c if c is not None and c.name == cname else None

    def missing_program(self, cont, prog):
        """Why the container cannot run prog (the runtime's words), or None."""
        root = "/proc/%d/root" % cont.pid
        cands = [prog] if "/" in prog else \
            [os.path.join(d or "/", prog) for d in cont.env.get("PATH", "").split(":")]
        why = "executable file not found in $PATH" if "/" not in prog else \
            "no such file or directory"
        for c in cands:
            host = root + (c if c.startswith("/") else "/" + c)
            try:
                st = os.stat(host)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                why = "is a directory" if "/" in prog else why
                continue
            if not st.st_mode & 0o111:
                why = "permission denied"
                continue
            return None
        return why

    def pods_log(self, pod, cname):
        run = self.pods.run_of(pod)
        c = run.container if run else None
        if c is None or not c.log_path:
            return b""
        try:
            with open(c.log_path, "rb") as f:
                return f.read()
        except OSError:
            return b""

    def check_disruption(self, pod):
        pdbs = self.store.all_of(self.reg.get("policy", "poddisruptionbudgets"),
                                 pod["metadata"]["namespace"])
        pods = self.store.all_of(self.reg.get("", "pods"), pod["metadata"]["namespace"])
        for b in pdbs:
            sel = parse_labels(selector_string((b.get("spec") or {}).get("selector")))
            if not labels_match(sel, pod["metadata"].get("labels")):
                continue
            matching = [p for p in pods if labels_match(sel, p["metadata"].get("labels"))]
            healthy = [p for p in matching if p["status"].get("phase") == "Running"
                       and not p["metadata"].get("deletionTimestamp")]
            spec = b.get("spec") or {}
            need = spec.get("minAvailable")
            if need is None and spec.get("maxUnavailable") is not None:
                mu = spec["maxUnavailable"]
                mu = -(-len(matching) * int(str(mu).rstrip("%")) // 100) if str(mu).endswith("%") else int(mu)
                need = len(matching) - mu
            elif isinstance(need, str) and need.endswith("%"):
                need = -(-len(matching) * int(need[:-1]) // 100)
            need = int(need or 0)
            if len(healthy) - 1 < need:
                raise ApiError(429, "TooManyRequests", "Cannot evict pod as it would violate the "
                               "pod's disruption budget.",
                               details={"causes": [{"reason": "DisruptionBudget",
                                                    "message": "The disruption budget %s needs %d "
                                                               "healthy pods and has %d currently"
                                                               % (b["metadata"]["name"], need,
                                                                  len(healthy))}]})

    # -- state for tests --

    def state(self):
        pods = []
        by_ns = processes_by_ns()
        for p in self.store.all_of(self.reg.get("", "pods")):
            run = self.pods.run_of(p)
            c = run.container if run else None
            pods.append({"namespace": p["metadata"]["namespace"], "name": p["metadata"]["name"],
                         "phase": p["status"].get("phase"),
                         "deleting": bool(p["metadata"].get("deletionTimestamp")),
                         "labels": p["metadata"].get("labels") or {},
                         "pid": c.pid if c else None,
                         "processes": processes_in(c.pid, by_ns) if c and c.running() else [],
                         "own_network": bool(c.own_network) if c else None})
        return {"pods": pods, "injected": self.faults.counts(),
                "resourceVersion": self.store.current_rv(), "requests": self.request_counts()}

    def shutdown(self):
        self.stopping = True
        self.pods.shutdown()


def processes_in(pid, by_ns):
    """Command lines of the processes in pid's PID namespace."""
    try:
        return by_ns.get(os.readlink("/proc/%d/ns/pid" % pid), [])
    except OSError:
        return []


def processes_by_ns():
    """{PID namespace: command lines of its processes}: one look at /proc
    for all pods (a look per pod was quadratic with hundreds of pods)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            ns = os.readlink("/proc/%s/ns/pid" % d)
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if cmd:
            out.setdefault(ns, []).append(cmd)
    return out
