"""Where a review lives, as the rooms above the review ask it: the store's engine
(store/engines.py answers: shared by checkouts? tried again when it cannot be reached? where a
checkout's `.stet/` is? how a message names it?) and the folder made for what lives beside it.

Light on purpose (store/engines.py imports only os): `stet` finds its store through it at every
call. (The thin client, resident/place.py, asks store/engines.py itself: not even this module
is loaded there.)"""

import os

from ..store.engines import Engine, engine_of

__all__ = ["Engine", "engine_of", "prepared_local_file"]


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
