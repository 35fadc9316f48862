"""Setting a whole file to a content, only when it holds what was expected: how a capture puts
a baseline back. Each call sets a final state and looks before it acts, so running it again
(after a crash) does nothing, and a file someone changed meanwhile is left as it is."""

from __future__ import annotations

import os
import stat

from .blobs import digest
from .files import write_atomic


class NotAFile(Exception):
    """A symlink, a folder, a FIFO or a device where a regular file is expected."""


def read_regular(path: str) -> bytes | None:
    """The bytes of a regular file (None: nothing there); raises NotAFile for anything else."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode) else "not a file"
        raise NotAFile(f"{path} is {kind}")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def put(path: str, expect: str | None, text: str | None, stop: str) -> str:
    """Make the file at `path` hold `text` (None: no file) if it holds the content hashed
    `expect` now (None: no file) - or already holds `text`. Returns "done", or "left" when it
    holds something else (nothing is written then). Empty folders a removed file leaves are
    removed up to `stop`."""
    try:
        current = read_regular(path)
    except (NotAFile, OSError):
        return "left"
    wanted = None if text is None else text.encode("utf-8")
    if current == wanted:
        return "done"
    if (None if current is None else digest(current)) != expect:
        return "left"
    if wanted is None:
        os.unlink(path)
        _fsync_dir(os.path.dirname(path))
        _prune(os.path.dirname(path), stop)
        return "done"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, text or "")
    return "done"


def _fsync_dir(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _prune(folder: str, stop: str) -> None:
    stop = os.path.realpath(stop)
    while os.path.realpath(folder).startswith(stop.rstrip("/") + "/"):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)
