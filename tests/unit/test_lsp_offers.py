"""What a plain LSP editor is offered on hunks (code lenses, code actions) is what
domain/status.py offers for their statuses, as the decision commands of the operations table."""

from stet.domain.model import Hunk, Kind
from stet.domain.status import Status, offered
from stet.lsp import present


def hunk(i, status, kind=Kind.EDIT, **more):
    return Hunk(
        id=f"h{i}",
        proposal_id="p",
        task_id=None,
        seq=i,
        uri="file:///x",
        kind=kind,
        status=status,
        line=i * 10,
        old=("a\n",),
        new=("b\n", "c\n"),
        ctx_before=(None,),
        ctx_after=(None,),
        **more,
    )


HUNKS = [
    hunk(1, Status.PENDING),
    hunk(2, Status.PENDING, kept=True, shows_new=True),
    hunk(3, Status.PENDING, kind=Kind.CREATE),
    hunk(4, Status.ACCEPTED),
    hunk(5, Status.STALE),
    hunk(6, Status.APPLIED, in_file=False),
    hunk(7, Status.APPLIED, in_file=True),  # not shown: nothing offered
    hunk(8, Status.REJECTED),
    hunk(9, Status.SUPERSEDED),
]


def test_code_lenses():
    lenses = [(c.range.start.line, c.command.title, c.command.command) for c in present.code_lenses(HUNKS, "u")]
    assert lenses == [
        (0, "Accept all (3)", "stet.acceptFile"),
        (0, "Reject all (4)", "stet.rejectFile"),
        (10, "Accept (-1 +2)", "stet.accept"),
        (10, "Reject", "stet.reject"),
        (20, "Accept (keep: -1 +2)", "stet.accept"),
        (20, "Reject (put the old text back)", "stet.reject"),
        (30, "Accept (create this file)", "stet.accept"),
        (30, "Reject", "stet.reject"),
        (40, "Accept (retry applying)", "stet.accept"),
        (40, "Undo accept", "stet.undo"),
        (50, "Reject (no longer applies)", "stet.reject"),
        (60, "Re-apply (removed since)", "stet.reapply"),
        (60, "Undo decision", "stet.undo"),
    ]
    for h in HUNKS:
        mine = [c.command.command for c in present.code_lenses([h], "u")]
        assert mine == [f"stet.{a}" for a in offered(h.status, h.in_file, retry=True)] if h.shown else not mine


def test_code_actions():
    actions = present.code_actions(HUNKS, "u", 0, 100, None, (10, 10))
    assert [(a.title, a.command.command, a.is_preferred) for a in actions] == [
        ("Stet: accept selected lines", "stet.acceptLines", None),
        ("Stet: reject selected lines", "stet.rejectLines", None),
        ("Stet: accept this change (-1 +2 lines)", "stet.accept", True),
        ("Stet: reject this change", "stet.reject", None),
        ("Stet: accept this change (-1 +2 lines)", "stet.accept", True),
        ("Stet: reject this change", "stet.reject", None),
        ("Stet: accept this change (create this file (2 lines))", "stet.accept", True),
        ("Stet: reject this change", "stet.reject", None),
        ("Stet: undo accepting this change", "stet.undo", None),
        ("Stet: reject this change", "stet.reject", None),
        ("Stet: re-apply this accepted change (it was removed from the file)", "stet.reapply", True),
        ("Stet: undo the decision (back to pending; nothing is reverted)", "stet.undo", None),
        ("Stet: accept all changes in this file (3)", "stet.acceptFile", None),
        ("Stet: reject all changes in this file", "stet.rejectFile", None),
    ]
    for h in HUNKS:
        mine = [a.command.command for a in present.code_actions([h], "u", 0, 100, None)]
        assert mine == [f"stet.{a}" for a in offered(h.status, h.in_file)] if h.shown else not mine
