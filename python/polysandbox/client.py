"""polysandbox.client - the same calls, through polysandboxd.

Client sends the body request.py built to POST /v1/run with the standard
library's urllib (no dependency), and builds the Result from the reply:
the same object a local run gives.  The server's error replies
({"error": {"code", "message", "provider"}}) raise the exception class of
the same library code.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .errors import ServerError, error_for_remote
from .info import Provider, Template, listing
from .request import Runner
from .result import Result

__all__ = ["Client"]


class Client(Runner):
    """A runner over polysandboxd at url (http:// or https://), with the
    bearer token when the server asks for one.  timeout: seconds to wait
    for a reply (the run's own time included); None waits as long as it
    takes.  One Client may be used from many threads."""

    def __init__(self, url: str, token: str | None = None, timeout: float | None = None):
        if not isinstance(url, str):
            raise TypeError(f"polysandbox.Client: argument 'url' must be a str, "
                            f"not {type(url).__name__}")
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"polysandbox.Client: argument 'url' must be an http:// or "
                             f"https:// URL with a host, not {url!r}")
        if token is not None and (not isinstance(token, str) or not token
                                  or any(c in token for c in "\r\n\0")):
            raise ValueError("polysandbox.Client: argument 'token' must be a non-empty str "
                             "on one line")
        self.url = url.rstrip("/")
        self._token = token
        self._timeout = timeout

    def __repr__(self) -> str:
        return f"Client({self.url!r})"   # never the token

    def providers(self) -> list[Provider]:
        """The server's providers (GET /v1/providers)."""
        return listing(self._call("GET", "/v1/providers"), "providers", Provider)

    def templates(self) -> list[Template]:
        """The server's language templates (GET /v1/templates)."""
        return listing(self._call("GET", "/v1/templates"), "templates", Template)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Accept": "application/json"})
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as e:
            raise self._refusal(path, e) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ServerError(f"polysandboxd at {self.url}: {path}: {reason}") from None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise ServerError(f"polysandboxd at {self.url}: {path}: the reply is not "
                              f"JSON: {e}") from None

    def _refusal(self, path: str, e: urllib.error.HTTPError) -> Exception:
        try:
            err = json.loads(e.read())["error"]
            name, msg = str(err["code"]), str(err["message"])
            prov = err.get("provider")
        except (ValueError, KeyError, TypeError):
            return ServerError(f"polysandboxd at {self.url}: {path}: HTTP {e.code} "
                               f"{e.reason}")
        return error_for_remote(name, msg, prov if isinstance(prov, str) else None)

    def _execute(self, body: dict[str, Any]) -> Result:
        return Result.from_json(self._call("POST", "/v1/run", body))
