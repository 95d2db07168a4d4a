"""kubefake/agentsandbox.py - the kubernetes-sigs/agent-sandbox controller, as
much as sandboxes need.

Resources (resources.py, with --agent-sandbox): agents.x-k8s.io/v1beta1
Sandbox, extensions.agents.x-k8s.io/v1beta1 SandboxTemplate, SandboxWarmPool
and SandboxClaim.  What the controller does here, after the upstream
controllers (api/v1beta1, extensions/api/v1beta1):

  * a Sandbox owns one Pod of the same name made from spec.podTemplate; the
    Sandbox's annotation agents.x-k8s.io/pod-name names it; status.conditions
    Ready follows the pod (DependenciesReady / DependenciesNotReady), and
    status.podIPs; spec.shutdownTime passed deletes it (shutdownPolicy
    Delete) or leaves it stopped (Retain: the pod goes);
  * a SandboxWarmPool keeps spec.replicas Sandboxes made from its
    SandboxTemplate (label agents.x-k8s.io/warm-pool-sandbox=<pool>,
    launch-type warm) and reports status.replicas and readyReplicas;
  * a SandboxClaim adopts a Ready Sandbox of its warmPoolRef (the warm label
    goes, the claim becomes the owner, additionalPodMetadata is added to the
    pod) or, with none ready or with env set, makes a cold one from the
    pool's template; status.sandbox.name and condition Ready say when it is
    usable; lifecycle.shutdownTime ends it; deleting the claim deletes its
    Sandbox (and so the pod) unless shutdownPolicy is Retain.

Not emulated: volumeClaimTemplates, services, suspend (operatingMode),
NetworkPolicy management by templates, the router, v1alpha1.
"""
import copy
import threading
import time

from .errors import ApiError

AGENTS = "agents.x-k8s.io"
EXT = "extensions.agents.x-k8s.io"
L_POOL = "agents.x-k8s.io/warm-pool-sandbox"
L_LAUNCH = "agents.x-k8s.io/launch-type"
L_TEMPLATE = "agents.x-k8s.io/sandbox-template-ref"
L_SANDBOX = "agents.x-k8s.io/sandbox-name-hash"
A_POD = "agents.x-k8s.io/pod-name"
CRDS = [("sandboxes", AGENTS, "Sandbox"), ("sandboxtemplates", EXT, "SandboxTemplate"),
        ("sandboxwarmpools", EXT, "SandboxWarmPool"), ("sandboxclaims", EXT, "SandboxClaim")]


def rfc3339_to_epoch(s):
    if not s:
        return None
    try:
        import calendar
        return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def cond(ctype, status, reason, message=""):
    from .store import now_rfc3339
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": now_rfc3339(), "observedGeneration": 1}


