"""The capture tables (migration 4): snapshots of files before an agent touched them, and the
restore journal of each capture.

Functions over a transaction (`Tx`), like `store.tasks`: the service decides, this module
only knows SQL. A snapshot set belongs to a task (`task_key`: the task id, "" for none);
`whole` says it covers every file of the workspace (a file it does not list did not exist),
`consumed` lists the path prefixes captures have used up since ("" : all of it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .roots import AsDoc, AsUri
from .rows import now_iso
from .tx import Tx


@dataclass(kw_only=True)
class SnapshotSet:
    task_key: str
    whole: bool
    consumed: list[str]
    lsn: int
    entries: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # uri -> (hash, agent hash)


@dataclass(kw_only=True)
class CaptureRow:
    id: str
    lsn: int
    state: str  # pending | done
    restores: list[dict[str, Any]]  # [{uri, expect, text}]
    cleanup: dict[str, Any] | None  # {worktree, repo}
    outcome: dict[str, Any] | None


async def snapshot_set(tx: Tx, task_key: str) -> SnapshotSet | None:
    rows = await tx._all(tx.sql.snapshot_set, (task_key,))
    if not rows:
        return None
    out = SnapshotSet(
        task_key=task_key, whole=bool(rows[0][0]), consumed=list(json.loads(rows[0][1])), lsn=int(rows[0][2])
    )
    for uri, h, agent in await tx._all(tx.sql.snapshot_entries, (task_key,)):
        out.entries[uri] = (h, agent)
    return out


async def snapshot_sets(tx: Tx) -> list[tuple[str, bool, int]]:
    """(task key, whole, how many files) of every snapshot waiting for a capture."""
    rows = await tx._all(tx.sql.snapshot_sets)
    return [(r[0], bool(r[1]), int(r[2])) for r in rows]


async def start_set(tx: Tx, task_key: str, whole: bool, lsn: int) -> None:
    """A new set for the task: a whole one replaces what was there; a partial one is added to."""
    if whole:
        await drop_set(tx, task_key)
    await tx._run(tx.sql.start_set, (task_key, int(whole), lsn, now_iso()))


async def add_entries(tx: Tx, task_key: str, entries: list[tuple[str, str | None]], lsn: int) -> None:
    """Record files as they were (uri, content hash or None); a file already recorded keeps
    its first content: the snapshot is the file before the agent's first write."""
    at = now_iso()
    for uri, h in entries:  # queued: sent together with the next read or the COMMIT
        await tx._run(tx.sql.add_entry, (task_key, AsUri(uri), h, lsn, at))


async def set_agent_hash(tx: Tx, task_key: str, uri: str, h: str | None, lsn: int) -> None:
    """What the agent left in the file at its last recorded write (hooks that see each write)."""
    await tx._run(tx.sql.set_agent_hash, (h or "", lsn, task_key, AsUri(uri)))


async def consume(tx: Tx, task_key: str, uris: list[str], prefixes: list[str]) -> None:
    """A capture used these entries: they are gone, and the folders it was limited to
    (`prefixes`, "" for everything) are used up: no file there counts as created by the
    agent any more. Entries it could not use stay. An empty set is dropped."""
    for uri in uris:
        await tx._run(tx.sql.drop_entry, (task_key, AsUri(uri)))
    rows = await tx._all(tx.sql.consumed, (task_key,))
    if not rows:
        return
    used = list(dict.fromkeys([*json.loads(rows[0][0]), *prefixes]))
    await tx._run(tx.sql.set_consumed, (json.dumps(used), task_key))
    left = await tx._all(tx.sql.any_entry, (task_key,))
    if not left:
        await drop_set(tx, task_key)


async def drop_set(tx: Tx, task_key: str) -> None:
    await tx._run(tx.sql.drop_entries, (task_key,))
    await tx._run(tx.sql.drop_set, (task_key,))


async def referenced(tx: Tx) -> set[str]:
    """Every content hash a snapshot still refers to (the rest may be collected)."""
    rows = await tx._all(tx.sql.referenced)
    return {r[0] for r in rows if r[0]}


async def add_capture(
    tx: Tx, capture_id: str, lsn: int, restores: list[dict[str, Any]], cleanup: dict[str, Any] | None
) -> None:
    state = "pending" if restores or cleanup else "done"
    await tx._run(
        tx.sql.add_capture,
        (capture_id, lsn, state, AsDoc(json.dumps(restores)), AsDoc(_doc(cleanup)), now_iso()),
    )


async def reopen_capture(
    tx: Tx, capture_id: str, lsn: int, restores: list[dict[str, Any]], cleanup: dict[str, Any] | None
) -> None:
    """The same capture again, its journal long finished: the files hold the agent's version
    once more (an agent run twice). The journal is opened anew with what to do this time."""
    state = "pending" if restores or cleanup else "done"
    await tx._run(
        tx.sql.reopen_capture,
        (lsn, state, AsDoc(json.dumps(restores)), AsDoc(_doc(cleanup)), now_iso(), capture_id),
    )


def _doc(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value)


def _capture(r: Any) -> CaptureRow:
    return CaptureRow(
        id=r[0],
        lsn=r[1],
        state=r[2],
        restores=json.loads(r[3]),
        cleanup=json.loads(r[4]) if r[4] else None,
        outcome=json.loads(r[5]) if r[5] else None,
    )


async def capture(tx: Tx, capture_id: str) -> CaptureRow | None:
    rows = await tx._all(tx.sql.capture, (capture_id,))
    return _capture(rows[0]) if rows else None


async def open_captures(tx: Tx) -> list[CaptureRow]:
    rows = await tx._all(tx.sql.open_captures)
    return [_capture(r) for r in rows]


async def finish_capture(tx: Tx, capture_id: str, outcome: dict[str, Any]) -> None:
    await tx._run(tx.sql.finish_capture, (AsDoc(json.dumps(outcome)), capture_id))
