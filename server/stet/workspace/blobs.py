"""File contents kept by their hash under `.stet/snapshots/` (what files held before an agent
touched them). Written atomically and only once per content; read back checked against the
hash; collected when nothing refers to them any more. One content is a file of its own
(`snapshots/ab/abcd...`); many kept at once (a whole workspace's baseline: `Blobs.packing`)
go into one pack, `snapshots/packs/NAME.pack` (the contents one after the other, then an
index line {hash: [offset, length]}, then that line's offset in 16 hex digits), written as
they come and synced once, so that a baseline of thousands of files costs one fsync, not one
per file. A pack is collected when none of its contents is referred to any more. The folders
and files are Stet's own (own.py): a symlink, a hard link or another user's entry there is
refused, never followed, read or written through - and never emptied by a collection."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator

from ..errors import StetError
from . import own, safe

FOLDER = "snapshots"
PACKS = "packs"
PACK_SUFFIX = ".pack"
# The packs folders (device, inode) whose name this process has synced into their parent: a
# process that keeps packing (the resident, one baseline per `stet run`) syncs it once, not
# once per pack. Another packs folder (removed and made again) is synced again.
_NAMED: set[tuple[int, int]] = set()
_TRAILER = 16  # the index line's offset, in hex


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobMissing(Exception):
    """A content the store refers to is gone or damaged."""


class Blobs:
    def __init__(self, home: str):
        self.home = home  # Stet's folder (`.stet/`): the contents are in its `snapshots/`
        self.folder = os.path.join(own.home_path(home), FOLDER)
        self._packed: dict[str, tuple[str, int, int]] | None = None  # hash -> (pack, offset, length)

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

    @contextlib.contextmanager
    def packing(self, before_place: Callable[[], None] | None = None) -> Iterator[Packing]:
        """Keep many contents at once: `add` each; durable when the block ends (one pack,
        synced once; a single new content is kept as `put` keeps it). `before_place` runs once
        the pack is written and synced, before it gets its name. Nothing is kept when the
        block raises. Raises NotStets as `put` does."""
        pack = Packing(self)
        try:
            yield pack
            pack.finish(before_place)
        finally:
            pack.abandon()

    def known(self) -> set[str]:
        """The hashes already kept, in their own files or in packs."""
        found = set(self.packed())
        try:
            top = own.open_path(self.home, FOLDER, create=False)
        except FileNotFoundError:
            return found
        try:
            for sub_name in os.listdir(top):
                entry = safe.entry(top, sub_name)
                if entry is None or len(sub_name) != 2 or not stat.S_ISDIR(entry.st_mode):
                    continue
                sub = own.open_sub(top, sub_name, os.path.join(self.folder, sub_name), create=False)
                try:
                    found.update(n for n in os.listdir(sub) if len(n) == 64 and n.startswith(sub_name))
                finally:
                    os.close(sub)
        finally:
            os.close(top)
        return found

    def packed(self) -> dict[str, tuple[str, int, int]]:
        """Every packed content: hash -> (pack, offset in it, length); read once."""
        if self._packed is None:
            self._packed = {}
            for name, index in self._pack_indexes().items():
                for h, (offset, length) in index.items():
                    self._packed.setdefault(h, (name, offset, length))
        return self._packed

    def _pack_indexes(self) -> dict[str, dict[str, list[int]]]:
        """pack name -> its index; a damaged pack is left out (its contents count as gone)."""
        out: dict[str, dict[str, list[int]]] = {}
        try:
            packs = own.open_path(self.home, FOLDER, PACKS, create=False)
        except FileNotFoundError:
            return out
        try:
            for name in os.listdir(packs):
                if name.endswith(PACK_SUFFIX) and not name.startswith("."):
                    with contextlib.suppress(OSError, ValueError, StetError):
                        out[name] = self._read_index(packs, name)
        finally:
            os.close(packs)
        return out

    def _read_index(self, packs: int, name: str) -> dict[str, list[int]]:
        fd = own.open_file(packs, name, os.path.join(self.folder, PACKS, name), os.O_RDONLY)
        if fd is None:
            raise ValueError("gone")
        try:
            size = os.fstat(fd).st_size
            start = int(os.pread(fd, _TRAILER, size - _TRAILER), 16)
            if not 0 <= start <= size - _TRAILER:
                raise ValueError("not a pack")
            index = json.loads(os.pread(fd, size - _TRAILER - start, start))
        finally:
            os.close(fd)
        if not isinstance(index, dict):
            raise ValueError("not a pack")
        return index

    def _from_pack(self, h: str, limit: int | None) -> bytes | None:
        found = self.packed().get(h)
        if found is None:
            self._packed = None  # packed by another process since they were read
            found = self.packed().get(h)
        if found is None:
            return None
        name, offset, length = found
        if limit is not None and length > limit:
            return None  # nothing larger is ever kept: not one of Stet's
        with own.folder(self.home, FOLDER, PACKS, create=False) as packs:
            fd = own.open_file(packs, name, os.path.join(self.folder, PACKS, name), os.O_RDONLY)
            if fd is None:
                return None
            try:
                return os.pread(fd, length, offset)
            finally:
                os.close(fd)

    def get(self, h: str, limit: int | None = None) -> bytes:
        """The content hashed `h`; refused (BlobMissing) past `limit` bytes, by its size, unread:
        nothing larger is ever kept, so such a file is not one of Stet's."""
        where = self._where(h)
        try:
            try:
                with own.folder(self.home, FOLDER, h[:2], create=False) as sub:
                    data = own.read_file(sub, h, where, limit)
            except FileNotFoundError:
                data = None
            if data is None:
                data = self._from_pack(h, limit)
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
        return removed + self._collect_packs(keep)

    def _collect_packs(self, keep: set[str]) -> int:
        """Remove the packs none of whose contents is in `keep`, and interrupted writes."""
        indexes = self._pack_indexes()
        self._packed = None
        removed = 0
        try:
            packs = own.open_path(self.home, FOLDER, PACKS, create=False)
        except FileNotFoundError:
            return 0
        try:
            for name in os.listdir(packs):
                index = indexes.get(name)
                if index is not None and not keep.isdisjoint(index):
                    continue
                if index is None and not safe.is_temp_name(name) and not name.endswith(PACK_SUFFIX):
                    continue  # not a name Stet gives: left alone
                with contextlib.suppress(OSError):  # unlink never follows a link
                    os.unlink(name, dir_fd=packs)
                    removed += len(index or ())
        finally:
            os.close(packs)
        return removed


