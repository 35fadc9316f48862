"""What a journaled effect does to a hunk: whether it is still the effect's work, and what
the text found (its edit done, or stale) makes of the hunk. A pure table of the effects'
state machine; `review/effects.py` only carries it out."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple, TypedDict

from .effect_state import Action as Action
from .effect_state import State as State
from .status import Status


class Found(StrEnum):
    """What an effect found for one hunk: its edit is made (or was already), or it cannot be."""

    DONE = "done"
    STALE = "stale"


class EffectEdit(TypedDict):
    """One hunk's edit in a journaled effect (the `effects.edits` column), written from the
    hunk as it was when decided: `before` is replaced by `after` at about `line`."""

    hunkId: str
    kind: str  # a Kind's value
    uri: str
    newUri: str | None
    line: int
    before: str
    after: str
    ctxBefore: list[str | None]
    ctxAfter: list[str | None]


class Outcome(NamedTuple):  # not a dataclass: `stet status` reads this module, dataclasses costs it 20 ms
    to: Status | None = None  # the hunk's new status (None: it stays)
    back_in_file: bool = False  # an applied hunk's new text is in the file (again)


def still_wanted(action: Action, state: State, status: Status) -> bool:
    """Is carrying out the effect on a hunk in `status` still the effect's work?"""
    unsaved = state == State.UNSAVED
    if action == Action.APPLY:
        return status == (Status.APPLIED if unsaved else Status.ACCEPTED)  # else decided otherwise since
    if action == Action.REAPPLY:
        return status == Status.APPLIED  # else undone since
    # A revert: decided otherwise since (accepted again) - unless it lived in a buffer lost
    # unsaved: then every later edit of the file is replayed on the file too, in order, and
    # this one must come first.
    return unsaved or status not in (Status.ACCEPTED, Status.APPLIED)


def outcome(action: Action, state: State, status: Status, found: Found) -> Outcome:
    """What the effect's result for a hunk (stored `status`) makes of it."""
    done = found == Found.DONE
    if action == Action.APPLY and status == Status.ACCEPTED:
        return Outcome(Status.APPLIED if done else Status.STALE)
    if action in (Action.APPLY, Action.REAPPLY) and status == Status.APPLIED:
        if done:  # in the file (again): re-applied, or replayed from a buffer lost unsaved
            return Outcome(back_in_file=True)
        if action == Action.REAPPLY or state == State.UNSAVED:
            # Neither its new text nor its old text is there (for an unsaved one: the buffer
            # holding it was lost): it cannot be put back without overwriting.
            return Outcome(Status.STALE)
        return Outcome()
    if action == Action.REVERT and not done and status == Status.PENDING:
        return Outcome(Status.STALE)
    if action == Action.REVERT and done and status == Status.STALE:
        # Judged by content while its revert was still journaled (a buffer re-opened at
        # restart): the old text is back now, so the hunk is found again.
        return Outcome(Status.PENDING)
    return Outcome()


def settled(complete: bool, in_buffer: bool) -> State:
    """The effect's state once run: done, done in an unsaved buffer, or still to do."""
    if not complete:
        return State.PENDING
    return State.UNSAVED if in_buffer else State.DONE
