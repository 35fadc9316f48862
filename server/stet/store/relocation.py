"""Stored paths made relative to the roots (roots.py), on a raw connection that translates
nothing: once when a store of an older version is migrated (schema.PATHS_RELATIVE), and at an
open from roots the store has not seen before when it still holds absolute uris (`unplaced`).

A value fits when it is a uri inside one of the roots: it is rewritten relative. One that fits
none (an older store opened from another folder than the one it was written in) is left as it
is - read as the absolute uri it is, never lost - and counted; once a process opens the store
from roots it fits (the folder moved back, or opened at its old place once), it is made relative
then. Each pass is one transaction with the rest of the open's writes: a kill leaves the store
as it was before it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..faults import fault
from .link import Raw
from .roots import Roots, absolute_left
from .statements import PathColumn, Statements

_ABSOLUTE = {"uri": ("file:%", "file:%"), "doc": ('%"file:%', '%"file:%')}
# At the migration, also what starts like a marker: text an older version stored as it was,
# to be escaped now (roots.py).
_ANY = {"uri": ("file:%", "stet-%"), "doc": ('%"file:%', '%"stet-%')}


Read = Callable[[str, str], str]  # (kind, stored value) -> the value with absolute uris


def as_written(kind: str, value: str) -> str:
    """An SQLite store of schema 8 kept every value as it was written."""
    return value


def relocate(raw: Raw, sql: Statements, roots: Roots, *, older: Read | None) -> int:
    """Rewrite every stored path inside `roots` relative; returns how many values still hold an
    absolute uri. `older`: how a store of the version before wrote its values (the migration:
    every value that may need a change is brought to this version's form); None: the store is
    of this version (only absolute uris are looked at)."""
    left = 0
    for col in sql.path_columns:
        rows = raw.execute(col.select, (_ABSOLUTE if older is None else _ANY)[col.kind]).fetchall()
        for *key, value in rows:
            new = _stored(roots, col.kind, value, older)
            if new != value:
                _rewrite(raw, col, key, new)
            left += absolute_left(col.kind, new)
        fault("relocate:after-column")
    return left


def _stored(roots: Roots, kind: str, value: str, older: Read | None) -> str:
    if kind == "uri":
        return roots.to_store(roots.from_store(value) if older is None else older(kind, value))
    return roots.doc_to_store(roots.doc_from_store(value) if older is None else older(kind, value))


def _rewrite(raw: Raw, col: PathColumn, key: list[object], new: str) -> None:
    if col.taken is not None and col.drop is not None:
        # The uri is in the row's key: a row at the relative path was written since (by this
        # version, so later than the absolute one): it stays, the older one goes.
        at = [new if name == col.column else k for name, k in zip(col.key, key)]
        if raw.execute(col.taken, at).fetchone() is not None:
            raw.execute(col.drop, key)
            return
    raw.execute(col.update, (new, *key))


def recorded(raw: Raw, sql: Statements) -> dict[int, str]:
    """Where the store last saw each root: index -> uri."""
    return {int(n): str(u) for n, u in raw.execute(sql.roots).fetchall()}


def first(raw: Raw, sql: Statements, uris: Sequence[str], older: Read) -> None:
    """The migration's step (inside its transaction): every path relative to `uris`, the roots
    recorded, what was left absolute counted. `older`: see `relocate`."""
    for n, uri in enumerate(uris):
        raw.execute(sql.put_root, (n, uri))
    left = relocate(raw, sql, Roots(uris), older=older)
    raw.execute(sql.set_unplaced, (left,))


def settle(raw: Raw, sql: Statements, uris: Sequence[str]) -> Roots:
    """At an open: the roots this process reads and writes paths at. Roots the store had not
    seen there are recorded (in a write transaction of their own), and when it holds absolute
    uris they are made relative to these roots where they fit."""
    seen = recorded(raw, sql)
    if any(seen.get(n) != uri for n, uri in enumerate(uris)):
        raw.begin(True, False)
        try:
            seen = recorded(raw, sql)
            for n, uri in enumerate(uris):
                if seen.get(n) != uri:
                    raw.execute(sql.put_root, (n, uri))
            row = raw.execute(sql.unplaced).fetchone()
            if row is not None and row[0]:
                left = relocate(raw, sql, Roots(uris, seen), older=None)
                raw.execute(sql.set_unplaced, (left,))
            raw.commit(True, False)
        except BaseException:
            raw.rollback(False)
            raise
    return Roots(uris, seen)
