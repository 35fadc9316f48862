"""A lock shared by every Stet process on this machine (files are written under it)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

from . import own

try:
    import fcntl
except ImportError:  # not POSIX: no inter-process file lock (see interprocess_lock)
    fcntl = None  # type: ignore[assignment]


@contextlib.asynccontextmanager
async def interprocess_lock(path: str) -> AsyncIterator[None]:
    """An exclusive lock shared by every process on this machine (flock on `path`, a file of
    Stet's own folder: never a symlink, a hard link or another user's file - see own.py).

    The kernel releases it when the holder dies, SIGKILL included: a crash never leaves it held.
    """
    if fcntl is None:
        yield
        return
    fd = _open(path)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _open(path: str) -> int:
    home, name = os.path.dirname(path), os.path.basename(path)
    with own.folder(home) as dir_fd:
        fd = own.open_file(dir_fd, name, os.path.join(own.home_path(home), name), os.O_RDWR | os.O_CREAT)
    assert fd is not None  # O_CREAT: made when missing
    return fd