class Packing:
    """A pack being written (see `Blobs.packing`): the first new content waits in memory; from
    the second on, every new one goes straight to the pack's temp file."""

    def __init__(self, blobs: Blobs):
        self.blobs = blobs
        self._known: set[str] | None = None
        self._first: tuple[str, bytes] | None = None
        self._index: dict[str, list[int]] = {}
        self._fd: int | None = None  # the temp file, once there are two contents
        self._dir: int | None = None  # the packs folder
        self._tmp = ""
        self._name = secrets.token_hex(16) + PACK_SUFFIX
        self._offset = 0

    def add(self, data: bytes) -> str:
        """Keep `data` (when the block ends); its hash."""
        h = digest(data)
        if self._first is None and self._fd is None:
            self._first = (h, data)
            return h
        if self._first is not None and h == self._first[0] or h in self._index:
            return h
        if self._known is None:
            self._known = self.blobs.known()
        if h in self._known:
            return h
        if self._fd is None:
            self._open()
        self._write(h, data)
        return h

    def _open(self) -> None:
        self._dir = own.open_path(self.blobs.home, FOLDER, PACKS)
        self._tmp = safe.temp_name(self._name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        self._fd = os.open(self._tmp, flags, 0o600, dir_fd=self._dir)
        first, self._first = self._first, None
        if first is not None and first[0] not in (self._known or ()):
            self._write(*first)

    def _write(self, h: str, data: bytes) -> None:
        self._write_all(data)
        self._index[h] = [self._offset, len(data)]
        self._offset += len(data)

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def finish(self, before_place: Callable[[], None] | None) -> None:
        """Durable: the pack synced and named, its folders synced (or the one content put)."""
        if self._fd is None:
            if self._first is not None:
                self.blobs.put(self._first[1])
            return
        assert self._dir is not None
        index = json.dumps(self._index, separators=(",", ":")).encode("ascii")
        self._write_all(index + b"%016x" % self._offset)
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        if before_place is not None:
            before_place()
        os.rename(self._tmp, self._name, src_dir_fd=self._dir, dst_dir_fd=self._dir)
        self._tmp = ""
        os.fsync(self._dir)
        st = os.fstat(self._dir)
        if (st.st_dev, st.st_ino) not in _NAMED:
            with own.folder(self.blobs.home, FOLDER) as top:
                os.fsync(top)  # the packs folder may be new
            _NAMED.add((st.st_dev, st.st_ino))
        if self.blobs._packed is not None:
            for h, (offset, length) in self._index.items():
                self.blobs._packed[h] = (self._name, offset, length)

    def abandon(self) -> None:
        """Close what is open; a temp file left (the block raised) is removed."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._dir is not None:
            if self._tmp:
                with contextlib.suppress(OSError):
                    os.unlink(self._tmp, dir_fd=self._dir)
            os.close(self._dir)
            self._dir = None
