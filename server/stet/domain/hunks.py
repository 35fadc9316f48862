"""Hunks: maximal runs of changed lines between a base text and a proposed text.

A hunk has zero lines of context (two changes separated by one unchanged line are two
hunks), so the lines right next to a hunk are never part of another hunk of the same
diff; we record a few of them as context for relocating the hunk later.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import lt, ne, sub

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


def _common_prefix(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int) -> int:
    """How many lines a[alo:ahi] and b[blo:bhi] share at their start (slices compared in C,
    in growing steps: long equal runs cost a few comparisons, not one per line)."""
    n = min(ahi - alo, bhi - blo)
    k, step = 0, 8
    while k < n:
        s = min(step, n - k)
        if a[alo + k : alo + k + s] == b[blo + k : blo + k + s]:
            k += s
            step *= 2
        elif s == 1:
            break
        else:
            step = max(1, s // 4)
    return k


def _common_suffix(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int) -> int:
    n = min(ahi - alo, bhi - blo)
    k, step = 0, 8
    while k < n:
        s = min(step, n - k)
        if a[ahi - k - s : ahi - k] == b[bhi - k - s : bhi - k]:
            k += s
            step *= 2
        elif s == 1:
            break
        else:
            step = max(1, s // 4)
    return k


def _longest_chain(ai: list[int], bj: list[int]) -> list[int]:
    """Indexes of a longest run of pairs increasing in both (ai is increasing): patience sorting."""
    tails: list[int] = []  # bj of the last pair of the best chain of each length
    tail_at: list[int] = []
    back = [-1] * len(bj)
    for k, j in enumerate(bj):
        p = bisect_left(tails, j)
        if p == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[p] = j
            tail_at[p] = k
        back[k] = tail_at[p - 1] if p else -1
    chain = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(k)
        k = back[k]
    chain.reverse()
    return chain


def _breaks(a: list[str], b: list[str], ai: list[int], k0: int, k1: int, d: int) -> list[int]:
    """Anchors k in k0..k1-1 (all at offset d) after which the lines up to anchor k+1 differ,
    found by halving the range with slice comparisons."""
    out = []
    todo = [(k0, k1)]
    while todo:
        lo, hi = todo.pop()
        if lo >= hi or a[ai[lo] : ai[hi] + 1] == b[ai[lo] + d : ai[hi] + 1 + d]:
            continue
        if hi == lo + 1:
            out.append(lo)
            continue
        mid = (lo + hi) // 2
        todo.append((mid, hi))
        todo.append((lo, mid))
    out.sort()
    return out


def _matching_blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int]]:
    """Blocks (i, j, n) with a[i:i+n] == b[j:j+n], increasing in both, by patience diff:
    lines that occur once in each side anchor the alignment (their longest increasing
    chain), the gaps between anchors are aligned the same way, and a gap with no such line
    falls back to difflib. Every step runs on whole slices or C-level iterators where it
    can: for a large file with a few scattered changes the cost is a handful of passes."""
    a, b = list(a), list(b)  # slices of both must compare equal
    blocks: list[tuple[int, int, int]] = []
    work = [(0, len(a), 0, len(b))]
    while work:
        alo, ahi, blo, bhi = work.pop()
        pre = _common_prefix(a, b, alo, ahi, blo, bhi)
        if pre:
            blocks.append((alo, blo, pre))
            alo, blo = alo + pre, blo + pre
        suf = _common_suffix(a, b, alo, ahi, blo, bhi)
        if suf:
            blocks.append((ahi - suf, bhi - suf, suf))
            ahi, bhi = ahi - suf, bhi - suf
        if alo == ahi or blo == bhi:
            continue
        a_mid, b_mid = a[alo:ahi], b[blo:bhi]
        count_a = Counter(a_mid)
        count_b = Counter(b_mid)
        once_a = {line for line, c in count_a.items() if c == 1}
        common = {line for line, c in count_b.items() if c == 1 and line in once_a}
        if not common:
            matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
            blocks.extend((alo + i, blo + j, n) for i, j, n in matcher.get_matching_blocks() if n)
            continue
        where_b = dict(zip(b_mid, range(blo, bhi)))
        mask = list(map(common.__contains__, a_mid))
        ai = list(compress(range(alo, ahi), mask))
        bj = list(map(where_b.__getitem__, compress(a_mid, mask)))
        if not all(map(lt, bj, bj[1:])):
            chain = _longest_chain(ai, bj)
            ai = [ai[k] for k in chain]
            bj = [bj[k] for k in chain]
        # Runs of anchors at the same offset (j - i) are usually one matching block: check the
        # whole run at once, and look anchor by anchor only where the check fails.
        offsets = list(map(sub, bj, ai))
        cuts = [0, *compress(range(1, len(offsets)), map(ne, offsets[1:], offsets[:-1])), len(offsets)]
        pi, pj = alo, blo  # end of the part already aligned
        for c0, c1 in zip(cuts, cuts[1:]):
            d = offsets[c0]
            starts = [c0, *(k + 1 for k in _breaks(a, b, ai, c0, c1 - 1, d))]
            ends = [*(k for k in starts[1:]), c1]
            for s0, s1 in zip(starts, ends):
                r0, r1 = ai[s0], ai[s1 - 1] + 1
                if r0 > pi or r0 + d > pj:
                    work.append((pi, r0, pj, r0 + d))
                blocks.append((r0, r0 + d, r1 - r0))
                pi, pj = r1, r1 + d
        if pi < ahi or pj < bhi:
            work.append((pi, ahi, pj, bhi))
    blocks.sort()
    merged: list[tuple[int, int, int]] = []
    for i, j, n in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + n)
        else:
            merged.append((i, j, n))
    return merged


def changed_regions(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """(a_start, a_end, b_start, b_end) of each maximal run of differing lines."""
    regions: list[tuple[int, int, int, int]] = []
    i = j = 0
    for x, y, n in [*_matching_blocks(a, b), (len(a), len(b), 0)]:
        if x > i or y > j:
            regions.append((i, x, j, y))
        i, j = x + n, y + n
    return regions


def diff_hunks(base: str, proposed: str) -> list[HunkSpec]:
    a, b = split_lines(base), split_lines(proposed)
    hunks = []
    for i1, i2, j1, j2 in changed_regions(a, b):
        before, after = context_around(a, i1, i2)
        hunks.append(HunkSpec(i1, tuple(a[i1:i2]), tuple(b[j1:j2]), before, after))
    return hunks


def edit_order(edit: tuple[int, Sequence[str], Sequence[str]]) -> tuple[int, int]:
    """The order edits (start, old, new) are made in: by start; an insertion goes above a
    change that starts at its line; insertions at one line keep the order they come in
    (sorting is stable): the first one's lines end up first."""
    return edit[0], len(edit[1])


