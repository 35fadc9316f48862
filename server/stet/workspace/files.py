"""Reading and writing workspace files: exact text, atomic replacement, leftovers.

Every read and write goes through `safe` (folders reached without following symlinks,
regular files only, checked again at write time); this module adds text on top."""

from __future__ import annotations

from ..errors import InvalidParams
from . import safe
from .safe import is_temp_name, remove_temp_files, temp_files
from .tempnames import TEMP_MARK

__all__ = [
    "TEMP_MARK",
    "decode_text",
    "is_temp_name",
    "read_bytes",
    "read_text",
    "remove_temp_files",
    "temp_files",
    "write_atomic",
]


def read_bytes(path: str, limit: int | None = None) -> bytes | None:
    """The file's bytes, None when it does not exist. A symlink on the way, a folder, a FIFO
    or a device is refused (safe.SymlinkOnPath / safe.NotAFile), never followed or read."""
    return safe.read_file(path, limit)


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


def write_atomic(path: str, text: str, *, create_folders: bool = False) -> tuple[int, int]:
    """Replace the file's content all at once (see safe.write_file: temp file, fsync, rename;
    mode, owner, group and extended attributes kept; hard-linked files refused). Returns the
    (size, mtime_ns) of what was written, as the file carries them (a stamp: review/stamps.py)."""
    return safe.write_file(path, text.encode("utf-8"), create_folders=create_folders)
