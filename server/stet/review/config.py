"""Timings, limits, and the editor port the review service depends on."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Protocol

from .. import limits
from ..domain.shapes import TextEdit
from ..errors import InvalidParams

CONFIRM_TIMEOUT = 0.5  # seconds the command waits for the editor to show an applied edit; a later
# didChange that shows it still makes the hunk applied (eglot sends it when Emacs is idle)
APPLY_TIMEOUT = 10.0  # seconds to wait for the editor's answer to an edit
RETRY_DELAY = 0.3
IDLE_CHECKPOINT = 2.0
SETTLE_DELAY = 0.5
OUTSIDE_DEBOUNCE = 0.15  # a burst of file events (a checkout, an atomic save) is handled once


class Editor(Protocol):
    """What the review needs from the editor: apply an edit to an open buffer."""

    async def apply_edit(self, uri: str, version: int | None, edits: list[TextEdit], label: str) -> bool: ...


class NoEditor:
    """A process without an editor (the CLI, MCP): the review writes files itself."""

    async def apply_edit(self, uri: str, version: int | None, edits: list[TextEdit], label: str) -> bool:
        return False


@dataclass
class Limits:
    max_bytes: int = limits.PROPOSAL
    max_hunks: int = 20_000
    max_id_length: int = 256

    def check_id(self, name: str, value: object) -> None:
        if not isinstance(value, str) or not value or len(value) > self.max_id_length:
            raise InvalidParams(f"{name} must be a non-empty string of at most {self.max_id_length} characters")


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(6)
