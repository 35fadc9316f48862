"""File contents kept by their hash under `.stet/snapshots/` (what files held before an agent
touched them). Written atomically and only once per content; read back checked against the
hash; collected when nothing refers to them any more."""

from __future__ import annotations

import hashlib
import os
import secrets

_TMP = ".tmp-"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobMissing(Exception):
    """A content the store refers to is gone or damaged."""


class Blobs:
    def __init__(self, folder: str):
        self.folder = folder

    def _path(self, h: str) -> str:
        return os.path.join(self.folder, h[:2], h)

    def put(self, data: bytes) -> str:
        """Keep `data`; returns its hash. Durable when this returns (file and folder synced)."""
        h = digest(data)
        path = self._path(h)
        if os.path.exists(path):
            return h
        sub = os.path.dirname(path)
        os.makedirs(sub, mode=0o700, exist_ok=True)
        tmp = os.path.join(sub, f"{_TMP}{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        for folder in (sub, self.folder):
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        return h

    def get(self, h: str, limit: int | None = None) -> bytes:
        """The content hashed `h`; refused (BlobMissing) past `limit` bytes, by its size, unread:
        nothing larger is ever kept, so such a file is not one of Stet's."""
        try:
            with open(self._path(h), "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if limit is not None and size > limit:
                    raise BlobMissing(f"snapshot content {h[:12]} holds {size} bytes, more than the limit {limit}")
                data = f.read() if limit is None else f.read(limit + 1)
        except OSError as exc:
            raise BlobMissing(f"snapshot content {h[:12]} cannot be read: {exc.strerror or exc}") from None
        if digest(data) != h:
            raise BlobMissing(f"snapshot content {h[:12]} is damaged")
        return data

    def collect(self, keep: set[str]) -> int:
        """Remove every content not in `keep` (and leftovers of interrupted writes)."""
        removed = 0
        try:
            subs = os.listdir(self.folder)
        except FileNotFoundError:
            return 0
        for sub in subs:
            folder = os.path.join(self.folder, sub)
            if not os.path.isdir(folder) or len(sub) != 2:
                continue
            for name in os.listdir(folder):
                if name not in keep:
                    try:
                        os.unlink(os.path.join(folder, name))
                        removed += 1
                    except OSError:
                        pass
            try:
                os.rmdir(folder)
            except OSError:
                pass  # not empty
        return removed
