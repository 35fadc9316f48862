"""Named fault points for crash tests.

`fault("accept:after-commit")` does nothing unless the environment variable STET_FAULT
names that point: then the process kills itself with SIGKILL, exactly like `kill -9`.
STET_FAULT holds comma-separated names, each optionally `@N` to fire on the N-th pass.
"""

from __future__ import annotations

import os
import signal

_SPEC = os.environ.get("STET_FAULT", "")
_WANTED: dict[str, int] = {}
for _item in filter(None, (s.strip() for s in _SPEC.split(","))):
    _name, _, _nth = _item.partition("@")
    _WANTED[_name] = int(_nth) if _nth.isdigit() else 1
_PASSES: dict[str, int] = {}

# Every point the code declares, so tests can enumerate them.
POINTS = (
    "propose:after-commit",
    "decide:after-commit",
    "effect:before-write",
    "effect:after-write",
    "effect:before-confirm",
    "effect:after-confirm",
    "recover:start",
    "recover:after-effect",
    "recover:after-relocate",
)


def fault(name: str) -> None:
    if not _WANTED or name not in _WANTED:
        return
    _PASSES[name] = _PASSES.get(name, 0) + 1
    if _PASSES[name] == _WANTED[name]:
        os.kill(os.getpid(), signal.SIGKILL)
