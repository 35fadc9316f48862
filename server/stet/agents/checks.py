"""Small checks of the text fields agents send (titles, notes, ids)."""

from __future__ import annotations

from ..errors import InvalidParams

MAX_TEXT = 64 * 1024  # characters in one title, goal, step or note


def text(name: str, value: object, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(f"{name} must be a non-empty string")
    if len(value) > limit:
        raise InvalidParams(f"{name} is longer than {limit} characters")
    return value


def opt_text(name: str, value: object, limit: int = MAX_TEXT) -> str | None:
    if value is None or value == "":
        return None
    return text(name, value, limit)
