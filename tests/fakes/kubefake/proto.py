"""kubefake/proto.py - the few protobuf request bodies typed clients send.

client-go's typed clients (kubectl create token, kubectl auth can-i) send
application/vnd.kubernetes.protobuf: the bytes "k8s\\0", then a
runtime.Unknown message (typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
contentEncoding = 3, contentType = 4) whose raw field is the object in
protobuf.  Only the messages those commands send are mapped to JSON here
(field numbers from k8s.io/api generated.proto); answers are JSON, which
those clients accept.
"""
from .errors import ApiError

MAGIC = b"k8s\x00"


def _varint(b, i):
    shift = v = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """{field number: [values]}: ints for varints, bytes for the rest."""
    out, i = {}, 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated field")
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def _s(f, n):
    v = f.get(n)
    return v[-1].decode() if v else None


def _map(entries):
    out = {}
    for e in entries:
        f = fields(e)
        out[_s(f, 1) or ""] = _s(f, 2) or ""
    return out


def _meta(b):
    """ObjectMeta: name 1, generateName 2, namespace 3, labels 11, annotations 12."""
    f = fields(b)
    md = {}
    for n, k in ((1, "name"), (2, "generateName"), (3, "namespace")):
        if _s(f, n):
            md[k] = _s(f, n)
    if f.get(11):
        md["labels"] = _map(f[11])
    if f.get(12):
        md["annotations"] = _map(f[12])
    return md


def decode(raw):
    """The JSON form of a protobuf body, for the kinds known here."""
    if not raw.startswith(MAGIC):
        raise ApiError(400, "BadRequest", "protobuf body without the k8s magic number")
    try:
        unk = fields(raw[len(MAGIC):])
        tm = fields(unk.get(1, [b""])[-1])
        kind = _s(tm, 2)
        body = fields(unk.get(2, [b""])[-1])
        if kind == "TokenRequest":
            spec = fields(body.get(2, [b""])[-1])
            out = {"apiVersion": _s(tm, 1), "kind": kind,
                   "spec": {"audiences": [a.decode() for a in spec.get(1, [])]}}
            if spec.get(4):
                out["spec"]["expirationSeconds"] = spec[4][-1]
            return out
        if kind in ("Namespace", "ServiceAccount"):
            # metadata = 1 for both; a new namespace's spec and status are
            # the server's to fill in, a ServiceAccount's secret lists
            # are not sent by kubectl create.
            return {"apiVersion": _s(tm, 1), "kind": kind,
                    "metadata": _meta(body.get(1, [b""])[-1])}
        if kind == "SelfSubjectAccessReview":
            spec = fields(body.get(2, [b""])[-1])
            out = {"apiVersion": _s(tm, 1), "kind": kind, "spec": {}}
            if spec.get(1):
                ra = fields(spec[1][-1])
                out["spec"]["resourceAttributes"] = {
                    k: _s(ra, n) for n, k in ((1, "namespace"), (2, "verb"), (3, "group"),
                                              (4, "version"), (5, "resource"),
                                              (6, "subresource"), (7, "name")) if _s(ra, n)}
            if spec.get(2):
                na = fields(spec[2][-1])
                out["spec"]["nonResourceAttributes"] = {"path": _s(na, 1), "verb": _s(na, 2)}
            return out
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, "BadRequest", "cannot decode the protobuf body: %s" % e)
    raise ApiError(415, "UnsupportedMediaType", "the fake decodes protobuf bodies of "
                   "TokenRequest, SelfSubjectAccessReview, Namespace and ServiceAccount only; "
                   "send JSON")
