"""SQLite's statements for a glance (glance.py): a part of SQLite's statement table (sqlite_sql.py)
kept in a module of its own that imports nothing but a hunk's row layout (hunk_layout.py), because
a glance is `stet status`'s fast path and the table's module loads the other tables' rows and
dataclasses (about 20 ms more).
The statements both read alike are written here once and used by the table."""

from __future__ import annotations

ROOTS = "SELECT n, uri FROM roots"  # n, uri
UNPLACED = "SELECT n FROM unplaced"
BEGIN = "BEGIN"  # one snapshot for the reads
COMMIT = "COMMIT"
USER_VERSION = "PRAGMA user_version"
QUICK_CHECK = "PRAGMA quick_check"
BUSY_TIMEOUT = "PRAGMA busy_timeout={ms:d}"

# Every stored column of a hunk (hunk_layout.HUNK_COLUMNS), then its proposal's message, turn and
# agent (as the statement table's `messages`): a hunk's message is its proposal's, stored once there
# (older hunks keep their own copy).
HUNKS = (
    "SELECT {fields}, p.message, t.session, t.number, COALESCE(p.agent, k.agent) FROM hunks h "
    "LEFT JOIN proposals p ON p.id = h.proposal_id LEFT JOIN turns t ON t.proposal_id = h.proposal_id "
    "LEFT JOIN tasks k ON k.id = p.task_id"
)
OPEN_EFFECTS = "SELECT id, uri, state, target, owner FROM effects WHERE state IN ('pending', 'unsaved')"
STAMPS = "SELECT uri, size, mtime_ns FROM file_stamps"
# A capture whose restore journal a kill left open.
CAPTURING = "SELECT 1 FROM captures WHERE state = 'pending' LIMIT 1"


def hunks() -> str:
    """The hunks as hunk_layout.hunk_from_row reads them, then the proposal's message, turn and agent."""
    from .hunk_layout import HUNK_COLUMNS  # the glance reads hunks with it anyway

    return HUNKS.format(fields=", ".join(f"h.{c.strip()}" for c in HUNK_COLUMNS.split(",")))
