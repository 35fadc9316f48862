"""Which engine a store is, and what the rest of Stet may ask of it: the one place that reads a
`--db` value (a PostgreSQL url, else an SQLite file, the default).

Outside store/ nothing tests a url: a room asks `engine_of(db)` whether the review is shared by
checkouts, whether a server that cannot reach it tries again, where a checkout's review lives
(its `.stet/`: the resident's socket, the MCP token, the inbox) and how a message names it (a
url may hold a password). Light on purpose (os only): the thin client asks it where a call's
resident lives (resident/place.py). opener.py opens the store with its engine's class."""

import os

SCHEMES = ("postgresql://", "postgres://")
HOME = ".stet"  # a checkout's own folder (workspace/own.STORE_DIR)
STORE_FILE = "stet.db"


class Engine:
    """An engine's answers; `engine_of` gives the one a `--db` value names."""

    name = ""  # "sqlite" | "postgresql" (as StoreApi.engine)
    shared = False  # one review for several checkouts (of one repository, named by its id)
    reconnects = False  # a server that cannot reach it tries again (it may come back by itself)

    def absolute(self, db: str) -> str:
        """`db` as any process names it, whatever its folder."""
        return db

    def home(self, db: str, root: str) -> str | None:
        """Where the review of the checkout at `root` lives: the `.stet/` that holds its resident,
        MCP token and inbox; None when it has none (a store kept outside a `.stet/`)."""
        raise NotImplementedError

    def local_file(self, db: str, home: str) -> str:
        """The file that stands for the store in this checkout (whose `.stet/` is `home`): what is
        kept beside it (the token, the lock, the inbox) and what is never a file under review."""
        raise NotImplementedError

    def named(self, db: str) -> str:
        """How a message names the store (never with a password)."""
        raise NotImplementedError


class _Sqlite(Engine):
    name = "sqlite"

    def absolute(self, db: str) -> str:
        return os.path.abspath(db)

    def home(self, db: str, root: str) -> str | None:
        folder = os.path.dirname(db)
        return folder if os.path.basename(folder) == HOME else None

    def local_file(self, db: str, home: str) -> str:
        return db

    def named(self, db: str) -> str:
        return db


class _Postgresql(Engine):
    name = "postgresql"
    shared = reconnects = True

    def home(self, db: str, root: str) -> str | None:
        return os.path.join(os.path.realpath(root), HOME)  # one per checkout

    def local_file(self, db: str, home: str) -> str:
        return os.path.join(home, STORE_FILE)  # never made: its siblings are

    def named(self, db: str) -> str:
        return "a PostgreSQL review"


SQLITE: Engine = _Sqlite()
POSTGRESQL: Engine = _Postgresql()


def engine_of(db: str | None) -> Engine:
    """The engine of the store `db` names (an SQLite file unless it is a PostgreSQL url)."""
    return POSTGRESQL if db and str(db).startswith(SCHEMES) else SQLITE
