"""The workspace on disk: roots, uris, and safe file reads and writes.

Every path the server touches goes through `Workspace.resolve`, which refuses anything
outside the roots (symlinks resolved) and any uri that is not a local `file:` uri.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .errors import InvalidParams, OutsideWorkspace

try:
    import fcntl
except ImportError:  # not POSIX: no inter-process file lock (see interprocess_lock)
    fcntl = None  # type: ignore[assignment]

TEMP_MARK = ".stet-tmp-"


def uri_to_path(uri: str) -> str:
    if not isinstance(uri, str) or not uri:
        raise InvalidParams("a uri must be a non-empty string")
    if "\x00" in uri:
        raise OutsideWorkspace(f"refused {uri!r}: NUL in uri")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise OutsideWorkspace(f"refused {uri}: only file: uris are accepted")
    if parts.netloc not in ("", "localhost"):
        raise OutsideWorkspace(f"refused {uri}: a file uri with a host ({parts.netloc}) is not local")
    path = unquote(parts.path)
    if not path.startswith("/") or "\x00" in path:
        raise OutsideWorkspace(f"refused {uri}: not an absolute path")
    return path


def path_to_uri(path: str) -> str:
    return Path(path).as_uri()


class Workspace:
    def __init__(self, roots: list[str]):
        self.roots = [os.path.realpath(r) for r in roots if r]

    def set_roots(self, roots: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots if r]

    def resolve(self, uri: str) -> str:
        """The real path behind `uri`, refused when outside every root."""
        real = os.path.realpath(uri_to_path(uri))
        for root in self.roots:
            if real == root or real.startswith(root.rstrip("/") + "/"):
                return real
        raise OutsideWorkspace(f"refused {uri}: outside the workspace ({', '.join(self.roots) or 'no root'})")

    def normalize(self, uri: str) -> str:
        """The canonical uri (file:///real/path) of a uri inside the workspace."""
        return path_to_uri(self.resolve(uri))


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


def write_atomic(path: str, text: str) -> None:
    """Replace the file's content all at once: temp file in the same folder, fsync, rename.

    The file's mode is kept. A crash leaves either the old or the new content, and at
    worst a temp file that `remove_temp_files` deletes at the next start.
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
