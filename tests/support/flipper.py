"""A hostile agent's race: a folder of the workspace flipped, as fast as a thread can, between
the real folder and a symlink to an outside copy of it. Used by the CI test of the race
(`tests/e2e/test_attack_escape.py`) and by the soak (`tests/support/race_soak.py`)."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path


class Flipper(threading.Thread):
    """Flips `folder` to a symlink to `outside` and back, until stopped.

    The real folder waits under a hidden name inside the workspace while the symlink is in
    place, so whatever Stet writes into the real folder stays in the workspace; anything that
    lands in `outside` is a write that escaped."""

    def __init__(self, folder: Path, outside: Path, pause: float = 0.0):
        super().__init__(daemon=True)
        self.folder = folder
        self.hidden = folder.parent / f".{folder.name}.real"
        self.outside = outside
        self.pause = pause
        self.flips = 0
        self.strays = 0  # times a fresh folder was made at the name while it was free
        self._halt = threading.Event()

    def run(self) -> None:
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
