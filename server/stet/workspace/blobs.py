"""File contents kept by their hash under `.stet/snapshots/` (what files held before an agent
touched them). Written atomically and only once per content; read back checked against the
hash; collected when nothing refers to them any more. The folders and files are Stet's own
(own.py): a symlink, a hard link or another user's entry there is refused, never followed,
read or written through - and never emptied by a collection."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat

from ..errors import StetError
from . import own, safe

FOLDER = "snapshots"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobMissing(Exception):
    """A content the store refers to is gone or damaged."""


class Blobs:
    def __init__(self, home: str):
        self.home = home  # Stet's folder (`.stet/`): the contents are in its `snapshots/`
        self.folder = os.path.join(own.home_path(home), FOLDER)

    def _where(self, h: str) -> str:
        return os.path.join(self.folder, h[:2], h)

    def put(self, data: bytes) -> str:
        """Keep `data`; returns its hash. Durable when this returns (file and folders synced).
        Raises NotStets when something not Stet's is in the way."""
        h = digest(data)
        with own.folder(self.home, FOLDER) as top:
            sub = own.open_sub(top, h[:2], os.path.dirname(self._where(h)))
            try:
                found = safe.entry(sub, h)
                if found is not None:
                    own.check(found, self._where(h))  # a regular file of ours: the same content
                    return h
                own.place(sub, h, data)
            finally:
                os.close(sub)
            os.fsync(top)  # the subfolder may be new
        return h

    def get(self, h: str, limit: int | None = None) -> bytes:
        """The content hashed `h`; refused (BlobMissing) past `limit` bytes, by its size, unread:
        nothing larger is ever kept, so such a file is not one of Stet's."""
        where = self._where(h)
        try:
            with own.folder(self.home, FOLDER, h[:2], create=False) as sub:
                data = own.read_file(sub, h, where, limit)
        except StetError as exc:
            raise BlobMissing(f"snapshot content {h[:12]} cannot be read: {exc.message}") from None
        except OSError as exc:
            raise BlobMissing(f"snapshot content {h[:12]} cannot be read: {exc.strerror or exc}") from None
        if data is None:
            raise BlobMissing(f"snapshot content {h[:12]} cannot be read: it is gone")
        if digest(data) != h:
            raise BlobMissing(f"snapshot content {h[:12]} is damaged")
        return data

    def collect(self, keep: set[str]) -> int:
        """Remove every content not in `keep` (and leftovers of interrupted writes). Raises
        NotStets, before removing anything there, when a folder is not Stet's."""
        removed = 0
        try:
            top = own.open_path(self.home, FOLDER, create=False)
        except FileNotFoundError:
            return 0
        try:
            for sub_name in sorted(os.listdir(top)):
                found = safe.entry(top, sub_name)
                if found is None or len(sub_name) != 2 or stat.S_ISREG(found.st_mode):
                    continue  # not one of the hash folders (a symlink in their place is refused below)
                sub = own.open_sub(top, sub_name, os.path.join(self.folder, sub_name), create=False)
                try:
                    for name in os.listdir(sub):
                        if name not in keep:
                            with contextlib.suppress(OSError):  # unlink never follows a link
                                os.unlink(name, dir_fd=sub)
                                removed += 1
                finally:
                    os.close(sub)
                with contextlib.suppress(OSError):
                    os.rmdir(sub_name, dir_fd=top)  # when empty
        finally:
            os.close(top)
        return removed
