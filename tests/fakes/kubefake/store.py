"""kubefake/store.py - the object store: resource versions, lists, watches.

One global resource version counter, as etcd's revision: every write gets
the next number, written into metadata.resourceVersion as a string.  Each
write also appends an event (ADDED, MODIFIED, DELETED) with a copy of the
object to a log that watches read from.  The log keeps a window of recent
events; a watch or a continue token older than the window is answered with
410 Gone ("too old resource version"), as the API server's watch cache
does after compaction.
"""
import base64
import copy
import json
import threading
import time
import uuid

from .errors import ApiError


def now_rfc3339(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if t is None else t))


class Resource:
    """What the API knows about one resource type."""

    def __init__(self, group, version, plural, kind, namespaced=True, short=(), verbs=None,
                 singular=None, subresources=(), categories=()):
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.namespaced = namespaced
        self.short = list(short)
        self.verbs = verbs or ["create", "delete", "deletecollection", "get", "list", "patch",
                               "update", "watch"]
        self.singular = singular or kind.lower()
        self.subresources = list(subresources)
        self.categories = list(categories)

    @property
    def api_version(self):
        return self.version if not self.group else "%s/%s" % (self.group, self.version)

    @property
    def key(self):
        return (self.group, self.plural)

    def gr(self):
        """"pods", "deployments.apps": how messages name a resource."""
        return self.plural if not self.group else "%s.%s" % (self.plural, self.group)


