"""The permission bits of the files and folders Stet makes for a call: those its caller's umask
gives, as if the caller had made them.

In a process of its own a command has its caller's umask, and the kernel applies it. A resident
process (stet/resident/) answers calls of many callers with one umask, the one of whichever call
started it: it sets each call's umask here (`for_caller`), and what the call makes gets exactly
`0666 & ~umask` (a file) or `0777 & ~umask` (a folder), whatever the process's own umask (an
explicit mode, then `fchmod`; never `os.umask`, which is the whole process's). A context
variable: it follows the call into `asyncio.to_thread`, and background work outside any call
keeps the process's own."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar

FILE = 0o666
FOLDER = 0o777

_CALLER: ContextVar[int | None] = ContextVar("stet_caller_umask", default=None)


@contextlib.contextmanager
def for_caller(umask: int | None) -> Iterator[None]:
    """What the block makes gets the umask `umask` (None: this process's own)."""
    token = _CALLER.set(None if umask is None else umask & 0o777)
    try:
        yield
    finally:
        _CALLER.reset(token)


def caller_umask() -> int | None:
    """The umask set for the call in progress; None: this process's own (the kernel applies it)."""
    return _CALLER.get()


def wanted(base: int) -> int:
    """The mode to create with, for `base` (FILE or FOLDER)."""
    umask = _CALLER.get()
    return base if umask is None else base & ~umask


def settle(fd: int, base: int) -> None:
    """Give what was just made (open as `fd`) exactly the caller's mode, when one is set: the
    process's own umask may have taken more bits than the caller's would."""
    umask = _CALLER.get()
    if umask is not None:
        os.fchmod(fd, base & ~umask)


def child_umask() -> int:
    """The `umask` argument of subprocess for a program run for the call (-1: as this process's)."""
    umask = _CALLER.get()
    return -1 if umask is None else umask
