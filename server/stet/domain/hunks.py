"""Hunks: maximal runs of changed lines between a base text and a proposed text.

A hunk has zero lines of context (two changes separated by one unchanged line are two
hunks), so the lines right next to a hunk are never part of another hunk of the same
diff; we record a few of them as context for relocating the hunk later.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Sequence

from .text import split_lines

CONTEXT = 3
# Sentinel context entry: the start (in ctx_before) or end (in ctx_after) of the file.
EDGE = None

Lines = tuple[str, ...]
Context = tuple[str | None, ...]


@dataclass(frozen=True)
class HunkSpec:
    start: int  # first line of the old text in the base (0-based)
    old: Lines
    new: Lines
    ctx_before: Context  # nearest line last; EDGE first when the file starts there
    ctx_after: Context  # nearest line first; EDGE last when the file ends there

    @property
    def old_text(self) -> str:
        return "".join(self.old)

    @property
    def new_text(self) -> str:
        return "".join(self.new)


class TextMismatch(ValueError):
    """The text an edit expects is not where it should be."""


def context_around(lines: Sequence[str], start: int, end: int, size: int = CONTEXT) -> tuple[Context, Context]:
    lo = max(0, start - size)
    before: list[str | None] = list(lines[lo:start])
    if len(before) < size:
        before.insert(0, EDGE)
    hi = min(len(lines), end + size)
    after: list[str | None] = list(lines[end:hi])
    if len(after) < size:
        after.append(EDGE)
    return tuple(before), tuple(after)


def changed_regions(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """(a_start, a_end, b_start, b_end) of each maximal run of differing lines."""
    # Trim the common prefix and suffix first: agent edits usually touch a few places of a
    # large file, and SequenceMatcher's cost grows with what it has to compare.
    pre = 0
    limit = min(len(a), len(b))
    while pre < limit and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < limit - pre and a[len(a) - 1 - suf] == b[len(b) - 1 - suf]:
        suf += 1
    a_mid, b_mid = a[pre : len(a) - suf], b[pre : len(b) - suf]
    regions: list[tuple[int, int, int, int]] = []
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + pre, i2 + pre, j1 + pre, j2 + pre
        if regions and regions[-1][1] == i1 and regions[-1][3] == j1:
            # Adjacent non-equal opcodes (a delete next to an insert) form one hunk.
            regions[-1] = (regions[-1][0], i2, regions[-1][2], j2)
        else:
            regions.append((i1, i2, j1, j2))
    return regions


def diff_hunks(base: str, proposed: str) -> list[HunkSpec]:
    a, b = split_lines(base), split_lines(proposed)
    hunks = []
    for i1, i2, j1, j2 in changed_regions(a, b):
        before, after = context_around(a, i1, i2)
        hunks.append(HunkSpec(i1, tuple(a[i1:i2]), tuple(b[j1:j2]), before, after))
    return hunks


def apply_edits(lines: Sequence[str], edits: Iterable[tuple[int, Sequence[str], Sequence[str]]]) -> list[str]:
    """Replace, for each (start, old, new), the lines `old` found at `start` by `new`.

    Positions are in the coordinates of `lines`; edits must not overlap. Raises
    TextMismatch when an edit's old lines are not at its start.
    """
    ordered = sorted(edits, key=lambda e: (e[0], len(e[1])))
    out: list[str] = []
    pos = 0
    for start, old, new in ordered:
        if start < pos:
            raise TextMismatch(f"edits overlap at line {start}")
        if list(lines[start : start + len(old)]) != list(old):
            raise TextMismatch(f"expected text not found at line {start}")
        out.extend(lines[pos:start])
        out.extend(new)
        pos = start + len(old)
    out.extend(lines[pos:])
    return out
