"""polysandbox.errors - one exception hierarchy for the library's codes.

Every error the library (sbx_status) or polysandboxd (its "error.code")
reports becomes one of these, carrying the library's message; the
remote names map to the same classes as the local codes.
"""

from __future__ import annotations

__all__ = [
    "SandboxError", "InvalidRequestError", "ConfigError", "SandboxNotFoundError",
    "ProviderError", "AuthError", "SandboxTimeoutError", "CancelledRunError",
    "ServerError", "error_for_code", "error_for_remote",
]


class SandboxError(Exception):
    """Base of every polysandbox error.

    code: the library's sbx_status (0 when none applies, e.g. transport),
    provider: the provider named by the error, or None,
    message: the library's (or server's) message.
    """

    def __init__(self, message: str, code: int = 0, provider: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.provider = provider


class InvalidRequestError(SandboxError, ValueError):
    """The request was refused: a bad argument, path or limit."""


class ConfigError(SandboxError):
    """A bad configuration file or value."""


class SandboxNotFoundError(SandboxError, LookupError):
    """No such sandbox, provider, template or file."""


class ProviderError(SandboxError):
    """The provider failed, is unavailable, busy or lacks the operation."""


class AuthError(SandboxError):
    """Credentials were refused (the backend's, or polysandboxd's token)."""


class SandboxTimeoutError(SandboxError, TimeoutError):
    """A backend operation (not the code run) timed out."""


class CancelledRunError(SandboxError):
    """The caller cancelled the run."""


class ServerError(SandboxError):
    """polysandboxd could not be reached or answered something unexpected."""


# sbx_status values (sdk/include/polysandbox/common.h) and the names
# polysandboxd gives them (core/server/reply.c), with their class.
_CODES = {
    1: ("nomem", SandboxError),
    2: ("invalid", InvalidRequestError),
    3: ("config", ConfigError),
    4: ("not_supported", ProviderError),
    5: ("declined", ProviderError),
    6: ("not_found", SandboxNotFoundError),
    7: ("provider_unavailable", ProviderError),
    8: ("backend", ProviderError),
    9: ("backend_auth", AuthError),
    10: ("backend_timeout", SandboxTimeoutError),
    11: ("io", SandboxError),
    12: ("limit", InvalidRequestError),
    13: ("busy", ProviderError),
    14: ("backend_network", ProviderError),
    15: ("backend_rate_limited", ProviderError),
    16: ("permission", SandboxError),
    17: ("exists", SandboxError),
    18: ("internal", SandboxError),
    19: ("path", InvalidRequestError),
    20: ("backend_server", ProviderError),
    21: ("cancelled", CancelledRunError),
}
_BY_NAME = {name: (code, cls) for code, (name, cls) in _CODES.items()}
# The server's own refusals, which have no library code.
_BY_NAME.update({
    "unauthorized": (0, AuthError),
    "forbidden": (0, AuthError),
    "bad_request": (0, InvalidRequestError),
    "payload_too_large": (0, InvalidRequestError),
})


def error_for_code(code: int, message: str, provider: str | None = None) -> SandboxError:
    """The exception for a library status code (loader refusals, 32 and
    up, mean the provider cannot be used)."""
    if code >= 32:
        cls = ProviderError
    else:
        cls = _CODES.get(code, ("", SandboxError))[1]
    return cls(message, code, provider)


def error_for_remote(name: str, message: str, provider: str | None = None) -> SandboxError:
    """The exception for polysandboxd's error object {"code", "message"}."""
    code, cls = _BY_NAME.get(name, (0, ServerError))
    return cls(message, code, provider)
