"""The hunk status state machine: one transition table, nothing else decides."""

from __future__ import annotations

from enum import Enum, StrEnum


class Status(str, Enum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    APPLIED = "applied"
    REJECTED = "rejected"
    STALE = "stale"
    SUPERSEDED = "superseded"


# value -> member, for reading many rows (Status(value) goes through Enum's slower lookup)
BY_VALUE: dict[str, Status] = {s.value: s for s in Status}

OPEN = frozenset({Status.PENDING, Status.ACCEPTED, Status.STALE})
DECIDED = frozenset({Status.APPLIED, Status.REJECTED, Status.SUPERSEDED})

P, AC, AP, R, ST, SU = (
    Status.PENDING,
    Status.ACCEPTED,
    Status.APPLIED,
    Status.REJECTED,
    Status.STALE,
    Status.SUPERSEDED,
)

# (from, to) -> what causes it. Anything not listed is forbidden.
TRANSITIONS: dict[tuple[Status, Status], str] = {
    (P, AC): "accept",
    (AC, AP): "edit confirmed in the document",
    (P, R): "reject",
    (P, ST): "old text gone",
    (AC, ST): "old text gone",
    (ST, P): "old text found again",
    (ST, R): "reject",
    (P, SU): "replaced by a later proposal, or split into a part decided and the rest",
    (ST, SU): "replaced by a later capture (a kept hunk the agent changed again)",
    (AC, P): "undo",
    (R, P): "undo",
    (AP, P): "undo (edit reverted)",
    (AP, ST): "edit lost with an unsaved buffer, old text gone",
}


def gone(status: Status, in_file: bool | None) -> bool:
    """Applied, but its new text is no longer in the document (someone removed it)."""
    return status == Status.APPLIED and in_file is False


def shown(status: Status, in_file: bool | None) -> bool:
    """Shown to the developer: open, or applied and gone from the document."""
    return status in OPEN or gone(status, in_file)


class Decide(StrEnum):
    """What a developer decides of hunks (the op log's `kind` of a decision, the command's name)."""

    ACCEPT = "accept"
    REJECT = "reject"
    UNDO = "undo"
    REAPPLY = "reapply"  # an applied hunk whose text was removed, put back
    PULL = "pull"  # a reapply of what can land in this checkout


# What each developer action aims for, and the states in which it is already done.
ACTIONS: dict[Decide, tuple[Status, frozenset[Status]]] = {
    Decide.ACCEPT: (AC, frozenset({AC, AP})),
    Decide.REJECT: (R, frozenset({R})),
    Decide.UNDO: (P, frozenset({P})),
}


class TransitionError(ValueError):
    def __init__(self, hunk_id: str, current: Status, target: Status, action: str):
        self.hunk_id, self.current, self.target = hunk_id, current, target
        super().__init__(f"cannot {action} hunk {hunk_id}: it is {current.value}")


def allowed(current: Status, target: Status) -> bool:
    return (current, target) in TRANSITIONS


def check(current: Status, target: Status, hunk_id: str = "?", action: str = "move") -> None:
    if (current, target) not in TRANSITIONS:
        raise TransitionError(hunk_id, current, target, action)


def moves(action: Decide, current: Status) -> bool:
    """Whether `action` moves a hunk in `current` on: the transition to what it aims for is
    one the table says it causes (not already there, not forbidden)."""
    if action not in ACTIONS:
        return False
    target, done = ACTIONS[action]
    return current not in done and TRANSITIONS.get((current, target), "").startswith(action)


def moved_by(action: Decide) -> list[Status]:
    """The statuses `action` moves a hunk on from: what a decision on a whole file, proposal
    or task takes."""
    return [s for s in Status if moves(action, s)]


def offered(status: Status, in_file: bool | None, retry: bool = False) -> tuple[Decide, ...]:
    """The decisions offered on a hunk, the way forward first: reapply for an applied hunk whose
    text is gone; with `retry`, accept again for an accepted one (its edit waits to be written:
    accepting retries it); then each action that moves it on."""
    again = (Decide.REAPPLY,) if gone(status, in_file) else ()
    if retry and status == Status.ACCEPTED:
        again = (Decide.ACCEPT,)
    return again + tuple(action for action in ACTIONS if moves(action, status))


def plan(action: Decide, current: Status, hunk_id: str = "?") -> Status | None:
    """The status `action` moves a hunk to, None when it is already there; raises when forbidden."""
    target, done = ACTIONS[action]
    if current in done:
        return None
    # The transition must exist *and* be one this action causes (undo cannot revive a stale hunk).
    if not TRANSITIONS.get((current, target), "").startswith(action):
        raise TransitionError(hunk_id, current, target, action)
    return target


STALE_WHY = "the file no longer has the text this hunk changes, where it changes it: the hunk is stale"


def why_not_taken(status: Status, problem: str | None) -> str | None:
    """Why a decision's effect on a hunk did not take, judged by where the hunk ended (None: it
    took). Stale: its text was not where the change needed it, or something stood in the way
    (`problem` says what). Accepted with a `problem`: its edit waits, unwritten (a full disk).
    An accept still in flight in an editor's buffer (accepted, no problem) has taken."""
    if status == Status.STALE:
        return problem or STALE_WHY
    if status == Status.ACCEPTED and problem:
        return problem
    return None
