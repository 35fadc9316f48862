"""Stet's part in the relay: the messages it records, answers or extends.

The relay calls `from_editor` for every message the editor sends and `from_agent` for every
message the agent sends, one at a time per direction, and passes each on only when the
verdict comes back (so a change is durable before the editor sees it). `asked` is the request
a response answers (the relay pairs them by id, per direction), else None. Everything else
passes untouched; a part that fails on a message lets it through (the relay logs it once).
"""

from __future__ import annotations

from typing import Protocol

from .message import Message, Verdict


class Part(Protocol):
    async def from_editor(self, msg: Message, asked: Message | None) -> Verdict: ...

    async def from_agent(self, msg: Message, asked: Message | None) -> Verdict: ...

    async def close(self) -> None: ...
