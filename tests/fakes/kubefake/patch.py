"""kubefake/patch.py - PATCH bodies: JSON merge, strategic merge, JSON patch.

Strategic merge patch is approximated: maps merge as in a JSON merge
patch, and lists whose items are maps with a "name" (containers, env,
volumes, ports...) merge item by item on that name; other lists are
replaced; "$patch"/"$retainKeys" directives are dropped.  Server-side apply
(application/apply-patch+yaml) is answered 415.
"""
import copy

from .errors import ApiError


def merge(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def _named(lst):
    return isinstance(lst, list) and lst and all(isinstance(i, dict) and "name" in i for i in lst)


def strategic(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$") or k.startswith("$setElementOrder"):
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and _named(v) and _named(out.get(k)):
            cur = {i["name"]: i for i in out[k]}
            order = [i["name"] for i in out[k]]
            for item in v:
                if item.get("$patch") == "delete":
                    cur.pop(item["name"], None)
                    continue
                if item["name"] not in cur:
                    order.append(item["name"])
                cur[item["name"]] = strategic(cur.get(item["name"]), item)
            out[k] = [cur[n] for n in order if n in cur]
        else:
            out[k] = strategic(out.get(k), v)
    return out


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", "invalid JSON pointer: %s" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(doc, ops):
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "json patch must be a list of operations")
    for op in ops:
        kind, path = op.get("op"), _pointer(op.get("path", ""))
        parent = doc
        for p in path[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.get(p)
            if parent is None:
                raise ApiError(422, "Invalid", "jsonpatch %s operation does not apply: doc is "
                               "missing path: %s" % (kind, op.get("path")))
        last = path[-1] if path else None
        if kind in ("add", "replace"):
            if isinstance(parent, list):
                i = len(parent) if last == "-" else int(last)
                if kind == "add":
                    parent.insert(i, copy.deepcopy(op["value"]))
                else:
                    parent[i] = copy.deepcopy(op["value"])
            else:
                if kind == "replace" and last not in parent:
                    raise ApiError(422, "Invalid", "jsonpatch replace operation does not apply: "
                                   "doc is missing key: %s" % op.get("path"))
                parent[last] = copy.deepcopy(op["value"])
        elif kind == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            elif last in parent:
                del parent[last]
            else:
                raise ApiError(422, "Invalid", "jsonpatch remove operation does not apply: doc "
                               "is missing path: %s" % op.get("path"))
        elif kind == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op.get("value"):
                raise ApiError(422, "Invalid", "testing value %s failed" % op.get("path"))
        else:
            raise ApiError(400, "BadRequest", "unsupported json patch operation %r" % kind)
    return doc


def apply(obj, body, ctype):
    ct = (ctype or "").split(";")[0].strip()
    if ct == "application/merge-patch+json":
        return merge(obj, body)
    if ct == "application/strategic-merge-patch+json":
        return strategic(obj, body)
    if ct == "application/json-patch+json":
        return json_patch(obj, body)
    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown "
                   "format - accepted media types include: application/json-patch+json, "
                   "application/merge-patch+json, application/strategic-merge-patch+json")