class Store:
    def __init__(self, window=5000):
        self.cond = threading.Condition()
        self.rv = 1000
        self.objects = {}          # (group, plural, ns, name) -> object
        self.events = []           # (rv, type, (group, plural), ns, object)
        self.window = window
        self.oldest = self.rv      # events after this rv are all in the log
        self.compactions = 0

    # -- helpers --

    def _next_rv(self):
        self.rv += 1
        return self.rv

    def _emit(self, etype, res, obj, prev=None):
        """obj is the store's own (never changed afterwards), not a copy."""
        ns = obj["metadata"].get("namespace", "")
        self.events.append((int(obj["metadata"]["resourceVersion"]), etype, res.key, ns,
                            obj, prev))
        if len(self.events) > 2 * self.window:
            drop = len(self.events) - self.window
            self.oldest = self.events[drop - 1][0]
            del self.events[:drop]
        self.cond.notify_all()

    def compact(self):
        """Forget every event so far (a test's way to force 410 Gone)."""
        with self.cond:
            self.oldest = self.rv
            self.events = []
            self.compactions += 1

    # -- reads --

    def get(self, res, ns, name):
        with self.cond:
            o = self.objects.get((res.group, res.plural, ns, name))
            return copy.deepcopy(o) if o is not None else None

    def peek(self, res, ns, name):
        """The stored object itself, to read only (see all_of), or None."""
        with self.cond:
            return self.objects.get((res.group, res.plural, ns, name))

    def current_rv(self):
        with self.cond:
            return self.rv

    def all_of(self, res, ns=None):
        """The objects of a resource (in a namespace), sorted: the stored
        objects themselves, to read only.  A write replaces an object and
        never changes one, so they stay as they were when taken; not
        copying them keeps controllers' and RBAC's scans cheap."""
        with self.cond:
            return [o for _, o in sorted((k, o) for k, o in self.objects.items()
                                         if k[:2] == res.key and (ns is None or k[2] == ns))]

    def list(self, res, ns, pred, limit=0, cont=None):
        """(items, rv, continue): items matching pred, sorted by namespace and
        name, paged by limit and a continue token that names where to go on."""
        with self.cond:
            start_after = None
            list_rv = self.rv
            if cont:
                try:
                    c = json.loads(base64.urlsafe_b64decode(cont.encode() + b"=="))
                    start_after, list_rv = tuple(c["start"]), int(c["rv"])
                except Exception:
                    raise ApiError(400, "BadRequest", "continue key is not valid: illegal base64 data")
                if list_rv < self.oldest - self.window:
                    raise ApiError(410, "Expired", "The provided continue parameter is too old to "
                                   "display a consistent list result. You can start a new list "
                                   "without the continue parameter, or use the continue token in "
                                   "this response to retrieve the remainder of the results. "
                                   "Continuing with the provided token results in an "
                                   "inconsistent list - objects that were created, modified, or "
                                   "deleted between the time the first chunk was returned and "
                                   "now may show up in the list.")
            keys = sorted(k for k in self.objects
                          if (k[0], k[1]) == res.key and (ns is None or k[2] == ns))
            items = []
            more = None
            for k in keys:
                if start_after is not None and (k[2], k[3]) <= start_after:
                    continue
                o = self.objects[k]
                if not pred(o):
                    continue
                if limit and len(items) >= limit:
                    more = (items[-1]["metadata"].get("namespace", ""), items[-1]["metadata"]["name"])
                    break
                items.append(copy.deepcopy(o))
            token = None
            if more is not None:
                token = base64.urlsafe_b64encode(json.dumps(
                    {"start": list(more), "rv": list_rv}).encode()).decode().rstrip("=")
            return items, list_rv, token

    # -- writes --

    def create(self, res, ns, obj, dry_run=False):
        md = obj.setdefault("metadata", {})
        with self.cond:
            name = md.get("name")
            if not name:
                gen = md.get("generateName")
                for _ in range(20):
                    cand = gen + uuid.uuid4().hex[:5]
                    if (res.group, res.plural, ns, cand) not in self.objects:
                        name = cand
                        break
                md["name"] = name
            k = (res.group, res.plural, ns, name)
            if k in self.objects:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (res.gr(), name),
                               details={"name": name, "group": res.group, "kind": res.plural})
            if res.namespaced:
                md["namespace"] = ns
            else:
                md.pop("namespace", None)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now_rfc3339()
            if res.group:
                md.setdefault("generation", 1)
            md.pop("deletionTimestamp", None)
            md.pop("deletionGracePeriodSeconds", None)
            obj["apiVersion"] = res.api_version
            obj["kind"] = res.kind
            if dry_run:
                md["resourceVersion"] = str(self.rv)
                return copy.deepcopy(obj)
            md["resourceVersion"] = str(self._next_rv())
            stored = self.objects[k] = copy.deepcopy(obj)
            self._emit("ADDED", res, stored)
            return copy.deepcopy(obj)

    def update(self, res, ns, name, obj, check_rv=True, dry_run=False, status_only=False):
        """Replace an object (PUT).  A resourceVersion in obj must match the
        stored one (optimistic concurrency)."""
        with self.cond:
            k = (res.group, res.plural, ns, name)
            cur = self.objects.get(k)
            if cur is None:
                raise ApiError(404, "NotFound", '%s "%s" not found' % (res.gr(), name),
                               details={"name": name, "group": res.group, "kind": res.plural})
            md = obj.setdefault("metadata", {})
            want = md.get("resourceVersion")
            if check_rv and want and want != cur["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the '
                               'object has been modified; please apply your changes to the latest '
                               'version and try again' % (res.gr(), name),
                               details={"name": name, "group": res.group, "kind": res.plural})
            new = copy.deepcopy(cur)
            if status_only:
                new["status"] = copy.deepcopy(obj.get("status", {}))
            else:
                status = new.get("status")
                keep = {f: cur["metadata"][f] for f in ("uid", "creationTimestamp", "namespace",
                                                        "deletionTimestamp",
                                                        "deletionGracePeriodSeconds", "generation")
                        if f in cur["metadata"]}
                new = copy.deepcopy(obj)
                new["metadata"].update(keep)
                if status is not None and res.kind != "CustomResourceDefinition":
                    new["status"] = status
                elif "status" in obj:
                    new["status"] = obj["status"]
                if "generation" in keep and new.get("spec") != cur.get("spec"):
                    new["metadata"]["generation"] = keep["generation"] + 1
            new["apiVersion"] = res.api_version
            new["kind"] = res.kind
            return self._replace(res, k, cur, new, dry_run)

    def _replace(self, res, k, cur, new, dry_run):
        if dry_run:
            return copy.deepcopy(new)
        new["metadata"]["resourceVersion"] = str(self._next_rv())
        # An object being deleted goes once its finalizers are gone.
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") \
                and res.kind != "Pod":
            del self.objects[k]
            gone = copy.deepcopy(new)
            self._emit("DELETED", res, gone)
            return copy.deepcopy(new)
        stored = self.objects[k] = copy.deepcopy(new)
        self._emit("MODIFIED", res, stored, cur)
        return new

    def mutate(self, res, ns, name, fn):
        """Controllers' read-modify-write: fn(obj) changes a copy in place and
        returns False to skip the write.  Returns the new object or None."""
        with self.cond:
            k = (res.group, res.plural, ns, name)
            cur = self.objects.get(k)
            if cur is None:
                return None
            new = copy.deepcopy(cur)
            if fn(new) is False or new == cur:
                return copy.deepcopy(cur)
            return self._replace(res, k, cur, new, False)

    def remove(self, res, ns, name, expect_uid=None):
        """Takes the object out for good (the end of a deletion)."""
        with self.cond:
            k = (res.group, res.plural, ns, name)
            cur = self.objects.get(k)
            if cur is None or (expect_uid and cur["metadata"]["uid"] != expect_uid):
                return None
            del self.objects[k]
            gone = copy.deepcopy(cur)
            gone["metadata"]["resourceVersion"] = str(self._next_rv())
            self._emit("DELETED", res, gone)
            return copy.deepcopy(gone)

    # -- watches --

    def watch(self, res, ns, pred, since_rv, stop, timeout):
        """Yields (type, object) for events on res (in ns, or every
        namespace when ns is None) after since_rv that satisfy pred, until
        stop() or timeout seconds.  Yields ("BOOKMARK", rv) when asked to
        by a None from the caller's send (not used) - bookmarks are left to
        the caller through current_rv().  Raises ApiError 410 when since_rv
        is older than the log."""
        deadline = time.time() + timeout if timeout else None
        with self.cond:
            if since_rv < self.oldest:
                raise ApiError(410, "Expired", "too old resource version: %d (%d)"
                               % (since_rv, self.oldest + 1))
            last = since_rv
        while True:
            batch = []
            with self.cond:
                if last < self.oldest:
                    raise ApiError(410, "Expired", "too old resource version: %d (%d)"
                                   % (last, self.oldest + 1))
                # The log is in rv order: find where `last` ends.
                lo, hi = 0, len(self.events)
                while lo < hi:
                    mid = (lo + hi) // 2
                    if self.events[mid][0] <= last:
                        lo = mid + 1
                    else:
                        hi = mid
                for ev in self.events[lo:]:
                    batch.append(ev)
                if not batch:
                    if stop():
                        return
                    wait = 0.5
                    if deadline is not None:
                        wait = min(wait, deadline - time.time())
                        if wait <= 0:
                            return
                    self.cond.wait(wait)
                    continue
                last = batch[-1][0]
            for rv, etype, key, ens, obj, prev in batch:
                if key != res.key or (ns is not None and ens != ns):
                    continue
                now_in = pred(obj)
                if etype == "MODIFIED" and prev is not None:
                    # Moving into or out of the selection is an ADDED or a
                    # DELETED for this watch, as the watch cache says.
                    was_in = pred(prev)
                    if now_in and not was_in:
                        etype = "ADDED"
                    elif was_in and not now_in:
                        etype, now_in = "DELETED", True
                if not now_in:
                    continue
                yield etype, obj   # the store's, to read only (serialised)
            if stop():
                return
            if deadline is not None and time.time() >= deadline:
                return
