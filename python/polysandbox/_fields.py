"""polysandbox._fields - reading a field of a JSON object that came from
the library or a server, checked as hostile input."""

from __future__ import annotations

from typing import Any

from .errors import ServerError


class _Missing:
    """The type of _MISSING: no kind asked for is it (object() would be
    object, which a field of any type may ask for)."""


_MISSING = _Missing()


def field(obj: Any, what: str, name: str, kind: type, null: bool = False) -> Any:
    """obj[name], of type kind (or None when null), else ServerError
    naming what and the field."""
    # The common case first (every field of every result goes through
    # here): exactly the type asked for; bool is never taken for int.
    if type(obj) is dict:
        v = obj.get(name, _MISSING)
        if type(v) is kind:
            return v
    if not isinstance(obj, dict):
        raise ServerError(f"{what}: expected a JSON object, not {type(obj).__name__}")
    if name not in obj:
        raise ServerError(f"{what}: field '{name}' is missing")
    v = obj[name]
    if v is None and null:
        return None
    # bool is an int in Python, never in the JSON.
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise ServerError(f"{what}: field '{name}' must be {kind.__name__}"
                          f"{' or null' if null else ''}, not {type(v).__name__}")
    return v
