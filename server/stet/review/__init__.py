"""The review service (see service.py); the rest of Stet imports it from here.

The names below are loaded when first used: importing `stet.review.glance` (what `stet
status` reads without opening the review) must not import the whole service."""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .config import Editor, Limits, NoEditor, new_id
    from .service import Review
    from .session import Opened, open_review

_HOME = {
    "Editor": "config",
    "Limits": "config",
    "NoEditor": "config",
    "new_id": "config",
    "Review": "service",
    "Opened": "session",
    "open_review": "session",
}

__all__ = ["Editor", "Limits", "NoEditor", "Opened", "Review", "new_id", "open_review"]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
