"""The state machine: one table, every pair checked."""

import itertools

import pytest

from stet.domain.model import Hunk, Kind
from stet.domain.status import (
    ACTIONS,
    TRANSITIONS,
    Decide,
    Status,
    TransitionError,
    allowed,
    check,
    moved_by,
    offered,
    plan,
)

ALLOWED = {
    ("pending", "accepted"),
    ("accepted", "applied"),
    ("pending", "rejected"),
    ("pending", "stale"),
    ("accepted", "stale"),
    ("stale", "pending"),
    ("stale", "rejected"),
    ("pending", "superseded"),
    ("accepted", "pending"),
    ("rejected", "pending"),
    ("applied", "pending"),
    ("applied", "stale"),  # docs/protocol.md, additions: an edit lost with an unsaved buffer
    ("stale", "superseded"),  # docs/protocol.md, capture: a kept hunk the agent changed again
}


@pytest.mark.parametrize("frm,to", list(itertools.product(Status, Status)))
def test_every_pair_follows_protocol(frm, to):
    if (frm.value, to.value) in ALLOWED:
        check(frm, to)
    else:
        with pytest.raises(TransitionError) as err:
            check(frm, to, "h1")
        assert "h1" in str(err.value) and frm.value in str(err.value)


def _hunk(status):
    return Hunk(
        id="h1",
        proposal_id="p1",
        task_id=None,
        seq=0,
        uri="file:///a",
        kind=Kind.EDIT,
        status=status,
        line=0,
        old=("a\n",),
        new=("b\n",),
        ctx_before=(),
        ctx_after=(),
        version=3,
    )


@pytest.mark.parametrize("frm,to", list(itertools.product(Status, Status)))
def test_a_hunk_moves_only_along_the_table(frm, to):
    h = _hunk(frm)
    assert allowed(frm, to) == ((frm.value, to.value) in ALLOWED)
    if (frm.value, to.value) in ALLOWED:
        h.move_to(to, "test")
        assert (h.status, h.version) == (to, 4)  # each change a new version
    else:
        with pytest.raises(TransitionError) as err:
            h.move_to(to, "test")
        assert "cannot test hunk h1" in str(err.value)
        assert (h.status, h.version) == (frm, 3)  # refused: unchanged


def test_table_is_exactly_the_protocol():
    assert {(a.value, b.value) for a, b in TRANSITIONS} == ALLOWED


@pytest.mark.parametrize(
    "action,current,expected",
    [
        ("accept", "pending", "accepted"),
        ("accept", "accepted", None),
        ("accept", "applied", None),
        ("accept", "rejected", TransitionError),
        ("accept", "stale", TransitionError),
        ("reject", "pending", "rejected"),
        ("reject", "stale", "rejected"),
        ("reject", "rejected", None),
        ("reject", "accepted", TransitionError),
        ("reject", "applied", TransitionError),
        ("undo", "accepted", "pending"),
        ("undo", "rejected", "pending"),
        ("undo", "applied", "pending"),
        ("undo", "pending", None),
        ("undo", "stale", TransitionError),
        ("undo", "superseded", TransitionError),
    ],
)
def test_actions_set_a_final_state(action, current, expected):
    assert action in ACTIONS
    if expected is TransitionError:
        with pytest.raises(TransitionError):
            plan(action, Status(current))
    else:
        result = plan(action, Status(current))
        assert (result.value if result else None) == expected


@pytest.mark.parametrize(
    ("status", "in_file", "expected"),
    [
        ("pending", None, ["accept", "reject"]),
        ("accepted", None, ["undo"]),
        ("stale", None, ["reject"]),
        ("applied", False, ["reapply", "undo"]),  # its text gone from the file
        ("applied", None, ["undo"]),
        ("rejected", None, ["undo"]),
        ("superseded", None, []),
    ],
)
def test_what_a_status_offers_follows_the_table(status, in_file, expected):
    offers = offered(Status(status), in_file)
    assert [a.value for a in offers] == expected
    for action in offers:  # each moves the hunk as plan does, but reapply, which keeps it applied
        assert action == Decide.REAPPLY or plan(action, Status(status)) is not None
    retried = offered(Status(status), in_file, retry=True)
    assert [a.value for a in retried] == (["accept", "undo"] if status == "accepted" else expected)


def test_a_decision_on_a_whole_scope_takes_what_it_moves_on():
    assert moved_by(Decide.ACCEPT) == [Status.PENDING]
    assert moved_by(Decide.REJECT) == [Status.PENDING, Status.STALE]
    assert moved_by(Decide.REAPPLY) == moved_by(Decide.PULL) == []
