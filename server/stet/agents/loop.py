"""The agent's loop: what the developer decided reaches the agent while it works.

Three answers, built from the review as it is (docs/protocol.md, "The agent's loop"):

- `session_context`: the open review of an agent's tasks in this checkout, most recent first
  (pending, rejected with feedback, accepted with the developer's changes, accepted and later
  removed from the file), and the decisions not told yet (a plain acceptance, a rejection
  without feedback) - told to a session that starts, resumes, is cleared or compacted;
- `news`: the decisions made on its tasks since it was last told, each told once;
- `rejected_redo`: whether an edit would make again, in a file, a change the developer
  rejected (in any task of this checkout), and their feedback.

Every text is at most LIMIT characters, each field of it on one line with its controls shown as
escapes (domain/inert.py): a file name or a text cannot forge a line. What the agent was told is recorded in the store
(`agent_told`: per hunk, the last decision told) in the transaction that reads the decisions,
before the answer is printed: a crash after that commit and before the answer is out loses that
one notice (the rejection is still enforced by `rejected_redo` and told again by the next
session's context), and never tells a printed decision twice. An answer that could not be
delivered (a closed stdout, an HTTP client gone) is taken back with `untell`, so it is told at
the next prompt: telling twice happens only for an answer that was never printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..domain.inert import inert
from ..domain.model import Hunk
from ..domain.status import Status
from ..review import Review
from ..review.telling import Telling, Told

LIMIT = 4000  # characters of an answer's text, at most
SNIPPET = 100  # characters of a hunk's text quoted in a line


def _one_line(text: str) -> str:
    """A hunk's text on one line (its lines joined by a space, each stripped), cut at SNIPPET."""
    words = inert(" ".join(line.strip() for line in text.splitlines() if line.strip()))
    return words if len(words) <= SNIPPET else words[: SNIPPET - 1] + "…"


def decision_of(hunk: Hunk) -> str | None:
    """The decision a hunk carries, as recorded in `agent_told` (`Hunk.decision`: "accepted
    <when>", "rejected <when>"); None while nobody decided it."""
    return hunk.decision


def _changed_by_developer(hunk: Hunk) -> bool:
    return hunk.applied_text is not None and hunk.applied_text != hunk.new


def bounded(head: str, lines: Sequence[str], more: str = "run `stet status` for the rest") -> str:
    """`head` and as many of `lines` as fit in LIMIT characters, saying how many were left out."""
    out = head
    for i, line in enumerate(lines):
        rest = len(lines) - i - 1
        tail = f"\n… and {rest + 1} more ({more})"
        if len(out) + 1 + len(line) + (len(tail) if rest else 0) > LIMIT:
            return (out + tail)[:LIMIT]
        out += "\n" + line
    return out[:LIMIT]


