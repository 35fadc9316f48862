"""Snapshots: the content of files before an agent touches them, so a capture attributes to the
agent only what the agent changed.

A task's snapshot is either whole (`stet task start --snapshot`, `stet run`: every file of
the workspace; a file it does not list did not exist) or made of single files (`stet
snapshot PATHS`, the Claude Code hook before the agent's first write to a file). A file
keeps the content first recorded. Contents live in `.stet/snapshots/` by hash (many at once
in one pack, synced once), written (and synced) before the record that names them commits; what no record names any more is
collected when a capture uses it up or the task ends.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from ..domain.capture import Snapped
from ..errors import InvalidParams, OutsideWorkspace
from ..faults import fault
from ..review import Review, new_id
from ..review.snapshot_records import SnapshotRecords, SnapshotSet
from ..workspace import contents, git, tree
from ..workspace.blobs import Blobs
from ..workspace.locks import interprocess_lock
from ..workspace.paths import path_to_uri


def task_key(task_id: str | None) -> str:
    return task_id or ""


class Snapshots:
    def __init__(self, review: Review):
        self.review = review
        self.records = SnapshotRecords(review.state)
        folder = review.require_store().home
        self.blobs = Blobs(folder)
        self._lock = os.path.join(folder, "snapshots.lock")

    @property
    def root(self) -> str:
        return self.review.ws.roots[0]

    def rel(self, path: str) -> str:
        """A path given by a person or an agent (absolute, or relative to the current folder) as
        a path relative to the workspace root; refused outside it and inside .git / .stet."""
        absolute = os.path.abspath(path)
        parent = os.path.realpath(os.path.dirname(absolute))  # the file itself may be a symlink
        real = os.path.join(parent, os.path.basename(absolute))
        root = self.root
        if not real.startswith(root.rstrip("/") + "/"):
            raise OutsideWorkspace(f"refused {path}: outside the workspace ({root})")
        rel = os.path.relpath(real, root).replace(os.sep, "/")
        if tree.is_own(rel):
            raise OutsideWorkspace(f"refused {path}: Stet's and git's own folders are not content")
        if tree.in_git_folder(root, rel):
            raise OutsideWorkspace(f"refused {path}: a git folder (HEAD, objects/, refs/) is git's, not content")
        if not tree.is_text_name(rel):
            raise InvalidParams(
                f"refused {tree.shown(rel)}: its name is not UTF-8: Stet reviews files whose names are text"
            )
        return rel

    def uri(self, rel: str) -> str:
        return path_to_uri(os.path.join(self.root, rel))

    def _expand(self, rels: Sequence[str]) -> list[str]:
        """Folders stand for the files in them."""
        out: list[str] = []
        listing: list[str] | None = None
        for rel in rels:
            if os.path.isdir(os.path.join(self.root, rel)) and not os.path.islink(os.path.join(self.root, rel)):
                listing = listing if listing is not None else tree.files(self.root)
                out += [f for f in listing if tree.under(f, [rel])]
            else:
                out.append(rel)
        return list(dict.fromkeys(out))

    def _store_contents(self, rels: Sequence[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
        """(uri, content hash or None) of each file, contents kept - together, in one pack synced
        once however many files (not one fsync per file); and notes on files skipped."""
        entries, notes = [], []
        limit = self.review.state.limits.max_bytes
        with self.blobs.packing(lambda: fault("snapshot:pack-written")) as pack:
            for rel in rels:
                if not tree.is_text_name(rel):
                    notes.append(f"{tree.shown(rel)}: not snapshotted (its name is not UTF-8)")
                    continue
                try:  # a file over the limit is refused by its size: never read, never kept
                    data = contents.read_regular(os.path.join(self.root, rel), limit)
                except contents.TooLarge:
                    notes.append(f"{rel}: not snapshotted (larger than {limit} bytes)")
                    continue
                except (contents.NotAFile, OSError) as exc:
                    notes.append(f"{rel}: not snapshotted ({exc})")
                    continue
                entries.append((self.uri(rel), None if data is None else pack.add(data)))
        return entries, notes

    async def take(self, task_id: str | None, paths: Sequence[str] | None, request_id: str | None = None) -> Snapped:
        """Record files as they are now: `paths` (files or folders), or the whole workspace (None).
        A whole snapshot replaces the task's earlier one; single files are added to it."""
        key = task_key(task_id)
        whole = paths is None
        rels = tree.files(self.root) if whole else self._expand([self.rel(p) for p in paths or ()])
        if not whole and not rels:
            raise InvalidParams("give at least one file to snapshot")
        op_id = request_id or new_id("snap-")
        async with interprocess_lock(self._lock):
            answer = await self.records.answered(op_id)
            if answer is not None:
                return answer  # what this same snapshot answered when it ran
            if not whole:
                # A file already recorded keeps its first content: nothing to read or write for it
                # (an agent writes the same file many times in a turn; each write runs the hook).
                before = await self.current(task_id)
                known = set(before.entries) if before is not None else set()
                fresh = [r for r in rels if self.uri(r) not in known]
                if not fresh:
                    return Snapped(task_id, bool(before and before.whole), 0, 0)
                rels = fresh
            entries, notes = await asyncio.to_thread(self._store_contents, rels)
            fault("snapshot:after-blobs")
            return await self.records.record(op_id, task_id, key, whole, entries, notes)

    async def take_as(self, task_id: str | None, rel: str, data: bytes | None) -> bool:
        """Record `data` (None: the file did not exist) as the file's content before the agent's
        first write, when that write was not seen before it was made (its PreToolUse never ran)
        and the content is known from elsewhere. False: the file is recorded already."""
        key, uri = task_key(task_id), self.uri(rel)
        async with interprocess_lock(self._lock):
            before = await self.current(task_id)
            if before is not None and (before.whole or uri in before.entries):
                return False  # (a whole snapshot says already what the file was)
            h = None if data is None else await asyncio.to_thread(self.blobs.put, data)
            await self.records.record_one(task_id, key, uri, h)
        return True

    def committed(self, rel: str) -> bytes | None:
        """The file as the last commit holds it (git HEAD); None when it cannot be told (no git,
        no commit, not tracked, larger than Stet reviews)."""
        top = git.toplevel(self.root)
        commit = git.head(top) if top is not None else None
        if top is None or commit is None:
            return None
        name = os.path.relpath(os.path.join(self.root, rel), top).replace(os.sep, "/")
        try:
            entry = git.entries(top, git.resolve(top, commit)).get(name)
            if entry is None or not entry[0].startswith("100"):  # a regular file (not a link, not a submodule)
                return None
            if git.sizes(top, [entry[1]])[entry[1]] > self.review.state.limits.max_bytes:
                return None
            return git.contents(top, [entry[1]])[entry[1]]
        except git.GitError:
            return None

    async def agent_wrote(self, task_id: str | None, path: str) -> bool:
        """The agent has just written `path`: remember what it left, so a capture can tell a
        change made after it (the developer's) from the agent's. False: no snapshot of it."""
        key = task_key(task_id)
        rel = self.rel(path)
        uri = self.uri(rel)
        async with interprocess_lock(self._lock):
            current = await self.records.current(key)
            if current is None or uri not in current.entries:
                return False
            limit = self.review.state.limits.max_bytes
            try:
                data = await asyncio.to_thread(contents.read_regular, os.path.join(self.root, rel), limit)
            except contents.TooLarge:
                return True  # not kept: the capture refuses the file by its size anyway
            except (contents.NotAFile, OSError):
                data = None
            h = None if data is None else await asyncio.to_thread(self.blobs.put, data)
            await self.records.agent_wrote(task_id, key, uri, h)
        return True

    async def current(self, task_id: str | None) -> SnapshotSet | None:
        return await self.records.current(task_key(task_id))

    async def drop(self, task_id: str | None) -> None:
        """The task ended: its snapshot goes, and the contents nothing refers to any more."""
        await self.records.drop(task_id, task_key(task_id))
        await self.collect()

    async def collect(self) -> int:
        """Remove the contents no snapshot refers to (under the lock snapshots are taken under)."""
        async with interprocess_lock(self._lock):
            keep = await self.records.referenced()
            return await asyncio.to_thread(self.blobs.collect, keep)
