"""An agent's hook answered: its codec (agents/codecs/) decodes the input, the loop
(agents/turn.py) does what it means, the codec encodes the answer. The one entry of `stet hook
AGENT` and of `stet mcp --http`'s hook route."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..domain.shapes import JSON
from ..errors import InvalidParams
from ..review import Review
from .codecs import NAMES
from .loop import Loop
from .turn import Turn


def codec(agent: str) -> ModuleType:
    if agent not in NAMES:
        raise InvalidParams(f"no hooks for the agent {agent!r} (Stet knows {', '.join(NAMES)})")
    return importlib.import_module(f"{__package__}.codecs.{agent.replace('-', '_')}")


async def handle(
    review: Review,
    agent: str,
    payload: Any,
    *,
    keep: bool = True,
    undo: list[Any] | None = None,
    env: Mapping[str, str] | None = None,
    request_changes: bool = False,
) -> JSON:
    """Do what one hook event asks; returns the JSON to print for the agent ({}: nothing).
    `undo` receives what to give `Loop.untell` when the answer could not be delivered; `env` is
    the hook's caller's environment (None: this process's); `request_changes`: at the end of a
    turn, rejections with feedback not told yet send the agent back to work."""
    c = codec(agent)
    event = c.decode(payload, env)
    if event is None:
        return {}
    answer = await Turn(review, c.AGENT, keep=keep, request_changes=request_changes).handle(event)
    if undo is not None:
        undo.extend(answer.told)
    out: JSON = c.encode(event, answer)
    return out


def loop(review: Review, agent: str) -> Loop:
    """The loop of an agent's tasks: those it started, and its hooks'."""
    a = codec(agent).AGENT
    return Loop(review, a.name, task_prefix=a.prefix)
