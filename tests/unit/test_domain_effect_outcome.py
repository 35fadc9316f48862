"""The effects' state machine, every case: which hunks an effect still works on, and what
what it found makes of each (every status reached is a transition of the table)."""

import itertools

import pytest

from stet.domain.effect_outcome import Action, Found, Outcome, State, outcome, settled, still_wanted
from stet.domain.model import Kind
from stet.domain.status import TRANSITIONS, Status

P, AC, AP, R, ST, SU = (
    Status.PENDING,
    Status.ACCEPTED,
    Status.APPLIED,
    Status.REJECTED,
    Status.STALE,
    Status.SUPERSEDED,
)

# (action, state the effect was in) -> the statuses of the hunks it still works on
WANTED = {
    ("apply", "pending"): {AC},
    ("apply", "done"): {AC},
    ("apply", "unsaved"): {AP},  # an apply that lived in a buffer lost unsaved: replayed
    ("reapply", "pending"): {AP},
    ("reapply", "done"): {AP},
    ("reapply", "unsaved"): {AP},
    ("revert", "pending"): {P, R, ST, SU},
    ("revert", "done"): {P, R, ST, SU},
    ("revert", "unsaved"): set(Status),  # replayed first, before what was decided since
}

# (action, state, status, found) -> outcome; every case not listed changes nothing
CHANGES = {
    **{("apply", s, AC, "done"): Outcome(AP) for s in State},
    **{("apply", s, AC, "stale"): Outcome(ST) for s in State},
    **{(a, s, AP, "done"): Outcome(back_in_file=True) for a in ("apply", "reapply") for s in State},
    ("apply", "unsaved", AP, "stale"): Outcome(ST),
    **{("reapply", s, AP, "stale"): Outcome(ST) for s in State},
    **{("revert", s, P, "stale"): Outcome(ST) for s in State},
    **{("revert", s, ST, "done"): Outcome(P) for s in State},
}


@pytest.mark.parametrize("action,state,status", list(itertools.product(Action, State, Status)))
def test_what_an_effect_still_works_on(action, state, status):
    assert still_wanted(action, state, status) == (status in WANTED[(action.value, state.value)])


@pytest.mark.parametrize("action,state,status,found", list(itertools.product(Action, State, Status, Found)))
def test_what_an_effect_makes_of_a_hunk(action, state, status, found):
    got = outcome(action, state, status, found)
    assert got == CHANGES.get((action.value, state.value, status, found.value), Outcome())
    if got.to is not None:
        assert (status, got.to) in TRANSITIONS


def test_the_effects_own_state():
    assert settled(complete=True, in_buffer=False) == "done"
    assert settled(complete=True, in_buffer=True) == "unsaved"
    assert settled(complete=False, in_buffer=True) == "pending"
    assert settled(complete=False, in_buffer=False) == "pending"


def test_the_values_are_the_stored_words():
    assert [a.value for a in Action] == ["apply", "reapply", "revert"]
    assert [s.value for s in State] == ["pending", "unsaved", "done"]
    assert [f.value for f in Found] == ["done", "stale"]
    assert [k.value for k in Kind] == ["edit", "create", "rename", "delete"]
