"""PostgreSQL's statements (see statements.py).

What is each checkout's own is read and written with the checkout condition written out,
`checkout = {MINE}` (the connection's checkout, set when it connects: pgconn.py): its effects
journal, its file stamps, and whether an applied hunk is in its files (hunk_in_file). A new
statement on those tables says which checkout it means; tests/unit/test_store_statements.py
checks that every one of them does."""

from __future__ import annotations

from .rows import CAPTURE_COLUMNS, TASK_COLUMNS
from .statements import Statements, path_columns

MINE = "current_setting('stet.checkout')"  # this connection's checkout
CHANNEL = "stet"

# rows.HUNK_COLUMNS, with in_file read from this checkout's row of hunk_in_file.
HUNK_COLUMNS = (
    "id, proposal_id, task_id, seq, uri, kind, new_uri, status, line, old_text, new_text, "
    "ctx_before, ctx_after, applied_text, message, feedback, version, decided_at, lsn, "
    f"(SELECT f.in_file FROM hunk_in_file f WHERE f.hunk_id = hunks.id AND f.checkout = {MINE}), problem, kept, parts, by_commit, sent_back"
)
_HUNKS = f"SELECT {HUNK_COLUMNS} FROM hunks"

# A sequence's last value is read with pg_sequence_last_value (NULL until first set), which the
# USAGE right allows, not as `SELECT last_value FROM stet_lsn`, which needs SELECT on it: the
# README's least-rights role has USAGE and UPDATE only.
NEXT_IDS = (
    "SELECT GREATEST((SELECT COALESCE(MAX(lsn), 0) FROM oplog), "
    "COALESCE(pg_sequence_last_value('stet_lsn'), 0)), "
    "GREATEST((SELECT COALESCE(MAX(id), 0) FROM effects), "
    "COALESCE(pg_sequence_last_value('stet_effect_id'), 0))"
)
# pg_advisory_xact_lock(key1, key2): key1 says "Stet's writers", key2 the repository (the schema).
LOCK = "SELECT pg_advisory_xact_lock(1937007988, hashtext(current_schema()))"
# Sent with the COMMIT of a write: the sequences past every id this transaction used (the
# writers' lock is held, so nobody else moved them), and the notification to followers.
COMMIT_WRITE = (
    "SELECT setval('stet_lsn', GREATEST(ids.l, 1), ids.l > 0), setval('stet_effect_id', GREATEST(ids.e, 1), ids.e > 0), "
    f"pg_notify('{CHANNEL}', current_schema()) FROM ({NEXT_IDS}) AS ids(l, e)"
)

