"""Contexts kept as Stet last saw the text: when Stet itself writes lines (a hunk applied,
undone, a part of one accepted), the hunks next to them take their context from the text as
it now is, as their positions move with it.

A hunk's context is the evidence that finds it again after a change Stet did not see. Left as
it was proposed, the context of a hunk next to an applied one still holds the lines that hunk
replaced: it then speaks against the hunk's true place, and a place elsewhere that merely
resembles the old neighbourhood can win. Pure: no I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .anchor import at_with_context, text_at
from .hunks import CONTEXT, EDGE, Context, Lines, context_around


@dataclass(frozen=True)
class Neighbour:
    """A hunk as the review holds it: its anchored text at `line` of the text as it is now."""

    key: str
    line: int
    text: Lines
    before: Context
    after: Context
    tracked: bool  # its position was followed through every edit of an open buffer


@dataclass(frozen=True)
class Written:
    """Lines `start`..`end` (exclusive; empty where lines were only removed) of the text as it
    is now hold what Stet just wrote for hunk `key`."""

    start: int
    end: int
    key: str


def _side_explained(lines: Sequence[str], want: str | None, at: int, near: Sequence[Written]) -> bool:
    """The nearest context line on one side (`want`, expected at line `at`; -1 or len(lines):
    the edge) is there, or Stet itself just wrote that line (then it says nothing)."""
    have = EDGE if at < 0 or at >= len(lines) else lines[at]
    if have == want:
        return True
    return any(w.start <= at < w.end for w in near)


def _placed(lines: Sequence[str], n: Neighbour, near: Sequence[Written]) -> bool:
    """Is the hunk where the review holds it? Its text there and, unless its position was
    tracked, its nearest context line on each side (a line Stet just wrote, or lines it just
    removed right there, counts as neither for nor against)."""
    if not text_at(lines, n.text, n.line):
        return False
    if n.tracked:
        return True
    end = n.line + len(n.text)
    removed_above = any(w.start == w.end == n.line for w in near)
    removed_below = any(w.start == w.end == end for w in near)
    before_ok = not n.before or removed_above or _side_explained(lines, n.before[-1], n.line - 1, near)
    after_ok = not n.after or removed_below or _side_explained(lines, n.after[0], end, near)
    return before_ok and after_ok


def refreshed_contexts(
    lines: Sequence[str], hunks: Iterable[Neighbour], written: Iterable[Written], reach: int = CONTEXT
) -> dict[str, tuple[Context, Context]]:
    """The new context of each hunk that has lines Stet just wrote within `reach` lines of it,
    taken from `lines` (the text as it is now), for the hunks found where the review holds
    them; only those whose context changes. The hunk a piece of writing is for is not its own
    neighbour."""
    spots = sorted(written, key=lambda w: (w.start, w.end))
    starts = [w.start for w in spots]
    ends = [w.end for w in spots]  # non-decreasing: the pieces do not overlap
    out: dict[str, tuple[Context, Context]] = {}
    if not spots:
        return out
    for n in hunks:
        end = n.line + len(n.text)
        # The pieces that meet lines line-reach..end+reach: ending after line-reach, starting
        # before end+reach (a piece that only removed lines meets them strictly inside).
        first = bisect_right(ends, n.line - reach)
        last = bisect_right(starts, end + reach - 1)
        near = [w for w in spots[first:last] if w.key != n.key and w.end > n.line - reach and w.start < end + reach]
        if not near or not _placed(lines, n, near):
            continue
        fresh = context_around(lines, n.line, end)
        if fresh != (n.before, n.after):
            out[n.key] = fresh
    return out


def context_now(
    lines: Sequence[str], text: Lines, line: int, before: Context, after: Context, *, tracked: bool
) -> tuple[Context, Context] | None:
    """The context of an edit about to be journaled (`text` to be replaced at `line`), taken
    from the document as it is: lines typed right next to a hunk since it was proposed are its
    neighbours now. An edit that leaves no text (a deletion) can be found done again, after a
    kill or a late report from the editor, only by the lines around the place it emptied.
    None where the document does not show the text there (the proposal's context stays): a pure
    insertion's place is trusted when it was tracked, or when its nearest context is there."""
    if text:
        if not text_at(lines, text, line):
            return None
    elif not 0 <= line <= len(lines) or not (tracked or at_with_context(lines, text, line, before, after)):
        return None
    return context_around(lines, line, line + len(text))
