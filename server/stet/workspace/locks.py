"""A lock shared by every Stet process on this machine (files are written under it)."""

from __future__ import annotations

import asyncio
import contextlib
import os

try:
    import fcntl
except ImportError:  # not POSIX: no inter-process file lock (see interprocess_lock)
    fcntl = None  # type: ignore[assignment]


@contextlib.asynccontextmanager
async def interprocess_lock(path: str):
    """An exclusive lock shared by every process on this machine (flock on `path`).

    The kernel releases it when the holder dies, SIGKILL included: a crash never leaves it held.
    """
    if fcntl is None:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