def apply_edits(lines: Sequence[str], edits: Iterable[tuple[int, Sequence[str], Sequence[str]]]) -> list[str]:
    """Replace, for each (start, old, new), the lines `old` found at `start` by `new`.

    Positions are in the coordinates of `lines`; edits must not overlap. Raises
    TextMismatch when an edit's old lines are not at its start.
    """
    ordered = sorted(edits, key=edit_order)
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


class Shifts:
    """Where lines land once edits (start, old, new) are made: non-overlapping, in `edit_order`,
    in the coordinates of the text before them (what `apply_edits` takes).

    Each look-up is a binary search, so moving every hunk of a file after N edits costs
    N log N rather than N x N (a bulk decision over thousands of hunks in one file)."""

    def __init__(self, edits: Sequence[tuple[int, Sequence[str], Sequence[str]]]):
        self._starts = [start for start, _, _ in edits]
        self._ends = [start + len(old) for start, old, _ in edits]  # non-decreasing: no overlaps
        self._delta = [0]
        for _, old, new in edits:
            self._delta.append(self._delta[-1] + len(new) - len(old))

    def after(self, line: int) -> int:
        """Where `line`, a line the edits leave (another hunk's first line), is after them:
        every edit that ends at or above it moves it, an insertion at the line itself too
        (its lines go in above the line). For where an edit's own lines go, see `landed`."""
        return line + self._delta[bisect_right(self._ends, line)]

    def landed(self, k: int) -> int:
        """Where the new lines of the k-th edit begin once the edits are made: below the
        lines of the edits before it, insertions at the same line included."""
        return self._starts[k] + self._delta[k]

    def touch(self, line: int, length: int) -> bool:
        """Whether an edit meets lines line..line+length, both bounds included."""
        first = bisect_left(self._ends, line)  # the first edit that ends at `line` or after it
        return first < bisect_right(self._starts, line + length)
