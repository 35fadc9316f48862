"""SQLite's statements (see statements.py); a glance's own, which import nothing, are in glance_sql.py."""

from __future__ import annotations

from . import glance_sql
from .rows import CAPTURE_COLUMNS, HUNK_COLUMNS, TASK_COLUMNS
from .statements import Statements, path_columns

_HUNKS = f"SELECT {HUNK_COLUMNS} FROM hunks"

SQLITE = Statements(
    mark="?",
    # AUTOINCREMENT's next ids: the largest ever used (sqlite_sequence), plus one.
    next_ids=(
        "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'oplog'), 0), "
        "COALESCE((SELECT MAX(lsn) FROM oplog), 0)), "
        "MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'effects'), 0), "
        "COALESCE((SELECT MAX(id) FROM effects), 0))"
    ),
    last_lsn="SELECT COALESCE(MAX(lsn), 0) FROM oplog",
    op_by_id="SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE op_id = ?",
    ops="SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE lsn > ? ORDER BY lsn LIMIT ?",
    log_op="INSERT INTO oplog (lsn, op_id, kind, args, result, at) VALUES (?, ?, ?, ?, ?, ?)",
    set_result="UPDATE oplog SET result = ? WHERE lsn = ?",
    proposal="SELECT id, task_id, agent, message, edit_hash, result_hash, lsn FROM proposals WHERE id = ?",
    proposal_hashes="SELECT id, edit_hash, result_hash, lsn FROM proposals WHERE id = ?",
    proposal_record="SELECT id, task_id, agent, message, created_at FROM proposals WHERE id = ?",
    add_proposal=(
        "INSERT INTO proposals (id, task_id, agent, message, edit_hash, result_hash, lsn, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ),
    messages=(
        "SELECT p.id, p.message, t.session, t.number, COALESCE(p.agent, k.agent) FROM proposals p "
        "LEFT JOIN turns t ON t.proposal_id = p.id LEFT JOIN tasks k ON k.id = p.task_id WHERE p.id IN ({marks})"
    ),
    hunks_select=_HUNKS,
    hunks_since=f"{_HUNKS} WHERE lsn > ? ORDER BY lsn",
    hunks_by_ids=_HUNKS + " WHERE id IN ({marks})",
    add_hunks=f"INSERT INTO hunks ({HUNK_COLUMNS}) VALUES ({', '.join('?' * len(HUNK_COLUMNS.split(',')))})",
    save_hunks=(
        "UPDATE hunks SET status = ?, line = ?, applied_text = ?, feedback = ?, version = ?, "
        "decided_at = ?, lsn = ?, in_file = ?, problem = ?, kept = ?, by_commit = ? WHERE id = ?"
    ),
    put_in_file=None,  # one checkout per SQLite store: in_file is a column of hunks
    move_hunks="UPDATE hunks SET uri = ?, lsn = ? WHERE uri = ? AND id != ?",
    save_lines="UPDATE hunks SET line = ?, lsn = ? WHERE id = ?",
    save_contexts="UPDATE hunks SET ctx_before = ?, ctx_after = ?, lsn = ? WHERE id = ?",
    set_parts="UPDATE hunks SET parts = ? WHERE id = ?",
    set_sent_back="UPDATE hunks SET sent_back = ?, lsn = ? WHERE id = ?",
    add_effect=(
        "INSERT INTO effects (id, lsn, uri, action, edits, state, target, owner, at) "
        "VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)"
    ),
    set_effect="UPDATE effects SET state = ?, attempts = ? WHERE id = ?",
    set_effect_owner="UPDATE effects SET state = ?, attempts = ?, owner = ? WHERE id = ?",
    open_effects=(
        "SELECT id, lsn, uri, action, edits, state, attempts, target, owner FROM effects "
        "WHERE state IN ('pending', 'unsaved') ORDER BY lsn, id"
    ),
    effects_done_after="SELECT edits FROM effects WHERE state = 'done' AND lsn > ?",
    pending_effect="SELECT 1 FROM effects WHERE state = 'pending' AND uri = ? LIMIT 1",
    settle_saved_effects="UPDATE effects SET state = 'done' WHERE uri = ? AND state = 'unsaved'",
    stamps="SELECT uri, size, mtime_ns, hash FROM file_stamps",
    put_stamps="INSERT OR REPLACE INTO file_stamps (uri, size, mtime_ns, hash) VALUES (?, ?, ?, ?)",
    unstamp="DELETE FROM file_stamps WHERE uri = ?",
    task=f"SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?",
    tasks_all=f"SELECT {TASK_COLUMNS} FROM tasks ORDER BY created_at, id",
    tasks_by_status=f"SELECT {TASK_COLUMNS} FROM tasks WHERE status = ? ORDER BY created_at, id",
    add_task=f"INSERT INTO tasks ({TASK_COLUMNS}) VALUES (?, ?, ?, ?, 'open', NULL, ?, ?, ?)",
    touch_task="UPDATE tasks SET updated_at = ?, lsn = ? WHERE id = ?",
    close_task="UPDATE tasks SET status = ?, summary = COALESCE(?, summary), updated_at = ?, lsn = ? WHERE id = ?",
    steps="SELECT n, text, status, updated_at, lsn FROM task_steps WHERE task_id = ? ORDER BY n",
    last_step="SELECT COALESCE(MAX(n), 0) FROM task_steps WHERE task_id = ?",
    add_step="INSERT INTO task_steps (task_id, n, text, status, updated_at, lsn) VALUES (?, ?, ?, ?, ?, ?)",
    set_step="UPDATE task_steps SET text = ?, status = ?, updated_at = ?, lsn = ? WHERE task_id = ? AND n = ?",
    notes="SELECT n, kind, text, why, answers, at, lsn FROM task_notes WHERE task_id = ? ORDER BY n",
    last_note="SELECT COALESCE(MAX(n), 0) FROM task_notes WHERE task_id = ?",
    add_note="INSERT INTO task_notes (task_id, n, kind, text, why, answers, at, lsn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    files="SELECT uri, hash, read_at, lsn FROM task_files WHERE task_id = ? ORDER BY uri",
    put_file=(
        "INSERT INTO task_files (task_id, uri, hash, read_at, lsn) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (task_id, uri) DO UPDATE SET hash = excluded.hash, read_at = excluded.read_at, lsn = excluded.lsn"
    ),
    snapshot_set="SELECT whole, consumed, lsn FROM snapshot_sets WHERE task_key = ?",
    snapshot_entries="SELECT uri, hash, agent_hash FROM snapshots WHERE task_key = ? ORDER BY uri",
    snapshot_sets=(
        "SELECT s.task_key, s.whole, COUNT(e.uri) FROM snapshot_sets s "
        "LEFT JOIN snapshots e ON e.task_key = s.task_key GROUP BY s.task_key ORDER BY s.task_key"
    ),
    start_set=(
        "INSERT INTO snapshot_sets (task_key, whole, consumed, lsn, at) VALUES (?, ?, '[]', ?, ?) "
        "ON CONFLICT(task_key) DO UPDATE SET lsn = excluded.lsn"
    ),
    add_entry="INSERT OR IGNORE INTO snapshots (task_key, uri, hash, agent_hash, lsn, at) VALUES (?, ?, ?, NULL, ?, ?)",
    set_agent_hash="UPDATE snapshots SET agent_hash = ?, lsn = ? WHERE task_key = ? AND uri = ?",
    drop_entry="DELETE FROM snapshots WHERE task_key = ? AND uri = ?",
    consumed="SELECT consumed FROM snapshot_sets WHERE task_key = ?",
    set_consumed="UPDATE snapshot_sets SET consumed = ? WHERE task_key = ?",
    any_entry="SELECT 1 FROM snapshots WHERE task_key = ? LIMIT 1",
    drop_entries="DELETE FROM snapshots WHERE task_key = ?",
    drop_set="DELETE FROM snapshot_sets WHERE task_key = ?",
    referenced="SELECT hash FROM snapshots WHERE hash IS NOT NULL UNION SELECT agent_hash FROM snapshots",
    add_capture="INSERT INTO captures (id, lsn, state, restores, cleanup, outcome, at) VALUES (?, ?, ?, ?, ?, NULL, ?)",
    reopen_capture=(
        "UPDATE captures SET lsn = ?, state = ?, restores = ?, cleanup = ?, outcome = NULL, at = ? "
        "WHERE id = ? AND state = 'done'"
    ),
    capture=f"SELECT {CAPTURE_COLUMNS} FROM captures WHERE id = ?",
    open_captures=f"SELECT {CAPTURE_COLUMNS} FROM captures WHERE state = 'pending' ORDER BY lsn",
    finish_capture="UPDATE captures SET state = 'done', outcome = ? WHERE id = ? AND state = 'pending'",
    add_turn=(
        "INSERT OR IGNORE INTO turns (proposal_id, session, number) "
        "SELECT ?, ?, COALESCE(MAX(number), 0) + 1 FROM turns WHERE session = ?"
    ),
    last_turn=(
        "SELECT t.session, t.number FROM turns t JOIN proposals p ON p.id = t.proposal_id ORDER BY p.lsn DESC LIMIT 1"
    ),
    told="SELECT hunk_id, decision FROM agent_told WHERE agent = ?",
    put_told=(
        "INSERT INTO agent_told (agent, hunk_id, decision) VALUES (?, ?, ?) "
        "ON CONFLICT (agent, hunk_id) DO UPDATE SET decision = excluded.decision"
    ),
    drop_told="DELETE FROM agent_told WHERE agent = ? AND hunk_id = ?",
    roots=glance_sql.ROOTS,
    put_root="INSERT OR REPLACE INTO roots (n, uri) VALUES (?, ?)",
    unplaced=glance_sql.UNPLACED,
    set_unplaced="UPDATE unplaced SET n = ?",
    path_columns=path_columns("?", {}),
)

# The engine's own statements: its transactions, settings and checks (no review asks for them:
# not in the table above). sqlite_link.py and sqlite.py send them.
BEGIN_READ, COMMIT = glance_sql.BEGIN, glance_sql.COMMIT
BEGIN_WRITE = "BEGIN IMMEDIATE"  # the write lock now: the next ids are known
ROLLBACK = "ROLLBACK"
SYNC_NORMAL = "PRAGMA synchronous=NORMAL"  # a derived record (not allowed inside a transaction)
SYNC_FULL = "PRAGMA synchronous=FULL"
BUSY_TIMEOUT, QUICK_CHECK, USER_VERSION = glance_sql.BUSY_TIMEOUT, glance_sql.QUICK_CHECK, glance_sql.USER_VERSION
SET_USER_VERSION = "PRAGMA user_version={version:d}"
WAL = "PRAGMA journal_mode=WAL"
FOREIGN_KEYS = "PRAGMA foreign_keys=ON"
SOME_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' LIMIT 3"  # whose database is it?
DATA_VERSION = "PRAGMA data_version"
INTEGRITY_CHECK = "PRAGMA integrity_check"
CHECKPOINT = "PRAGMA wal_checkpoint(TRUNCATE)"
COPY_INTO = "VACUUM INTO ?"  # a whole copy of the database, into a new file
