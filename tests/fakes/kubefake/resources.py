"""kubefake/resources.py - the resource types the fake serves, and discovery.

Discovery is the legacy kind (/api, /api/v1, /apis, /apis/GROUP/VERSION):
clients that ask for aggregated discovery (kubectl 1.26+) get the legacy
documents and fall back to them, as they do with servers before 1.26.
"""
from .store import Resource

CORE = [
    Resource("", "v1", "pods", "Pod", short=["po"], categories=["all"],
             subresources=[("exec", "PodExecOptions", ["create", "get"]),
                           ("log", "Pod", ["get"]),
                           ("status", "Pod", ["get", "patch", "update"]),
                           ("eviction", "Eviction", ["create"])]),
    Resource("", "v1", "namespaces", "Namespace", namespaced=False, short=["ns"],
             verbs=["create", "delete", "get", "list", "patch", "update", "watch"]),
    Resource("", "v1", "services", "Service", short=["svc"], categories=["all"]),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", short=["sa"]),
    Resource("", "v1", "secrets", "Secret"),
    Resource("", "v1", "configmaps", "ConfigMap", short=["cm"]),
    Resource("", "v1", "events", "Event", short=["ev"]),
    Resource("", "v1", "resourcequotas", "ResourceQuota", short=["quota"]),
    Resource("", "v1", "limitranges", "LimitRange", short=["limits"]),
    Resource("", "v1", "endpoints", "Endpoints", short=["ep"]),
    Resource("", "v1", "nodes", "Node", namespaced=False, short=["no"]),
]
GROUPS = [
    Resource("apps", "v1", "deployments", "Deployment", short=["deploy"], categories=["all"],
             subresources=[("status", "Deployment", ["get", "patch", "update"]),
                           ("scale", "Scale", ["get", "patch", "update"])]),
    Resource("apps", "v1", "replicasets", "ReplicaSet", short=["rs"], categories=["all"]),
    Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short=["netpol"]),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=["pdb"]),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
             namespaced=False),
    Resource("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False),
    Resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews",
             "SelfSubjectAccessReview", namespaced=False, verbs=["create"]),
    Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
             "CustomResourceDefinition", namespaced=False, short=["crd", "crds"]),
    Resource("monitoring.coreos.com", "v1", "servicemonitors", "ServiceMonitor",
             short=["smon"]),
]
# kubernetes-sigs/agent-sandbox (served when the fake is started with them).
AGENT_SANDBOX = [
    Resource("agents.x-k8s.io", "v1beta1", "sandboxes", "Sandbox", short=["sandbox"],
             subresources=[("status", "Sandbox", ["get", "patch", "update"])]),
    Resource("extensions.agents.x-k8s.io", "v1beta1", "sandboxtemplates", "SandboxTemplate"),
    Resource("extensions.agents.x-k8s.io", "v1beta1", "sandboxclaims", "SandboxClaim",
             subresources=[("status", "SandboxClaim", ["get", "patch", "update"])]),
    Resource("extensions.agents.x-k8s.io", "v1beta1", "sandboxwarmpools", "SandboxWarmPool",
             short=["swp"],
             subresources=[("status", "SandboxWarmPool", ["get", "patch", "update"])]),
]


class Registry:
    def __init__(self, agent_sandbox=False):
        self.all = CORE + GROUPS + (AGENT_SANDBOX if agent_sandbox else [])
        self.by_key = {r.key: r for r in self.all}

    def find(self, group, version, plural):
        r = self.by_key.get((group, plural))
        if r is None or r.version != version:
            return None
        return r

    def by_kind(self, api_version, kind):
        for r in self.all:
            if r.api_version == api_version and r.kind == kind:
                return r
        return None

    def get(self, group, plural):
        return self.by_key[(group, plural)]

    # -- discovery documents --

    def groups(self):
        seen = []
        for r in self.all:
            if r.group and r.group not in seen:
                seen.append(r.group)
        return seen

    def api_versions(self, server_addr):
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                "serverAddress": server_addr}]}

    def group_list(self):
        out = []
        for g in self.groups():
            v = next(r.version for r in self.all if r.group == g)
            gv = {"groupVersion": "%s/%s" % (g, v), "version": v}
            out.append({"name": g, "versions": [gv], "preferredVersion": gv})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}

    def group(self, g):
        rs = [r for r in self.all if r.group == g]
        if not rs:
            return None
        gv = {"groupVersion": "%s/%s" % (g, rs[0].version), "version": rs[0].version}
        return {"kind": "APIGroup", "apiVersion": "v1", "name": g, "versions": [gv],
                "preferredVersion": gv}

    def resource_list(self, group, version):
        rs = [r for r in self.all if r.group == group and r.version == version]
        if not rs:
            return None
        out = []
        for r in rs:
            d = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                 "kind": r.kind, "verbs": r.verbs}
            if r.short:
                d["shortNames"] = r.short
            if r.categories:
                d["categories"] = r.categories
            out.append(d)
            for sub, kind, verbs in r.subresources:
                out.append({"name": "%s/%s" % (r.plural, sub), "singularName": "",
                            "namespaced": r.namespaced, "kind": kind, "verbs": verbs})
        gv = version if not group else "%s/%s" % (group, version)
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                "resources": out}


def openapi_root(reg):
    """GET /openapi/v3: where each group-version's document is."""
    paths = {}
    for gv in sorted({r.api_version for r in reg.all}):
        key = "api/v1" if gv == "v1" else "apis/" + gv
        paths[key] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (key, "0" * 16)}
    return {"paths": paths}


def openapi_doc(reg, group, version):
    """A group-version's OpenAPI v3 document: every path with the verbs and
    the fieldValidation and dryRun parameters the server takes (clients look
    for them to pick server-side validation), and one open schema per kind
    with its x-kubernetes-group-version-kind.  Schemas have no properties:
    the fake does not validate fields against them."""
    rs = [r for r in reg.all if r.group == group and r.version == version]
    if not rs:
        return None
    prefix = "/api/v1" if not group else "/apis/%s/%s" % (group, version)
    qp = lambda n: {"name": n, "in": "query", "schema": {"type": "string"},
                    "uniqueItems": True}
    write = {"parameters": [qp("dryRun"), qp("fieldManager"), qp("fieldValidation")],
             "responses": {"200": {"description": "OK"}}}
    read = {"parameters": [], "responses": {"200": {"description": "OK"}}}
    paths, schemas = {}, {}
    gvname = ("io.k8s.api.core.v1" if not group else
              "io.k8s.%s.%s" % (".".join(reversed(group.split("."))), version))
    for r in rs:
        gvk = {"x-kubernetes-group-version-kind": {"group": group, "version": version,
                                                   "kind": r.kind}}
        w = dict(write, **gvk)
        rd = dict(read, **gvk)
        coll = prefix + ("/namespaces/{namespace}/" if r.namespaced else "/") + r.plural
        paths[coll] = {"get": rd, "post": w, "delete": rd}
        paths[coll + "/{name}"] = {"get": rd, "put": w, "patch": w, "delete": rd}
        for sub, kind, _ in r.subresources:
            sw = dict(write, **{"x-kubernetes-group-version-kind": {
                "group": group, "version": version, "kind": kind}})
            paths[coll + "/{name}/" + sub] = {"post": sw, "put": sw}
        schemas["%s.%s" % (gvname, r.kind)] = {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [{"group": group, "version": version,
                                                 "kind": r.kind}]}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (fake)", "version": "v1.32.4"},
            "paths": paths, "components": {"schemas": schemas}}
