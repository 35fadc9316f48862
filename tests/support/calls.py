"""A `stet` command run in this process through its call (stet/cli/call.py): its own folder,
environment and stdin, its output captured, nothing of the process changed. No subprocess:
fast enough for the review's logic, and several calls can run at once in one event loop."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

from stet.cli.call import Call
from stet.cli.main import run, run_here


@dataclass
class Ran:
    code: int
    out: str
    err: str


def make(argv: list[str], cwd: Path | str, *, stdin: bytes = b"", env: dict[str, str] | None = None) -> Call:
    """The call of `stet ARGV` in `cwd`: this process's environment without a store or a fault of
    its own (plus `env`), `stdin` as its input, its output kept in memory."""
    base = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    return Call(
        argv,
        cwd=str(cwd),
        env={**base, "NO_COLOR": "1", **(env or {})},
        stdin=io.BytesIO(stdin),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )


def _ran(call: Call, code: int) -> Ran:
    assert isinstance(call.stdout, io.StringIO) and isinstance(call.stderr, io.StringIO)
    return Ran(code, call.stdout.getvalue(), call.stderr.getvalue())


async def stet_in(argv: list[str], cwd: Path | str, **kw) -> Ran:
    """`stet ARGV` in `cwd`, in the running event loop."""
    call = make(argv, cwd, **kw)
    return _ran(call, await run(call))


def stet_here(argv: list[str], cwd: Path | str, **kw) -> Ran:
    """`stet ARGV` in `cwd`, with an event loop of its own when the command needs one."""
    call = make(argv, cwd, **kw)
    return _ran(call, run_here(call))
