"""One read model of a hunk: `domain.model.Hunk`, which the review holds, every door presents and
`stet status` prints, including when it only glances at the store (review/glance.py): the glance
reads the same rows into the same class, with the fields the full open gives them."""

from __future__ import annotations

import copy
import inspect
import subprocess
import sys

import pytest

from stet.domain.model import COMPARED, FIELDS, Hunk, Kind
from stet.domain.proposal import TextChange
from stet.domain.status import Decide, Status
from stet.review import open_review
from stet.review.glance import glance
from support.harness import uri, write


def hunk(**fields: object) -> Hunk:
    base: dict[str, object] = dict(
        id="h1",
        proposal_id="p1",
        task_id=None,
        seq=0,
        uri="file:///w/a.py",
        kind=Kind.EDIT,
        status=Status.PENDING,
        line=3,
        old=("a\n",),
        new=("b\n",),
        ctx_before=(None,),
        ctx_after=("c\n",),
    )
    return Hunk(**{**base, **fields})  # type: ignore[arg-type]


def test_a_hunk_is_keyword_only_with_the_defaults_of_a_new_one():
    params = inspect.signature(Hunk).parameters
    assert tuple(params) == FIELDS == Hunk.__slots__  # every field is set by its constructor
    assert {p.kind for p in params.values()} == {inspect.Parameter.KEYWORD_ONLY}
    with pytest.raises(TypeError):
        Hunk("h1", "p1")  # type: ignore[misc]
    h = hunk()
    assert (h.version, h.lsn, h.in_file, h.kept, h.turn, h.shows_new, h.stored_line, h.tracked) == (
        1,
        0,
        None,
        False,
        None,
        False,
        -1,
        False,
    )
    assert not hasattr(h, "__dict__")  # slots: a store may hold 100,000


def test_equal_hunks_are_equal_in_what_is_stored_only():
    a, b = hunk(), hunk()
    assert a == b
    b.shows_new, b.stored_line, b.tracked, b.ctx_key, b.turn = True, 7, True, 5, ("s", 1)
    b.agent = "codex"
    assert a == b  # what this process derived, and the proposal's turn and agent, are not compared
    b.line = 4
    assert a != b
    assert hunk() != hunk(sent_back="rejected t"), "sent back is stored: compared"
    assert hunk() != hunk(feedback="no") and hunk().__eq__(object()) is NotImplemented
    with pytest.raises(TypeError):
        hash(a)  # changed in place: never a set member or a key
    assert set(COMPARED) < set(FIELDS) and FIELDS[len(COMPARED) :] == (
        "turn",
        "agent",
        "shows_new",
        "stored_line",
        "tracked",
        "ctx_key",
    )


def test_a_copy_has_every_field_and_is_its_own():
    a = hunk(turn=("s", 2), shows_new=True, stored_line=3, tracked=True, ctx_key=9)
    for b in (a.copy(), copy.copy(a)):
        assert b is not a and type(b) is Hunk
        assert [getattr(b, f) for f in FIELDS] == [getattr(a, f) for f in FIELDS]
        b.move_to(Status.ACCEPTED)
        assert a.status is Status.PENDING and a.version == 1
    assert repr(a).startswith("Hunk(id='h1', proposal_id='p1'") and "ctx_key=9" in repr(a)


def test_the_status_path_imports_no_dataclasses_typing_or_difflib():
    """What makes a Hunk cheap in `stet status`'s process (a glance builds every hunk)."""
    code = (
        "import sys; import stet.review.glance, stet.store.hunk_layout, stet.cli.review, stet.cli.output; "
        "print(sorted(m for m in ('dataclasses', 'typing', 'difflib', 'asyncio', 'inspect') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


async def test_a_glance_gives_the_hunks_the_full_open_gives(ws):
    """The same class and every field alike, in several statuses, with feedback and a message."""
    db = str(ws / ".stet" / "stet.db")
    write(ws / "c.py", "".join(f"c {i}\n" for i in range(1, 31)))
    review = (await open_review([str(ws)], db, create=True)).review
    try:
        edit = {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}}
        later = {"start": {"line": 20, "character": 0}, "end": {"line": 21, "character": 0}}
        first = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
        changes = [
            TextChange(uri(ws / "a.py"), None, [(edit, "LINE 3\nand more\n")]),
            TextChange(uri(ws / "c.py"), None, [(edit, "C 3\n"), (later, "")]),
            TextChange(uri(ws / "b.txt"), None, [(first, "ALPHA\n")]),
        ]
        ids = [h.id for h in (await review.propose("p1", changes, message="why")).hunks]
        assert len(ids) == 4
        await review.decide(Decide.ACCEPT, [ids[0]])
        await review.decide(Decide.REJECT, [ids[1]], feedback="not this")
    finally:
        await review.close()
    review = (await open_review([str(ws)], db)).review
    try:
        full = review.list()
    finally:
        await review.close()
    seen = glance(db, [str(ws)])
    assert seen is not None and len(seen) == len(full) == 4
    assert {h.status for h in seen} == {Status.APPLIED, Status.REJECTED, Status.PENDING}
    for g, f in zip(seen, full, strict=True):
        assert type(g) is type(f) is Hunk
        assert {n: getattr(g, n) for n in FIELDS} == {n: getattr(f, n) for n in FIELDS}
    assert seen == full and {h.message for h in seen} == {"why"}
