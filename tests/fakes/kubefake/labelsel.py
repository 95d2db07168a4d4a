"""kubefake/labelsel.py - label and field selectors as the API server parses them.

Label selectors (apimachinery pkg/labels/selector.go): comma-separated
requirements, each one of `key`, `!key`, `key=value`, `key==value`,
`key!=value`, `key in (a,b)`, `key notin (a,b)`, `key>N`, `key<N`.  Keys are
qualified names (an optional DNS-subdomain prefix and a slash), values are
label values.  A malformed selector is a 400 with the server's wording.

Field selectors (pkg/fields/selector.go): `field=value`, `field==value`,
`field!=value`, comma-separated, on the fields each resource supports.
"""
import re

NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class SelectorError(Exception):
    """A selector the server refuses (400 BadRequest)."""


def qualified_name_errors(key):
    """The API server's complaints about a label key, or []."""
    errs = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253 or not DNS_SUBDOMAIN_RE.match(prefix):
            errs.append("prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                        "alphanumeric characters, '-' or '.', and must start and end with an "
                        "alphanumeric character")
    else:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                "'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    elif not NAME_RE.match(name):
        errs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character")
    return errs


def label_value_errors(v):
    if len(v) > 63:
        return ["must be no more than 63 characters"]
    if not VALUE_RE.match(v):
        return ["a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character"]
    return []


# ---- label selectors --------------------------------------------------------

_TOKEN = re.compile(r"\s*(\(|\)|,|!=|==|=|!|>|<|[^\s(),!=<>]+)")


def _lex(s):
    toks = []
    pos = 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            if s[pos:].strip() == "":
                break
            raise SelectorError("unable to parse requirement: found '%s', expected: identifier"
                                % s[pos:pos + 1])
        toks.append(m.group(1))
        pos = m.end()
        while pos < len(s) and s[pos].isspace():
            pos += 1
    return toks


class Requirement:
    def __init__(self, key, op, values):
        self.key, self.op, self.values = key, op, values

    def matches(self, labels):
        has = self.key in labels
        v = labels.get(self.key)
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if self.op in ("=", "==", "in"):
            return has and v in self.values
        if self.op in ("!=", "notin"):
            return not has or v not in self.values
        if self.op in (">", "<"):
            if not has:
                return False
            try:
                n = int(v)
            except ValueError:
                return False
            return n > self.values[0] if self.op == ">" else n < self.values[0]
        return False

    def __str__(self):
        if self.op == "exists":
            return self.key
        if self.op == "!":
            return "!" + self.key
        if self.op in ("in", "notin"):
            return "%s %s (%s)" % (self.key, self.op, ",".join(sorted(self.values)))
        return "%s%s%s" % (self.key, self.op, self.values[0] if self.values else "")


def _check_key(key):
    errs = qualified_name_errors(key)
    if errs:
        raise SelectorError("unable to parse requirement: <nil>: Invalid value: \"%s\": %s"
                            % (key, "; ".join(errs)))


def _check_value(key, v):
    errs = label_value_errors(v)
    if errs:
        raise SelectorError("unable to parse requirement: values[0][%s]: Invalid value: \"%s\": %s"
                            % (key, v, errs[0]))


def parse_labels(s):
    """A list of Requirements, or SelectorError."""
    if s is None or s.strip() == "":
        return []
    toks = _lex(s)
    reqs = []
    i = 0

    def need(what):
        if i >= len(toks):
            raise SelectorError("unable to parse requirement: found '', expected: %s" % what)
        return toks[i]

    while i < len(toks):
        t = need("identifier")
        if t == "!":
            i += 1
            key = need("identifier")
            _check_key(key)
            i += 1
            reqs.append(Requirement(key, "!", []))
        else:
            if t in ("(", ")", ",", "=", "==", "!=", ">", "<"):
                raise SelectorError("unable to parse requirement: found '%s', expected: "
                                    "!, identifier, or 'end of string'" % t)
            key = t
            _check_key(key)
            i += 1
            if i >= len(toks) or toks[i] == ",":
                reqs.append(Requirement(key, "exists", []))
            else:
                op = toks[i]
                i += 1
                if op in ("=", "==", "!="):
                    v = toks[i] if i < len(toks) and toks[i] not in (",", "(", ")") else ""
                    if v:
                        i += 1
                    _check_value(key, v)
                    reqs.append(Requirement(key, op, [v]))
                elif op in (">", "<"):
                    v = need("integer value")
                    i += 1
                    try:
                        n = int(v)
                    except ValueError:
                        raise SelectorError("unable to parse requirement: for 'Gt', 'Lt' "
                                            "operators, the value must be an integer")
                    reqs.append(Requirement(key, op, [n]))
                elif op in ("in", "notin"):
                    if need("(") != "(":
                        raise SelectorError("unable to parse requirement: found '%s', "
                                            "expected: '('" % toks[i])
                    i += 1
                    vals = []
                    while True:
                        t2 = need(")")
                        if t2 == ")":
                            i += 1
                            break
                        if t2 == ",":
                            if not vals:
                                vals.append("")
                            i += 1
                            if need(")") in (",", ")"):
                                vals.append("")
                            continue
                        _check_value(key, t2)
                        vals.append(t2)
                        i += 1
                    if not vals:
                        raise SelectorError("unable to parse requirement: for 'in', 'notin' "
                                            "operators, values set can't be empty")
                    reqs.append(Requirement(key, op, vals))
                else:
                    raise SelectorError("unable to parse requirement: found '%s', expected: "
                                        "in, notin, =, ==, !=, gt, lt" % op)
        if i < len(toks):
            if toks[i] != ",":
                raise SelectorError("unable to parse requirement: found '%s', expected: ','"
                                    % toks[i])
            i += 1
            if i >= len(toks):
                raise SelectorError("unable to parse requirement: found '', expected: "
                                    "identifier after ','")
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    return all(r.matches(labels) for r in reqs)


# ---- field selectors --------------------------------------------------------

def _dig(obj, path):
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


FIELDS = {
    "pods": ("metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
             "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork",
             "status.phase", "status.podIP", "status.nominatedNodeName"),
    "events": ("metadata.name", "metadata.namespace", "involvedObject.kind",
               "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion",
               "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
    "secrets": ("metadata.name", "metadata.namespace", "type"),
}


def parse_fields(s, resource):
    """A list of (field, op, value); SelectorError when a field is not
    supported by the resource or the syntax is bad."""
    if not s:
        return []
    out = []
    allowed = FIELDS.get(resource, ("metadata.name", "metadata.namespace"))
    for part in s.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([^=!]+)(==|!=|=)(.*)$", part)
        if not m:
            raise SelectorError("invalid selector: '%s'; can't understand '%s'" % (s, part))
        field, op, value = m.group(1).strip(), m.group(2), m.group(3)
        if field not in allowed:
            raise SelectorError("field label not supported: %s" % field)
        out.append((field, op, value))
    return out


def fields_match(sel, obj):
    for field, op, value in sel:
        v = _dig(obj, field)
        if isinstance(v, bool):
            v = "true" if v else "false"
        v = "" if v is None else str(v)
        if (op == "!=") == (v == value):
            return False
    return True
