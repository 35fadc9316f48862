"""Creating, deleting and renaming files, each checked against what is there first.

Every operation sets a final state and looks before it acts, so running it twice (after
a crash) does nothing the second time, and it never destroys content it did not expect:
a file to delete must hold exactly the text the developer saw; a rename never overwrites.
Everything goes through `safe`: no symlink is followed, nothing is written outside the
folders checked. What cannot be done comes back as ("stale", why); errors that a later
attempt may not meet (a full disk: `safe.is_transient`) are raised for the caller to retry.
"""

from __future__ import annotations

import errno
import os

from ..faults import fault
from . import safe
from .files import decode_text

Outcome = tuple[str, str | None]  # ("done" | "stale", why it is stale)


def _text_at(path: str) -> tuple[str | None, tuple[int, int] | None]:
    """The file's text and (device, inode); (None, None) when there is none."""
    try:
        with safe.folder(_parent(path)) as dir_fd:
            opened = safe.open_file(dir_fd, _name(path), path)
            if opened is None:
                return None, None
            fd, st = opened
            try:
                return decode_text(safe.read_open(fd, st, path), path), (st.st_dev, st.st_ino)
            finally:
                os.close(fd)
    except FileNotFoundError:
        return None, None


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[1]


def _ensure(path: str, text: str) -> Outcome:
    """The file at `path` holds `text`: create it if missing, refuse if it holds something else."""
    current, _ = _text_at(path)
    if current == text:
        return "done", None
    if current is not None:
        return "stale", f"{path} already exists with other content"
    fault("effect:before-write")
    try:
        safe.write_file(path, text.encode("utf-8"), create_folders=True)
    except FileExistsError:
        return "stale", f"a file appeared at {path} meanwhile"
    fault("effect:after-write")
    return "done", None


def _remove(path: str, expected: str) -> Outcome:
    """No file at `path`: delete it only if it holds exactly `expected`."""
    current, identity = _text_at(path)
    if current is None:
        return "done", None
    if current != expected:
        return "stale", f"{path} changed since the agent saw it: deleting it would lose that"
    fault("effect:before-write")
    safe.remove_file(path, expect=identity)
    fault("effect:after-write")
    return "done", None


def _move(src: str, dst: str) -> Outcome:
    """The file is at `dst`, not at `src`; never overwrite another file."""
    state = safe.move_state(src, dst)  # a crash between link and unlink is finished here
    if state in ("done", "interrupted"):
        return "done", None
    if state == "neither":
        return "stale", f"{src} is gone"
    if state == "both":
        return "stale", f"something is already at {dst}: a rename never overwrites"
    fault("effect:before-write")
    try:
        safe.move_file(src, dst)
    except FileExistsError:
        return "stale", f"a file appeared at {dst} meanwhile: a rename never overwrites"
    except FileNotFoundError:
        return "stale", f"{src} is gone"
    fault("effect:after-write")
    return "done", None


def settle(kind: str, action: str, path: str, new_path: str | None, before: str, after: str) -> Outcome:
    """Carry out (action "apply") or take back ("revert") one file operation.

    `before` and `after` are the file's text before and after the operation itself. Returns
    ("done", None) or ("stale", why); raises an OSError that a later attempt may not meet
    (`safe.is_transient`). Anything else that stops it (a symlink, a file where a folder
    should be, no permission) is ("stale", why)."""
    try:
        if kind == "create":
            return _ensure(path, after) if action == "apply" else _remove(path, after)
        if kind == "delete":
            return _remove(path, before) if action == "apply" else _ensure(path, before)
        if kind == "rename":
            assert new_path is not None
            return _move(path, new_path) if action == "apply" else _move(new_path, path)
    except (safe.SymlinkOnPath, safe.NotAFile, safe.CannotKeep) as exc:
        return "stale", exc.message
    except OSError as exc:
        if safe.is_transient(exc):
            raise
        return "stale", _said(exc)
    except Exception as exc:  # not text any more (binary, not UTF-8): nothing is written
        message = getattr(exc, "message", None) or str(exc)
        return "stale", message
    raise ValueError(f"unknown file operation {kind}")


def _said(exc: OSError) -> str:
    what = exc.strerror or errno.errorcode.get(exc.errno or 0, "error")
    return f"{exc.filename}: {what}" if exc.filename else what
