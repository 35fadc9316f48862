"""Which engine a store is: a PostgreSQL url, or an SQLite file (the default)."""

from __future__ import annotations

import os

from .api import StoreApi
from .base import OpenResult
from .sqlite import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .postgres import PgStore

SCHEMES = ("postgresql://", "postgres://")


def is_url(db: str | None) -> bool:
    return bool(db) and str(db).startswith(SCHEMES)


async def open_store(
    db: str,
    *,
    home: str,
    root: str | None = None,
    root_uri: str | None = None,
    repository: str | None = None,
    create: bool = True,
    quarantine: bool = True,
) -> OpenResult:
    """Open the store `db` names. `home`: the checkout's `.stet/` folder, where a PostgreSQL
    store keeps what stays on this machine (an SQLite store keeps it beside its file). For
    PostgreSQL: `root` is the checkout's folder (default: home's parent), `root_uri` its uri as
    the workspace writes it, `repository` the repository's id (see postgres.attach)."""
    if is_url(db):
        from pathlib import Path

        from .postgres import PgStore  # psycopg is loaded only by who uses it

        home = os.path.abspath(home)
        root = os.path.realpath(root or os.path.dirname(home))
        return await PgStore.open_url(db, home, root, root_uri or Path(root).as_uri(), repository)
    return await Store.open(db, create=create, quarantine=quarantine)


def _conforms(sqlite: Store, postgresql: PgStore) -> tuple[StoreApi, StoreApi]:
    """(mypy checks here that both engines' stores provide StoreApi.)"""
    return sqlite, postgresql
