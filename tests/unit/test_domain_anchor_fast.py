"""Anchors.apply takes inlined fast paths for anchors wholly above or below an edit: they
must move exactly as `shift` moves them, and be touched exactly when `shift` says so."""

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.anchor import Anchors, LineEdit, shift


@dataclass
class Item:
    line: int
    length: int

    def anchored_length(self) -> int:
        return self.length


EDITS = st.builds(
    lambda sl, span, sc0, ec0, breaks, ewb, empty: LineEdit(sl, sc0, sl + span, ec0, breaks, ewb, empty),
    st.integers(0, 30),
    st.integers(0, 4),
    st.booleans(),
    st.booleans(),
    st.integers(0, 3),
    st.booleans(),
    st.booleans(),
)
ITEMS = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 4)), max_size=25)


@settings(max_examples=1000, deadline=None)
@given(ITEMS, EDITS)
def test_apply_is_shift_for_every_anchor(items, edit):
    anchors = Anchors()
    for k, (line, length) in enumerate(items):
        anchors.put(str(k), Item(line, length))
    touched = anchors.apply(edit)
    for k, (line, length) in enumerate(items):
        want_line, want_hit = shift(line, length, edit)
        assert anchors.items[str(k)].line == want_line
        assert (str(k) in touched) == want_hit
