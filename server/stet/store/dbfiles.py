"""Are the database's files Stet's own? `.stet/`, the database and its `-wal` and `-shm`.

SQLite writes into whatever file it finds at those names. A symlink or a hard link planted
there (a cloned repository, an unpacked archive) would have it write into a file of the
user's - a hard-linked `-wal` is overwritten with log frames at the first commit. So before
any process opens the store, each of them must be what Stet makes: a real folder / a regular
file with one name, owned by this user. Checked without following a symlink; light enough
for `stet status`'s glance (no SQLite here).
"""

from __future__ import annotations

import os
import stat

STORE_DIR = ".stet"
_WHAT = {"": "the database", "-wal": "the database's write-ahead log", "-shm": "the database's shared-memory file"}


def home_problem(folder: str) -> str | None:
    """Why the store folder `folder` must not be used (None: it may, or it is missing). Only
    `.stet/` is judged: a folder given with --db is the user's choice."""
    if os.path.basename(folder) != STORE_DIR:
        return None
    return folder_problem(folder)


def folder_problem(folder: str) -> str | None:
    """Why Stet's folder `folder` (`.stet/`, its `quarantine/`) must not be used: not a real
    folder of this user's (None: it is, or it is missing)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return (
            f"the folder {folder} is a symlink: Stet keeps its store in a real folder and file, so that nothing it "
            "writes lands elsewhere. Replace the symlink with the real folder, or point --db / STET_DB at it."
        )
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder: Stet keeps its store in a folder of that name. Move the file away."
    if st.st_uid != os.geteuid():
        return (
            f"the folder {folder} belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}): Stet did not make it "
            "and does not keep its store in another user's folder. Remove it, or give it to your user (chown)."
        )
    return None


def files_problem(db: str) -> str | None:
    """Why the database at `db` or its `-wal` / `-shm` must not be opened (None: they may)."""
    for suffix, what in _WHAT.items():
        path = db + suffix
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            return (
                f"{what} {path} is a symlink: Stet keeps its store in real files, so that nothing it writes lands "
                "elsewhere. Replace the symlink with the real file (or remove it), or point --db / STET_DB elsewhere."
            )
        if not stat.S_ISREG(st.st_mode):
            return f"{what} {path} is not a regular file; point --db / STET_DB at a Stet store"
        if st.st_nlink > 1:
            return (
                f"{what} {path} has {st.st_nlink} hard links: it is also another file, which SQLite would write into. "
                "Remove the other names (or this one), or point --db / STET_DB elsewhere."
            )
        if st.st_uid != os.geteuid():
            return (
                f"{what} {path} belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}): Stet opens only its "
                "own user's store. Give it to your user (chown), or point --db / STET_DB elsewhere."
            )
    return None


def problem(db: str) -> str | None:
    """`home_problem` of the database's folder, then `files_problem`."""
    return home_problem(os.path.dirname(db)) or files_problem(db)
