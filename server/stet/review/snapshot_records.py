"""The records of snapshots (agents/snapshots.py keeps the contents and says what to record): the
review opens each transaction; each record is one operation of the log."""

from __future__ import annotations

from ..domain.capture import Snapped
from ..domain.shapes import JSON
from ..store import captures as sql
from ..store.captures import SnapshotSet
from .config import new_id
from .state import ReviewState

__all__ = ["SnapshotRecords", "SnapshotSet"]


class SnapshotRecords:
    def __init__(self, state: ReviewState) -> None:
        self.state = state

    async def answered(self, op_id: str) -> Snapped | None:
        """What the snapshot `op_id` recorded, when it ran already."""
        prior = await self.state.require_store().op(op_id)
        return None if prior is None else _snapped(prior.result)

    async def current(self, key: str) -> SnapshotSet | None:
        """The snapshot of the task `key` ("": none)."""
        async with self.state.require_store().read() as tx:
            return await sql.snapshot_set(tx, key)

    async def waiting(self) -> list[tuple[str, bool, int]]:
        """(task key, whole, how many files) of every snapshot waiting for a capture."""
        async with self.state.require_store().read() as tx:
            return await sql.snapshot_sets(tx)

    async def record(
        self,
        op_id: str,
        task_id: str | None,
        key: str,
        whole: bool,
        entries: list[tuple[str, str | None]],
        notes: list[str],
    ) -> Snapped:
        """Record files' contents (uri, content hash or None: no file) as the operation `op_id`: a
        whole snapshot replaces the task's earlier one, single files are added to it. Answers what
        it recorded."""
        async with self.state.require_store().write() as tx:
            lsn = await tx.log(op_id, "snapshot", {"taskId": task_id, "whole": whole, "files": len(entries)})
            before = await sql.snapshot_set(tx, key)
            known = set() if before is None or whole else set(before.entries)
            await sql.start_set(tx, key, whole, lsn)
            await sql.add_entries(tx, key, entries, lsn)
            result: JSON = {
                "taskId": task_id,
                "whole": whole or bool(before and before.whole),
                "files": len(entries),
                "new": len([u for u, _ in entries if u not in known]),
                "notes": notes,
            }
            await tx.set_result(lsn, result)
        return _snapped(result)

    async def record_one(self, task_id: str | None, key: str, uri: str, h: str | None) -> None:
        """Record one file's content before the agent's first write, as a snapshot of its own."""
        async with self.state.require_store().write() as tx:
            lsn = await tx.log(new_id("snap-"), "snapshot", {"taskId": task_id, "whole": False, "files": 1})
            await sql.start_set(tx, key, False, lsn)
            await sql.add_entries(tx, key, [(uri, h)], lsn)
            await tx.set_result(lsn, {"taskId": task_id, "whole": False, "files": 1, "new": 1, "notes": []})

    async def agent_wrote(self, task_id: str | None, key: str, uri: str, h: str | None) -> None:
        """Record what the agent left in the file (its content hash, None: no file)."""
        async with self.state.require_store().write() as tx:
            lsn = await tx.log(new_id("snap-"), "snapshot.agent", {"taskId": task_id, "uri": uri})
            await sql.set_agent_hash(tx, key, uri, h, lsn)

    async def drop(self, task_id: str | None, key: str) -> None:
        """The task's snapshot goes (when it has one)."""
        async with self.state.require_store().write() as tx:
            if await sql.snapshot_set(tx, key) is not None:
                await tx.log(new_id("snap-"), "snapshot.drop", {"taskId": task_id})
                await sql.drop_set(tx, key)

    async def referenced(self) -> set[str]:
        """The content hashes some snapshot refers to."""
        async with self.state.require_store().read() as tx:
            return await sql.referenced(tx)


def _snapped(result: JSON) -> Snapped:
    """A snapshot's entry of the operation log, read back."""
    return Snapped(result["taskId"], result["whole"], result["files"], result["new"], tuple(result["notes"]))
