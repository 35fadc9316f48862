"""`Shifts` answers in log time what the effect runner used to compute edit by edit: where a
line lands after a batch of non-overlapping edits, and whether an edit meets a span. Both
must give what the plain loops give, and where a line lands must be where its text really is
once the edits are made, for every batch the effect runner can make."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.hunks import Shifts, apply_edits


def positions_after(edits, line):
    """The plain loop: every edit ending at or above the line moves it, an insertion at the
    line itself too (its lines go above it). (effects.py used to move `line` itself inside the
    loop and compare the next edits' starts with the moved line: after a deletion above, an
    edit further down was missed. Every start is in the coordinates of the text before the
    edits.)"""
    out = line
    for start, src, dst in edits:
        if start + len(src) <= line:
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
    if any(s <= line < s + len(old) for s, old, _ in edits):
        return  # replaced: no place of its own afterwards
    assert made[Shifts(edits).after(line)] == text[line]


def test_an_insertion_at_a_line_moves_it_down_and_one_below_does_not():
    edits = [(2, (), ("a\n", "b\n")), (5, ("x\n",), ())]
    shifts = Shifts(edits)
    assert [shifts.after(n) for n in (0, 1, 2, 3, 5, 6, 9)] == [0, 1, 4, 5, 7, 7, 10]
    assert shifts.landed(0) == 2


def test_an_insertion_at_another_hunk_s_first_line_goes_above_it():
    # Found under load: an undo put `# gap` back at line 4, the first line of another pending hunk
    # (`S = 13`): that hunk's text is now one line down, not where the restored line is.
    text = ["a\n", "b\n", "# gap 1\n", "# gap 2\n", "S = 13\n", "t\n"]
    edits = [(4, (), ("# gap 3\n",))]
    made = apply_edits(text, edits)
    shifts = Shifts(edits)
    assert made[shifts.after(4)] == "S = 13\n"
    assert shifts.after(4) == 5
    # The edit's own new lines begin at the insertion.
    assert made[shifts.landed(0)] == "# gap 3\n"


def test_two_insertions_at_one_line_land_in_their_order_and_above_the_line():
    edits = [(1, (), ("x\n",)), (1, (), ("y\n", "z\n")), (1, ("b\n",), ("B\n",))]
    made = apply_edits(["a\n", "b\n", "c\n"], edits)
    assert made == ["a\n", "x\n", "y\n", "z\n", "B\n", "c\n"]
    shifts = Shifts(edits)
    assert [shifts.landed(k) for k in range(3)] == [1, 2, 4]
    assert shifts.after(2) == 5  # `c`, below them all


@settings(max_examples=1000, deadline=None)
@given(batches())
def test_each_edit_s_new_lines_land_where_it_says(edits):
    text = [f"line {k}\n" for k in range(80)]
    made = apply_edits(text, [(s, tuple(text[s : s + len(old)]), new) for s, old, new in edits])
    shifts = Shifts(edits)
    for k, (_, _, new) in enumerate(edits):
        assert made[shifts.landed(k) : shifts.landed(k) + len(new)] == list(new)
