"""kubefake/errors.py - the API's error answers: metav1.Status objects.

Every non-2xx answer of the API server is a Status (kind Status, apiVersion
v1, status Failure) with a message, a reason from the fixed set
(NotFound, AlreadyExists, Conflict, Invalid, Forbidden, Unauthorized,
TooManyRequests, BadRequest, Expired/Gone, MethodNotAllowed, ...), the HTTP
code, and details naming the object.
"""


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details
        self.headers = headers or {}

    def status(self):
        return status_object(self.code, self.reason, self.message, self.details)


def status_object(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    return s


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.gr(), name),
                    details={"name": name, "group": res.group, "kind": res.plural})


def invalid(res, kind, name, causes):
    """422: causes is a list of (field, message, reason)."""
    msg = "; ".join("%s: %s" % (f, m) for f, m, _ in causes)
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name, msg),
                    details={"name": name, "group": res.group, "kind": kind,
                             "causes": [{"reason": r, "message": m, "field": f}
                                        for f, m, r in causes]})


def forbidden(res, name, why):
    return ApiError(403, "Forbidden", '%s "%s" is forbidden: %s' % (res.gr(), name, why),
                    details={"name": name, "group": res.group, "kind": res.plural})
