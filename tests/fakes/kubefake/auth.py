"""kubefake/auth.py - who is calling (authentication) and may they (RBAC).

Authentication, as kube-apiserver's: a bearer token from the static token
file (--token-auth-file's CSV: token,user,uid,"group1,group2"), a token
minted by the TokenRequest API for a ServiceAccount (kubectl create token),
or a TLS client certificate signed by the cluster CA (CN is the user, O the
groups).  A token can be given an expiry through the fake's control API;
an unknown or expired token is 401 Unauthorized.

Authorization is RBAC evaluated from the Role, ClusterRole, RoleBinding and
ClusterRoleBinding objects in the store (group system:masters may do
anything), with the request attributes the API server derives: verb (get,
list, watch, create, update, patch, delete, deletecollection), API group,
resource, subresource, namespace and name.
"""
import csv
import os
import secrets
import threading
import time

from .errors import ApiError

PUBLIC_PATHS = ("/version", "/healthz", "/livez", "/readyz")
DISCOVERY_PREFIXES = ("/api", "/apis", "/openapi", "/version", "/healthz", "/livez", "/readyz")


class User:
    def __init__(self, name, groups, uid=""):
        self.name, self.groups, self.uid = name, list(groups), uid
        if "system:authenticated" not in self.groups and name != "system:anonymous":
            self.groups.append("system:authenticated")


class Authenticator:
    def __init__(self, token_file=None):
        self.token_file = token_file
        self.lock = threading.Lock()
        self.static = {}        # token -> User
        self.minted = {}        # token -> (User, expires or None)
        self.expiry = {}        # token -> epoch seconds when it stops working
        self.mtime = None
        self.reload()

    def reload(self):
        if not self.token_file:
            return
        try:
            st = os.stat(self.token_file)
        except OSError:
            return
        if st.st_mtime == self.mtime:
            return
        table = {}
        with open(self.token_file, newline="") as f:
            for row in csv.reader(f):
                if len(row) < 3 or row[0].startswith("#"):
                    continue
                groups = [g for g in row[3].split(",") if g] if len(row) > 3 else []
                table[row[0]] = User(row[1], groups, row[2])
        with self.lock:
            self.static = table
            self.mtime = st.st_mtime

    def mint(self, namespace, sa, seconds):
        tok = "sa." + secrets.token_urlsafe(32)
        user = User("system:serviceaccount:%s:%s" % (namespace, sa),
                    ["system:serviceaccounts", "system:serviceaccounts:%s" % namespace])
        exp = time.time() + seconds if seconds else None
        with self.lock:
            self.minted[tok] = (user, exp)
        return tok, exp

    def set_expiry(self, token, when):
        with self.lock:
            if when is None:
                self.expiry.pop(token, None)
            else:
                self.expiry[token] = when

    def authenticate(self, headers, peer_cert):
        """The User, or None for an anonymous request; ApiError 401 for a
        credential that does not work."""
        auth = headers.get("Authorization")
        if auth:
            kind, _, tok = auth.partition(" ")
            tok = tok.strip()
            if kind.lower() != "bearer" or not tok:
                raise unauthorized()
            self.reload()
            with self.lock:
                user = self.static.get(tok)
                exp = self.expiry.get(tok)
                if user is None and tok in self.minted:
                    user, mexp = self.minted[tok]
                    if mexp is not None and (exp is None or mexp < exp):
                        exp = mexp
            if user is None or (exp is not None and time.time() >= exp):
                raise unauthorized()
            return user
        if peer_cert:
            subject = dict(x[0] for x in peer_cert.get("subject", ()))
            cn = subject.get("commonName")
            if cn:
                groups = [v for rdn in peer_cert.get("subject", ()) for k, v in rdn
                          if k == "organizationName"]
                return User(cn, groups)
        return None


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")


# ---- RBAC -------------------------------------------------------------------

def _subject_matches(subj, user):
    kind = subj.get("kind")
    if kind == "User":
        return subj.get("name") == user.name
    if kind == "Group":
        return subj.get("name") in user.groups
    if kind == "ServiceAccount":
        return user.name == "system:serviceaccount:%s:%s" % (subj.get("namespace", ""),
                                                             subj.get("name", ""))
    return False


def _rule_allows(rule, verb, group, resource, sub, name):
    if "*" not in rule.get("verbs", []) and verb not in rule.get("verbs", []):
        return False
    groups = rule.get("apiGroups", [])
    if "*" not in groups and group not in groups:
        return False
    full = resource + ("/" + sub if sub else "")
    res = rule.get("resources", [])
    if not ("*" in res or full in res or (sub and (resource + "/*") in res)
            or (not sub and resource in res) or (sub and ("*/" + sub) in res)):
        return False
    names = rule.get("resourceNames") or []
    if names and (not name or name not in names):
        return False
    return True


class Authorizer:
    def __init__(self, store, registry):
        self.store, self.reg = store, registry

    def _rules(self, user, namespace):
        rbac = "rbac.authorization.k8s.io"
        croles = {o["metadata"]["name"]: o for o in self.store.all_of(self.reg.get(rbac, "clusterroles"))}
        for b in self.store.all_of(self.reg.get(rbac, "clusterrolebindings")):
            if any(_subject_matches(s, user) for s in b.get("subjects") or []):
                r = croles.get(b.get("roleRef", {}).get("name"))
                if r:
                    yield from r.get("rules") or []
        if not namespace:
            return
        roles = {o["metadata"]["name"]: o for o in self.store.all_of(self.reg.get(rbac, "roles"),
                                                                      namespace)}
        for b in self.store.all_of(self.reg.get(rbac, "rolebindings"), namespace):
            if not any(_subject_matches(s, user) for s in b.get("subjects") or []):
                continue
            ref = b.get("roleRef", {})
            r = (croles if ref.get("kind") == "ClusterRole" else roles).get(ref.get("name"))
            if r:
                yield from r.get("rules") or []

    def allowed(self, user, verb, group, resource, sub, namespace, name):
        if "system:masters" in user.groups:
            return True
        return any(_rule_allows(rule, verb, group, resource, sub, name)
                   for rule in self._rules(user, namespace))

    def check(self, user, verb, group, resource, sub, namespace, name):
        if self.allowed(user, verb, group, resource, sub, namespace, name):
            return
        full = resource + ("/" + sub if sub else "")
        what = '%s "%s"' % (resource if not group else "%s.%s" % (resource, group), name) \
            if name else (resource if not group else "%s.%s" % (resource, group))
        where = ' in the namespace "%s"' % namespace if namespace else " at the cluster scope"
        raise ApiError(403, "Forbidden",
                       '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s"%s'
                       % (what, user.name, verb, full, group, where),
                       details={"name": name or "", "group": group, "kind": resource})
