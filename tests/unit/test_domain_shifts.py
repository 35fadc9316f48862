"""`Shifts` answers in log time what the effect runner used to compute edit by edit: where a
line lands after a batch of non-overlapping edits, and whether an edit meets a span. Both
must give what the plain loops give, and where a line lands must be where its text really is
once the edits are made, for every batch the effect runner can make."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.hunks import Shifts, apply_edits


def positions_after(edits, line):
    """The plain loop: every edit ending at or above the line moves it, except an insertion
    at the line itself. (effects.py used to move `line` itself inside the loop and compare the
    next edits' starts with the moved line: after a deletion above, an edit further down was
    missed. Every start is in the coordinates of the text before the edits.)"""
    out = line
    for start, src, dst in edits:
        if start + len(src) <= line and not (start == line and not src):
            out += len(dst) - len(src)
    return out


def touches(edits, line, length):
    return any(start <= line + length and line <= start + len(src) for start, src, _ in edits)


@st.composite
def batches(draw):
    """Edits as the effect runner keeps them: sorted by start, none starting inside the
    previous one (insertions may share a line with each other and with a following edit)."""
    edits = []
    pos = 0
    for _ in range(draw(st.integers(0, 12))):
        start = pos + draw(st.integers(0, 4))
        old = ("x\n",) * draw(st.integers(0, 3))
        new = ("y\n",) * draw(st.integers(0, 3))
        edits.append((start, old, new))
        pos = start + len(old)
    return edits


@settings(max_examples=2000, deadline=None)
@given(batches(), st.integers(0, 60), st.integers(0, 4))
def test_shifts_are_the_plain_loops(edits, line, length):
    shifts = Shifts(edits)
    assert shifts.after(line) == positions_after(edits, line)
    assert shifts.touch(line, length) == touches(edits, line, length)


@settings(max_examples=1000, deadline=None)
@given(batches(), st.integers(0, 60))
def test_a_line_lands_where_its_text_is_after_the_edits(edits, line):
    text = [f"line {k}\n" for k in range(80)]
    made = apply_edits(text, [(s, tuple(text[s : s + len(old)]), new) for s, old, new in edits])
    if any(s <= line < s + len(old) or s == line and not old for s, old, _ in edits):
        return  # replaced (no place of its own afterwards), or the anchor of an insertion
    assert made[Shifts(edits).after(line)] == text[line]


def test_an_insertion_at_a_line_does_not_move_it_but_one_above_does():
    edits = [(2, (), ("a\n", "b\n")), (5, ("x\n",), ())]
    shifts = Shifts(edits)
    assert [shifts.after(n) for n in (0, 2, 3, 5, 6, 9)] == [0, 2, 5, 7, 7, 10]
