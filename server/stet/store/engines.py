"""Which engine a store is: a PostgreSQL url, or an SQLite file (the default)."""

from __future__ import annotations

import os

from .api import StoreApi
from .sqlite import OpenResult, Store

SCHEMES = ("postgresql://", "postgres://")


def is_url(db: str | None) -> bool:
    return bool(db) and str(db).startswith(SCHEMES)


async def open_store(db: str, *, home: str, create: bool = True, quarantine: bool = True) -> OpenResult:
    """Open the store `db` names. `home`: the checkout's `.stet/` folder, where a PostgreSQL
    store keeps what stays on this machine (an SQLite store keeps it beside its file)."""
    if is_url(db):
        from .postgres import PgStore  # psycopg is loaded only by who uses it

        return await PgStore.open_url(db, os.path.abspath(home))
    return await Store.open(db, create=create, quarantine=quarantine)


def _conforms(store: Store) -> StoreApi:
    """(mypy checks here that both engines' Store, PgStore being one, provide StoreApi.)"""
    return store
