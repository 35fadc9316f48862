"""The store: SQLite (the default) or PostgreSQL (engines.py says which, opener.py opens it). Schema and migrations, the transaction batcher, rows <-> models,
the task tables. Every SQL statement lives here, in each engine's own statement table (sqlite_sql.py,
pg_sql.py), sent by a method named for its intent.

The names below are loaded when first used: importing `stet.store.glance` (a read-only look,
no event loop) must not import aiosqlite and asyncio with `Store`."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .api import StoreApi
    from .base import OpenResult
    from .engines import engine_of
    from .opener import open_store
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
    "open_store": "opener",
    "engine_of": "engines",
}

__all__ = ["EffectRow", "OpRow", "OpenResult", "Store", "StoreApi", "Tx", "engine_of", "open_store"]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # (__import__ rather than importlib: the thin client imports engines.py through this package)
    value = getattr(__import__(f"{__name__}.{home}", fromlist=[name]), name)
    globals()[name] = value
    return value
