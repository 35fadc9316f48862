"""Where a review lives, as the rooms above the review ask it: the store's engine
(store/engines.py answers: shared by checkouts? tried again when it cannot be reached? where a
checkout's `.stet/` is? how a message names it?) and the folder made for what lives beside it.

Light on purpose (store/engines.py imports only os): `stet` finds its store through it at every
call. (The thin client, resident/place.py, asks store/engines.py itself: not even this module
is loaded there.)"""

import os

from ..store.engines import Engine, engine_of

__all__ = ["Engine", "engine_of", "find_store", "located", "prepared_local_file", "project_root"]

STORE_DIR = ".stet"
STORE_FILE = "stet.db"


def _up(start: str) -> list[str]:
    """`start` (symlinks resolved) and every folder above it."""
    folder = os.path.realpath(start)
    out = [folder]
    while (parent := os.path.dirname(folder)) != folder:
        out.append(parent)
        folder = parent
    return out


def find_store(start: str) -> str | None:
    """The nearest `.stet/stet.db` at or above `start`, like git finds `.git`."""
    for folder in _up(start):
        candidate = os.path.join(folder, STORE_DIR, STORE_FILE)
        if os.path.isfile(candidate):
            return candidate
    return None


def project_root(start: str) -> str:
    """Where a new store goes: the enclosing git work tree, else the folder itself."""
    folders = _up(start)
    for folder in folders:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
    return folders[0]


def root_of(db: str, cwd: str) -> str:
    """The workspace root of a store found or named from `cwd`: the folder holding its `.stet/`,
    else (a store kept elsewhere, a shared one) the project's."""
    folder = os.path.dirname(db)
    if not engine_of(db).shared and os.path.basename(folder) == STORE_DIR:
        return os.path.dirname(folder)
    return project_root(cwd)


def located(cwd: str, db: str | None) -> tuple[str, list[str]] | None:
    """(store, workspace roots) as `stet` finds them from the folder `cwd` without --root, `db`
    being --db / STET_DB (None: walk up); None when there is no store (none is made)."""
    if db and not engine_of(db).shared:
        db = os.path.join(cwd, db)
        if not os.path.isfile(db):
            return None
    elif not db:
        db = find_store(cwd)
        if db is None:
            return None
    return db, [os.path.realpath(root_of(db, cwd))]


def prepared_local_file(db: str, root: str) -> str:
    """The file that stands for the store `db` in the checkout at `root` (what is kept beside it:
    the MCP token), its folder made if missing: beside an SQLite store, in the checkout's `.stet/`
    for a shared one."""
    from ..store.sqlite import prepare_folder, prepare_home  # (loads aiosqlite: only when asked)

    engine = engine_of(db)
    beside = engine.local_file(db, os.path.join(root, ".stet"))
    if engine.shared:
        prepare_home(os.path.dirname(beside))
    else:
        prepare_folder(db)
    return beside
