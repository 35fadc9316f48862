"""Creating, deleting and renaming files, each checked against what is there first.

Every operation sets a final state and looks before it acts, so running it twice (after
a crash) does nothing the second time, and it never destroys content it did not expect:
a file to delete must hold exactly the text the developer saw; a rename never overwrites.
"""

from __future__ import annotations

import os

from ..faults import fault
from .files import read_text, write_atomic


def _fsync_dir(path: str) -> None:
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _ensure(path: str, text: str) -> str:
    """The file at `path` holds `text`: create it if missing, refuse if it holds something else."""
    current = read_text(path)
    if current == text:
        return "done"
    if current is not None:
        return "stale"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fault("effect:before-write")
    write_atomic(path, text)
    fault("effect:after-write")
    return "done"


def _remove(path: str, expected: str) -> str:
    """No file at `path`: delete it only if it holds exactly `expected`."""
    current = read_text(path)
    if current is None:
        return "done"
    if current != expected:
        return "stale"
    fault("effect:before-write")
    os.unlink(path)
    _fsync_dir(path)
    fault("effect:after-write")
    return "done"


def _move(src: str, dst: str) -> str:
    """The file is at `dst`, not at `src`; never overwrite another file."""
    here, there = os.path.lexists(src), os.path.lexists(dst)
    if here and there and os.path.samefile(src, dst):
        os.unlink(src)  # a crash between link and unlink: finish the move
        _fsync_dir(src)
        return "done"
    if there and not here:
        return "done"
    if not here or there:
        return "stale"
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    fault("effect:before-write")
    try:
        os.link(src, dst)  # fails if dst appeared meanwhile: a rename that cannot overwrite
    except FileExistsError:
        return "stale"
    except OSError:  # no hard links here (another device, some file systems)
        if os.path.lexists(dst):
            return "stale"
        os.rename(src, dst)
    else:
        os.unlink(src)
    _fsync_dir(dst)
    if os.path.dirname(src) != os.path.dirname(dst):
        _fsync_dir(src)
    fault("effect:after-write")
    return "done"


def settle(kind: str, action: str, path: str, new_path: str | None, before: str, after: str) -> str:
    """Carry out (action "apply") or take back ("revert") one file operation: "done" or "stale".

    `before` and `after` are the file's text before and after the operation itself."""
    if kind == "create":
        return _ensure(path, after) if action == "apply" else _remove(path, after)
    if kind == "delete":
        return _remove(path, before) if action == "apply" else _ensure(path, before)
    if kind == "rename":
        assert new_path is not None
        return _move(path, new_path) if action == "apply" else _move(new_path, path)
    raise ValueError(f"unknown file operation {kind}")
