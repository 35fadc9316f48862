"""The hunk record the review works on."""

from __future__ import annotations

from enum import StrEnum
from operator import attrgetter

from . import status as rules
from .status import OPEN, Status, check
from .text import split_lines

TYPE_CHECKING = False  # types for mypy only: `stet status` builds hunks without importing difflib
if TYPE_CHECKING:
    from .hunks import Context, Lines

# A proposal's message is stored once, but every hunk's answer carries it: inline, at
# most this many characters of it (a 1 MB message over 500 hunks would be 500 MB per listing).
# The whole message is one `stet/proposal` request away.
MESSAGE_INLINE = 4096


class Kind(StrEnum):
    """What a hunk changes (the stored and sent `kind`: the same words)."""

    EDIT = "edit"
    CREATE = "create"
    RENAME = "rename"
    DELETE = "delete"


# value -> member, for reading many rows (as status.BY_VALUE)
KIND_BY_VALUE: dict[str, Kind] = {k.value: k for k in Kind}


def inline_message(message: str | None) -> tuple[str | None, bool]:
    """The message as a hunk's answer carries it, and whether it was cut."""
    if message is None or len(message) <= MESSAGE_INLINE:
        return message, False
    return message[: MESSAGE_INLINE - 1] + "…", True


# The fields of a hunk, in order (its repr).
FIELDS = (
    "id", "proposal_id", "task_id", "seq", "uri", "kind", "status", "line", "old", "new", "ctx_before",
    "ctx_after", "new_uri", "message", "feedback", "version", "decided_at", "applied_text", "lsn", "in_file",
    "problem", "kept", "parts", "by_commit", "sent_back", "turn", "agent", "shows_new", "stored_line", "tracked", "ctx_key",
)  # fmt: skip
# What two hunks must share to be equal: the stored fields (`turn` and `agent` are its
# proposal's, the rest this process's own).
COMPARED = FIELDS[: FIELDS.index("turn")]
_compared = attrgetter(*COMPARED)