class AgentSandbox:
    def __init__(self, cluster):
        self.c = cluster
        self.reg = cluster.reg
        self.sb = self.reg.get(AGENTS, "sandboxes")
        self.tmpl = self.reg.get(EXT, "sandboxtemplates")
        self.pool = self.reg.get(EXT, "sandboxwarmpools")
        self.claim = self.reg.get(EXT, "sandboxclaims")
        self.pods = self.reg.get("", "pods")
        self.lock = threading.RLock()
        self.kick = threading.Event()
        threading.Thread(target=self.loop, daemon=True, name="agent-sandbox").start()

    def bootstrap(self):
        crd = self.reg.get("apiextensions.k8s.io", "customresourcedefinitions")
        for plural, group, kind in CRDS:
            self.c.store.create(crd, "", {
                "metadata": {"name": "%s.%s" % (plural, group)},
                "spec": {"group": group, "scope": "Namespaced",
                         "names": {"plural": plural, "kind": kind},
                         "versions": [{"name": "v1beta1", "served": True, "storage": True}]}})

    # -- hooks from the API --

    def admit(self, res, ns, obj):
        if res.key == self.claim.key:
            spec = obj.get("spec") or {}
            if not (spec.get("warmPoolRef") or {}).get("name"):
                raise ApiError(422, "Invalid", 'SandboxClaim.extensions.agents.x-k8s.io "%s" is '
                               'invalid: spec.warmPoolRef.name: Required value'
                               % (obj.get("metadata") or {}).get("name", ""))
        if res.key == self.pool.key:
            spec = obj.get("spec") or {}
            if not (spec.get("sandboxTemplateRef") or {}).get("name"):
                raise ApiError(422, "Invalid", 'SandboxWarmPool.extensions.agents.x-k8s.io "%s" is '
                               'invalid: spec.sandboxTemplateRef.name: Required value'
                               % (obj.get("metadata") or {}).get("name", ""))
            spec.setdefault("replicas", 1)

    def created(self, res, obj):
        if res.key in (self.sb.key, self.pool.key, self.claim.key, self.tmpl.key, self.pods.key):
            self.kick.set()

    updated = created

    def deleted(self, res, obj):
        self.kick.set()

    # -- the loop --

    def loop(self):
        while not self.c.stopping:
            # A real controller's work queue coalesces events: so does this
            # (a pass over everything per event would be quadratic under load).
            if self.kick.wait(0.2):
                time.sleep(0.02)
            self.kick.clear()
            try:
                with self.lock:
                    self.reconcile()
            except Exception as e:   # keep reconciling; say what went wrong
                self.c.log("agent-sandbox: reconcile failed: %r" % e)

    def reconcile(self):
        for s in self.c.store.all_of(self.sb):
            self.sandbox(s)
        # One look at the Sandboxes for the pools and claims of this pass
        # (as an informer's cache); `taken` are those adopted in it.
        sbs = self.c.store.all_of(self.sb)
        taken = set()
        for p in self.c.store.all_of(self.pool):
            self.warm_pool(p, sbs)
        for cl in self.c.store.all_of(self.claim):
            self.claim_one(cl, sbs, taken)

    # -- sandboxes --

    def sandbox(self, s):
        md = s["metadata"]
        ns, name = md["namespace"], md["name"]
        if md.get("deletionTimestamp"):
            return
        spec = s.get("spec") or {}
        end = rfc3339_to_epoch(spec.get("shutdownTime"))
        if end is not None and time.time() >= end:
            if spec.get("shutdownPolicy", "Retain") == "Delete":
                self._delete(self.sb, ns, name)
            else:
                self._delete(self.pods, ns, name)
                self._status(self.sb, ns, name, [cond("Ready", "False", "SandboxExpired")], None)
            return
        pod = self.c.store.peek(self.pods, ns, name)
        if pod is None:
            cur = self.c.store.peek(self.sb, ns, name)
            if cur is None or cur["metadata"].get("deletionTimestamp"):
                return   # deleted since this pass's look at the Sandboxes
            if any(c.get("reason") == "SandboxExpired" for c in (s.get("status") or {}).get("conditions") or []):
                return
            tmpl = copy.deepcopy(spec.get("podTemplate") or {})
            pmd = tmpl.get("metadata") or {}
            labels = dict(pmd.get("labels") or {})
            labels.update({k: v for k, v in (md.get("labels") or {}).items()
                           if k.startswith("agents.x-k8s.io/")})
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "labels": labels,
                                "annotations": dict(pmd.get("annotations") or {}),
                                "ownerReferences": [{"apiVersion": "%s/v1beta1" % AGENTS,
                                                     "kind": "Sandbox", "name": name,
                                                     "uid": md["uid"], "controller": True,
                                                     "blockOwnerDeletion": True}]},
                   "spec": tmpl.get("spec") or {}}
            pod["spec"].setdefault("automountServiceAccountToken", False)
            try:
                with self.c.admission_lock:
                    from . import admission
                    admission.default_pod(pod)
                    admission.validate_pod(self.pods, pod)
                    out = self.c.store.create(self.pods, ns, pod)
                self.c.created(self.pods, out)
            except ApiError as e:
                self._status(self.sb, ns, name, [cond("Ready", "False", "ReconcilerError", e.message)], None)
                return

            def ann(o):
                o["metadata"].setdefault("annotations", {})[A_POD] = name
            self.c.store.mutate(self.sb, ns, name, ann)
            self.c.updated(self.sb, s)
            return
        phase = (pod.get("status") or {}).get("phase")
        ready = phase == "Running" and any(c.get("ready") for c in (pod.get("status") or {}).get("containerStatuses") or [])
        if phase in ("Succeeded", "Failed"):
            c = cond("Ready", "False", "PodSucceeded" if phase == "Succeeded" else "PodFailed")
        elif ready:
            c = cond("Ready", "True", "DependenciesReady", "Pod is Ready")
        else:
            c = cond("Ready", "False", "DependenciesNotReady", "Pod is not Ready")
        self._status(self.sb, ns, name, [c], (pod.get("status") or {}).get("podIPs"))

    def _status(self, res, ns, name, conds, ips, extra=None):
        def same(st):
            old = {c["type"]: (c["status"], c.get("reason")) for c in st.get("conditions") or []}
            new = {c["type"]: (c["status"], c.get("reason")) for c in conds}
            return old == new and st.get("podIPs") == ips and \
                all(st.get(k) == v for k, v in (extra or {}).items())

        cur = self.c.store.peek(res, ns, name)
        if cur is None or same(cur.get("status") or {}):
            return   # no copy, no write: most passes change nothing

        def f(o):
            st = o.setdefault("status", {})
            if same(st):
                return False
            st["conditions"] = conds
            if ips is not None:
                st["podIPs"] = [p["ip"] for p in ips] if ips and isinstance(ips[0], dict) else ips
            for k, v in (extra or {}).items():
                st[k] = v
        self.c.store.mutate(res, ns, name, f)

    def _delete(self, res, ns, name):
        try:
            self.c.delete(res, ns, name, {"propagationPolicy": "Background",
                                          "gracePeriodSeconds": 0})
        except ApiError:
            pass

    def _ready(self, s):
        return any(c["type"] == "Ready" and c["status"] == "True"
                   for c in (s.get("status") or {}).get("conditions") or [])

    def _new_sandbox(self, ns, tmpl, pool, launch, owner=None, extra_labels=None, env=None):
        import uuid
        name = "%s-%s" % ((pool or tmpl["metadata"]["name"])[:40], uuid.uuid4().hex[:5])
        pt = copy.deepcopy((tmpl.get("spec") or {}).get("podTemplate") or {})
        if env:
            for c in (pt.get("spec") or {}).get("containers") or []:
                c.setdefault("env", []).extend(copy.deepcopy(env))
        labels = {L_LAUNCH: launch, L_TEMPLATE: tmpl["metadata"]["name"]}
        if pool and launch == "warm":
            labels[L_POOL] = pool
        labels.update(extra_labels or {})
        s = {"metadata": {"name": name, "labels": labels},
             "spec": {"podTemplate": pt, "shutdownPolicy": "Delete"}}
        if owner:
            s["metadata"]["ownerReferences"] = [owner]
        out = self.c.store.create(self.sb, ns, s)
        self.c.created(self.sb, out)
        return out

    # -- warm pools --

    def warm_pool(self, p, sbs):
        md = p["metadata"]
        ns, name = md["namespace"], md["name"]
        if md.get("deletionTimestamp"):
            return
        spec = p.get("spec") or {}
        tname = (spec.get("sandboxTemplateRef") or {}).get("name")
        tmpl = self.c.store.peek(self.tmpl, ns, tname) if tname else None
        warm = [s for s in sbs if s["metadata"]["namespace"] == ns
                and (s["metadata"].get("labels") or {}).get(L_POOL) == name
                and not s["metadata"].get("deletionTimestamp")]
        want = int(spec.get("replicas", 1))
        if tmpl is not None:
            for _ in range(want - len(warm)):
                warm.append(self._new_sandbox(ns, tmpl, name, "warm",
                                              {"apiVersion": "%s/v1beta1" % EXT,
                                               "kind": "SandboxWarmPool", "name": name,
                                               "uid": md["uid"], "controller": True}))
        for s in warm[want:]:
            self._delete(self.sb, ns, s["metadata"]["name"])
        ready = sum(1 for s in warm[:want] if self._ready(s))

        new = {"replicas": min(len(warm), want), "readyReplicas": ready,
               "selector": "%s=%s" % (L_POOL, name), "observedGeneration": md.get("generation", 1)}
        if all((p.get("status") or {}).get(k) == v for k, v in new.items()):
            return

        def f(o):
            st = o.setdefault("status", {})
            if all(st.get(k) == v for k, v in new.items()):
                return False
            st.update(new)
        self.c.store.mutate(self.pool, ns, name, f)

    # -- claims --

    def claim_one(self, cl, sbs, taken):
        md = cl["metadata"]
        ns, name = md["namespace"], md["name"]
        if md.get("deletionTimestamp"):
            return
        spec = cl.get("spec") or {}
        st = cl.get("status") or {}
        life = spec.get("lifecycle") or {}
        end = rfc3339_to_epoch(life.get("shutdownTime"))
        sname = (st.get("sandbox") or {}).get("name")
        if end is not None and time.time() >= end:
            if sname and life.get("shutdownPolicy", "Retain") != "Retain":
                self._delete(self.sb, ns, sname)
            self._delete(self.claim, ns, name)
            return
        if sname:
            s = self.c.store.peek(self.sb, ns, sname)
            if s is None:
                self._status(self.claim, ns, name, [cond("Ready", "False", "SandboxDeleted")], None)
                return
            ready = self._ready(s)
            self._status(self.claim, ns, name,
                         [cond("Ready", "True" if ready else "False",
                               "SandboxReady" if ready else "SandboxNotReady")], None,
                         {"sandbox": {"name": sname, "podIPs": (s.get("status") or {}).get("podIPs") or []}})
            return
        pool_name = (spec.get("warmPoolRef") or {}).get("name")
        pool = self.c.store.peek(self.pool, ns, pool_name)
        if pool is None:
            self._status(self.claim, ns, name, [cond("Ready", "False", "WarmPoolNotFound",
                                                     'SandboxWarmPool "%s" not found' % pool_name)], None)
            return
        owner = {"apiVersion": "%s/v1beta1" % EXT, "kind": "SandboxClaim", "name": name,
                 "uid": md["uid"], "controller": True, "blockOwnerDeletion": True}
        extra = spec.get("additionalPodMetadata") or {}
        pick = None
        if not spec.get("env"):
            for s in sbs:
                if s["metadata"]["namespace"] == ns and s["metadata"]["name"] not in taken and \
                        (s["metadata"].get("labels") or {}).get(L_POOL) == pool_name and \
                        self._ready(s) and not s["metadata"].get("deletionTimestamp"):
                    pick = s
                    break
        if pick is not None:
            sname = pick["metadata"]["name"]
            taken.add(sname)

            def adopt(o):
                o["metadata"]["labels"].pop(L_POOL, None)
                o["metadata"]["ownerReferences"] = [owner]
                o["spec"]["shutdownTime"] = life.get("shutdownTime")
            self.c.store.mutate(self.sb, ns, sname, adopt)

            def label_pod(o):
                o["metadata"]["labels"].pop(L_POOL, None)
                o["metadata"]["labels"].update(extra.get("labels") or {})
                o["metadata"].setdefault("annotations", {}).update(extra.get("annotations") or {})
            self.c.store.mutate(self.pods, ns, sname, label_pod)
            self.c.log("agent-sandbox: claim %s/%s: warm Sandbox %s" % (ns, name, sname))
        else:
            tmpl = self.c.store.peek(self.tmpl, ns, ((pool.get("spec") or {}).get("sandboxTemplateRef") or {}).get("name"))
            if tmpl is None:
                self._status(self.claim, ns, name, [cond("Ready", "False", "TemplateNotFound")], None)
                return
            t = copy.deepcopy(tmpl)
            pt = (t.get("spec") or {}).setdefault("podTemplate", {})
            pmd = pt.setdefault("metadata", {})
            pmd.setdefault("labels", {}).update(extra.get("labels") or {})
            pmd.setdefault("annotations", {}).update(extra.get("annotations") or {})
            s = self._new_sandbox(ns, t, pool_name, "cold", owner, env=spec.get("env"))
            sname = s["metadata"]["name"]
            self.c.log("agent-sandbox: claim %s/%s: no warm Sandbox ready, cold %s" % (ns, name, sname))
        # A warm Sandbox is ready now: say so in this pass, not the next.
        ready = pick is not None and self._ready(pick)
        self._status(self.claim, ns, name,
                     [cond("Ready", "True" if ready else "False",
                           "SandboxReady" if ready else "SandboxNotReady")], None,
                     {"sandbox": {"name": sname, "podIPs": (pick.get("status") or {}).get("podIPs") or []
                                  if ready else []}})
        self.kick.set()
