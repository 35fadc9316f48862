"""The checks of a raw JSON params object's fields, shared by every door that reads one.

Anything malformed is InvalidParams naming the field. Read by the LSP door's params (lsp/params.py)
and by the agents' proposal doors: stdlib only, below every room.
"""

from __future__ import annotations

from .errors import InvalidParams

TYPE_CHECKING = False  # `typing` costs the CLI's start: types for mypy only
if TYPE_CHECKING:
    from typing import Any


def obj(params: object, name: str) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParams(f"{name}: params must be an object")
    return params


def opt_str(d: dict[str, Any], key: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidParams(f"`{key}` must be a string")
    return value


def req_str(d: dict[str, Any], key: str) -> str:
    value = d.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidParams(f"`{key}` is required and must be a non-empty string")
    return value
