"""The line diff behind hunks on inputs with many distinct lines: the anchored (patience)
path, moved blocks, and large files with scattered changes. Correctness only: speed is
measured by `make bench`, never asserted here."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.hunks import apply_edits, changed_regions, diff_hunks

# Many distinct lines, so most are unique and anchor the alignment; a few repeat.
LINE = st.one_of(st.integers(0, 40).map(lambda i: f"line {i}\n"), st.sampled_from(["\n", "}\n", "return\n"]))
LINES = st.lists(LINE, max_size=60)


def _check(a: list[str], b: list[str]) -> None:
    regions = changed_regions(a, b)
    out, pos = [], 0
    for i1, i2, j1, j2 in regions:
        assert i1 >= pos
        assert a[pos:i1] == b[len(out) : len(out) + i1 - pos]  # unchanged lines really match
        out.extend(a[pos:i1])
        out.extend(b[j1:j2])
        pos = i2
    out.extend(a[pos:])
    assert out == b
    for (_, e1, _, f1), (s2, _, t2, _) in zip(regions, regions[1:]):
        assert s2 > e1 and t2 > f1  # separated by at least one unchanged line


@settings(max_examples=400, deadline=None)
@given(LINES, LINES)
def test_regions_rebuild_the_proposed_text(a, b):
    _check(a, b)


@settings(max_examples=200, deadline=None)
@given(LINES, st.data())
def test_edits_of_a_text_rebuild_it(a, data):
    b = list(a)
    for _ in range(data.draw(st.integers(0, 6))):
        at = data.draw(st.integers(0, len(b)))
        kind = data.draw(st.sampled_from(["insert", "delete", "replace", "move"]))
        if kind == "insert":
            b[at:at] = data.draw(st.lists(LINE, min_size=1, max_size=3))
        elif kind == "delete":
            del b[at : at + data.draw(st.integers(1, 3))]
        elif kind == "replace":
            b[at : at + 1] = data.draw(st.lists(LINE, min_size=1, max_size=2))
        else:
            block = b[at : at + 3]
            del b[at : at + 3]
            to = data.draw(st.integers(0, len(b)))
            b[to:to] = block
    _check(a, b)


def test_scattered_changes_in_a_large_file_are_one_hunk_each():
    rnd = random.Random(5)
    a = [f"x{i} = {rnd.randint(0, 9)}\n" if i % 7 else "\n" for i in range(20_000)]
    b = list(a)
    changed = sorted(rnd.sample(range(10, 19_990, 20), 300), reverse=True)
    for k in changed:
        b[k] = f"changed {k}\n"
    hunks = diff_hunks("".join(a), "".join(b))
    assert [h.start for h in hunks] == sorted(changed)
    assert "".join(apply_edits(a, [(h.start, h.old, h.new) for h in hunks])) == "".join(b)


def test_a_moved_block_still_gives_a_valid_diff():
    a = [f"l{i}\n" for i in range(100)]
    b = a[:10] + a[60:70] + a[10:60] + a[70:]
    _check(a, b)
    assert len(changed_regions(a, b)) == 2
