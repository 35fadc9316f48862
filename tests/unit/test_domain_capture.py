"""Capture's pure rules: what the files hold after a capture (`settle`), and the baseline with
what Stet knows to be in the files (`layer`, `layer_files`)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stet.domain.anchor import LineIndex, locate
from stet.domain.capture import kept_anchors, layer, layer_files, settle
from stet.domain.hunks import EDGE, context_around, diff_hunks
from stet.domain.model import Hunk, Kind
from stet.domain.proposal import FileOp, TextChange, plan
from stet.domain.rebase import line_edits
from stet.domain.status import Status
from stet.domain.text import split_lines

LINE = st.sampled_from(["a\n", "b\n", "c\n", "\n", "x = 1\n", "}\n", "d\r\n", "é😀\n", "e\r\n"])
TEXT = st.lists(LINE, max_size=25).map(lambda ls: "".join(ls))
U = "file:///w/f.txt"


def planned(base: str, now: str):
    return plan([TextChange(U, None, line_edits(base, now))], lambda uri, v: base, exact=True)


@settings(max_examples=300)
@given(TEXT, TEXT, st.data())
def test_settle_gives_the_baseline_the_agent_version_or_any_part_between(base, now, data):
    p = planned(base, now)
    assert p.results[U] == now, "exact: the proposal reproduces the agent's bytes, line ends included"
    n = len(p.hunks)
    assert settle(p.hunks, {U: base}, [False] * n) == {U: base}
    assert settle(p.hunks, {U: base}, [True] * n) == {U: now}
    stays = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    middle = settle(p.hunks, {U: base}, stays)[U]
    # Each hunk that stays is in the middle text where it belongs: shifted by those above it.
    lines = split_lines(middle)
    shift = 0
    for h, stay in zip(p.hunks, stays):
        at = h.spec.start + shift
        assert tuple(lines[at : at + len(h.spec.new if stay else h.spec.old)]) == (h.spec.new if stay else h.spec.old)
        shift += len(h.spec.new) - len(h.spec.old) if stay else 0


def hunk(old: str, new: str, line: int, base: str, status=Status.APPLIED, kind="edit", uri=U, new_uri=None) -> Hunk:
    """A hunk as the review stores it: an edit of `base` (found by diffing), or a file operation."""
    if kind != "edit":
        return Hunk(
            id="h",
            proposal_id="p",
            task_id=None,
            seq=0,
            uri=uri,
            kind=Kind(kind),
            status=status,
            line=0,
            old=tuple(split_lines(old)),
            new=tuple(split_lines(new)),
            ctx_before=(EDGE,),
            ctx_after=(EDGE,),
            new_uri=new_uri,
        )
    (spec,) = diff_hunks(base, base.replace(old, new, 1))
    return Hunk(
        id="h",
        proposal_id="p",
        task_id=None,
        seq=0,
        uri=uri,
        kind=Kind(kind),
        status=status,
        line=spec.start,
        old=spec.old,
        new=spec.new,
        ctx_before=spec.ctx_before,
        ctx_after=spec.ctx_after,
    )


BASE = "".join(f"line {i}\n" for i in range(1, 16))


@settings(max_examples=300)
@given(TEXT, TEXT, st.data())
def test_kept_hunks_are_anchored_in_the_text_the_capture_leaves(base, now, data):
    """A kept hunk's line is where its new text is in the file after the capture, and its
    context is that file's: each is found there again from what is recorded."""
    p = planned(base, now)
    stays = [data.draw(st.booleans()) for _ in p.hunks]
    lines = split_lines(settle(p.hunks, {U: base}, stays)[U] or "")
    anchors = kept_anchors(p.hunks, {U: base}, stays)
    assert set(anchors) == {i for i, stay in enumerate(stays) if stay}
    for i, (line, before, after) in anchors.items():
        new = p.hunks[i].spec.new
        assert tuple(lines[line : line + len(new)]) == new
        assert (before, after) == context_around(lines, line, line + len(new))
        assert locate(LineIndex(lines), new, line, before, after).line == line


