"""kubefake/admission.py - defaults, validation and admission of new objects.

What the API server does between decoding a create and storing it:
defaulting (the Pod fields a real server fills in), validation (422
Invalid with field paths in details.causes), and the admission plugins that
matter to sandboxes: NamespaceLifecycle (404 for a missing namespace),
RuntimeClass (403 for an unknown runtimeClassName), ResourceQuota (403
"exceeded quota" / "must specify"), ServiceAccount (the default service
account name).
"""
import re

from . import quantity
from .errors import ApiError, forbidden, invalid
from .labelsel import label_value_errors, qualified_name_errors

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
TERMINAL = ("Succeeded", "Failed")


def name_causes(md, generate_ok=True):
    causes = []
    name = md.get("name")
    if not name:
        if not (generate_ok and md.get("generateName")):
            causes.append(("metadata.name", "Required value: name or generateName is required",
                           "FieldValueRequired"))
    elif len(name) > 253 or not DNS_SUBDOMAIN.match(name):
        causes.append(("metadata.name", 'Invalid value: "%s": a lowercase RFC 1123 subdomain '
                       "must consist of lower case alphanumeric characters, '-' or '.', and must "
                       "start and end with an alphanumeric character (e.g. 'example.com', regex "
                       "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                       "([-a-z0-9]*[a-z0-9])?)*')" % name, "FieldValueInvalid"))
    for k, v in (md.get("labels") or {}).items():
        for e in qualified_name_errors(k):
            causes.append(("metadata.labels", 'Invalid value: "%s": %s' % (k, e), "FieldValueInvalid"))
        if not isinstance(v, str):
            causes.append(("metadata.labels", "Invalid value: label values must be strings",
                           "FieldValueInvalid"))
            continue
        for e in label_value_errors(v):
            causes.append(("metadata.labels", 'Invalid value: "%s": %s' % (v, e), "FieldValueInvalid"))
    size = 0
    for k, v in (md.get("annotations") or {}).items():
        for e in qualified_name_errors(k):
            causes.append(("metadata.annotations", 'Invalid value: "%s": %s' % (k, e),
                           "FieldValueInvalid"))
        size += len(k) + len(v if isinstance(v, str) else "")
    if size > 256 * 1024:
        causes.append(("metadata.annotations", "Too long: must have at most 262144 bytes",
                       "FieldValueTooLong"))
    return causes


# ---- pods -------------------------------------------------------------------

def default_pod(pod):
    spec = pod.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec["serviceAccount"] = spec["serviceAccountName"]
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}])
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        img = c.get("image") or ""
        tag = img.rsplit("/", 1)[-1]
        c.setdefault("imagePullPolicy", "Always" if ":" not in tag or tag.endswith(":latest")
                     else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
        res = c["resources"]
        # A limit without a request makes the request equal to the limit.
        if isinstance(res, dict) and isinstance(res.get("limits"), dict):
            req = res.setdefault("requests", {})
            for k, v in res["limits"].items():
                req.setdefault(k, v)
    pod.setdefault("status", {})
    pod["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def qos_class(spec):
    cs = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    reqs = [((c.get("resources") or {}).get("requests") or {}) for c in cs]
    lims = [((c.get("resources") or {}).get("limits") or {}) for c in cs]
    if not any(reqs) and not any(lims):
        return "BestEffort"
    for r, l in zip(reqs, lims):
        for k in ("cpu", "memory"):
            if k not in l or k not in r or quantity.parse(l[k]) != quantity.parse(r[k]):
                return "Burstable"
    return "Guaranteed"


def validate_pod(res, pod):
    md = pod.get("metadata") or {}
    causes = name_causes(md)
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        causes.append(("spec", "Required value", "FieldValueRequired"))
        raise invalid(res, "Pod", md.get("name") or md.get("generateName", ""), causes)
    cs = spec.get("containers")
    if not isinstance(cs, list) or not cs:
        causes.append(("spec.containers", "Required value", "FieldValueRequired"))
        cs = []
    vols = {}
    for i, v in enumerate(spec.get("volumes") or []):
        n = v.get("name", "") if isinstance(v, dict) else ""
        if not DNS_LABEL.match(n or "-"):
            causes.append(("spec.volumes[%d].name" % i, 'Invalid value: "%s"' % n, "FieldValueInvalid"))
        if n in vols:
            causes.append(("spec.volumes[%d].name" % i, 'Duplicate value: "%s"' % n, "FieldValueDuplicate"))
        vols[n] = v
        ed = v.get("emptyDir") if isinstance(v, dict) else None
        if isinstance(ed, dict) and "sizeLimit" in ed:
            try:
                quantity.parse(ed["sizeLimit"])
            except quantity.QuantityError as e:
                causes.append(("spec.volumes[%d].emptyDir.sizeLimit" % i,
                               'Invalid value: "%s": %s' % (ed["sizeLimit"], e), "FieldValueInvalid"))
    names = set()
    for i, c in enumerate(cs):
        p = "spec.containers[%d]" % i
        if not isinstance(c, dict):
            causes.append((p, "Invalid value: not an object", "FieldValueInvalid"))
            continue
        n = c.get("name") or ""
        if not n:
            causes.append((p + ".name", "Required value", "FieldValueRequired"))
        elif len(n) > 63 or not DNS_LABEL.match(n):
            causes.append((p + ".name", 'Invalid value: "%s": a lowercase RFC 1123 label must '
                           "consist of lower case alphanumeric characters or '-', and must start "
                           "and end with an alphanumeric character" % n, "FieldValueInvalid"))
        elif n in names:
            causes.append((p + ".name", 'Duplicate value: "%s"' % n, "FieldValueDuplicate"))
        names.add(n)
        if not c.get("image"):
            causes.append((p + ".image", "Required value", "FieldValueRequired"))
        r = c.get("resources") or {}
        parsed = {}
        for kind in ("requests", "limits"):
            for k, v in (r.get(kind) or {}).items():
                try:
                    parsed[(kind, k)] = quantity.parse(v)
                except quantity.QuantityError as e:
                    causes.append(("%s.resources.%s[%s]" % (p, kind, k),
                                   'Invalid value: "%s": %s' % (v, e), "FieldValueInvalid"))
        for k in ("cpu", "memory", "ephemeral-storage"):
            rq, lm = parsed.get(("requests", k)), parsed.get(("limits", k))
            if rq is not None and lm is not None and rq > lm:
                causes.append(("%s.resources.requests" % p, 'Invalid value: "%s": must be less '
                               "than or equal to %s limit of %s" % (r["requests"][k], k,
                                                                    r["limits"][k]),
                               "FieldValueInvalid"))
        for j, m in enumerate(c.get("volumeMounts") or []):
            if m.get("name") not in vols:
                causes.append(("%s.volumeMounts[%d].name" % (p, j),
                               'Not found: "%s"' % m.get("name"), "FieldValueNotFound"))
            if not str(m.get("mountPath", "")).startswith("/"):
                causes.append(("%s.volumeMounts[%d].mountPath" % (p, j),
                               "Invalid value: must be an absolute path", "FieldValueInvalid"))
        for j, e in enumerate(c.get("env") or []):
            en = e.get("name", "") if isinstance(e, dict) else ""
            if not en or "=" in en:
                causes.append(("%s.env[%d].name" % (p, j), 'Invalid value: "%s": a valid '
                               "environment variable name must consist only of printable ASCII "
                               "characters other than '='" % en, "FieldValueInvalid"))
        sc = c.get("securityContext") or {}
        if sc.get("privileged") and sc.get("allowPrivilegeEscalation") is False:
            causes.append((p + ".securityContext", "Invalid value: cannot set "
                           "`allowPrivilegeEscalation` to false and `privileged` to true",
                           "FieldValueInvalid"))
    rp = spec.get("restartPolicy")
    if rp not in ("Always", "OnFailure", "Never"):
        causes.append(("spec.restartPolicy", 'Unsupported value: "%s": supported values: '
                       '"Always", "OnFailure", "Never"' % rp, "FieldValueNotSupported"))
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and (not isinstance(ads, int) or isinstance(ads, bool) or ads <= 0):
        causes.append(("spec.activeDeadlineSeconds", "Invalid value: %r: must be greater than "
                       "or equal to 1" % (ads,), "FieldValueInvalid"))
    psc = spec.get("securityContext") or {}
    for f in ("runAsUser", "runAsGroup", "fsGroup"):
        v = psc.get(f)
        if v is not None and (not isinstance(v, int) or v < 0 or v > 2147483647):
            causes.append(("spec.securityContext." + f, "Invalid value: %r: must be between 0 "
                           "and 2147483647, inclusive" % (v,), "FieldValueInvalid"))
    rc = spec.get("runtimeClassName")
    if rc is not None and (not isinstance(rc, str) or not DNS_SUBDOMAIN.match(rc)):
        causes.append(("spec.runtimeClassName", 'Invalid value: "%s"' % rc, "FieldValueInvalid"))
    if causes:
        raise invalid(res, "Pod", md.get("name") or md.get("generateName", ""), causes)


def pod_usage(pod):
    """Quota usage of one pod: {resource name: Fraction}."""
    out = {"pods": 1, "count/pods": 1}
    for c in (pod.get("spec") or {}).get("containers") or []:
        r = c.get("resources") or {}
        for kind in ("requests", "limits"):
            for k, v in (r.get(kind) or {}).items():
                key = "%s.%s" % (kind, k)
                out[key] = out.get(key, 0) + quantity.parse(v)
                if kind == "requests" and k in ("cpu", "memory"):
                    out[k] = out.get(k, 0) + quantity.parse(v)
    return out


def check_quota(res, pod, quotas, live_pods):
    """403 unless the pod fits every ResourceQuota of its namespace."""
    name = (pod.get("metadata") or {}).get("name") or ""
    want = pod_usage(pod)
    used = {}
    for p in live_pods:
        if (p.get("status") or {}).get("phase") in TERMINAL:
            continue
        if (p.get("metadata") or {}).get("deletionTimestamp"):
            continue
        for k, v in pod_usage(p).items():
            used[k] = used.get(k, 0) + v
    for q in quotas:
        qn = q["metadata"]["name"]
        hard = (q.get("spec") or {}).get("hard") or {}
        missing = []
        for k in hard:
            if k.startswith("requests.") or k.startswith("limits.") or k in ("cpu", "memory"):
                rk = k if "." in k else "requests." + k
                for c in (pod.get("spec") or {}).get("containers") or []:
                    kind, what = rk.split(".", 1)
                    if what not in (((c.get("resources") or {}).get(kind)) or {}):
                        missing.append("%s for: %s" % (rk, c.get("name")))
        if missing:
            raise forbidden(res, name, "failed quota: %s: must specify %s"
                            % (qn, "; ".join(sorted(set(missing)))))
        over = []
        for k, lim in hard.items():
            try:
                limit = quantity.parse(lim)
            except quantity.QuantityError:
                continue
            if k not in want:
                continue
            if used.get(k, 0) + want[k] > limit:
                kind = "cpu" if k.endswith("cpu") else "memory" if k.endswith("memory") else "count"
                f = (lambda v: quantity.fmt(v, kind)) if kind != "count" else (lambda v: str(int(v)))
                over.append((k, f(want[k]), f(used.get(k, 0)), f(limit)))
        if over:
            over.sort()
            raise forbidden(res, name, "exceeded quota: %s, requested: %s, used: %s, limited: %s"
                            % (qn, ",".join("%s=%s" % (k, r) for k, r, _, _ in over),
                               ",".join("%s=%s" % (k, u) for k, _, u, _ in over),
                               ",".join("%s=%s" % (k, l) for k, _, _, l in over)))


RESTRICTED_VOLUMES = ("emptyDir", "configMap", "secret", "projected", "downwardAPI",
                      "persistentVolumeClaim", "ephemeral", "csi")


def check_pod_security(res, pod, level):
    """Pod Security admission, the restricted level (a subset of its checks:
    privilege escalation, capabilities, non-root, seccomp, host namespaces,
    privileged, volume types), as the namespace label
    pod-security.kubernetes.io/enforce asks."""
    if level != "restricted":
        return
    spec = pod.get("spec") or {}
    psc = spec.get("securityContext") or {}
    bad = []
    cs = [c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
          if isinstance(c, dict)]
    for key, what in (("hostNetwork", "hostNetwork=true"), ("hostPID", "hostPID=true"),
                      ("hostIPC", "hostIPC=true")):
        if spec.get(key):
            bad.append("host namespaces (%s)" % what)
    priv = [c["name"] for c in cs if (c.get("securityContext") or {}).get("privileged")]
    if priv:
        bad.append('privileged (container%s %s must not set securityContext.privileged=true)'
                   % ("s" if len(priv) > 1 else "", ", ".join('"%s"' % n for n in priv)))
    esc = [c["name"] for c in cs if (c.get("securityContext") or {}).get("allowPrivilegeEscalation") is not False]
    if esc:
        bad.append("allowPrivilegeEscalation != false (container%s %s must set "
                   "securityContext.allowPrivilegeEscalation=false)"
                   % ("s" if len(esc) > 1 else "", ", ".join('"%s"' % n for n in esc)))
    caps = [c["name"] for c in cs
            if "ALL" not in (((c.get("securityContext") or {}).get("capabilities") or {}).get("drop") or [])]
    if caps:
        bad.append('unrestricted capabilities (container%s %s must set '
                   'securityContext.capabilities.drop=["ALL"])'
                   % ("s" if len(caps) > 1 else "", ", ".join('"%s"' % n for n in caps)))
    nonroot = [c["name"] for c in cs
               if not (c.get("securityContext") or {}).get("runAsNonRoot", psc.get("runAsNonRoot"))]
    if nonroot:
        bad.append("runAsNonRoot != true (pod or container%s %s must set "
                   "securityContext.runAsNonRoot=true)"
                   % ("s" if len(nonroot) > 1 else "", ", ".join('"%s"' % n for n in nonroot)))
    if psc.get("runAsUser") == 0 or any((c.get("securityContext") or {}).get("runAsUser") == 0 for c in cs):
        bad.append("runAsUser=0 (pod must not set runAsUser=0)")
    def seccomp(sc):
        return ((sc or {}).get("seccompProfile") or {}).get("type")
    nosec = [c["name"] for c in cs
             if (seccomp(c.get("securityContext")) or seccomp(psc)) not in ("RuntimeDefault", "Localhost")]
    if nosec:
        bad.append('seccompProfile (pod or container%s %s must set '
                   'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'
                   % ("s" if len(nosec) > 1 else "", ", ".join('"%s"' % n for n in nosec)))
    vols = [v.get("name") for v in spec.get("volumes") or []
            if isinstance(v, dict) and not any(k in v for k in RESTRICTED_VOLUMES)]
    if vols:
        bad.append("restricted volume types (volume%s %s)" % ("s" if len(vols) > 1 else "",
                                                             ", ".join('"%s"' % n for n in vols)))
    if bad:
        raise forbidden(res, (pod.get("metadata") or {}).get("name") or "",
                        'violates PodSecurity "restricted:latest": ' + ", ".join(bad))


def check_runtime_class(res, pod, classes):
    rc = (pod.get("spec") or {}).get("runtimeClassName")
    if rc and rc not in classes:
        raise forbidden(res, (pod.get("metadata") or {}).get("name") or "",
                        'pod rejected: RuntimeClass "%s" not found' % rc)


def validate_generic(res, obj):
    md = obj.get("metadata") or {}
    causes = name_causes(md)
    if res.kind == "NetworkPolicy":
        spec = obj.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("podSelector"), dict):
            causes.append(("spec.podSelector", "Required value", "FieldValueRequired"))
        for i, t in enumerate((spec or {}).get("policyTypes") or []):
            if t not in ("Ingress", "Egress"):
                causes.append(("spec.policyTypes[%d]" % i, 'Unsupported value: "%s": supported '
                               'values: "Ingress", "Egress"' % t, "FieldValueNotSupported"))
    if res.kind == "Deployment":
        causes += deployment_causes(res, obj)
    if res.kind == "Namespace" and md.get("name") and not DNS_LABEL.match(md["name"]):
        causes.append(("metadata.name", 'Invalid value: "%s": a lowercase RFC 1123 label must '
                       "consist of lower case alphanumeric characters or '-'" % md["name"],
                       "FieldValueInvalid"))
    if causes:
        raise invalid(res, res.kind, md.get("name") or md.get("generateName", ""), causes)


def deployment_causes(res, obj):
    """apps/v1 validation of a Deployment: a selector that matches the pod
    template's labels, and the template as a pod (defaults applied)."""
    import copy
    from .labelsel import labels_match, parse_labels
    causes = []
    spec = obj.get("spec") or {}
    sel = spec.get("selector") or {}
    tmpl = spec.get("template") or {}
    tlabels = (tmpl.get("metadata") or {}).get("labels") or {}
    reqs = ",".join("%s=%s" % kv for kv in (sel.get("matchLabels") or {}).items())
    if not sel.get("matchLabels") and not sel.get("matchExpressions"):
        causes.append(("spec.selector", "Required value", "FieldValueRequired"))
    elif not labels_match(parse_labels(reqs), tlabels):
        causes.append(("spec.template.metadata.labels", "Invalid value: %s: `selector` does not "
                       "match template `labels`" % tlabels, "FieldValueInvalid"))
    r = spec.get("replicas", 1)
    if not isinstance(r, int) or r < 0:
        causes.append(("spec.replicas", "Invalid value: %r: must be greater than or equal to 0" % (r,),
                       "FieldValueInvalid"))
    pod = {"metadata": dict(copy.deepcopy(tmpl.get("metadata") or {}), name="template"),
           "spec": copy.deepcopy(tmpl.get("spec") or {})}
    default_pod(pod)
    try:
        validate_pod(res, pod)
    except ApiError as e:
        for c in (e.details or {}).get("causes") or []:
            causes.append(("spec.template." + c["field"], c["message"], c["reason"]))
    return causes


def check_namespace(store, reg, ns):
    nsres = reg.get("", "namespaces")
    o = store.get(nsres, "", ns)
    if o is None:
        raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                       details={"name": ns, "kind": "namespaces"})
    if (o.get("metadata") or {}).get("deletionTimestamp"):
        raise ApiError(403, "Forbidden", "unable to create new content in namespace %s because "
                       "it is being terminated" % ns,
                       details={"name": ns, "kind": "namespaces"})
