"""The hunk record the review works on."""

from __future__ import annotations

from dataclasses import dataclass, field

from .hunks import Context, Lines
from .shapes import JSON, Range
from .status import OPEN, Status
from .text import is_terminated, split_lines, utf16_len


@dataclass(slots=True)  # one per hunk, and a store may hold 100,000: no per-instance dict
class Hunk:
    id: str
    proposal_id: str
    task_id: str | None
    seq: int
    uri: str
    kind: str  # edit | create | rename | delete
    status: Status
    line: int  # first line of the anchored text in the current content
    old: Lines
    new: Lines
    ctx_before: Context
    ctx_after: Context
    new_uri: str | None = None
    message: str | None = None
    feedback: str | None = None
    version: int = 1
    decided_at: str | None = None
    applied_text: Lines | None = None  # the developer's own replacement (accept with changes)
    lsn: int = 0  # the operation that last changed this hunk
    # Captured with --keep: the agent wrote the new text into the file itself and it was left
    # there, so while pending the document shows the new text (reject puts the old text back).
    kept: bool = False
    # Not stored: whether the replacement (not the old text) is what the document shows now.
    shows_new: bool = field(default=False, compare=False)
    # Not stored: the line last written to the store (checkpoints write only what moved).
    stored_line: int = field(default=-1, compare=False)

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

    def anchored_text(self) -> Lines:
        return self.replacement if self.shows_new else self.old

    def anchored_length(self) -> int:
        return len(self.replacement) if self.shows_new else len(self.old)

    def lsp_range(self) -> Range:
        text = self.anchored_text()
        start = {"line": self.line, "character": 0}
        if text and not is_terminated(text[-1]):
            end = {"line": self.line + len(text) - 1, "character": utf16_len(text[-1])}
        else:
            end = {"line": self.line + len(text), "character": 0}
        return {"start": start, "end": end}

    def state(self) -> JSON:
        """The HunkState of docs/protocol.md."""
        return {
            "id": self.id,
            "proposalId": self.proposal_id,
            "taskId": self.task_id,
            "uri": self.uri,
            "kind": self.kind,
            "status": self.status.value,
            "range": self.lsp_range(),
            "oldText": self.old_text,
            "newText": self.new_text,
            "newUri": self.new_uri,
            "message": self.message,
            "feedback": self.feedback,
            "version": self.version,
            "decidedAt": self.decided_at,
            **({"appliedText": "".join(self.applied_text)} if self.applied_text is not None else {}),
            **({"kept": True} if self.kept else {}),
            "inFile": self.in_file,
        }

    @property
    def in_file(self) -> bool | None:
        """Whether the new text is in the document now: for an applied hunk, and for a kept
        one while it waits for review; None for every other status (nothing to tell)."""
        if self.status == Status.APPLIED or (self.kept and self.status == Status.PENDING):
            return self.shows_new
        return None

    def shown_when_loaded(self) -> bool:
        """What the document is expected to show before anyone looked: the new text for an
        applied hunk and for a kept one waiting for review, else the old text."""
        return self.status == Status.APPLIED or (self.kept and self.status == Status.PENDING)


def lines_of(text: str | None) -> Lines:
    return tuple(split_lines(text)) if text else ()
