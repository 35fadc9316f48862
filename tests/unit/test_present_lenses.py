"""Code lenses and hover of hunks that start on the same line (present.py): an editor draws all
the lenses of a line as one row, so each hunk's buttons must say whose they are (after
undoing a part, the pending part and the stale rest share a row)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from stet.domain.model import Hunk, Kind
from stet.domain.status import Status
from stet.lsp import present

URI = "file:///x.py"


def _hunk(hid: str, status: Status, line: int = 4, old=("a\n", "b\n"), new=("b\n", "A\n"), **extra: Any) -> Hunk:
    return Hunk(
        id=hid,
        proposal_id="p",
        task_id=None,
        seq=0,
        uri=URI,
        kind=Kind.EDIT,
        status=status,
        line=line,
        old=old,
        new=new,
        ctx_before=(None,),
        ctx_after=(None,),
        message="letters",
        **extra,
    )


def _rows(lenses: list[types.CodeLens]) -> dict[int, list[tuple[str, list[str]]]]:
    """Per line, the per-hunk lenses as (title, hunk ids of the command)."""
    rows: dict[int, list[tuple[str, list[str]]]] = {}
    for lens in lenses:
        assert lens.command is not None
        arg = lens.command.arguments[0] if lens.command.arguments else {}
        if "hunkIds" in arg:
            rows.setdefault(lens.range.start.line, []).append((lens.command.title, arg["hunkIds"]))
    return rows


# After undoing a part: the original is superseded, its part back to pending, its rest stale
# (the rest was listed first, as a store may hold them).
ORIGINAL = _hunk("orig", Status.SUPERSEDED, old=("a\n", "b\n", "c\n"), new=("A\n", "B\n"), parts=("part", "rest"))
PART = _hunk("part", Status.PENDING)
REST = _hunk("rest", Status.STALE, old=("b\n", "A\n"), new=("A\n", "B\n"))


def test_a_part_and_its_stale_rest_on_one_line_say_whose_buttons_they_are() -> None:
    lenses = present.code_lenses([REST, PART], URI, present.split_roles([ORIGINAL, REST, PART]))
    assert _rows(lenses) == {
        4: [
            ("Accept part (-2 +2)", ["part"]),
            ("Reject part", ["part"]),
            ("Reject rest (no longer applies)", ["rest"]),
        ]
    }
    # Still the contract's words first (plain LSP editors pick the lenses by them).
    assert all(lens.command and lens.command.title.startswith(("Accept", "Reject")) for lens in lenses)


def test_unrelated_hunks_on_one_line_are_numbered() -> None:
    insert = _hunk("ins", Status.PENDING, old=(), new=("x\n",))
    edit = _hunk("edit", Status.PENDING)
    rows = _rows(present.code_lenses([insert, edit], URI, {}))
    assert rows[4] == [
        ("Accept change 1 (-0 +1)", ["ins"]),
        ("Reject change 1", ["ins"]),
        ("Accept change 2 (-2 +2)", ["edit"]),
        ("Reject change 2", ["edit"]),
    ]


def test_accepted_and_removed_hunks_on_a_shared_line_are_named_too() -> None:
    accepted = _hunk("acc", Status.ACCEPTED)
    gone = _hunk("gone", Status.APPLIED, in_file=False)
    rows = _rows(present.code_lenses([accepted, gone], URI, {"acc": "part", "gone": "rest"}))
    assert [title for title, _ in rows[4]] == [
        "Accept part (retry applying)",
        "Undo accept of part",
        "Re-apply rest (removed since)",
        "Undo decision on rest",
    ]


def test_a_hunk_alone_on_its_line_keeps_its_titles() -> None:
    far = _hunk("far", Status.STALE, line=20)
    rows = _rows(present.code_lenses([PART, far], URI, {"part": "part", "far": "rest"}))
    assert rows == {
        4: [("Accept (-2 +2)", ["part"]), ("Reject", ["part"])],
        20: [("Reject (no longer applies)", ["far"])],
    }


def test_the_hover_tells_every_hunk_at_the_line_the_open_one_first() -> None:
    for markdown in (True, False):
        hover = present.hover_at([REST, PART], 5, markdown)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        text = hover.contents.value
        assert "hunk `part` · pending" in text or "hunk part · pending" in text
        assert text.index("part") < text.index("rest") and "stale" in text
    alone = present.hover_at([PART], 5)
    assert alone == present.hover(PART)
    assert present.hover_at([PART], 9) is None


def test_the_hover_says_who_decided_and_who_proposed_even_once_decided() -> None:
    """A hunk a commit accepted, or whose rejection was sent back to the agent, is hovered though
    decided, saying so as the editor's view does; the agent's name is made inert and cannot
    write Markdown."""
    by_commit = _hunk("c", Status.APPLIED, by_commit="0123456789abcdef0123456789abcdef01234567", shows_new=True)
    for markdown in (True, False):
        hover = present.hover_at([by_commit], 5, markdown)
        assert hover is not None and "accepted by commit 0123456" in cast_value(hover)
    sent = _hunk("s", Status.REJECTED, feedback="no", decided_at="t", agent="[x](http://evil) \x1b")
    sent.sent_back = sent.decision
    text = cast_value(present.hover_at([sent], 5))
    assert "sent back to the agent" in text and "proposed by \\[x\\]\\(http\\:\\/\\/evil\\) \\\\x1b" in text
    assert present.hover_at([_hunk("r", Status.REJECTED, decided_at="t")], 5) is None, "a plain rejection: not hovered"


def cast_value(hover: types.Hover | None) -> str:
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value
