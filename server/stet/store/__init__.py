"""The store: SQLite only. Schema and migrations, the transaction batcher, rows <-> models,
the task tables. Every SQL statement lives here, in a method named for its intent."""

from .rows import EffectRow, OpRow
from .sqlite import OpenResult, Store
from .tx import Tx

__all__ = ["EffectRow", "OpRow", "OpenResult", "Store", "Tx"]
