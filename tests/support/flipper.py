"""A hostile agent's race: a folder of the workspace flipped, as fast as a thread can, between
the real folder and a symlink to an outside copy of it. Used by the CI test of the race
(`tests/e2e/test_writes_stay_in_workspace.py`) and by the soak (`tests/support/race_soak.py`)."""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import threading
import time
from pathlib import Path

_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
try:
    _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
except (OSError, AttributeError):  # not Linux, or a libc without it
    _renameat2 = None


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where that is not offered."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a))


class Flipper(threading.Thread):
    """Flips `folder` to a symlink to `outside` and back, until stopped.

    The real folder waits under a hidden name inside the workspace while the symlink is in
    place, so whatever Stet writes into the real folder stays in the workspace; anything that
    lands in `outside` is a write that escaped. Where Linux offers it, each flip is one atomic
    exchange of the folder and a prepared symlink (renameat2 RENAME_EXCHANGE): the name is
    never free, it is always one or the other. Elsewhere a flip is two renames, with a moment
    in between when nothing is at the name."""

    def __init__(self, folder: Path, outside: Path, pause: float = 0.0, two_step: bool = False):
        super().__init__(daemon=True)
        self.folder = folder
        self.hidden = folder.parent / f".{folder.name}.real"
        self.outside = outside
        self.pause = pause
        self.two_step = two_step  # force the two-rename flip even where an atomic exchange exists
        self.flips = 0
        self.strays = 0  # times a fresh folder was made at the name while it was free
        self.atomic = False  # each flip one atomic exchange
        self._halt = threading.Event()

    def run(self) -> None:
        swap = self.folder.parent / f".{self.folder.name}.swap"
        os.symlink(self.outside, swap)
        if not self.two_step and exchange(self.folder, swap) and exchange(self.folder, swap):
            self.atomic = True
            try:
                while not self._halt.is_set():
                    exchange(self.folder, swap)  # the symlink at the name, the real folder hidden
                    time.sleep(self.pause)
                    exchange(self.folder, swap)  # and back
                    self.flips += 1
                    time.sleep(self.pause)
            finally:
                os.unlink(swap)
            return
        os.unlink(swap)
        while not self._halt.is_set():
            os.rename(self.folder, self.hidden)
            os.symlink(self.outside, self.folder)
            time.sleep(self.pause)
            os.unlink(self.folder)
            self._put_back()
            self.flips += 1
            time.sleep(self.pause)

    def _put_back(self) -> None:
        """The real folder back at its name. While the name was free, a create may have made a
        new folder there (inside the workspace, as asked): its files join the real folder."""
        while True:
            try:
                os.rename(self.hidden, self.folder)
                return
            except OSError:
                if not self.folder.is_dir() or self.folder.is_symlink():
                    raise
            self.strays += 1
            for name in os.listdir(self.folder):
                try:
                    os.rename(self.folder / name, self.hidden / name)
                except FileNotFoundError:
                    pass  # a temp file Stet removed meanwhile
            try:
                os.rmdir(self.folder)
            except OSError:
                pass  # something new arrived: go round again

    def stop(self) -> None:
        self._halt.set()
        self.join(10)
        if self.folder.is_symlink():  # stopped half-way: put the real folder back
            os.unlink(self.folder)
        if self.hidden.exists():
            self._put_back()


def fingerprint(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder`: its kind, content hash, mode and mtime (symlinks not followed)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else None
            out[str(p.relative_to(folder))] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out
