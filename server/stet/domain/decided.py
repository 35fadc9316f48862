"""What a decision did: the hunks it decided, as they stand after it, and of those the ones whose
effect did not take (with why). Each door presents it (present/decision.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Hunk
from .status import why_not_taken


@dataclass(frozen=True, slots=True)
class NotTaken:
    """A hunk decided whose effect did not take: the decision is recorded, the file is not as it asked."""

    hunk: Hunk
    why: str


@dataclass(frozen=True, slots=True)
class Decided:
    """The hunks a decision decided, in the order asked; `left`: those a pull could not bring
    into this checkout (hunk id: why, and what to do about the checkout), not among `hunks`."""

    hunks: tuple[Hunk, ...] = ()
    left: dict[str, str] = field(default_factory=dict)

    def not_taken(self) -> list[NotTaken]:
        out = []
        for h in self.hunks:
            why = why_not_taken(h.status, h.problem)
            if why is not None:
                out.append(NotTaken(h, why))
        return out


@dataclass(frozen=True, slots=True)
class Split:
    """Some lines of a hunk decided: the part (None when it is gone from the review since) and
    the rest (None when every changed line was selected: the whole hunk was decided)."""

    part: Hunk | None
    rest: Hunk | None

    def not_taken(self) -> list[NotTaken]:
        return Decided(() if self.part is None else (self.part,)).not_taken()
