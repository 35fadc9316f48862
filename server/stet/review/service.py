"""The review service: propose, decide, apply, recover. The one place where the rules meet.

Data flows one way: a request is validated against the store inside a write transaction,
the decision is committed, then its journaled effects are carried out (an edit in the
editor's buffer or an atomic write of the file), then the outcome is committed too.
Memory follows the store through `sync`, the same path for our own writes, for other
processes' writes and for recovery at start.

`Review` is composed, not inherited: one `ReviewState` is handed to small collaborators
(memory, proposing, deciding, effects, documents, outside changes, recovery), each in its
own module; this class only wires them and is what the rest of Stet calls.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..domain.decided import Decided, Split
from ..domain.document import Document
from ..domain.effect_outcome import State
from ..domain.model import Hunk
from ..domain.proposal import Change
from ..domain.proposed import Captured, Proposed
from ..domain.recovered import Recovered
from ..domain.shapes import JSON
from ..domain.status import Decide, Status
from ..errors import StetError, StoreLost, StoreUnavailable
from ..store import StoreApi
from ..workspace.paths import Workspace, path_to_uri
from .capturing import Capturing
from .commit_keeps import CommitKeeps
from .config import Editor, Limits
from .deciding import Deciding
from .documents import ContentChange, Documents
from .effects import Effects
from .memory import Memory
from .outside_changes import OutsideChanges
from .proposing import Proposing
from .recheck import Recheck
from .recovery import Recovery
from .splitting import Ranges, Splitting
from .state import ReviewState


class UpToDate:
    """What bringing the review up to date found: the uris that changed, and why it may lag
    (the store could not be written), else None."""

    __slots__ = ("changed", "lag")

    def __init__(self, changed: set[str], lag: str | None):
        self.changed, self.lag = changed, lag


class Review:
    """One review of one workspace."""

    def __init__(
        self,
        workspace: Workspace,
        editor: Editor,
        on_change: Callable[[set[str]], None],
        limits: Limits | None = None,
    ):
        self.state = st = ReviewState(workspace, editor, on_change, limits or Limits())
        self.memory = Memory(st)
        self.effects = Effects(st, self.memory)
        self.outside = OutsideChanges(st, self.memory)
        self.proposing = Proposing(st, self.memory)
        self.deciding = Deciding(st, self.memory, self.effects)
        self.splitting = Splitting(st, self.memory, self.effects, self.deciding)
        self.documents = Documents(st, self.memory, self.effects, self.outside)
        self.capturing = Capturing(st, self.memory, self.proposing, self.outside)
        self.recovery = Recovery(st, self.memory, self.effects, self.outside)
        self.recheck = Recheck(st, self.outside)
        self.commit_keeps = CommitKeeps(st, self.deciding)

    # --- what the review knows -------------------------------------------------------------
    @property
    def ws(self) -> Workspace:
        return self.state.ws

    @property
    def store(self) -> StoreApi | None:
        return self.state.store

    @property
    def hunks(self) -> dict[str, Hunk]:
        return self.state.hunks

    @property
    def by_uri(self) -> dict[str, dict[str, Hunk]]:
        return self.state.by_uri

    @property
    def generation(self) -> int:
        return self.state.generation

    @property
    def ready(self) -> asyncio.Event:
        """Set once the review may answer requests (recovered, or loaded)."""
        return self.state.ready

    @property
    def recovery_error(self) -> StetError | None:
        return self.state.recovery_error

    def require_store(self) -> StoreApi:
        return self.state.require_store()

    async def set_roots(self, roots: list[str]) -> None:
        """The workspace's folders changed. A new folder's paths are stored by its root index:
        the store records it before any of its files can be proposed."""
        store = self.state.store
        if store is not None:
            await store.add_roots([path_to_uri(r) for r in Workspace(roots).roots])
        self.ws.set_roots(roots)

    def uri_of(self, uri: str) -> str:
        """The normalised uri (file:///real/path) of a uri inside the workspace; raises outside it."""
        return self.state.uri_of(uri)

    def doc(self, uri: str) -> Document | None:
        """The editor's open buffer of `uri`, if any."""
        return self.state.doc(uri)

    async def bytes_now(self, uri: str, limit: int | None = None) -> bytes | None:
        """The file's content as the review sees it now: the open buffer, else the disk (a file
        over `limit` bytes is refused by its size, safe.TooLarge, not read)."""
        return await self.state.bytes_now(uri, limit)

    def client_uri(self, uri: str) -> str:
        """The uri the editor uses for `uri` (as it sent it in didOpen)."""
        return self.state.client_uri(uri)

    def list(
        self,
        uri: str | None = None,
        statuses: Iterable[Status] | None = None,
        proposal_id: str | None = None,
        task_id: str | None = None,
    ) -> builtins.list[Hunk]:
        wanted = set(statuses) if statuses is not None else None
        pool = self.state.by_uri.get(uri, {}).values() if uri is not None else self.state.hunks.values()
        out = [
            h
            for h in pool
            if (wanted is None or h.status in wanted)
            and (proposal_id is None or h.proposal_id == proposal_id)
            and (task_id is None or h.task_id == task_id)
        ]
        out.sort(key=lambda h: (h.uri, h.line, h.proposal_id, h.seq))
        return out

    def open_hunks(self, uri: str) -> builtins.list[Hunk]:
        """The hunks the developer is shown: open ones, and applied ones whose text is gone."""
        return [h for h in self.list(uri) if h.shown]

    def counts(self) -> dict[str, int]:
        return self.state.counts()

    # --- the store ---------------------------------------------------------------------------
    async def sync(self) -> set[str]:
        """Load what changed in the store since the last look (any process's commits)."""
        changed = await self.memory.sync()
        await self._judge_unjudged(changed)
        return changed

    async def _judge_unjudged(self, uris: Iterable[str]) -> None:
        """Judge the closed files of `uris` holding an applied hunk not judged in this checkout
        yet (another checkout of a review shared in PostgreSQL decided it), so that inFile is
        this checkout's. (With SQLite an applied hunk is judged when its edit is made.)"""
        st = self.state
        unjudged = [
            uri
            for uri in sorted(set(uris))
            if uri not in st.open
            and any(
                h.status == Status.APPLIED and h.in_file is None and h.id not in st.in_flight
                for h in st.by_uri.get(uri, {}).values()
            )
        ]
        if unjudged:
            await self.outside.relocate_on_disk(unjudged)

    async def finish_journaled(self) -> None:
        """Carry out the journaled edits this process may finish: those for closed files (an
        edit meant for a live editor's buffer is that editor's)."""
        await self.effects.run_pending(states=(State.PENDING,), targets=("file", "buffer"))

    async def up_to_date(self, *, tidy: bool = False, env: Mapping[str, str] | None = None) -> UpToDate:
        """The one way every door brings the review up to date before it answers: what other
        processes committed (`sync`), captures and journaled edits a kill left unfinished
        (finished here, exactly once: any process may), files changed since Stet last looked.
        `tidy` also removes the temp files killed writes left (at open; a resident does it
        between calls). Raises StetError when the store cannot be read; when it can be read but
        not written, the answer says why the review may lag. Then, when HEAD moved, what a
        commit keeps (`env`: the caller's environment, STET_COMMIT_KEEPS; this process's when None)."""
        changed = await self.sync()
        try:
            await self.finish_captures()  # a capture killed before its files were restored
            if tidy:
                await self.remove_leftovers()
            await self.finish_journaled()
            changed |= await self.recheck.changed_files()
            changed |= await self.commit_keeps.notice(env)
        except StoreLost:
            raise  # nothing more can be acknowledged: the door says so
        except StoreUnavailable as exc:  # the review can still be read; say why it may lag
            return UpToDate(changed, f"Stet could not bring the review up to date: {exc.message}")
        return UpToDate(changed, None)

    async def recover(self) -> Recovered:
        result = await self.recovery.recover()
        await self.finish_captures()
        await self.commit_keeps.notice()  # an editor's server at its start: what commits kept since
        return result

    async def notice_commits(self) -> set[str]:
        """What commits kept since Stet last looked, announced to whoever shows the review (an
        editor's server follows HEAD between requests); the uris decided."""
        decided = await self.commit_keeps.notice()
        if decided:
            self.state.on_change(decided)
        return decided

    async def remove_leftovers(self) -> None:
        """Delete the temp files killed writes left beside files with hunks (see Recovery)."""
        await self.recovery.remove_leftovers()

    async def finish_captures(self) -> int:
        """Finish the restore journals of captures a crash interrupted (any process may)."""
        return await self.capturing.finish_open()

    async def checkpoint(self, uris: Iterable[str] | None = None) -> int:
        return await self.memory.checkpoint(uris)

    async def run_pending_effects(
        self,
        uri: str | None = None,
        states: Sequence[State] = (State.PENDING, State.UNSAVED),
        targets: Sequence[str] = ("file", "buffer"),
    ) -> None:
        await self.effects.run_pending(uri, states, targets)

    async def close(self) -> None:
        await self.recovery.close()

    def stop_now(self) -> None:
        """The event loop is ending: stop the store's worker thread without waiting."""
        if self.state.store is not None:
            self.state.store.stop_thread()

    # --- proposals and decisions ---------------------------------------------------------------
    async def propose(
        self,
        proposal_id: str,
        changes: builtins.list[Change],
        task_id: str | None = None,
        agent: str | None = None,
        message: str | None = None,
        *,
        edit_hash: str | None = None,
        already_in: Iterable[str] = (),
    ) -> Proposed:
        return await self.proposing.propose(
            proposal_id, changes, task_id, agent, message, edit_hash=edit_hash, already_in=already_in
        )

    async def proposal_record(self, proposal_id: str) -> JSON | None:
        """A proposal's own record (task, agent, its whole message, when it came), None if unknown."""
        return await self.state.require_store().proposal_record(proposal_id)

    async def capture(
        self,
        capture_id: str,
        changes: builtins.list[Change],
        bases: dict[str, str | None],
        now: dict[str, str | None],
        **options: Any,
    ) -> Captured:
        """An agent's edits already in the files: proposed, and the baseline put back (see Capturing)."""
        return await self.capturing.capture(capture_id, changes, bases, now, **options)

    async def withdraw(self, hunk_ids: builtins.list[str], why: str) -> builtins.list[Hunk]:
        """Kept hunks whose change never happened, set aside (see Capturing.withdraw)."""
        return await self.capturing.withdraw(hunk_ids, why)

    async def replay(self, proposal_id: str, edit_hash: str) -> Proposed | None:
        return await self.proposing.replay(proposal_id, edit_hash)

    async def decide(
        self,
        action: Decide,
        hunk_ids: builtins.list[str] | None = None,
        *,
        uri: str | None = None,
        proposal_id: str | None = None,
        task_id: str | None = None,
        request_id: str | None = None,
        expected: dict[str, int] | None = None,
        feedback: str | None = None,
        text: str | None = None,
        left: dict[str, str] | None = None,
    ) -> Decided:
        decided = await self.deciding.decide(
            action,
            hunk_ids,
            uri=uri,
            proposal_id=proposal_id,
            task_id=task_id,
            request_id=request_id,
            expected=expected,
            feedback=feedback,
            text=text,
            left=left,
        )
        # A decision that lost a race to another checkout's: the hunk was in flight here when
        # the winner's outcome arrived, and was not judged then.
        held = self.state.hunks
        await self._judge_unjudged(held[h.id].uri for h in decided.hunks if h.id in held)
        return decided

    async def decide_lines(
        self,
        action: Decide,
        hunk_id: str,
        old: Ranges,
        new: Ranges,
        *,
        feedback: str | None = None,
        request_id: str | None = None,
    ) -> Split:
        """Accept or reject some lines of a hunk (0-based inclusive ranges of its old and new
        lines): the part decided and the rest."""
        return await self.splitting.decide_lines(action, hunk_id, old, new, feedback=feedback, request_id=request_id)

    async def pull(self, task_id: str | None = None, request_id: str | None = None) -> Decided:
        """Into this checkout, the applied hunks whose text is not in its files (the developer
        accepted them in another checkout): each that can land is re-applied (journaled here,
        once, where its old text is); each that cannot is returned with why and what to do about
        the checkout (`left`). The review's decisions stand either way."""
        todo = [h.id for h in self.list(statuses={Status.APPLIED}, task_id=task_id) if h.in_file is False]
        if not todo:
            return Decided()
        left: dict[str, str] = {}
        decided = await self.decide(Decide.PULL, todo, request_id=request_id, left=left)
        return Decided(tuple(h for h in decided.hunks if h.id not in left), left)

    # --- the editor's documents and the files ----------------------------------------------------
    def opened(self, client_uri: str, text: str, version: int | None) -> None:
        self.documents.opened(client_uri, text, version)

    def changed(self, client_uri: str, version: int | None, changes: builtins.list[ContentChange]) -> None:
        self.documents.changed(client_uri, version, changes)

    async def saved(self, client_uri: str) -> None:
        await self.documents.saved(client_uri)

    def closed(self, client_uri: str) -> None:
        self.documents.closed(client_uri)

    def outside_changed(self, uris: Iterable[str]) -> None:
        self.outside.changed(uris)

    def folders_to_watch(self) -> set[str]:
        return self.outside.folders_to_watch()
