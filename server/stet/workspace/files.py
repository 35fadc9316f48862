"""Reading and writing workspace files safely: exact text, atomic replacement, leftovers."""

from __future__ import annotations

import os
import secrets
import stat

from ..errors import InvalidParams

TEMP_MARK = ".stet-tmp-"


def read_bytes(path: str) -> bytes | None:
    """The file's bytes, None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InvalidParams(f"{path} is a directory, not a text file") from None


def decode_text(data: bytes, name: str) -> str:
    """A file's bytes as text; binary or non-UTF-8 content is refused, naming the file."""
    if b"\x00" in data:
        raise InvalidParams(f"{name} looks binary: Stet reviews text files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParams(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_text(path: str) -> str | None:
    """The file's text exactly as stored (line endings kept), None when it does not exist."""
    data = read_bytes(path)
    return None if data is None else decode_text(data, path)


def write_atomic(path: str, text: str) -> tuple[int, int]:
    """Replace the file's content all at once: temp file in the same folder, fsync, rename.

    The file's mode is kept. A crash leaves either the old or the new content, and at
    worst a temp file that `remove_temp_files` deletes at the next start. Returns the
    (size, mtime_ns) of what was written, as the file itself carries them (a stamp: see
    review/stamps.py), taken from the written file before it replaced the old one.
    """
    folder = os.path.dirname(path) or "."
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644
    tmp = os.path.join(folder, f".{os.path.basename(path)}{TEMP_MARK}{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
            written = os.fstat(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return written.st_size, written.st_mtime_ns


def remove_temp_files(folders: set[str]) -> int:
    """Delete temp files a crash left behind in these folders; returns how many."""
    removed = 0
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(".") and TEMP_MARK in name:
                try:
                    os.unlink(os.path.join(folder, name))
                    removed += 1
                except OSError:
                    pass
    return removed
