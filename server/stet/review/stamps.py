"""File stamps: what a file was (size, mtime, hash) when Stet last judged its hunks."""

from __future__ import annotations

import hashlib
import os

Stamp = tuple[str, int, int, str | None]  # uri, size (-1: no such file), mtime_ns, sha256


def stat_of(path: str) -> tuple[int, int]:
    """(size, mtime_ns) of a file, (-1, 0) when there is none."""
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return -1, 0
    return s.st_size, s.st_mtime_ns


def hash_of(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def text_hash(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
