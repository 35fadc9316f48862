"""What a proposal or a capture made: its hunks, the earlier hunks of its task it repeated, and,
for a capture, the files it restored, left, or refused (and why). Each door presents them
(present/proposal.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .capture import Refused
from .model import Hunk


@dataclass(frozen=True, slots=True)
class Proposed:
    """A proposal's hunks, in order; with a task, the earlier hunks of that task it repeated:
    `rejected_before` those the developer rejected (their feedback says why), `already_proposed`
    the others, which were not created again. `proposal_id` None: a capture with nothing new.
    `notes`: what the reading of a patch left aside (a mode change, a file without change)."""

    proposal_id: str | None
    hunks: tuple[Hunk, ...] = ()
    already_proposed: tuple[Hunk, ...] = ()
    rejected_before: tuple[Hunk, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Captured:
    """A capture: the proposal it stored, the files it gave their baseline back (`restored`) and
    those that changed again meanwhile (`left`), as paths a person reads. Once the agents' side
    has chosen the baseline (None before): which (`snapshot`, `git`, `worktree`...), the files it
    `refused`, and whether the agent's version stays in the files (`keep`)."""

    proposed: Proposed
    restored: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    baseline: str | None = None
    refused: tuple[Refused, ...] = ()
    keep: bool = False

    @property
    def proposal_id(self) -> str | None:
        return self.proposed.proposal_id

    @property
    def hunks(self) -> tuple[Hunk, ...]:
        return self.proposed.hunks
