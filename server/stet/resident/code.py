"""Stet's own code as it is on disk: a resident never answers with code older than what a new
process would run (an upgrade, an edit). Looked at before every call, so kept cheap: one stat
of each module and of each folder (a module added or removed changes its folder); the folders
are walked again only when one of them changed."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Stamp = tuple[tuple[str, int, int], ...]


class Code:
    """The modules under `root` as this process first saw them."""

    def __init__(self, root: str = ROOT):
        self.root = root
        self.folders: list[str] = []
        self.seen: list[tuple[int, int]] = []  # each folder's (inode, mtime)
        self.files: list[str] = []
        self.stamp = self._walk()

    def changed(self) -> bool:
        """Whether a module was edited, added or removed since this process started."""
        try:
            same_folders = _stats(self.folders) == self.seen
            if same_folders:
                return any(
                    (st.st_size, st.st_mtime_ns) != (size, mtime)
                    for (_, size, mtime), st in zip(self.stamp, map(os.stat, self.files))
                )
        except OSError:  # a module or folder removed
            pass
        # A folder changed (a module added or removed, or only a cache written): the whole
        # walk decides, and notes the folders as they are now for the next look.
        return self._walk() != self.stamp

    def _walk(self) -> Stamp:
        """Every module's (path, size, mtime); the folders and files noted for the next look."""
        folders, stamp = [], []
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            folders.append(folder)
            for name in sorted(n for n in names if n.endswith(".py")):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                stamp.append((path, st.st_size, st.st_mtime_ns))
        try:
            self.seen = _stats(folders)
        except OSError:
            self.seen = []
        self.folders, self.files = folders, [p for p, _, _ in stamp]
        return tuple(stamp)


def _stats(paths: list[str]) -> list[tuple[int, int]]:
    return [(st.st_ino, st.st_mtime_ns) for st in map(os.stat, paths)]
