"""Load mode: busy processes beside a torture, as on a laptop or CI runner doing other work.

Races between Stet's processes (an editor's late `didChange` and a decision in flight, a
resident and a CLI process) hide on a quiet machine and show on a busy one. `busy(n)` starts
`n` processes that spin on the CPU for as long as the `with` block lasts, then kills them.
Each also ends by itself when its parent is gone (a torture killed with SIGKILL leaves none).

The number comes from the torture's `--load N` flag, or the `STET_TORTURE_LOAD` environment
variable (the default of every torture in this folder, the tests' included).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

ENV = "STET_TORTURE_LOAD"

# Spins, and checks now and then that its parent still lives (then re-parented: ppid changes).
_SPIN = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(2_000_000):
        pass
"""


def from_env(default: int = 0) -> int:
    """The load asked for by STET_TORTURE_LOAD (a number of busy processes; 0 or unset: none)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        raise SystemExit(f"{ENV}={raw!r}: a number of busy processes is expected") from None
    return max(0, n)


@contextlib.contextmanager
def busy(n: int) -> Iterator[list[int]]:
    """`n` processes spinning on the CPU while the block runs; their pids are yielded."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SPIN],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(max(0, n))
    ]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)
