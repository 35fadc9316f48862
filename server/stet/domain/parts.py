"""Parts of a hunk: deciding some of its lines, by `git gui`'s *Stage Lines* rule.

A hunk is walked as a unified diff shows it, all its old lines, then all its new lines: a
selected old line is removed, an unselected one stays; a selected new line is added, an
unselected one is left out. What the selection makes is the *part*; what is left of the hunk
is the *rest*, a hunk of its own:

- after an accepted part, from the part's text to the hunk's full new text;
- after a rejected part, from the hunk's old text to the complement selection's text.

Pieces are trimmed of the lines they leave as they are (those become their context), so a
piece is a change of whole lines like any hunk. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .hunks import CONTEXT, Context, Lines
from .text import detect_eol, is_terminated

MAX_RANGES = 10_000  # ranges on each side of one selection (docs/protocol.md, "Parts of a hunk")


class BadSelection(ValueError):
    """A selection that names no line, or a line the hunk does not have, or too many ranges.
    `data`: for a range outside the hunk, its side, the range and the side's number of lines
    (a front end says them in its own numbering)."""

    def __init__(self, message: str, data: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.data = data or {}


@dataclass(frozen=True)
class Selection:
    """Indices (0-based) of the hunk's old lines and of its new lines."""

    old: frozenset[int]
    new: frozenset[int]

    @classmethod
    def of(
        cls,
        old: Sequence[str],
        new: Sequence[str],
        old_ranges: Iterable[Sequence[int]],
        new_ranges: Iterable[Sequence[int]],
    ) -> Selection:
        """From inclusive [first, last] ranges, checked against the hunk's `old` and `new` lines."""
        old_ranges, new_ranges = list(old_ranges), list(new_ranges)
        check_count(old_ranges, new_ranges)
        sel = cls(_indices(old_ranges, len(old), "old"), _indices(new_ranges, len(new), "new"))
        if not sel.old and not sel.new:
            raise BadSelection("the selection names no changed line of the hunk")
        return sel

    def whole(self, old: Sequence[str], new: Sequence[str]) -> bool:
        return len(self.old) == len(old) and len(self.new) == len(new)

    def complement(self, old: Sequence[str], new: Sequence[str]) -> Selection:
        return Selection(frozenset(range(len(old))) - self.old, frozenset(range(len(new))) - self.new)


def check_count(old_ranges: Sequence[object], new_ranges: Sequence[object]) -> None:
    """A selection names at most MAX_RANGES ranges on each side (checked before any other work)."""
    for side, ranges in (("old", old_ranges), ("new", new_ranges)):
        if len(ranges) > MAX_RANGES:
            raise BadSelection(
                f"{len(ranges)} {side} ranges: a selection takes at most {MAX_RANGES} ranges on each side "
                "(merge adjacent lines into one [first, last] range)"
            )


def merged(ranges: Iterable[Sequence[int]], size: int, side: str) -> list[tuple[int, int]]:
    """Inclusive [first, last] ranges checked against a side of `size` lines, as sorted,
    disjoint spans: overlapping and adjacent ranges are one."""
    spans = []
    for r in ranges:
        first, last = r[0], r[1]
        if first > last:
            raise BadSelection(f"{side} range [{first}, {last}]: its first line is after its last")
        if first < 0 or last >= size:
            raise BadSelection(
                f"{side} range [{first}, {last}] is outside the hunk: it has {size} {side} line(s) (0-based indices)",
                {"side": side, "range": [first, last], "lines": size},
            )
        spans.append((first, last))
    spans.sort()
    out: list[tuple[int, int]] = []
    for first, last in spans:
        if out and first <= out[-1][1] + 1:
            if last > out[-1][1]:
                out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


def _indices(ranges: Iterable[Sequence[int]], size: int, side: str) -> frozenset[int]:
    # Each line once, whatever the ranges repeat: linear in the hunk's size, not in the
    # ranges' total length (copies of a long range once cost 10^9 insertions).
    return frozenset(i for first, last in merged(ranges, size, side) for i in range(first, last + 1))


def stage(old: Lines, new: Lines, sel: Selection) -> Lines:
    """The text the selection makes of the hunk (Stage Lines). A line that had no line end
    (the file's last) and is no longer last gets the hunk's line end."""
    lines = [line for i, line in enumerate(old) if i not in sel.old]
    lines += [line for j, line in enumerate(new) if j in sel.new]
    eol = detect_eol("".join((*old, *new)))
    return tuple(line if k == len(lines) - 1 or is_terminated(line) else line + eol for k, line in enumerate(lines))


@dataclass(frozen=True)
class Piece:
    """A change of some lines: `old` replaced by `new`, starting `offset` lines below the
    hunk's first line, with its own context."""

    offset: int
    old: Lines
    new: Lines
    ctx_before: Context
    ctx_after: Context


@dataclass(frozen=True)
class Split:
    """What deciding a selection makes of a hunk. `rest` None: the selection was, in effect,
    the whole hunk (no split)."""

    part: Piece
    rest: Piece | None


def split(old: Lines, new: Lines, ctx_before: Context, ctx_after: Context, sel: Selection, *, accept: bool) -> Split:
    """The part and the rest of a hunk (`old` -> `new`) for `sel`, accepted or rejected.
    Raises BadSelection when the part would change nothing."""
    whole = Piece(0, old, new, ctx_before, ctx_after)
    if sel.whole(old, new):
        return Split(whole, None)
    made = stage(old, new, sel)
    if made == old:
        raise BadSelection("the selected lines change nothing: the lines they remove are the lines they add")
    if accept:
        rest_old, rest_new = made, new
    else:
        rest_old, rest_new = old, stage(old, new, sel.complement(old, new))
    if rest_old == rest_new:
        return Split(whole, None)
    return Split(trim(old, made, ctx_before, ctx_after), trim(rest_old, rest_new, ctx_before, ctx_after))


def trim(old: Lines, new: Lines, ctx_before: Context, ctx_after: Context) -> Piece:
    """`old` -> `new` without the lines they share at either end; those become context."""
    n = min(len(old), len(new))
    pre = 0
    while pre < n and old[pre] == new[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and old[len(old) - 1 - suf] == new[len(new) - 1 - suf]:
        suf += 1
    before = (*ctx_before, *old[:pre])[-CONTEXT:] if pre else ctx_before
    after = (*old[len(old) - suf :], *ctx_after)[:CONTEXT] if suf else ctx_after
    return Piece(pre, old[pre : len(old) - suf], new[pre : len(new) - suf], before, after)