def test_kept_hunks_next_to_each_other_see_each_other_s_new_text():
    # Hypothesis's example, kept: the second insertion's context is the file's.
    base, now = "\nb\na\nc\n\nb\na\n", "a\n\na\nb\nc\n"
    p = planned(base, now)
    anchors = kept_anchors(p.hunks, {U: base}, [True] * len(p.hunks))
    assert [anchors[i][0] for i in range(4)] == [0, 2, 4, 5]
    assert anchors[1][1:] == ((EDGE, "a\n", "\n"), ("b\n", "c\n", EDGE))


def test_layer_puts_accepted_edits_in_and_takes_a_review_s_own_kept_edits_out():
    accepted = hunk("line 3\n", "LINE 3\n", 2, BASE)
    assert layer(BASE, [accepted], []) == BASE.replace("line 3\n", "LINE 3\n")
    # Already in the baseline (a snapshot taken after the accept): nothing changes.
    assert layer(BASE.replace("line 3\n", "LINE 3\n"), [accepted], []) == BASE.replace("line 3\n", "LINE 3\n")
    kept = hunk("line 9\n", "NINE\n", 8, BASE, Status.PENDING)
    assert layer(BASE.replace("line 9\n", "NINE\n"), [], [kept]) == BASE
    # A pure insertion goes where its context is.
    insertion = hunk("line 5\n", "line 5\nnew\n", 4, BASE)
    assert layer(BASE, [insertion], []) == BASE.replace("line 5\n", "line 5\nnew\n")
    # A hunk whose text is nowhere: the baseline stays what it was.
    assert layer("other\n", [accepted], []) == "other\n"


def test_layer_files_moves_created_deleted_and_renamed_files():
    other = "file:///w/g.txt"
    create = hunk("", "made\n", 0, "", kind="create")
    delete = hunk("bye\n", "", 0, "", kind="delete", uri=other)
    assert layer_files({U: None, other: "bye\n"}, [create, delete], []) == {U: "made\n", other: None}
    rename = hunk("", "", 0, "", kind="rename", uri=U, new_uri=other)
    assert layer_files({U: "text\n", other: None}, [rename], []) == {U: None, other: "text\n"}
    assert layer_files({U: None, other: "text\n"}, [], [rename]) == {U: "text\n", other: None}
    # Only what fits: a create over a file that exists is not layered.
    assert layer_files({U: "mine\n"}, [create], []) == {U: "mine\n"}


def test_settle_of_file_operations():
    new, old = "file:///w/new.txt", "file:///w/old.txt"
    changes = [
        FileOp("create", new),
        TextChange(new, None, [({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "hi\n")]),
        FileOp("delete", old),
    ]
    p = plan(changes, lambda uri, v: {old: "bye\n"}.get(uri), exact=True)
    bases = {new: None, old: "bye\n"}
    assert settle(p.hunks, bases, [False, False]) == {new: None, old: "bye\n"}
    assert settle(p.hunks, bases, [True, True]) == {new: "hi\n", old: None}
    moved = "file:///w/moved.txt"
    p = plan(
        [FileOp("rename", old, moved), TextChange(moved, None, line_edits("bye\n", "BYE\n"))],
        lambda uri, v: {old: "bye\n"}.get(uri),
        exact=True,
    )
    kinds = [h.kind for h in p.hunks]
    assert kinds == ["rename", "edit"]
    assert settle(p.hunks, {old: "bye\n", moved: None}, [False, False]) == {moved: None, old: "bye\n"}
    assert settle(p.hunks, {old: "bye\n", moved: None}, [True, True]) == {old: None, moved: "BYE\n"}
    assert settle(p.hunks, {old: "bye\n", moved: None}, [True, False]) == {old: None, moved: "bye\n"}
