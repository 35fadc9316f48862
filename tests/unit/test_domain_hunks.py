"""Hunks from (base, proposed): property tests and the edge cases of line endings."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.anchor import LineIndex, locate
from stet.domain.hunks import EDGE, apply_edits, diff_hunks
from stet.domain.text import split_lines, text_range, utf16_len

LINE = st.sampled_from(["a\n", "b\n", "c\n", "\n", "x = 1\n", "}\n", "d\r\n", "é😀\n", "tail"])
TEXT = st.lists(LINE, max_size=30).map(lambda ls: "".join(ls))


def _apply(base: str, hunks) -> str:
    return "".join(apply_edits(split_lines(base), [(h.start, h.old, h.new) for h in hunks]))


@settings(max_examples=300)
@given(TEXT, TEXT)
def test_all_hunks_turn_base_into_proposed(a, b):
    assert _apply(a, diff_hunks(a, b)) == b


@settings(max_examples=300)
@given(TEXT, TEXT, st.data())
def test_any_subset_then_the_rest_gives_proposed(a, b, data):
    hunks = diff_hunks(a, b)
    chosen = data.draw(st.sets(st.integers(0, max(0, len(hunks) - 1)))) if hunks else set()
    first = [h for i, h in enumerate(hunks) if i in chosen]
    rest = [h for i, h in enumerate(hunks) if i not in chosen]
    middle = _apply(a, first)
    # The rest are found again in the intermediate text by shifting (what an open buffer does) ...
    shifted = []
    for h in rest:
        delta = sum(len(f.new) - len(f.old) for f in first if f.start < h.start or (f.start == h.start and f.old))
        shifted.append((h.start + delta, h.old, h.new))
    assert "".join(apply_edits(split_lines(middle), shifted)) == b
    # ... and by relocating from the lines the store records for them (Stet writes the moved
    # positions of a file's other hunks in the same commit as an applied edit), as a restart does.
    lines = split_lines(middle)
    index = LineIndex(lines)
    located = []
    for (recorded, _, _), h in zip(shifted, rest):
        found = locate(index, h.old, recorded, h.ctx_before, h.ctx_after)
        assert found is not None
        located.append((found.line, h.old, h.new))
    assert "".join(apply_edits(lines, located)) == b


@settings(max_examples=200)
@given(TEXT, TEXT)
def test_hunks_are_maximal_runs_separated_by_unchanged_lines(a, b):
    hunks = diff_hunks(a, b)
    lines = split_lines(a)
    for h1, h2 in zip(hunks, hunks[1:]):
        assert h2.start >= h1.start + len(h1.old) + (1 if h1.old or h2.old else 0) or h2.start > h1.start
    for h in hunks:
        assert h.old or h.new
        assert h.old != h.new
        # The nearest context line is an unchanged line of the base, or the file's edge.
        assert h.ctx_before[-1] == (lines[h.start - 1] if h.start > 0 else EDGE)
        end = h.start + len(h.old)
        assert h.ctx_after[0] == (lines[end] if end < len(lines) else EDGE)


def test_two_changes_one_line_apart_are_two_hunks():
    a = "1\n2\n3\n4\n5\n"
    b = "1\nTWO\n3\nFOUR\n5\n"
    hunks = diff_hunks(a, b)
    assert [(h.start, h.old_text, h.new_text) for h in hunks] == [(1, "2\n", "TWO\n"), (3, "4\n", "FOUR\n")]


def test_adjacent_delete_and_insert_are_one_hunk():
    hunks = diff_hunks("a\nb\nc\n", "a\nX\nY\nc\n")
    assert len(hunks) == 1 and hunks[0].old_text == "b\n" and hunks[0].new_text == "X\nY\n"


def test_no_trailing_newline_change_is_a_hunk_on_the_last_line():
    hunks = diff_hunks("a\nb", "a\nb\n")
    assert [(h.start, h.old, h.new) for h in hunks] == [(1, ("b",), ("b\n",))]
    hunks = diff_hunks("a\nb", "a\nb\nc")
    assert [(h.old, h.new) for h in hunks] == [(("b",), ("b\n", "c"))]


def test_crlf_lines_keep_their_terminators():
    hunks = diff_hunks("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n")
    assert hunks[0].old == ("b\r\n",) and hunks[0].new == ("B\r\n",)


def test_empty_files():
    assert diff_hunks("", "") == []
    (h,) = diff_hunks("", "new\n")
    assert h.start == 0 and h.old == () and h.new == ("new\n",)
    assert h.ctx_before == (EDGE,) and h.ctx_after == (EDGE,)
    (h,) = diff_hunks("gone\n", "")
    assert h.old == ("gone\n",) and h.new == ()


def test_pure_insertion_range_is_empty_at_column_0():
    (h,) = diff_hunks("a\nb\n", "a\nnew\nb\n")
    assert h.old == () and h.start == 1
    assert text_range(split_lines("a\nb\n"), h.start, 0) == ((1, 0), (1, 0))


def test_range_ends_at_end_of_document_without_newline():
    lines = split_lines("a\nlast é😀")
    assert text_range(lines, 1, 1) == ((1, 0), (1, 5 + 3))  # 😀 is two UTF-16 units
    assert utf16_len("é😀") == 3


def test_lsp_line_breaks_only():
    # \u2028, form feed and friends are not line breaks in LSP.
    assert split_lines("a\u2028b\x0cc\rd\r\ne") == ["a\u2028b\x0cc\r", "d\r\n", "e"]


def test_recorded_line_is_trusted_only_with_its_context():
    # Found by hypothesis: after the first hunk is applied, another "a" sits at the second
    # hunk's recorded line; only its context says which "a" is the hunk's.
    a, b = "b\na\n", "a\na\nb\n"
    hunks = diff_hunks(a, b)
    first, rest = hunks[:1], hunks[1:]
    middle = split_lines(_apply(a, first))
    index = LineIndex(middle)
    located = [(locate(index, h.old, h.start, h.ctx_before, h.ctx_after).line, h.old, h.new) for h in rest]
    assert "".join(apply_edits(middle, located)) == b


def test_recorded_line_with_wrong_context_second_example():
    # The CLI engineer's seed: a='a\nb\n', b='b\nb\na\n', first hunk applied first.
    a, b = "a\nb\n", "b\nb\na\n"
    hunks = diff_hunks(a, b)
    middle = split_lines(_apply(a, hunks[:1]))
    index = LineIndex(middle)
    located = [(locate(index, h.old, h.start, h.ctx_before, h.ctx_after).line, h.old, h.new) for h in hunks[1:]]
    assert "".join(apply_edits(middle, located)) == b
