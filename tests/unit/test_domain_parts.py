"""Parts of a hunk (domain/parts.py): git gui's Stage Lines rule, pieces trimmed to whole-line
changes, and the properties that make a split safe to carry out on a file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.hunks import EDGE
from stet.domain.parts import MAX_RANGES, BadSelection, Piece, Selection, split, stage

OLD = ("l5\n", "l6\n", "l7\n")
NEW = ("A\n", "B\n", "C\n", "D\n")
BEFORE = (EDGE, "l1\n", "l2\n")
AFTER = ("l8\n", EDGE)


def test_the_contracts_example() -> None:
    sel = Selection.of(OLD, NEW, [[0, 0]], [[0, 1]])
    assert stage(OLD, NEW, sel) == ("l6\n", "l7\n", "A\n", "B\n")


def test_selection_errors() -> None:
    with pytest.raises(BadSelection, match="names no changed line"):
        Selection.of(OLD, NEW, [], [])
    with pytest.raises(BadSelection, match="outside the hunk"):
        Selection.of(OLD, NEW, [[0, 3]], [])
    with pytest.raises(BadSelection, match="outside the hunk"):
        Selection.of(OLD, NEW, [], [[-1, 0]])
    with pytest.raises(BadSelection, match="after its last"):
        Selection.of(OLD, NEW, [[2, 1]], [])


def test_every_line_is_the_whole_hunk() -> None:
    sel = Selection.of(OLD, NEW, [[0, 2]], [[0, 3]])
    out = split(OLD, NEW, BEFORE, AFTER, sel, accept=True)
    assert out.rest is None and out.part == Piece(0, OLD, NEW, BEFORE, AFTER)


def test_accepted_part_and_rest_trimmed() -> None:
    sel = Selection.of(OLD, NEW, [[0, 0]], [[0, 1]])
    out = split(OLD, NEW, BEFORE, AFTER, sel, accept=True)
    assert out.part == Piece(0, OLD, ("l6\n", "l7\n", "A\n", "B\n"), BEFORE, AFTER)
    assert out.rest == Piece(0, ("l6\n", "l7\n", "A\n", "B\n"), NEW, BEFORE, AFTER)


def test_removing_one_line_is_trimmed_to_it() -> None:
    sel = Selection.of(OLD, NEW, [[1, 1]], [])
    out = split(OLD, NEW, BEFORE, AFTER, sel, accept=False)
    # the part removes l6 alone: l5 and l7 are its context
    assert out.part == Piece(1, ("l6\n",), (), ("l1\n", "l2\n", "l5\n"), ("l7\n", "l8\n", EDGE))
    # the rest: l5 and l7 go, A-D come; l6 stays
    assert out.rest is not None
    assert stage(OLD, NEW, Selection(frozenset({0, 2}), frozenset(range(4)))) == ("l6\n", *NEW)


def test_a_line_without_its_end_gets_one_when_no_longer_last() -> None:
    old, new = ("x\n", "y"), ("z",)
    assert stage(old, new, Selection(frozenset(), frozenset({0}))) == ("x\n", "y\n", "z")
    crlf = ("a\r\n", "b")
    assert stage(crlf, ("c\r\n",), Selection(frozenset(), frozenset({0}))) == ("a\r\n", "b\r\n", "c\r\n")


# --- a hostile selection: many copies of a long range ------------------


def test_copies_of_a_long_range_cost_the_hunks_size_not_their_product() -> None:
    """MAX_RANGES copies of a 100,000-line range: the old code expanded each copy into the set
    (10^9 insertions, 25-38 s here); merged, it is one pass over the hunk. The bound is generous:
    a loaded machine stays far below it, the old code far above."""
    import time

    old, new = ("x\n",) * 100_000, ("y\n",)
    started = time.monotonic()
    sel = Selection.of(old, new, [[0, len(old) - 1]] * MAX_RANGES, [[0, 0]] * MAX_RANGES)
    assert time.monotonic() - started < 5
    assert sel.whole(old, new) and len(sel.old) == len(old)


def test_too_many_ranges_are_refused_before_any_work() -> None:
    with pytest.raises(BadSelection, match=f"at most {MAX_RANGES} ranges"):
        Selection.of(OLD, NEW, [[0, 0]] * (MAX_RANGES + 1), [])
    with pytest.raises(BadSelection, match=f"at most {MAX_RANGES} ranges"):
        Selection.of(OLD, NEW, [], [[0, 0]] * (MAX_RANGES + 1))
    assert Selection.of(OLD, NEW, [[0, 0]] * MAX_RANGES, []).old == {0}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)).map(sorted), max_size=8))
def test_overlapping_and_unordered_ranges_select_their_union(ranges) -> None:  # type: ignore[no-untyped-def]
    old = ("l\n",) * 10
    expected = {i for first, last in ranges for i in range(first, last + 1)}
    if not expected:
        return
    assert Selection.of(old, (), [list(r) for r in reversed(ranges)], []).old == expected


# --- properties: a split carried out on a file ---------------------------------------------

_line = st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n", "f\n"])
_lines = st.lists(_line, max_size=6).map(tuple)


def _carry_out(file: list[str], at: int, piece: Piece) -> list[str]:
    start = at + piece.offset
    assert tuple(file[start : start + len(piece.old)]) == piece.old, "the piece's old text is where it says"
    return file[:start] + list(piece.new) + file[start + len(piece.old) :]


def _context_fits(file: list[str], at: int, piece: Piece) -> None:
    start = at + piece.offset
    before = [c for c in piece.ctx_before if c is not EDGE]
    after = [c for c in piece.ctx_after if c is not EDGE]
    assert file[start - len(before) : start] == before or not before
    end = start + len(piece.old)
    assert file[end : end + len(after)] == after


@st.composite
def _case(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], Selection]:
    old, new = draw(_lines), draw(_lines)
    if old == new:  # a hunk changes something
        new = (*new, "n\n")
    above = draw(st.lists(_line, max_size=4).map(tuple))
    below = draw(st.lists(_line, max_size=4).map(tuple))
    so = draw(st.frozensets(st.integers(0, max(0, len(old) - 1)), max_size=len(old)))
    sn = draw(st.frozensets(st.integers(0, max(0, len(new) - 1)), max_size=len(new)))
    if not so and not sn:
        so, sn = (frozenset({0}), sn) if old else (so, frozenset({0}))
    return old, new, above, below, Selection(so, sn)


def _ctx(above: tuple[str, ...], below: tuple[str, ...]) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    before: list[str | None] = list(above[-3:])
    if len(above) < 3:
        before.insert(0, EDGE)
    after: list[str | None] = list(below[:3])
    if len(below) < 3:
        after.append(EDGE)
    return tuple(before), tuple(after)


@settings(max_examples=400, deadline=None)
@given(_case())
def test_accepting_the_part_then_the_rest_is_accepting_the_whole(case) -> None:  # type: ignore[no-untyped-def]
    old, new, above, below, sel = case
    before, after = _ctx(above, below)
    file = [*above, *old, *below]
    if stage(old, new, sel) == old:
        with pytest.raises(BadSelection, match="change nothing"):
            split(old, new, before, after, sel, accept=True)
        return
    out = split(old, new, before, after, sel, accept=True)
    at = len(above)
    _context_fits(file, at, out.part)
    with_part = _carry_out(file, at, out.part)
    assert with_part == [*above, *stage(old, new, sel), *below]
    if out.rest is None:
        assert with_part == [*above, *new, *below]
        return
    _context_fits(with_part, at, out.rest)
    assert _carry_out(with_part, at, out.rest) == [*above, *new, *below]
    assert out.rest.old != out.rest.new and out.part.old != out.part.new


@settings(max_examples=400, deadline=None)
@given(_case())
def test_rejecting_the_part_then_accepting_the_rest_is_the_complement(case) -> None:  # type: ignore[no-untyped-def]
    old, new, above, below, sel = case
    before, after = _ctx(above, below)
    file = [*above, *old, *below]
    if stage(old, new, sel) == old:
        return
    out = split(old, new, before, after, sel, accept=False)
    at = len(above)
    if out.rest is None:
        assert sel.whole(old, new) or stage(old, new, sel.complement(old, new)) == old
        return
    _context_fits(file, at, out.rest)
    assert _carry_out(file, at, out.rest) == [*above, *stage(old, new, sel.complement(old, new)), *below]
    # the rejected part is the selection's own change, against the same file
    assert _carry_out(file, at, out.part) == [*above, *stage(old, new, sel), *below]


@settings(max_examples=200, deadline=None)
@given(_case())
def test_the_whole_selection_changes_nothing_of_the_hunk(case) -> None:  # type: ignore[no-untyped-def]
    old, new, _, _, _ = case
    sel = Selection(frozenset(range(len(old))), frozenset(range(len(new))))
    assert stage(old, new, sel) == new
    assert split(old, new, (EDGE,), (EDGE,), sel, accept=True).rest is None