class Hunk:
    """One hunk of a review: the one read model every door and command uses.

    A plain class with slots, not a dataclass: one per hunk, and a store may hold 100,000 (no
    per-instance dict), and `stet status` builds every hunk of the store in a process that
    lives 40 ms, where importing dataclasses (and inspect under it) and generating its methods
    cost more than the rows. Keyword-only: 13 fields of which several are strings, a
    positional slip would go unnoticed."""

    __slots__ = FIELDS
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value: not a set member

    id: str
    proposal_id: str
    task_id: str | None
    seq: int
    uri: str
    kind: Kind
    status: Status
    line: int  # first line of the anchored text in the current content
    old: Lines
    new: Lines
    ctx_before: Context
    ctx_after: Context
    new_uri: str | None
    message: str | None
    feedback: str | None
    version: int
    decided_at: str | None
    applied_text: Lines | None  # the developer's own replacement (accept with changes)
    lsn: int  # the operation that last changed this hunk
    # Derived, for an applied hunk (and a kept one waiting for review): whether its new text is
    # in the document now (None: never checked since, taken as yes). Stored so every process
    # tells the same.
    in_file: bool | None
    # Why the decision could not be carried out (a stale file operation, a write that failed
    # and waits to be tried again); None when nothing stands in the way.
    problem: str | None
    # Captured with --keep: the agent wrote the new text into the file itself and it was left
    # there, so while pending the document shows the new text (reject puts the old text back).
    kept: bool
    # Split into a part decided and the rest (docs/protocol.md, "Parts of a hunk"): their ids.
    parts: tuple[str, str] | None
    # Accepted by a commit (domain/commit_keep.py): its id; None when the developer decided.
    by_commit: str | None
    # Sent back to the agent (request changes, agents/turn.py): the decision sent, as `decision`
    # said it then; it stands while it is still the hunk's decision (`is_sent_back`).
    sent_back: str | None
    # The Claude Code session and turn (1-based per session) whose capture proposed it: its
    # proposal's (store table `turns`), None for hunks not captured by a turn's hook.
    # Not compared, nor are the fields after it.
    turn: tuple[str, int] | None
    # The agent that proposed it, when known: its proposal's (else its task's) `agent`, as
    # `stet integrate` names the agents whose hooks capture. Not stored with the hunk.
    agent: str | None
    # Not stored: whether the replacement (not the old text) is what the document shows now.
    shows_new: bool
    # Not stored: the line last written to the store (checkpoints write only what moved).
    stored_line: int
    # Not stored: the position was followed through every edit of an open buffer since it was
    # established, so it is evidence on its own (context lines decide only when it is unknown).
    tracked: bool
    # Not stored: a digest of the context as last read from the store (a row read again
    # parses it only when it changed: Stet takes it again when it writes next to the hunk).
    ctx_key: int

    def __init__(
        self,
        *,
        id: str,
        proposal_id: str,
        task_id: str | None,
        seq: int,
        uri: str,
        kind: Kind,
        status: Status,
        line: int,
        old: Lines,
        new: Lines,
        ctx_before: Context,
        ctx_after: Context,
        new_uri: str | None = None,
        message: str | None = None,
        feedback: str | None = None,
        version: int = 1,
        decided_at: str | None = None,
        applied_text: Lines | None = None,
        lsn: int = 0,
        in_file: bool | None = None,
        problem: str | None = None,
        kept: bool = False,
        parts: tuple[str, str] | None = None,
        by_commit: str | None = None,
        sent_back: str | None = None,
        turn: tuple[str, int] | None = None,
        agent: str | None = None,
        shows_new: bool = False,
        stored_line: int = -1,
        tracked: bool = False,
        ctx_key: int = 0,
    ) -> None:
        self.id = id
        self.proposal_id = proposal_id
        self.task_id = task_id
        self.seq = seq
        self.uri = uri
        self.kind = kind
        self.status = status
        self.line = line
        self.old = old
        self.new = new
        self.ctx_before = ctx_before
        self.ctx_after = ctx_after
        self.new_uri = new_uri
        self.message = message
        self.feedback = feedback
        self.version = version
        self.decided_at = decided_at
        self.applied_text = applied_text
        self.lsn = lsn
        self.in_file = in_file
        self.problem = problem
        self.kept = kept
        self.parts = parts
        self.by_commit = by_commit
        self.sent_back = sent_back
        self.turn = turn
        self.agent = agent
        self.shows_new = shows_new
        self.stored_line = stored_line
        self.tracked = tracked
        self.ctx_key = ctx_key

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(_compared(self) == _compared(other))

    def copy(self) -> Hunk:
        """A hunk of its own with the same fields (the review's go on changing)."""
        new = Hunk.__new__(Hunk)
        for f in FIELDS:
            setattr(new, f, getattr(self, f))
        return new

    def __repr__(self) -> str:
        return f"Hunk({', '.join(f'{f}={getattr(self, f)!r}' for f in FIELDS)})"

    def move_to(self, target: Status, why: str = "move") -> None:
        """The one way a hunk's status changes: along `status.TRANSITIONS` only (else
        `TransitionError`, naming `why`), each change a new version."""
        check(self.status, target, self.id, why)
        self.status = target
        self.version += 1

    def supersede(self, lsn: int) -> None:
        """Replaced by a later proposal (operation `lsn`): its text no longer kept in the file."""
        self.move_to(Status.SUPERSEDED, "supersede")
        self.lsn, self.kept, self.in_file = lsn, False, None

    def split_off(self, hunk_id: str, line: int, old: Lines, new: Lines, before: Context, after: Context) -> Hunk:
        """A new pending hunk of the same proposal, task and message: a part of this one, or
        its rest (docs/protocol.md, "Parts of a hunk")."""
        return Hunk(
            id=hunk_id,
            proposal_id=self.proposal_id,
            task_id=self.task_id,
            seq=self.seq,
            uri=self.uri,
            kind=self.kind,
            status=Status.PENDING,
            line=line,
            old=old,
            new=new,
            ctx_before=before,
            ctx_after=after,
            new_uri=self.new_uri,
            message=self.message,
        )

    @property
    def old_text(self) -> str:
        return "".join(self.old)

    @property
    def new_text(self) -> str:
        return "".join(self.new)

    @property
    def replacement(self) -> Lines:
        """The lines an accept writes: the developer's version when given, else the agent's."""
        return self.applied_text if self.applied_text is not None else self.new

    @property
    def is_open(self) -> bool:
        return self.status in OPEN

    @property
    def gone(self) -> bool:
        """Applied, but its new text is no longer in the document (someone removed it)."""
        return rules.gone(self.status, self.in_file)

    @property
    def shown(self) -> bool:
        """Shown to the developer: open, or applied and gone from the document."""
        return rules.shown(self.status, self.in_file)

    def in_file_state(self) -> bool | None:
        """For an applied hunk, or a kept one waiting for review, whether its new text is in
        the document (never checked since: taken as yes); for any other, None: the question
        does not arise. (The one rule: every door reports it as this says.)"""
        return (self.in_file is not False) if self.status == Status.APPLIED or self.kept_pending else None

    @property
    def decision(self) -> str | None:
        """The decision it carries, as an agent is told it: `accepted WHEN`, `rejected WHEN`
        (the time it was made: a decision undone and made again is another); None while
        nobody decided it."""
        if self.status in (Status.ACCEPTED, Status.APPLIED):
            return f"accepted {self.decided_at or self.version}"
        if self.status == Status.REJECTED:
            return f"rejected {self.decided_at or self.version}"
        return None

    @property
    def is_sent_back(self) -> bool:
        """Its rejection was sent back to the agent (request changes), and still stands."""
        return self.sent_back is not None and self.status == Status.REJECTED and self.sent_back == self.decision

    def anchored_text(self) -> Lines:
        return self.replacement if self.shows_new else self.old

    def anchored_length(self) -> int:
        return len(self.replacement) if self.shows_new else len(self.old)

    @property
    def kept_pending(self) -> bool:
        """A kept hunk waiting for review: its new text is expected in the document."""
        return self.kept and self.status == Status.PENDING

    def shown_when_loaded(self) -> bool:
        """What the document shows as far as the store knows, before anyone looked: the new
        text for an applied hunk or a kept one waiting for review (unless found gone), else
        the old text."""
        return self.in_file_state() is True


def lines_of(text: str | None) -> Lines:
    return tuple(split_lines(text)) if text else ()
