"""Which decisions did not take effect, judged by where the hunk ended."""

from stet.domain.status import STALE_WHY, Status, why_not_taken


def test_a_stale_hunk_did_not_take_and_says_why():
    assert why_not_taken(Status.STALE, "pkg is a symlink") == "pkg is a symlink"
    assert why_not_taken(Status.STALE, None) == STALE_WHY


def test_an_accepted_edit_waiting_for_a_reason_did_not_take():
    why = "waiting to be written: No space left on device"
    assert why_not_taken(Status.ACCEPTED, why) == why


def test_what_the_decision_asked_for_took():
    for status in (Status.APPLIED, Status.PENDING, Status.REJECTED):
        assert why_not_taken(status, None) is None
    # In flight in an editor's buffer: the editor confirms it later.
    assert why_not_taken(Status.ACCEPTED, None) is None
