"""Is the store still the store? The database file (and its write-ahead log) a process opened,
told apart from whatever is at that path now.

SQLite keeps writing into a database file that was deleted or replaced under it (the open
file lives on, nameless), and commits into a write-ahead log that was deleted: every one of
those commits is lost when the process ends. So a process records the (device, inode) of the
database and of its `-wal` when it opens them, and compares before it acknowledges anything
(`Store.check`). A WAL is never deleted by SQLite while a connection is open, so a WAL that is
gone or different while this process holds its connection was removed by someone else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class FileId:
    dev: int
    ino: int


def file_id(path: str) -> FileId | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return FileId(st.st_dev, st.st_ino)


class Identity:
    """The database and WAL this process opened; `change()` says what happened to them since."""

    def __init__(self, path: str, db: FileId | None = None):
        self.path = path
        self.db = db or file_id(path)
        self.wal = file_id(path + "-wal")

    def change(self) -> str | None:
        """ "deleted", "replaced", "wal-deleted", "wal-replaced", or None when all is as opened."""
        now = file_id(self.path)
        if now is None:
            return "deleted"
        if now != self.db:
            return "replaced"
        wal = file_id(self.path + "-wal")
        if self.wal is None:  # not made yet when the store was opened: it is ours once it exists
            self.wal = wal
            return None
        if wal is None:
            return "wal-deleted"
        if wal != self.wal:
            return "wal-replaced"
        return None
