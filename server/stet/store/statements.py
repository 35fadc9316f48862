"""The statement table: every statement the store sends, by what it does. Each engine fills it
with its own SQL (sqlite_sql.SQLITE, pg_sql.POSTGRES); the transaction code (tx.py, tasks.py,
captures.py) and the stores name a statement, never write one. Parameters are in the order
the field's comment gives; `{marks}` is filled with one parameter marker per value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PathColumn:
    """A column that holds a uri ("uri") or a JSON document of uris ("doc"), for relocation.py."""

    table: str
    column: str
    kind: str  # "uri" | "doc"
    key: tuple[str, ...]  # the columns that name a row
    select: str  # (pattern, pattern): key..., value - of the rows whose value is LIKE either
    update: str  # (value, key...)
    taken: str | None  # (key... with the new value): whether a row has it already (the uri is in the key)
    drop: str | None  # (key...)


# (table, column, kind, key columns): every place the store keeps a path.
PATHS = (
    ("hunks", "uri", "uri", ("id",)),
    ("hunks", "new_uri", "uri", ("id",)),
    ("oplog", "args", "doc", ("lsn",)),
    ("oplog", "result", "doc", ("lsn",)),
    ("effects", "uri", "uri", ("id",)),
    ("effects", "edits", "doc", ("id",)),
    ("file_stamps", "uri", "uri", ("uri",)),
    ("task_files", "uri", "uri", ("task_id", "uri")),
    ("snapshots", "uri", "uri", ("task_key", "uri")),
    ("captures", "restores", "doc", ("id",)),
    ("captures", "cleanup", "doc", ("id",)),
    ("captures", "outcome", "doc", ("id",)),
)


def path_columns(mark: str, mine: Mapping[str, str]) -> tuple[PathColumn, ...]:
    """The statements of PATHS for an engine: `mark` its parameter marker, `mine` the condition
    (by table) that keeps a statement to this checkout's own rows (PostgreSQL)."""
    out = []
    for table, column, kind, key in PATHS:
        extra = f" AND {mine[table]}" if table in mine else ""
        where_key = " AND ".join(f"{k} = {mark}" for k in key) + extra
        keyed = column in key
        out.append(
            PathColumn(
                table,
                column,
                kind,
                key,
                select=f"SELECT {', '.join(key)}, {column} FROM {table} "
                f"WHERE ({column} LIKE {mark} OR {column} LIKE {mark}){extra}",
                update=f"UPDATE {table} SET {column} = {mark} WHERE {where_key}",
                taken=f"SELECT 1 FROM {table} WHERE {where_key}" if keyed else None,
                drop=f"DELETE FROM {table} WHERE {where_key}" if keyed else None,
            )
        )
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class Statements:
    mark: str  # one parameter's marker: "?" | "%s"
    # --- the op log --------------------------------------------------------------------
    next_ids: str  # (largest lsn ever used, largest effect id ever used), under the write lock
    last_lsn: str
    op_by_id: str  # (op_id)
    ops: str  # (after lsn, limit)
    log_op: str  # (lsn, op_id, kind, args, result, at)
    set_result: str  # (result, lsn)
    # --- proposals ----------------------------------------------------------------------
    proposal: str  # (id): id, task_id, agent, message, edit_hash, result_hash, lsn
    proposal_hashes: str  # (id): id, edit_hash, result_hash, lsn
    proposal_record: str  # (id): id, task_id, agent, message, created_at
    add_proposal: str  # (id, task_id, agent, message, edit_hash, result_hash, lsn, created_at)
    messages: str  # {marks}: (proposal ids) -> id, message, turn session, turn number, agent (else its task's)
    # --- hunks (rows.HUNK_COLUMNS' order) -------------------------------------------------
    hunks_select: str  # SELECT rows.HUNK_COLUMNS FROM hunks (this checkout's in_file), no WHERE
    hunks_since: str  # (lsn), in lsn order
    hunks_by_ids: str  # {marks}: (ids)
    add_hunks: str  # rows.hunk_values
    save_hunks: (
        str  # (status, line, applied_text, feedback, version, decided_at, lsn, in_file, problem, kept, by_commit, id)
    )
    put_in_file: str | None  # (hunk id, in_file): where in_file is each checkout's own (PostgreSQL)
    move_hunks: str  # (new uri, lsn, old uri, except id)
    save_lines: str  # (line, lsn, id)
    save_contexts: str  # (ctx_before, ctx_after, lsn, id): JSON lists, as add_hunks writes them
    set_parts: str  # (parts, id): a hunk split in two (a JSON list of their ids)
    set_sent_back: str  # (decision or NULL, lsn, id): a rejection sent back to the agent, or taken back
    # --- this checkout's effects journal -------------------------------------------------
    add_effect: str  # (id, lsn, uri, action, edits, target, owner, at)
    set_effect: str  # (state, attempts, id)
    set_effect_owner: str  # (state, attempts, owner, id)
    open_effects: str  # id, lsn, uri, action, edits, state, attempts, target, owner
    effects_done_after: str  # (lsn): edits
    pending_effect: str  # (uri)
    settle_saved_effects: str  # (uri)
    # --- this checkout's file stamps ------------------------------------------------------
    stamps: str  # uri, size, mtime_ns, hash
    put_stamps: str  # (uri, size, mtime_ns, hash)
    unstamp: str  # (uri)
    # --- tasks (tasks.py; rows in TASK_COLUMNS' order) ---------------------------------------
    task: str  # (id)
    tasks_all: str
    tasks_by_status: str  # (status)
    add_task: str  # (id, title, goal, agent, created_at, updated_at, lsn)
    touch_task: str  # (updated_at, lsn, id)
    close_task: str  # (status, summary, updated_at, lsn, id)
    steps: str  # (task id)
    last_step: str  # (task id)
    add_step: str  # (task id, n, text, status, updated_at, lsn)
    set_step: str  # (text, status, updated_at, lsn, task id, n)
    notes: str  # (task id)
    last_note: str  # (task id)
    add_note: str  # (task id, n, kind, text, why, answers, at, lsn)
    files: str  # (task id)
    put_file: str  # (task id, uri, hash, read_at, lsn)
    # --- snapshots and captures (captures.py) -------------------------------------------------
    snapshot_set: str  # (task key): whole, consumed, lsn
    snapshot_entries: str  # (task key): uri, hash, agent_hash
    snapshot_sets: str  # task key, whole, how many files
    start_set: str  # (task key, whole, lsn, at)
    add_entry: str  # (task key, uri, hash, lsn, at): kept when already there
    set_agent_hash: str  # (agent hash, lsn, task key, uri)
    drop_entry: str  # (task key, uri)
    consumed: str  # (task key)
    set_consumed: str  # (consumed, task key)
    any_entry: str  # (task key)
    drop_entries: str  # (task key)
    drop_set: str  # (task key)
    referenced: str
    add_capture: str  # (id, lsn, state, restores, cleanup, at)
    reopen_capture: str  # (lsn, state, restores, cleanup, at, id)
    capture: str  # (id)
    open_captures: str
    finish_capture: str  # (outcome, id)
    # --- the agent's loop (loop.py) -------------------------------------------------------------
    add_turn: str  # (proposal id, session, session): numbered after the session's last; kept when there
    last_turn: str  # session, number of the latest turn (by its proposal's lsn)
    told: str  # (agent): hunk id, decision - this checkout's
    put_told: str  # (agent, hunk id, decision)
    drop_told: str  # (agent, hunk id)
    # --- where the workspace's roots are (roots.py, relocation.py) --------------------------------
    roots: str  # n, uri: where the store last saw each root of the workspace
    put_root: str  # (n, uri)
    unplaced: str  # how many stored values hold an absolute uri that no root fitted
    set_unplaced: str  # (how many)
    path_columns: tuple[PathColumn, ...]  # every column that keeps a path (PATHS)

    def marks(self, n: int) -> str:
        return ", ".join([self.mark] * n)
