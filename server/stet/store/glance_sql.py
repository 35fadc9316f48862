"""SQLite's statements for a glance (glance.py): a part of SQLite's statement table (sqlite_sql.py)
kept in a module of its own that imports nothing, because a glance is `stet status`'s fast path
and the table's module loads the rows, the domain model and dataclasses (about 20 ms more).
The statements both read alike are written here once and used by the table."""

from __future__ import annotations

ROOTS = "SELECT n, uri FROM roots"  # n, uri
UNPLACED = "SELECT n FROM unplaced"
BEGIN = "BEGIN"  # one snapshot for the reads
COMMIT = "COMMIT"
USER_VERSION = "PRAGMA user_version"
QUICK_CHECK = "PRAGMA quick_check"
BUSY_TIMEOUT = "PRAGMA busy_timeout={ms:d}"

# A hunk's message is its proposal's, stored once there (older hunks keep their own copy).
HUNK_FIELDS = (
    "h.id, h.proposal_id, h.task_id, h.seq, h.uri, h.kind, h.new_uri, h.status, h.line, h.old_text, "
    "h.new_text, h.applied_text, COALESCE(h.message, p.message), h.feedback, h.in_file, h.kept"
)
HUNKS = "SELECT {fields} FROM hunks h LEFT JOIN proposals p ON p.id = h.proposal_id"
OPEN_EFFECTS = "SELECT id, uri, state, target, owner FROM effects WHERE state IN ('pending', 'unsaved')"
STAMPS = "SELECT uri, size, mtime_ns FROM file_stamps"
# A capture whose restore journal a kill left open.
CAPTURING = "SELECT 1 FROM captures WHERE state = 'pending' LIMIT 1"


def hunks(whole: bool) -> str:
    """The hunks: HUNK_FIELDS, or with `whole` every stored column (rows.HUNK_COLUMNS, for
    rows.hunk_from_row) then the proposal's message."""
    if not whole:
        return HUNKS.format(fields=HUNK_FIELDS)
    from .rows import HUNK_COLUMNS  # only a command that needs whole hunks pays for it

    return HUNKS.format(fields=", ".join(f"h.{c.strip()}" for c in HUNK_COLUMNS.split(",")) + ", p.message")
