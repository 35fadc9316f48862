"""Anchors under edits (shift) and after restarts (locate)."""

from dataclasses import dataclass

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stet.domain.anchor import Anchors, LineIndex, locate, text_at
from stet.domain.document import Document
from stet.domain.hunks import EDGE, context_around
from stet.domain.text import split_lines, utf16_len

LINE = st.sampled_from(["a\n", "b\n", "def f():\n", "    return 1\n", "\n", "x😀y\n", "crlf\r\n", "}\n"])
INSERT = st.sampled_from(["", "z", "\n", "new line\n", "two\nlines\n", "mid\npartial", "😀", "\r\n"])


@dataclass
class Item:
    line: int
    length: int

    def anchored_length(self) -> int:
        return self.length


def position(lines, draw):
    line = draw(st.integers(0, len(lines)))
    width = utf16_len(lines[line].rstrip("\r\n")) if line < len(lines) else 0
    return line, draw(st.integers(0, width))


@st.composite
def scenario(draw):
    lines = draw(st.lists(LINE, min_size=1, max_size=25))
    start = draw(st.integers(0, len(lines)))
    length = draw(st.integers(0, len(lines) - start))
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        edits.append((draw(st.data()), draw(INSERT)))
    return lines, start, length, edits


def _edit_range(lines, data):
    a = position(lines, data.draw)
    b = position(lines, data.draw)
    a, b = sorted([a, b])
    return {"start": {"line": a[0], "character": a[1]}, "end": {"line": b[0], "character": b[1]}}


@settings(max_examples=500)
@given(scenario())
def test_an_untouched_anchor_always_sits_on_its_text(sc):
    lines, start, length, edits = sc
    doc = Document("file:///x", "".join(lines), 1)
    text = tuple(lines[start : start + length])
    item = Item(start, length)
    anchors = Anchors()
    anchors.put("h", item)
    touched_ever = False
    for data, insert in edits:
        rng = _edit_range(doc.lines, data)
        edit = doc.apply_change(rng, insert)
        if edit is None:
            return  # the rare \r + \n join: callers relocate everything
        touched_ever |= "h" in anchors.apply(edit)
        if not touched_ever and text:
            assert text_at(doc.lines, text, item.line), (rng, insert, doc.lines, item.line)


@settings(max_examples=500)
@given(scenario())
def test_edits_outside_the_text_never_touch_it(sc):
    lines, start, length, edits = sc
    assume(length > 0)
    doc = Document("file:///x", "".join(lines), 1)
    text = tuple(lines[start : start + length])
    item = Item(start, length)
    anchors = Anchors()
    anchors.put("h", item)
    for data, insert in edits:
        n = len(doc.lines)
        # An edit wholly above (ending at column 0 of the text's first line, leaving it whole)
        # or wholly below (starting at or after the line after the text).
        if data.draw(st.booleans()) and item.line > 0:
            a = data.draw(st.integers(0, item.line - 1))
            b = data.draw(st.integers(a, item.line))
            insert = insert if insert.endswith("\n") or b < item.line else insert + "\n"
            rng = {"start": {"line": a, "character": 0}, "end": {"line": b, "character": 0}}
        else:
            end_line = item.line + length
            if end_line > n or (end_line == n and not doc.lines[-1].endswith(("\n", "\r"))):
                continue
            a = data.draw(st.integers(end_line, n))
            rng = {"start": {"line": a, "character": 0}, "end": {"line": n, "character": 0}}
        edit = doc.apply_change(rng, insert)
        if edit is None:
            continue
        assert "h" not in anchors.apply(edit)
        assert text_at(doc.lines, text, item.line)


