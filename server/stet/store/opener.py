"""Opening the store a `--db` value names (engines.py says which engine) with its engine's class:
`Store` (SQLite, sqlite.py) or `PgStore` (PostgreSQL, postgres.py, loaded only by who uses it)."""

from __future__ import annotations

import os
import sys

from ..errors import StoreUnavailable
from .api import StoreApi
from .base import OpenResult
from .engines import POSTGRESQL, engine_of
from .sqlite import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .postgres import PgStore


async def open_store(
    db: str,
    *,
    home: str,
    root_uris: list[str] | None = None,
    repository: str | None = None,
    create: bool = True,
    quarantine: bool = True,
) -> OpenResult:
    """Open the store `db` names. `home`: the checkout's `.stet/` folder, where a PostgreSQL
    store keeps what stays on this machine (an SQLite store keeps it beside its file).
    `root_uris`: the workspace's roots, first first, as it writes their uris: paths are stored
    relative to them (roots.py; default: home's parent). For PostgreSQL, `repository` is the
    repository's id (see postgres.attach)."""
    home = os.path.abspath(home)
    if root_uris is None:
        from pathlib import Path

        root_uris = [Path(os.path.realpath(os.path.dirname(home))).as_uri()]
    if engine_of(db) is POSTGRESQL:
        try:
            from .postgres import PgStore  # psycopg is loaded only by who uses it
        except ModuleNotFoundError as exc:
            if exc.name is None or exc.name.split(".")[0] != "psycopg":
                raise
            raise StoreUnavailable(no_driver(db)) from None

        root = os.path.realpath(os.path.dirname(home))
        return await PgStore.open_url(db, home, root, root_uris, repository)
    return await Store.open(db, roots=root_uris, create=create, quarantine=quarantine)


def no_driver(db: str) -> str:
    from .pgurl import shown

    return (
        f"the review store {shown(db)} is a PostgreSQL url, and the Python Stet runs in ({sys.executable}) has "
        "no PostgreSQL driver (psycopg): install Stet's `postgresql` extra into it (from Stet's clone: "
        "`pip install -e '.[postgresql]'`; or `pip install 'psycopg[binary]>=3.2,<4'`)"
    )


def _conforms(sqlite: Store, postgresql: PgStore) -> tuple[StoreApi, StoreApi]:
    """(mypy checks here that both engines' stores provide StoreApi.)"""
    return sqlite, postgresql
