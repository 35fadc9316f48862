"""The store: SQLite (the default) or PostgreSQL (engines.py chooses). Schema and migrations, the transaction batcher, rows <-> models,
the task tables. Every SQL statement lives here, in each engine's own statement table (sqlite_sql.py,
pg_sql.py), sent by a method named for its intent.

The names below are loaded when first used: importing `stet.store.glance` (a read-only look,
no event loop) must not import aiosqlite and asyncio with `Store`."""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .api import StoreApi
    from .base import OpenResult
    from .engines import is_url, open_store
    from .rows import EffectRow, OpRow
    from .sqlite import Store
    from .tx import Tx

_HOME = {
    "EffectRow": "rows",
    "OpRow": "rows",
    "OpenResult": "base",
    "Store": "sqlite",
    "StoreApi": "api",
    "Tx": "tx",
    "open_store": "engines",
    "is_url": "engines",
}

__all__ = ["EffectRow", "OpRow", "OpenResult", "Store", "StoreApi", "Tx", "is_url", "open_store"]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