def test_typing_inside_makes_it_touched_and_shift_below_moves():
    doc = Document("file:///x", "a\nb\nc\nd\n", 1)
    h, below = Item(1, 1), Item(3, 1)
    anchors = Anchors()
    anchors.put("h", h)
    anchors.put("below", below)
    touched = anchors.apply(
        doc.apply_change({"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 1}}, "X\nY")
    )
    assert touched == {"h"}
    assert doc.lines == ["a\n", "bX\n", "Y\n", "c\n", "d\n"]
    assert below.line == 4


def _ctx(lines, start, length):
    return context_around(lines, start, start + length)


def test_locate_prefers_recorded_line_then_context_never_guesses():
    base = split_lines("x\nfoo\ny\nz\nfoo\nw\n")
    before, after = _ctx(base, 4, 1)  # the second foo: context z / w
    text = ("foo\n",)
    # Recorded line still holds it.
    assert locate(LineIndex(base), text, 4, before, after).how == "recorded"
    # Moved down by two lines: the context picks the second foo, not the nearer first one.
    moved = ["new\n", "new\n"] + base
    found = locate(LineIndex(moved), text, 4, before, after)
    assert found.line == 6 and found.how == "exact"
    # Two places with the very same context: the nearer to the recorded line wins ...
    twin = split_lines("z\nfoo\nw\nz\nfoo\nw\n")
    # (with the more context matching, the better place wins whatever the distance)
    assert locate(LineIndex(twin), text, 2, before, after).line == 4
    before, after = ("z\n",), ("w\n",)
    assert locate(LineIndex(twin), text, 2, before, after).line == 1
    # ... and at equal distance nothing is chosen.
    twin3 = split_lines("z\nfoo\nw\nq\nz\nfoo\nw\n")
    assert locate(LineIndex(twin3), text, 3, before, after) is None


def test_locate_fuzz_and_its_bound():
    base = split_lines("1\n2\n3\nTARGET\n4\n5\n6\n")
    before, after = _ctx(base, 3, 1)
    # Outer context lines changed on both sides: fuzz 2 still finds it.
    changed = split_lines("one\ntwo\n3\nTARGET\n4\nfive\nsix\nextra\n")
    found = locate(LineIndex(changed), ("TARGET\n",), 0, before, after)
    assert found is not None and found.line == 3 and found.how == "fuzz2"
    # The nearest context line on one side changed too: beyond the bound.
    gone = split_lines("one\ntwo\nTHREE\nTARGET\n4\nfive\nsix\n")
    assert locate(LineIndex(gone), ("TARGET\n",), 0, before, after, trust_hint=False) is None


def test_equal_candidates_are_refused():
    before, after = ("a\n",), ("b\n",)
    lines = split_lines("a\nfoo\nb\nq\na\nfoo\nb\n")
    # hint exactly between the two (lines 1 and 5): same score, same distance.
    assert locate(LineIndex(lines), ("foo\n",), 3, before, after, trust_hint=False) is None
    # nearer one wins when distances differ
    assert locate(LineIndex(lines), ("foo\n",), 2, before, after, trust_hint=False).line == 1


def test_pure_insertion_is_located_by_context():
    base = split_lines("a\nb\nc\n")
    before, after = _ctx(base, 2, 0)  # insertion between b and c
    moved = split_lines("top\na\nb\nc\n")
    assert locate(LineIndex(moved), (), 2, before, after).line == 3
    broken = split_lines("a\nb\nX\n")
    assert locate(LineIndex(broken), (), 2, before, after) is None
    empty_before, empty_after = _ctx([], 0, 0)
    assert empty_before == (EDGE,) and empty_after == (EDGE,)
    assert locate(LineIndex([]), (), 0, empty_before, empty_after).line == 0
    assert locate(LineIndex(["now text\n"]), (), 0, empty_before, empty_after) is None


def test_a_pure_insertion_is_taken_at_its_recorded_line_unless_a_place_has_more_context():
    # Hypothesis's example: after the deletion below it was applied, the insertion's
    # context still held the deleted line; its recorded line, with its nearest context line on
    # each side, matches as much of it as the place four lines down, and is taken.
    before, after = (EDGE, "\n"), ("b\n", "a\n", "c\n")
    now = split_lines("\nb\nc\n\nb\na\nz\n")
    found = locate(LineIndex(now), (), 1, before, after)
    assert found is not None and (found.line, found.how) == (1, "recorded")
    # A place with more of its context wins over the recorded line (moved by lines Stet did not see).
    assert locate(LineIndex(split_lines("\nb\nx\n\nb\na\nc\n")), (), 1, before, after).line == 4
    # Not trusted without its nearest context on each side.
    assert locate(LineIndex(split_lines("\nq\nc\n")), (), 1, before, after) is None


UNIQUE = st.lists(st.integers(0, 10_000), min_size=4, max_size=40, unique=True).map(lambda xs: [f"l{x}\n" for x in xs])


@settings(max_examples=400)
@given(UNIQUE, st.data())
def test_relocation_after_outside_edits_finds_the_true_place(lines, data):
    """Edits that leave a hunk's text and nearest context alone never lose or misplace it."""
    start = data.draw(st.integers(0, len(lines) - 1))
    length = data.draw(st.integers(1, min(3, len(lines) - start)))
    text = tuple(lines[start : start + length])
    before, after = context_around(lines, start, start + length)
    new_lines, true_start = list(lines), start
    for _ in range(data.draw(st.integers(1, 4))):
        # Insert or delete lines away from [start-1, end+1): the nearest context survives.
        lo, hi = true_start - 1, true_start + length + 1
        spots = [i for i in range(len(new_lines) + 1) if i < lo or i > hi]
        if not spots:
            break
        at = data.draw(st.sampled_from(spots))
        if data.draw(st.booleans()) or at >= len(new_lines):
            new_lines.insert(at, f"new{data.draw(st.integers(0, 99))}\n")
            if at <= lo:
                true_start += 1
        elif at < lo or at > hi:
            del new_lines[at]
            if at < lo:
                true_start -= 1
    found = locate(LineIndex(new_lines), text, start, before, after)
    assert found is not None and found.line == true_start


@settings(max_examples=300)
@given(st.lists(LINE, max_size=30), st.lists(LINE, min_size=1, max_size=3), st.integers(0, 40), st.data())
def test_relocation_is_deterministic_and_only_ever_points_at_the_text(lines, text, hint, data):
    before = tuple(data.draw(st.lists(LINE, max_size=3)))
    after = tuple(data.draw(st.lists(LINE, max_size=3)))
    text = tuple(text)
    first = locate(LineIndex(lines), text, hint, before, after)
    assert first == locate(LineIndex(list(lines)), text, hint, before, after)
    if first is not None:
        assert text_at(lines, text, first.line)


@settings(max_examples=300)
@given(UNIQUE, st.data())
def test_a_line_typed_right_next_to_the_text_does_not_lose_it(lines, data):
    """Not yet checkpointed: the recorded line is one off and the nearest context on one side
    is the new line. All of the context on the other side still finds the text."""
    start = data.draw(st.integers(0, len(lines) - 1))
    length = data.draw(st.integers(1, min(3, len(lines) - start)))
    text = tuple(lines[start : start + length])
    before, after = context_around(lines, start, start + length)
    above = data.draw(st.booleans())
    at = start if above else start + length
    new_lines = lines[:at] + ["typed\n"] + lines[at:]
    found = locate(LineIndex(new_lines), text, start, before, after)
    assert found is not None and found.line == (start + 1 if above else start)
