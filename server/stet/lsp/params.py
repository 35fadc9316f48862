"""Checking the raw JSON params of Stet's own LSP commands (decisions and listings).

Anything malformed becomes InvalidParams with a message naming the field: a client
gets an answer it can act on, never silence and never a crash.
"""

from __future__ import annotations

from ..agents.params import obj, opt_str, req_str
from ..domain.status import Status
from ..errors import InvalidParams

__all__ = ["expected_versions", "hunk_ids", "obj", "one_object", "opt_str", "req_str", "statuses"]


def one_object(args: tuple | list | None, name: str) -> dict:
    if not args or len(args) != 1 or not isinstance(args[0], dict):
        raise InvalidParams(f"{name} takes one argument: a params object")
    return args[0]


def hunk_ids(d: dict) -> list[str]:
    ids = d.get("hunkIds")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
        raise InvalidParams("`hunkIds` must be a non-empty list of hunk id strings")
    return ids


def expected_versions(d: dict) -> dict[str, int] | None:
    value = d.get("expectedVersions")
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in value.items()
    ):
        raise InvalidParams("`expectedVersions` must map hunk ids to integer versions")
    return value


def statuses(d: dict) -> set[Status] | None:
    value = d.get("status")
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise InvalidParams("`status` must be a list of statuses")
    try:
        return {Status(v) for v in value}
    except (ValueError, TypeError):
        raise InvalidParams(f"`status` values must be among {', '.join(s.value for s in Status)}") from None