POSTGRES = Statements(
    mark="%s",
    next_ids=NEXT_IDS,
    last_lsn="SELECT COALESCE(MAX(lsn), 0) FROM oplog",
    op_by_id="SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE op_id = %s",
    ops="SELECT lsn, op_id, kind, args, result, at FROM oplog WHERE lsn > %s ORDER BY lsn LIMIT %s",
    log_op="INSERT INTO oplog (lsn, op_id, kind, args, result, at) VALUES (%s, %s, %s, %s, %s, %s)",
    set_result="UPDATE oplog SET result = %s WHERE lsn = %s",
    proposal="SELECT id, task_id, agent, message, edit_hash, result_hash, lsn FROM proposals WHERE id = %s",
    proposal_hashes="SELECT id, edit_hash, result_hash, lsn FROM proposals WHERE id = %s",
    proposal_record="SELECT id, task_id, agent, message, created_at FROM proposals WHERE id = %s",
    add_proposal=(
        "INSERT INTO proposals (id, task_id, agent, message, edit_hash, result_hash, lsn, created_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    messages=(
        "SELECT p.id, p.message, t.session, t.number, COALESCE(p.agent, k.agent) FROM proposals p "
        "LEFT JOIN turns t ON t.proposal_id = p.id LEFT JOIN tasks k ON k.id = p.task_id WHERE p.id IN ({marks})"
    ),
    hunks_select=_HUNKS,
    hunks_since=f"{_HUNKS} WHERE lsn > %s ORDER BY lsn",
    hunks_by_ids=_HUNKS + " WHERE id IN ({marks})",
    # hunks.in_file is written as the SQLite engine writes it, and read from hunk_in_file.
    add_hunks=(
        "INSERT INTO hunks (id, proposal_id, task_id, seq, uri, kind, new_uri, status, line, old_text, new_text, "
        "ctx_before, ctx_after, applied_text, message, feedback, version, decided_at, lsn, in_file, problem, kept, parts, by_commit, "
        "sent_back) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    save_hunks=(
        "UPDATE hunks SET status = %s, line = %s, applied_text = %s, feedback = %s, version = %s, "
        "decided_at = %s, lsn = %s, in_file = %s, problem = %s, kept = %s, by_commit = %s WHERE id = %s"
    ),
    put_in_file=(
        f"INSERT INTO hunk_in_file (checkout, hunk_id, in_file) VALUES ({MINE}, %s, %s) "
        "ON CONFLICT (checkout, hunk_id) DO UPDATE SET in_file = EXCLUDED.in_file"
    ),
    move_hunks="UPDATE hunks SET uri = %s, lsn = %s WHERE uri = %s AND id != %s",
    save_lines="UPDATE hunks SET line = %s, lsn = %s WHERE id = %s",
    save_contexts="UPDATE hunks SET ctx_before = %s, ctx_after = %s, lsn = %s WHERE id = %s",
    set_parts="UPDATE hunks SET parts = %s WHERE id = %s",
    set_sent_back="UPDATE hunks SET sent_back = %s, lsn = %s WHERE id = %s",
    # effects.checkout defaults to this connection's checkout (POSTGRES_MIGRATIONS[0]); said here too.
    add_effect=(
        "INSERT INTO effects (id, lsn, uri, action, edits, state, target, owner, at, checkout) "
        f"VALUES (%s, %s, %s, %s, %s, 'pending', %s, %s, %s, {MINE})"
    ),
    set_effect=f"UPDATE effects SET state = %s, attempts = %s WHERE checkout = {MINE} AND id = %s",
    set_effect_owner=f"UPDATE effects SET state = %s, attempts = %s, owner = %s WHERE checkout = {MINE} AND id = %s",
    open_effects=(
        "SELECT id, lsn, uri, action, edits, state, attempts, target, owner FROM effects "
        f"WHERE checkout = {MINE} AND state IN ('pending', 'unsaved') ORDER BY lsn, id"
    ),
    effects_done_after=f"SELECT edits FROM effects WHERE checkout = {MINE} AND state = 'done' AND lsn > %s",
    pending_effect=f"SELECT 1 FROM effects WHERE checkout = {MINE} AND state = 'pending' AND uri = %s LIMIT 1",
    settle_saved_effects=f"UPDATE effects SET state = 'done' WHERE checkout = {MINE} AND uri = %s AND state = 'unsaved'",
    stamps=f"SELECT uri, size, mtime_ns, hash FROM file_stamps WHERE checkout = {MINE}",
    put_stamps=(
        f"INSERT INTO file_stamps (checkout, uri, size, mtime_ns, hash) VALUES ({MINE}, %s, %s, %s, %s) "
        "ON CONFLICT (checkout, uri) DO UPDATE SET size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns, "
        "hash = EXCLUDED.hash"
    ),
    # Every checkout's stamp: a hunk of the file changed, so no stamp says when it was judged
    # (each checkout then reads the file again, and stamps what it finds).
    unstamp="DELETE FROM file_stamps WHERE uri = %s",
    task=f"SELECT {TASK_COLUMNS} FROM tasks WHERE id = %s",
    tasks_all=f"SELECT {TASK_COLUMNS} FROM tasks ORDER BY created_at, id",
    tasks_by_status=f"SELECT {TASK_COLUMNS} FROM tasks WHERE status = %s ORDER BY created_at, id",
    add_task=f"INSERT INTO tasks ({TASK_COLUMNS}) VALUES (%s, %s, %s, %s, 'open', NULL, %s, %s, %s)",
    touch_task="UPDATE tasks SET updated_at = %s, lsn = %s WHERE id = %s",
    close_task=(
        "UPDATE tasks SET status = %s, summary = COALESCE(%s, summary), updated_at = %s, lsn = %s WHERE id = %s"
    ),
    steps="SELECT n, text, status, updated_at, lsn FROM task_steps WHERE task_id = %s ORDER BY n",
    last_step="SELECT COALESCE(MAX(n), 0) FROM task_steps WHERE task_id = %s",
    add_step="INSERT INTO task_steps (task_id, n, text, status, updated_at, lsn) VALUES (%s, %s, %s, %s, %s, %s)",
    set_step="UPDATE task_steps SET text = %s, status = %s, updated_at = %s, lsn = %s WHERE task_id = %s AND n = %s",
    notes="SELECT n, kind, text, why, answers, at, lsn FROM task_notes WHERE task_id = %s ORDER BY n",
    last_note="SELECT COALESCE(MAX(n), 0) FROM task_notes WHERE task_id = %s",
    add_note=(
        "INSERT INTO task_notes (task_id, n, kind, text, why, answers, at, lsn) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    ),
    files="SELECT uri, hash, read_at, lsn FROM task_files WHERE task_id = %s ORDER BY uri",
    put_file=(
        "INSERT INTO task_files (task_id, uri, hash, read_at, lsn) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (task_id, uri) DO UPDATE SET hash = EXCLUDED.hash, read_at = EXCLUDED.read_at, lsn = EXCLUDED.lsn"
    ),
    snapshot_set="SELECT whole, consumed, lsn FROM snapshot_sets WHERE task_key = %s",
    snapshot_entries="SELECT uri, hash, agent_hash FROM snapshots WHERE task_key = %s ORDER BY uri",
    snapshot_sets=(
        "SELECT s.task_key, s.whole, COUNT(e.uri) FROM snapshot_sets s "
        "LEFT JOIN snapshots e ON e.task_key = s.task_key GROUP BY s.task_key ORDER BY s.task_key"
    ),
    start_set=(
        "INSERT INTO snapshot_sets (task_key, whole, consumed, lsn, at) VALUES (%s, %s, '[]', %s, %s) "
        "ON CONFLICT (task_key) DO UPDATE SET lsn = EXCLUDED.lsn"
    ),
    add_entry=(
        "INSERT INTO snapshots (task_key, uri, hash, agent_hash, lsn, at) VALUES (%s, %s, %s, NULL, %s, %s) "
        "ON CONFLICT DO NOTHING"
    ),
    set_agent_hash="UPDATE snapshots SET agent_hash = %s, lsn = %s WHERE task_key = %s AND uri = %s",
    drop_entry="DELETE FROM snapshots WHERE task_key = %s AND uri = %s",
    consumed="SELECT consumed FROM snapshot_sets WHERE task_key = %s",
    set_consumed="UPDATE snapshot_sets SET consumed = %s WHERE task_key = %s",
    any_entry="SELECT 1 FROM snapshots WHERE task_key = %s LIMIT 1",
    drop_entries="DELETE FROM snapshots WHERE task_key = %s",
    drop_set="DELETE FROM snapshot_sets WHERE task_key = %s",
    referenced="SELECT hash FROM snapshots WHERE hash IS NOT NULL UNION SELECT agent_hash FROM snapshots",
    add_capture=(
        "INSERT INTO captures (id, lsn, state, restores, cleanup, outcome, at) VALUES (%s, %s, %s, %s, %s, NULL, %s)"
    ),
    reopen_capture=(
        "UPDATE captures SET lsn = %s, state = %s, restores = %s, cleanup = %s, outcome = NULL, at = %s "
        "WHERE id = %s AND state = 'done'"
    ),
    capture=f"SELECT {CAPTURE_COLUMNS} FROM captures WHERE id = %s",
    open_captures=f"SELECT {CAPTURE_COLUMNS} FROM captures WHERE state = 'pending' ORDER BY lsn",
    finish_capture="UPDATE captures SET state = 'done', outcome = %s WHERE id = %s AND state = 'pending'",
    add_turn=(
        "INSERT INTO turns (proposal_id, session, number) "
        "SELECT %s, %s, COALESCE(MAX(number), 0) + 1 FROM turns WHERE session = %s ON CONFLICT DO NOTHING"
    ),
    last_turn=(
        "SELECT t.session, t.number FROM turns t JOIN proposals p ON p.id = t.proposal_id ORDER BY p.lsn DESC LIMIT 1"
    ),
    told=f"SELECT hunk_id, decision FROM agent_told WHERE checkout = {MINE} AND agent = %s",
    put_told=(
        f"INSERT INTO agent_told (checkout, agent, hunk_id, decision) VALUES ({MINE}, %s, %s, %s) "
        "ON CONFLICT (checkout, agent, hunk_id) DO UPDATE SET decision = EXCLUDED.decision"
    ),
    drop_told=f"DELETE FROM agent_told WHERE checkout = {MINE} AND agent = %s AND hunk_id = %s",
    # Shared by the checkouts: where each root was when a process last opened the review with it.
    roots="SELECT n, uri FROM roots",
    put_root="INSERT INTO roots (n, uri) VALUES (%s, %s) ON CONFLICT (n) DO UPDATE SET uri = EXCLUDED.uri",
    unplaced="SELECT n FROM unplaced",
    set_unplaced="UPDATE unplaced SET n = %s",
    # A checkout relocates its own effects and stamps only (the others' are at their own paths).
    path_columns=path_columns("%s", {"effects": f"checkout = {MINE}", "file_stamps": f"checkout = {MINE}"}),
)

# The engine's own statements: its transactions, settings, schema version, checkouts and checks
# (no review asks for them: not in the table above). pgconn.py and postgres.py send them.
BEGIN_WRITE = "BEGIN"  # then LOCK: the writers' lock at once, the next ids are known
BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"  # one snapshot
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"
DERIVED = "SET LOCAL synchronous_commit = off"  # a derived record: committed without waiting for the disk
SET_CHECKOUT = "SELECT set_config('stet.checkout', %s, false)"  # what MINE reads
LISTEN = f"LISTEN {CHANNEL}"
SCHEMA = "SELECT current_schema()"
REACHABLE = "SELECT 1 FROM stet_schema"
# The schema version (Stet's migrations and PostgreSQL's own), and whose tables a schema holds.
HAS_VERSION = "SELECT to_regclass('stet_schema') IS NOT NULL"
SOME_TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() LIMIT 3"
MAKE_VERSION = (
    "CREATE TABLE stet_schema (version BIGINT NOT NULL, pg_version BIGINT NOT NULL)",
    "INSERT INTO stet_schema VALUES (0, 0)",
)
VERSION = "SELECT version, pg_version FROM stet_schema"
SET_VERSION = "UPDATE stet_schema SET version = %s, pg_version = %s"
# The checkouts of one repository's review (postgres.attach).
REPOSITORY = "SELECT id FROM stet_repository"
OTHER_CHECKOUTS = "SELECT 1 FROM stet_checkouts WHERE id <> %s LIMIT 1"
NAME_REPOSITORY = "INSERT INTO stet_repository (id, at) VALUES (%s, %s)"
ATTACH = (
    "INSERT INTO stet_checkouts (id, host, root, first_seen, last_seen) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (id) DO UPDATE SET last_seen = EXCLUDED.last_seen"
)
# Schema 8's texts put back as a checkout read them (pgconn._texts_as_read_before): every text
# column of the schema's tables, and one column's rows by their ctid.
TEXT_COLUMNS = (
    "SELECT c.table_name, c.column_name FROM information_schema.columns c "
    "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
    "WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.data_type = 'text' "
    "ORDER BY c.table_name, c.column_name"
)
TEXTS_LIKE = 'SELECT ctid, "{column}" FROM "{table}" WHERE "{column}" LIKE %s'
SET_TEXT = 'UPDATE "{table}" SET "{column}" = %s WHERE ctid = %s'
