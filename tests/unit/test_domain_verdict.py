"""Pure rules of the record telling the truth: a tracked position is evidence, an applied hunk's text found or not,
a text found once near its line, and a retried note."""

from stet.domain.anchor import LineIndex, find_applied, insertion_by_one_side, locate
from stet.domain.hunks import context_around
from stet.domain.task import NoteRow, is_retry
from stet.domain.verdict import Verdict, classify

L = [f"l{i}\n" for i in range(20)]
BEFORE, AFTER = tuple(L[2:5]), tuple(L[6:9])  # context of the hunk at line 5


def typed(lines, *at):
    out = list(lines)
    for i in sorted(at, reverse=True):
        out.insert(i, "typed\n")
    return out


def test_tracked_position_decides_whatever_was_typed_around_it():
    doc = typed(L[:5] + ["NEW\n"] + L[6:], 5, 7)  # a line right above and one in the trailing context
    index = LineIndex(doc)
    assert find_applied(index, ("NEW\n",), ("l5\n",), 6, BEFORE, AFTER, tracked=True).line == 6
    # The same text where Stet did not track it: its context (or its uniqueness near its line) decides.
    assert find_applied(index, ("NEW\n",), ("l5\n",), 6, BEFORE, AFTER).line == 6
    assert find_applied(LineIndex(L), ("NEW\n",), ("l5\n",), 5, BEFORE, AFTER, tracked=True) is None


def test_classify_with_a_tracked_hint():
    doc = typed(L, 5, 6)  # lines typed directly above and below the old text "l5"
    assert classify(doc, ("l5\n",), ("NEW\n",), 6, BEFORE, AFTER, tracked=True).outcome == "apply"
    done = typed(L[:5] + ["NEW\n"] + L[6:], 5, 6)
    assert classify(done, ("l5\n",), ("NEW\n",), 6, BEFORE, AFTER, tracked=True).outcome == "done"


def test_an_applied_deletion_is_in_place_while_its_old_text_is_not_back():
    doc = L[:5] + L[6:]
    assert find_applied(LineIndex(doc), (), ("l5\n",), 5, BEFORE, AFTER) is not None
    assert find_applied(LineIndex(L), (), ("l5\n",), 5, BEFORE, AFTER) is None


def test_an_applied_deletion_of_a_repeated_line_is_not_its_copy_come_back():
    # Found by hypothesis: one of two, three, five equal lines deleted. The copy left
    # next to the deletion has all of its context on one side, or less context than the place
    # the line was taken from, or is farther from it: it is not the deleted line back.
    for n in (2, 3, 5):
        base = ["a\n"] * n
        before, after = context_around(base, n - 1, n)
        now = base[:-1]
        assert find_applied(LineIndex(now), (), ("a\n",), n - 1, before, after) is not None, n
        assert find_applied(LineIndex(base), (), ("a\n",), n - 1, before, after) is None, n  # undone


def test_a_text_found_once_near_its_line_without_context():
    doc = typed(L, 5, 6, 7)  # both nearest context lines typed over, the line moved by one
    assert locate(LineIndex(doc), ("l5\n",), 5, BEFORE, AFTER).how == "unique"
    far = ["x\n"] * 40 + doc
    assert locate(LineIndex(far), ("l5\n",), 5, BEFORE, AFTER) is None  # too far from where it was
    twice = doc + ["l5\n"]
    assert locate(LineIndex(twice), ("l5\n",), 5, BEFORE, AFTER) is None  # two places: no guess


def test_a_note_repeated_at_once_is_a_retry():
    last = NoteRow(3, "decision", "Use a queue", "bursts", None, "2026-12-01T10:00:00.000Z", 7)
    now = 1796119200.0 + 30  # 30 s later
    assert is_retry(last, "decision", "Use a queue", "bursts", None, now)
    assert not is_retry(last, "decision", "Use a queue", None, None, now)
    assert not is_retry(last, "decision", "Use a queue", "bursts", None, now + 3600)


def test_a_tracked_pure_insertion_found_just_above_its_anchor_is_done():
    """An insertion's anchor is an empty text: the editor's report of the insertion itself moves
    it below the inserted lines. Seen there, the insertion is done, not to be made again."""
    lines = ["a\n", "b\n", "NEW 1\n", "NEW 2\n", "c\n", "d\n"]
    v = classify(lines, (), ("NEW 1\n", "NEW 2\n"), 4, ("a\n", "b\n"), ("c\n", "d\n"), tracked=True)
    assert (v.outcome, v.line) == ("done", 2)
    # Not there: still to insert, at the tracked place.
    v = classify(["a\n", "b\n", "c\n", "d\n"], (), ("NEW 1\n",), 2, ("a\n", "b\n"), ("c\n", "d\n"), tracked=True)
    assert (v.outcome, v.line) == ("apply", 2)


def test_an_edit_of_a_lost_buffer_is_found_on_the_file_without_the_lines_typed_there():
    # Journaled in a buffer with lines typed right above and below it (its context and line are
    # the buffer's), that buffer lost unsaved: made on the file, which never had those lines.
    buffer = typed(L, 5, 6)
    before, after = context_around(buffer, 6, 7)  # "l5" at line 6 of the buffer
    assert classify(L, ("l5\n",), ("NEW\n",), 6, before, after).outcome == "stale"
    assert classify(L, ("l5\n",), ("NEW\n",), 6, before, after, from_lost_buffer=True) == Verdict("apply", 5)
    made = L[:5] + ["NEW\n"] + L[6:]
    assert classify(made, ("l5\n",), ("NEW\n",), 6, before, after, from_lost_buffer=True) == Verdict("done", 5)
    twice = L[:7] + ["l5\n"] + L[7:]  # two places: no guess
    assert classify(twice, ("l5\n",), ("NEW\n",), 6, before, after, from_lost_buffer=True).outcome == "stale"


def test_a_pure_insertion_of_a_lost_buffer_is_placed_by_its_whole_context_on_one_side():
    buffer = typed(L, 6)  # a line typed right below l5: the insertion goes between l5 and it
    before, after = context_around(buffer, 6, 6)
    assert after[0] == "typed\n"
    assert classify(L, (), ("NEW\n",), 6, before, after).outcome == "stale"
    assert classify(L, (), ("NEW\n",), 6, before, after, from_lost_buffer=True) == Verdict("apply", 6)
    assert insertion_by_one_side(LineIndex(["x\n"] * 40 + L), 6, before, after) is None  # too far
    again = L[:9] + L[3:6] + L[9:]  # the same three lines again below: the nearer place
    assert insertion_by_one_side(LineIndex(again), 6, before, after).line == 6
    assert insertion_by_one_side(LineIndex(again), 9, before, after) is None  # as near: no guess
