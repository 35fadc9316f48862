"""The resident process (stet/resident/) as the tests drive it: turned on, asked whether it
answers (through its socket, as users ask), stopped and waited for, or started by hand with a
named fault point so that it dies with SIGKILL inside a call."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from support.clitools import stet

ON = {"STET_RESIDENT": "on", "STET_RESIDENT_IDLE": "120"}


def wait_for(check, what: str, deadline: float = 60.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def resident_pid(root: Path) -> int | None:
    """The pid of the resident answering in `root`, asked through the socket (None: none answers)."""
    p = stet("resident", "--status", cwd=root, env=ON)
    if p.returncode != 0 or not p.stdout.startswith("resident "):
        return None
    return int(p.stdout.split()[1].rstrip(":"))


def calls(root: Path) -> int:
    p = stet("resident", "--status", cwd=root, env=ON)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return int(p.stdout.split(": ", 1)[1].split()[0])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is not alive
        return f.read().split(") ", 1)[1][0] != "Z"


def stop(root: Path) -> None:
    pid = resident_pid(root)
    stet("resident", "--stop", cwd=root, env=ON)
    if pid is not None:
        wait_for(lambda: not alive(pid), f"resident {pid} to stop")


@contextlib.contextmanager
def faulty_resident(root: Path, point: str) -> Iterator[subprocess.Popen]:
    """A resident started by hand in `root` that kills itself at the fault point `point`;
    yields once it answers, and is killed if it is still alive after the block."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "stet", "resident"],
        cwd=root,
        env={**os.environ, **ON, "STET_FAULT": point},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: resident_pid(root) == proc.pid, "the resident with the fault to answer")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
