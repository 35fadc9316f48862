"""A glance at the review without opening it: the hunks as the store has them, when nothing is
left to bring up to date.

Every process that opens the store first finishes the journaled edits it may finish and
re-judges the hunks of files changed since Stet last looked (session.open_review). When there
is no such edit and every file with judged hunks still has the size and mtime Stet stamped,
that work changes nothing, and what the full open would show is the store as it is: a
read-only command (`stet status`) can print it without an event loop, aiosqlite's thread or
the review's model. Otherwise `glance` answers None and the caller opens the review.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar

from ..domain import status as status_rules
from ..domain.effect_outcome import State
from ..domain.status import BY_VALUE, OPEN, Status
from ..domain.text import split_lines
from ..errors import StetError
from ..store.glance import Look, look
from ..workspace.paths import Workspace, path_to_uri
from ..workspace.tempnames import TEMP_MARK
from . import heads_seen
from .stamps import stat_of

if TYPE_CHECKING:
    from ..domain.model import Hunk

_H = TypeVar("_H", "Seen", "Hunk")

# The hunks whose standing depends on their file's content (as recheck.JUDGED).
JUDGED = OPEN | {Status.APPLIED}


class Seen:
    """A hunk as the store has it, with what the command line prints of it (the attributes
    and properties of domain.model.Hunk that `stet status` uses)."""

    __slots__ = (
        "applied_text",
        "feedback",
        "id",
        "in_file",
        "kept",
        "kind",
        "line",
        "message",
        "new_text",
        "new_uri",
        "old_text",
        "proposal_id",
        "seq",
        "status",
        "task_id",
        "uri",
    )

    def __init__(self, row: tuple[Any, ...]) -> None:
        (
            self.id,
            self.proposal_id,
            self.task_id,
            self.seq,
            self.uri,
            self.kind,
            self.new_uri,
            status,
            self.line,
            self.old_text,
            self.new_text,
            self.applied_text,
            self.message,
            self.feedback,
            in_file,
            kept,
        ) = row
        self.status = BY_VALUE[status]
        self.in_file = None if in_file is None else bool(in_file)
        self.kept = bool(kept)

    # Lines are split only for the hunks a command prints.
    @property
    def old(self) -> list[str]:
        return split_lines(self.old_text)

    @property
    def new(self) -> list[str]:
        return split_lines(self.new_text)

    @property
    def replacement(self) -> list[str]:
        return split_lines(self.applied_text if self.applied_text is not None else self.new_text)

    @property
    def gone(self) -> bool:
        return status_rules.gone(self.status, self.in_file)

    @property
    def shown(self) -> bool:
        return status_rules.shown(self.status, self.in_file)


def glance(db_path: str, roots: list[str]) -> list[Seen] | None:
    """Every hunk of the store, sorted as Review.list sorts them; None when opening the review
    would change something first (or the store cannot be read this way)."""
    seen = look(db_path, _uris(roots))
    if seen is None:
        return None
    return _current(seen, [Seen(row) for row in seen.hunks], roots)


def glance_whole(db_path: str, roots: list[str]) -> list[Hunk] | None:
    """`glance` with whole hunks (the review's model, which `Hunk.state()` turns into the
    protocol's HunkState): what `stet status --json` prints."""
    from ..store.rows import hunk_from_row

    seen = look(db_path, _uris(roots), whole=True)
    if seen is None:
        return None
    hunks = []
    for row in seen.hunks:
        h = hunk_from_row(row[:-1])
        if h.message is None:  # stored once, in its proposal
            h.message = row[-1]
        h.shows_new = h.shown_when_loaded()  # as the full open loads it (memory.Memory._merge)
        hunks.append(h)
    return _current(seen, hunks, roots)


def _uris(roots: list[str]) -> list[str]:
    """The roots' uris as the review writes them (Workspace: real paths)."""
    return [path_to_uri(r) for r in Workspace(roots).roots]


def _current(seen: Look, hunks: list[_H], roots: list[str]) -> list[_H] | None:
    """The hunks, sorted, if the store is current for them: else None (see the module)."""
    held: set[str] = set()
    for _id, uri, state, target, owner in seen.effects:
        live = bool(owner) and _alive_elsewhere(owner)
        if state == State.PENDING and not (target == "buffer" and live):
            return None  # an edit this process would carry out (Effects.run_pending)
        if live:
            held.add(uri)  # a live editor's buffer is that file's document: recheck leaves it
    if any(h.kept and h.status == Status.PENDING for h in hunks) and heads_seen.moved(roots, os.environ):
        return None  # a commit since may keep them: the full open looks (review/commit_keeps.py)
    ws = Workspace(roots)
    if _temp_files_left(ws, {h.uri for h in hunks}):
        return None  # a write a kill interrupted: the full open removes what it left
    for uri in {h.uri for h in hunks if h.status in JUDGED and ws.holds(h.uri)} - held:
        stamp = seen.stamps.get(uri)
        if stamp is None:
            return None  # never judged as it is: recheck would read it
        try:
            now = stat_of(ws.path_of(uri))
        except (StetError, OSError, ValueError):  # outside the workspace now, unreadable: recheck decides
            return None
        if now[:2] != stamp:
            return None  # changed since Stet last looked: recheck would judge its hunks again
    hunks.sort(key=lambda h: (h.uri, h.line, h.proposal_id, h.seq))
    return hunks


def _temp_files_left(ws: Workspace, uris: set[str]) -> bool:
    """Is a name with Stet's temp mark in a folder of these files? (Look-alikes too: the full open,
    which tells them apart, then runs; that is only slower.)"""
    folders = set()
    for uri in uris:
        try:
            folders.add(os.path.dirname(ws.path_of(uri)))
        except (StetError, ValueError):
            continue
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any(TEMP_MARK in name for name in names):
            return True
    return False


def _alive_elsewhere(owner: str) -> bool:
    from ..workspace import owners  # what it imports is needed only here

    return owner != owners.token() and owners.alive(owner)
