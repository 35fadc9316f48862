"""A read-only look at the store with the standard sqlite3 module and no event loop: what
`stet status` shows when the review has nothing to finish (see review/glance.py).

Opening the store for a review starts an event loop and aiosqlite's thread, and loads every
hunk into the review's model; a command that only prints them can read them in one snapshot
instead. Anything unusual (a schema this Stet does not know as it is, a failed quick_check,
an error) answers None: the caller then opens the store the full way, which migrates,
quarantines and explains.
"""

from __future__ import annotations

import sqlite3
from urllib.parse import quote

from . import dbfiles
from . import glance_sql as sql
from .engines import SQLITE, engine_of
from .roots import Roots
from .schema import SCHEMA_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..domain.model import Hunk


class Look:
    """One snapshot: the hunks (the domain's, as the full open reads them from their rows: each
    with its proposal's message and turn), the effects not finished yet (id, uri, state, target, owner)
    and the file stamps (uri -> size, mtime_ns)."""

    __slots__ = ("effects", "hunks", "stamps")

    def __init__(
        self,
        hunks: list[Hunk],
        effects: list[tuple[Any, ...]],
        stamps: dict[str, tuple[int, int]],
    ):
        self.hunks = hunks
        self.effects = effects
        self.stamps = stamps


def look(path: str, roots: list[str], busy_timeout_ms: int = 10000) -> Look | None:
    """Read the store at `path` without writing to it, its paths at `roots` (the workspace's
    roots' uris, first first: roots.py); None when it cannot be read that way (files that are
    not Stet's own included - a symlink, a hard link: the full open refuses them and says why;
    absolute paths left that these roots would make relative: the full open does)."""
    if engine_of(path) is not SQLITE:
        return None  # a glance is SQLite's; the full open reads PostgreSQL
    if dbfiles.problem(path) is not None:
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, isolation_level=None)
    except (sqlite3.Error, OSError):
        return None
    try:
        conn.execute(sql.BUSY_TIMEOUT.format(ms=int(busy_timeout_ms)))
        if conn.execute(sql.USER_VERSION).fetchone()[0] != SCHEMA_VERSION:
            return None
        if [r[0] for r in conn.execute(sql.QUICK_CHECK)] != ["ok"]:
            return None
        conn.execute(sql.BEGIN)  # one snapshot for the reads
        seen = {int(n): str(u) for n, u in conn.execute(sql.ROOTS)}
        unplaced = conn.execute(sql.UNPLACED).fetchone()
        if unplaced and unplaced[0] and any(seen.get(n) != u for n, u in enumerate(roots)):
            conn.execute(sql.COMMIT)
            return None  # the full open makes them relative (relocation.settle)
        at = Roots(roots, seen)
        hunks = _hunks(_rows(at, conn.execute(sql.hunks())))
        effects = _rows(at, conn.execute(sql.OPEN_EFFECTS))
        stamps = {r[0]: (r[1], r[2]) for r in _rows(at, conn.execute(sql.STAMPS))}
        # The full open finishes a capture a kill left open first.
        capturing = conn.execute(sql.CAPTURING).fetchone()
        conn.execute(sql.COMMIT)
        return None if capturing else Look(hunks, effects, stamps)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _rows(roots: Roots, cursor: sqlite3.Cursor) -> list[tuple[Any, ...]]:
    """The rows, their paths at this process's roots."""
    read = roots.reader(cursor.description)
    rows = cursor.fetchall()
    return rows if read is None else [read(r) for r in rows]


def _hunks(rows: list[tuple[Any, ...]]) -> list[Hunk]:
    """The rows (hunk_layout.HUNK_COLUMNS, then the proposal's message, turn and agent) as the domain's
    hunks, as the full open reads them (rows.hunk_from_row, rows.with_messages)."""
    from .hunk_layout import Once, hunk_from_row

    shared = Once()
    hunks = []
    for row in rows:
        h = hunk_from_row(row, shared)
        message, session, number, agent = row[-4:]
        if h.message is None:  # stored once, in its proposal
            h.message = message
        if session is not None:
            h.turn = (session, int(number))
        h.agent = agent
        hunks.append(h)
    return hunks
