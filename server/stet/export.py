"""Hunks back to a unified diff that `git apply` takes (pure: texts in, text out).

The diff goes from the file *without* the chosen hunks to the file *with* them. For a
hunk not applied yet (pending, accepted, rejected...) the file on disk holds its old text,
so that side is the file as it is now; for an applied hunk the file holds its new text,
so the "without" side is the file with that hunk reverted. `git apply --check` therefore
takes an export of pending/accepted hunks on the current tree, and `git apply -R --check`
confirms that applied hunks are in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .domain.anchor import LineIndex, locate
from .domain.hunks import TextMismatch, apply_edits
from .domain.model import Hunk
from .domain.status import Status
from .domain.text import split_lines
from .patches import format_file


@dataclass
class Exported:
    diff: str = ""
    hunk_ids: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (hunk id, why)


def export_file(path: str, current: str | None, hunks: list[Hunk]) -> Exported:
    out = Exported()
    if current is None:
        out.skipped = [(h.id, f"{path} does not exist") for h in hunks]
        return out
    lines = split_lines(current)
    index = LineIndex(lines)
    revert: list[tuple[int, tuple, tuple, Hunk]] = []  # applied hunks, to take out for the "without" side
    forward: list[tuple[int, tuple, tuple, Hunk]] = []  # the others, to put in for the "with" side
    for h in sorted(hunks, key=lambda h: (h.line, h.seq)):
        if h.kind != "edit":
            out.skipped.append((h.id, f"{h.kind} hunks are not exported yet"))
            continue
        applied = h.status == Status.APPLIED
        there = h.replacement if applied else h.old
        found = locate(index, there, h.line, h.ctx_before, h.ctx_after)
        if found is None:
            out.skipped.append((h.id, f"its {'new' if applied else 'old'} text is no longer in {path}"))
            continue
        edit = (found.line, there, h.old if applied else h.replacement, h)
        (revert if applied else forward).append(edit)
    kept = []
    end = -1
    for e in sorted(revert + forward, key=lambda e: (e[0], len(e[1]))):
        if e[0] < end or (e[0] == end and not e[1] and kept and not kept[-1][1]):
            out.skipped.append((e[3].id, "it overlaps another exported hunk"))
            continue
        kept.append(e)
        end = e[0] + len(e[1])
    try:
        without = apply_edits(lines, [(s, a, b) for s, a, b, h in kept if h.status == Status.APPLIED])
        with_ = apply_edits(lines, [(s, a, b) for s, a, b, h in kept if h.status != Status.APPLIED])
    except TextMismatch as exc:  # cannot happen after locate; refuse rather than write a wrong diff
        out.skipped.extend((e[3].id, str(exc)) for e in kept)
        return out
    out.hunk_ids = [e[3].id for e in kept]
    if kept:
        out.diff = format_file(path, path, "".join(without), "".join(with_))
    return out
