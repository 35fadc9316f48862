"""File stamps: what a file was (size, mtime, hash) when Stet last judged its hunks."""

from __future__ import annotations

import os

Stamp = tuple[str, int, int, str | None]  # uri, size (-1: no such file), mtime_ns, sha256


def stat_of(path: str) -> tuple[int, int]:
    """(size, mtime_ns) of a file (a symlink's own, never its target's), (-1, 0) when there is none."""
    try:
        s = os.lstat(path)
    except FileNotFoundError:
        return -1, 0
    return s.st_size, s.st_mtime_ns


def hash_of(path: str) -> str | None:
    """The sha256 of a regular file, None when there is none. Read like every workspace file
    (`safe`): a symlink on the way, a FIFO or a device raises a StetError, never blocks."""
    import hashlib  # here: OpenSSL's start-up (and safe's) is paid only when a file is hashed

    from ..workspace import safe

    try:
        dir_fd = safe.open_folder(os.path.dirname(path), final=False)
    except FileNotFoundError:
        return None
    try:
        opened = safe.open_file(dir_fd, os.path.basename(path), path)
    finally:
        os.close(dir_fd)
    if opened is None:
        return None
    fd, _ = opened
    with os.fdopen(fd, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def text_hash(text: str | None) -> str | None:
    import hashlib

    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
