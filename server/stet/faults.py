"""Named fault points for crash tests.

`fault("accept:after-commit")` does nothing unless the environment variable STET_FAULT
names that point: then the process kills itself with SIGKILL, exactly like `kill -9`.
STET_FAULT holds comma-separated names, each optionally `@N` to fire on the N-th pass.
`name~SECONDS` pauses there instead of dying (on every pass): it widens a race window so
that a test of two processes racing is deterministic. `await pause(name)` marks a point that
only pauses, and lets the process go on serving meanwhile (what it scheduled goes out).
"""

from __future__ import annotations

import os
import signal
import time

_SPEC = os.environ.get("STET_FAULT", "")
_WANTED: dict[str, int] = {}
_PAUSES: dict[str, float] = {}
for _item in filter(None, (s.strip() for s in _SPEC.split(","))):
    if "~" in _item:
        _name, _, _secs = _item.partition("~")
        _PAUSES[_name] = float(_secs)
        continue
    _name, _, _nth = _item.partition("@")
    _WANTED[_name] = int(_nth) if _nth.isdigit() else 1
_PASSES: dict[str, int] = {}

# The points of the review core, so tests can enumerate them (the crash torture fires each).
POINTS = (
    "propose:after-commit",
    "decide:after-commit",
    "split:after-commit",
    "effect:before-write",
    "effect:after-write",
    "effect:before-confirm",
    "effect:after-confirm",
    "recover:start",
    "recover:after-effect",
    "recover:after-relocate",
    "task:after-commit",
    "inbox:after-propose",
)

# Capture's points (tests/crash/test_capture_crash.py): the proposal and its restore journal
# commit together; the files are restored after, one at a time, then the journal is closed.
CAPTURE_POINTS = (
    "snapshot:pack-written",
    "snapshot:after-blobs",
    "capture:after-commit",
    "capture:after-restore",
    "capture:before-done",
    "run:after-snapshot",
    "run:after-agent",
)

# `stet acp`'s points (tests/crash/test_acp_crash.py): a change the agent proposed recorded (the
# capture committed), the message that carried it not passed on to the editor yet; the developer's
# decisions recorded as told, the prompt that tells them not passed on to the agent yet.
ACP_POINTS = ("acp:after-record", "acp:after-tell")


def fault(name: str) -> None:
    if _PAUSES and name in _PAUSES:
        time.sleep(_PAUSES[name])
        return
    if not _WANTED or name not in _WANTED:
        return
    _PASSES[name] = _PASSES.get(name, 0) + 1
    if _PASSES[name] == _WANTED[name]:
        os.kill(os.getpid(), signal.SIGKILL)


async def pause(name: str) -> None:
    """`name~SECONDS` in STET_FAULT: wait that long here, the event loop free (a notification
    already scheduled goes out meanwhile), e.g. "split:before-effect": between a split told
    and its part's edit sent to the editor (the VS Code workbench test widens it)."""
    if _PAUSES and name in _PAUSES:
        import asyncio  # here: the thin client and `stet mcp`'s front import this module first thing

        await asyncio.sleep(_PAUSES[name])
