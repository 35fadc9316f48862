"""The SQLite store: schema, migrations, the operation log and the effects journal."""

from .store import Store, OpenResult, EffectRow, OpRow

__all__ = ["Store", "OpenResult", "EffectRow", "OpRow"]
