"""Setting a whole file to a content, only when it holds what was expected: how a capture puts
a baseline back. Each call sets a final state and looks before it acts, so running it again
(after a crash) does nothing, and a file someone changed meanwhile is left as it is."""

from __future__ import annotations

import os

from ..errors import StetError
from . import safe
from .blobs import digest


class NotAFile(Exception):
    """A symlink, a folder, a FIFO or a device where a regular file is expected."""


class TooLarge(NotAFile):
    """A regular file larger than the limit: refused from its size, none of it read."""


def read_regular(path: str, limit: int | None = None) -> bytes | None:
    """The bytes of a regular file (None: nothing there); raises NotAFile for anything else,
    a symlink on the way included (reached through folder handles: see safe.py), and
    TooLarge for a file of more than `limit` bytes (its size is checked before reading)."""
    found = _read(path, limit)
    return None if found is None else found[0]


def _read(path: str, limit: int | None) -> tuple[bytes, tuple[int, int]] | None:
    try:
        return safe.read_file_identified(path, limit)
    except safe.TooLarge as exc:
        raise TooLarge(exc.message) from None
    except StetError as exc:
        raise NotAFile(exc.message) from None


def put(path: str, expect: str | None, text: str | None, stop: str, limit: int | None = None) -> str:
    """Make the file at `path` hold `text` (None: no file) if it holds the content hashed
    `expect` now (None: no file) - or already holds `text`. Returns "done", or "left" when it
    holds something else (nothing is written then), or more than `limit` bytes (and more than
    `text`: it can be neither, and is not read). Empty folders a removed file leaves are
    removed up to `stop`. The write and the delete never follow a symlink, and never touch a
    file that replaced the one read meanwhile."""
    wanted = None if text is None else text.encode("utf-8")
    try:
        found = _read(path, None if limit is None else max(limit, len(wanted or b"")))
    except (NotAFile, OSError):
        return "left"
    current, ident = (None, None) if found is None else found
    if current == wanted:
        return "done"
    if (None if current is None else digest(current)) != expect:
        return "left"
    try:
        if wanted is None:
            safe.remove_file(path, expect=ident)
            _prune(os.path.dirname(path), stop)
        else:
            safe.write_file(path, wanted, create_folders=True, expect=ident)
    except StetError:
        return "left"  # a symlink or another file put there meanwhile: not ours to change
    return "done"


def _prune(folder: str, stop: str) -> None:
    stop = os.path.realpath(stop)
    while os.path.realpath(folder).startswith(stop.rstrip("/") + "/"):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)
