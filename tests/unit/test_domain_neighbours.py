"""The context of the hunks next to lines Stet wrote, taken again from the text."""

from stet.domain.anchor import LineIndex, locate
from stet.domain.hunks import EDGE, context_around
from stet.domain.neighbours import Neighbour, Written, context_now, refreshed_contexts
from stet.domain.text import split_lines


def _n(key, line, text, lines_before, *, tracked=False):
    """A hunk held at `line`, with the context it had in `lines_before`."""
    return Neighbour(key, line, tuple(text), *context_around(lines_before, line, line + len(text)), tracked)


def test_the_insertion_next_to_an_applied_deletion_sees_the_line_gone():
    # Hypothesis's example: the deletion of "a" (line 2) applied.
    base = split_lines("\nb\na\nc\n\nb\na\n")
    now = split_lines("\nb\nc\n\nb\na\n")
    ins = _n("ins", 1, (), base)
    assert ins.after == ("b\n", "a\n", "c\n")
    fresh = refreshed_contexts(now, [ins], [Written(2, 2, "del")])
    assert fresh == {"ins": ((EDGE, "\n"), ("b\n", "c\n", "\n"))}
    # With it, a line typed above finds the insertion where it belongs (the old context
    # found a place four lines down).
    typed = ["top\n", *now]
    assert locate(LineIndex(typed), (), 1, ins.before, ins.after).line == 5
    assert locate(LineIndex(typed), (), 1, *fresh["ins"]).line == 2


def test_only_hunks_within_reach_of_what_was_written():
    lines = split_lines("".join(f"l{i}\n" for i in range(20)))
    far = _n("far", 10, ["l10\n"], lines)
    near = _n("near", 6, ["l6\n"], lines)
    # Lines 3..4 rewritten (same text, so every context stays true): 'near' is within reach.
    assert refreshed_contexts(lines, [far, near], [Written(3, 5, "w")]) == {}
    changed = [*lines[:3], "X\n", "Y\n", *lines[5:]]
    fresh = refreshed_contexts(changed, [far, near], [Written(3, 5, "w")])
    assert set(fresh) == {"near"} and fresh["near"][0] == ("X\n", "Y\n", "l5\n")
    # Just out of reach: a piece ending three lines above, or starting three lines below.
    assert refreshed_contexts(changed, [_n("n", 8, ["l8\n"], changed)], [Written(3, 5, "w")]) == {}
    assert refreshed_contexts(changed, [_n("n", 0, ["l0\n"], changed)], [Written(4, 5, "w")]) == {}


def test_a_hunk_is_not_its_own_neighbour_and_one_not_in_place_is_left_alone():
    base = split_lines("a\nb\nc\nd\n")
    now = split_lines("a\nB\nc\nd\n")
    assert refreshed_contexts(now, [_n("h", 1, ["B\n"], base)], [Written(1, 2, "h")]) == {}
    # Its text is not at the line held for it: no context is taken from a place it is not.
    lost = Neighbour("lost", 2, ("zzz\n",), ("a\n", "b\n"), ("d\n", EDGE), False)
    assert refreshed_contexts(now, [lost], [Written(1, 2, "other")]) == {}
    # "d", held with its context before "b" was rewritten (by Stet, lines 1..2).
    held = Neighbour("d", 4, ("d\n",), ("a\n", "b\n", "c\n"), (EDGE,), False)
    # A line typed further up, not next to it: its nearest context is there, it is in place.
    typed_above = split_lines("a\nB\ntyped\nc\nd\n")
    assert refreshed_contexts(typed_above, [held], [Written(1, 2, "x")]) == {"d": (("B\n", "typed\n", "c\n"), (EDGE,))}
    # Typed right above it: its nearest context line is neither there nor written by Stet, so
    # its position is in doubt - unless it was followed through every edit of a buffer.
    typed_next = split_lines("a\nB\nc\ntyped\nd\n")
    assert refreshed_contexts(typed_next, [held], [Written(1, 2, "x")]) == {}
    tracked = Neighbour("d", 4, ("d\n",), held.before, held.after, True)
    assert refreshed_contexts(typed_next, [tracked], [Written(1, 2, "x")]) == {
        "d": (("B\n", "c\n", "typed\n"), (EDGE,))
    }


def test_lines_removed_right_next_to_an_insertion_are_neither_for_nor_against_it():
    # Two proposals: an insertion between b and c, and (another proposal) the deletion of c.
    base = split_lines("a\nb\nc\nd\n")
    ins = _n("ins", 2, (), base)
    now = split_lines("a\nb\nd\n")  # c deleted by Stet: the insertion's nearest line after is gone
    assert refreshed_contexts(now, [ins], [Written(2, 2, "del")]) == {"ins": ((EDGE, "a\n", "b\n"), ("d\n", EDGE))}


def test_an_edit_is_journaled_with_the_context_its_text_has_now():
    proposed = split_lines("l1\nl2\nl3\nl4\n")
    now = split_lines("l1\ntyped\nl2\nl3\nmore\nl4\n")
    before, after = context_around(proposed, 1, 2)  # the deletion of l2, as proposed
    assert context_now(now, ("l2\n",), 2, before, after, tracked=False) == (
        (EDGE, "l1\n", "typed\n"),
        ("l3\n", "more\n", "l4\n"),
    )
    # Its text is not where it is held: the proposal's context stays (None).
    assert context_now(now, ("l2\n",), 1, before, after, tracked=False) is None


def test_a_pure_insertion_takes_the_context_of_its_place_only_where_its_place_is_known():
    proposed = split_lines("a\nb\nc\n")
    before, after = context_around(proposed, 1, 1)  # an insertion between a and b
    now = split_lines("x\na\nb\nc\n")  # a line written above: its place moved and was not followed
    assert context_now(now, (), 1, before, after, tracked=False) is None  # x | a: not its place
    assert context_now(now, (), 2, before, after, tracked=False) == ((EDGE, "x\n", "a\n"), ("b\n", "c\n", EDGE))
    # Followed through every edit of a buffer, the place is evidence on its own.
    assert context_now(now, (), 1, before, after, tracked=True) == ((EDGE, "x\n"), ("a\n", "b\n", "c\n"))