class Loop:
    """The loop for one agent (`agent`: the tasks it started, and the name its record goes under)."""

    def __init__(self, review: Review, agent: str, task_prefix: str | None = None) -> None:
        self.review, self.agent, self.task_prefix = review, agent, task_prefix
        self.told = Told(review.state)

    def hunks(self, telling: Telling) -> tuple[list[Hunk], dict[str, str]]:
        """The hunks of the agent's tasks, most recent first, and what it was told of them."""
        tasks, told = telling.tasks, telling.told
        prefix = self.task_prefix
        mine = [
            h
            for h in self.review.list()
            if h.task_id is not None and (h.task_id in tasks or (prefix is not None and h.task_id.startswith(prefix)))
        ]
        mine.sort(key=lambda h: (h.lsn, h.proposal_id, h.seq), reverse=True)
        return mine, told

    def where(self, hunk: Hunk) -> str:
        return f"{inert(self.review.ws.rel(hunk.uri))} line {hunk.line + 1}"

    def _review_line(self, h: Hunk) -> str | None:
        if h.status == Status.REJECTED:
            if not (h.feedback or "").strip():
                return None
            return (
                f"- REJECTED {self.where(h)}: the developer said: {_one_line(h.feedback or '')} "
                f"(your change: {_one_line(h.old_text) or '(nothing)'!r} -> {_one_line(h.new_text) or '(nothing)'!r}; "
                "do not make it again)"
            )
        if h.status in (Status.PENDING, Status.STALE, Status.ACCEPTED):
            return f"- pending review: {self.where(h)}"
        if h.status == Status.APPLIED and h.gone:
            return (
                f"- accepted, then REMOVED from the file since: {self.where(h)} "
                f"({_one_line(''.join(h.replacement))!r} is no longer there; do not put it back unless asked)"
            )
        if h.status == Status.APPLIED and _changed_by_developer(h):
            return (
                f"- accepted WITH THE DEVELOPER'S CHANGES: {self.where(h)}: they wrote "
                f"{_one_line(''.join(h.replacement))!r} instead of your {_one_line(h.new_text)!r}; keep theirs"
            )
        return None

    async def session_context(self) -> tuple[str | None, list[tuple[str, str | None]]]:
        """The open review, for a session that starts, and the decisions not told yet that it does
        not show (a plain acceptance, a rejection without feedback: a resumed session was never
        told them); None when there is nothing to tell. Every decision it holds counts as told
        from then on; (text, what to give back to `untell` if it could not be delivered)."""
        async with self.told.telling(self.agent) as telling:
            mine, told = self.hunks(telling)
            undo = await self._record(telling, mine)
        lines = []
        for h in mine:
            line = self._review_line(h)
            if line is None and (d := decision_of(h)) is not None and told.get(h.id) != d:
                line = self._news_line(h)
            if line is not None:
                lines.append(line)
        if not lines:
            return None, []
        head = "Stet: the developer's review of your changes in this checkout (most recent first):"
        return bounded(head, lines), undo

    async def news(self) -> tuple[str | None, list[tuple[str, str | None]]]:
        """The decisions not told yet, recorded as told (committed before the answer goes out);
        (text or None, what to give back to `untell` if the text could not be delivered)."""
        async with self.told.telling(self.agent) as telling:
            mine, told = self.hunks(telling)
            fresh = [h for h in mine if (d := decision_of(h)) is not None and told.get(h.id) != d]
            await self._record(telling, fresh)
        if not fresh:
            return None, []
        head = "Stet: the developer decided on your changes since you were last told:"
        return bounded(head, [self._news_line(h) for h in fresh]), [(h.id, told.get(h.id)) for h in fresh]

    async def sent_back(self, task_id: str) -> tuple[str | None, list[tuple[str, str | None]]]:
        """The rejections with feedback of one task not told yet, as the reason to go on working
        (request changes), recorded as told; (text or None, what `untell` takes)."""
        async with self.told.telling(self.agent) as telling:
            mine, told = self.hunks(telling)
            fresh = [
                h
                for h in mine
                if h.task_id == task_id
                and h.status == Status.REJECTED
                and (h.feedback or "").strip()
                and told.get(h.id) != decision_of(h)
            ]
            await self._record(telling, fresh)
            await telling.send_back([(h.id, d) for h in fresh if (d := h.decision) is not None])
        if not fresh:
            return None, []
        head = "Stet: the developer rejected changes of yours with feedback; go on and address it before you stop:"
        return bounded(head, [self._news_line(h) for h in fresh]), [(h.id, told.get(h.id)) for h in fresh]

    def _news_line(self, h: Hunk) -> str:
        """One decision, as told once."""
        if h.status == Status.REJECTED:
            feedback = _one_line(h.feedback or "") or "no reason given"
            return (
                f"- REJECTED {self.where(h)}: {feedback} (your change {_one_line(h.new_text) or '(a removal)'!r}; "
                "do not make it again)"
            )
        if _changed_by_developer(h):
            return (
                f"- accepted with the developer's changes: {self.where(h)}: they wrote "
                f"{_one_line(''.join(h.replacement))!r}"
            )
        return f"- accepted: {self.where(h)}"

    @staticmethod
    async def _record(telling: Telling, hunks: Iterable[Hunk]) -> list[tuple[str, str | None]]:
        """Record the hunks' decisions as told; returns what `untell` takes to undo it."""
        told = telling.told
        changes = [(h.id, d) for h in hunks if (d := decision_of(h)) is not None and told.get(h.id) != d]
        await telling.record(changes)
        return [(hid, told.get(hid)) for hid, _ in changes]

    async def untell(self, undo: Sequence[tuple[str, str | None]]) -> None:
        """Take back a notice that could not be delivered: told again at the next prompt."""
        await self.told.untell(self.agent, undo)

    def rejected_redo(self, rel: str, uri: str, before: str, after: str) -> Hunk | None:
        """A rejected hunk of the file `rel` whose change (old text -> new text, in its context)
        going from `before` to `after` makes again; None when the edit makes none."""
        for h in self.review.list(uri=uri, statuses=(Status.REJECTED,)):
            if redoes(h, before, after):
                return h
        if not self.review.list(uri=uri):  # the hunks may know the file by another spelling of its uri
            for h in self.review.list(statuses=(Status.REJECTED,)):
                if self.review.ws.rel(h.uri) == rel and redoes(h, before, after):
                    return h
        return None


def redoes(hunk: Hunk, before: str, after: str) -> bool:
    """Whether going from `before` to `after` makes the hunk's change: its new text in its
    context appears (one more time) and its old text in its context goes. A change that
    touches its context too is not recognised: a hook must never deny by accident."""
    ctx_before = "".join(c for c in hunk.ctx_before if c is not None)  # (None: the file's edge)
    ctx_after = "".join(c for c in hunk.ctx_after if c is not None)
    old, new = ctx_before + hunk.old_text, ctx_before + hunk.new_text
    old, new = old + ctx_after, new + ctx_after
    if old == new or not new.strip():
        return False
    return after.count(new) > before.count(new) and (not old.strip() or after.count(old) < before.count(old))
