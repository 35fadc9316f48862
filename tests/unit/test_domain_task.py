"""Pure task logic: matching re-proposals, files changed since read, carrying a change onto
the file as it is now, and the context a new worker reads."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stet.agents.resume import render
from stet.domain.edits import apply_text_edits
from stet.domain.hunks import diff_hunks
from stet.domain.model import Hunk, Kind
from stet.domain.rebase import ChangeDoesNotFit, line_edits, rebase, replace_text
from stet.domain.status import Status
from stet.domain.task import FileRow, NoteRow, StepRow, TaskRow, content_hash, match_prior
from stet.present.task_json import build_context

BASE = "".join(f"line {i}\n" for i in range(1, 11))
URI = "file:///ws/a.py"


def hunks_of(base: str, result: str, status=Status.PENDING, prefix="h", proposal="p1") -> list[Hunk]:
    out = []
    for i, s in enumerate(diff_hunks(base, result)):
        out.append(
            Hunk(
                id=f"{prefix}{i}",
                proposal_id=proposal,
                task_id="t",
                seq=i,
                uri=URI,
                kind=Kind.EDIT,
                status=status,
                line=s.start,
                old=s.old,
                new=s.new,
                ctx_before=s.ctx_before,
                ctx_after=s.ctx_after,
            )
        )
    return out


def applied(h: Hunk, text: str | None = None) -> Hunk:
    h.status = Status.APPLIED
    if text is not None:
        h.applied_text = tuple(text.splitlines(keepends=True))
    return h


# --- re-proposals ------------------------------------------------------------------------------
def test_match_prior_drops_live_repeats_and_reports_rejected_ones():
    result = BASE.replace("line 2\n", "TWO\n").replace("line 5\n", "FIVE\n").replace("line 8\n", "EIGHT\n")
    prior = hunks_of(BASE, result)
    prior[0].status, prior[1].status, prior[2].status = Status.APPLIED, Status.REJECTED, Status.PENDING
    new = hunks_of(BASE, result.replace("line 10\n", "TEN\n"), prefix="n", proposal="p2")
    create, repeated, rejected = match_prior(new, prior)
    assert [h.new_text for h in create] == ["TEN\n"]
    assert [h.id for h in repeated] == ["h0", "h2"]
    assert [h.id for h in rejected] == ["h1"]


def test_match_prior_is_one_to_one_and_ignores_stale_and_superseded():
    text = "pass\nx\npass\n"
    prior = hunks_of(text, "return\nx\npass\n")  # one "pass" -> "return"
    new = hunks_of(text, "return\nx\nreturn\n", prefix="n")  # the same change in two places
    create, repeated, _ = match_prior(new, prior)
    assert len(create) == 1 and [h.id for h in repeated] == ["h0"]
    for status in (Status.STALE, Status.SUPERSEDED):
        prior[0].status = status
        create, repeated, rejected = match_prior(new, prior)
        assert len(create) == 2 and not repeated and not rejected


def test_match_prior_needs_the_same_old_and_new_text():
    prior = hunks_of(BASE, BASE.replace("line 2\n", "TWO\n"))
    new = hunks_of(BASE, BASE.replace("line 2\n", "Two\n"), prefix="n")
    create, repeated, rejected = match_prior(new, prior)
    assert len(create) == 1 and not repeated and not rejected


# --- carrying a change onto the file as it is now ----------------------------------------------------
EDITS = [("line 2\n", "TWO\n"), ("line 5\n", "FIVE\n"), ("line 8\n", "EIGHT\n")]


def make(text):
    return replace_text(text, EDITS, "a.py")


def test_rebase_takes_applied_hunks_out_and_keeps_only_what_is_new():
    prior = hunks_of(BASE, make(BASE))
    applied(prior[0])
    applied(prior[2], "Eight, as the developer wrote it\n")
    current = BASE.replace("line 2\n", "TWO\n").replace("line 8\n", "Eight, as the developer wrote it\n")
    current = current.replace("line 10\n", "line 10 (developer)\n")  # and something of the developer's own
    text, repeated = rebase(current, [prior[0], prior[2]], make)
    assert text == current.replace("line 5\n", "FIVE\n")
    assert {h.id for h in repeated} == {"h0", "h2"}


def test_rebase_uses_the_current_text_when_the_change_fits_it():
    text, repeated = rebase(BASE, [], make)
    assert text == make(BASE) and repeated == []


def test_rebase_refuses_a_change_that_fits_neither_text():
    with pytest.raises(ChangeDoesNotFit, match="not found"):
        rebase(BASE.replace("line 5\n", "changed\n"), [], make)
    prior = hunks_of(BASE, make(BASE))
    current = BASE.replace("line 2\n", "TWO\n").replace("line 5\n", "someone else\n")
    with pytest.raises(ChangeDoesNotFit, match="edit 2"):
        rebase(current, [applied(prior[0])], make)


def test_rebase_refuses_a_change_overlapping_an_applied_hunk_differently():
    prior = hunks_of(BASE, BASE.replace("line 2\nline 3\n", "TWO\nTHREE\n"))
    current = BASE.replace("line 2\nline 3\n", "TWO\nTHREE\n")
    with pytest.raises(ChangeDoesNotFit, match="overlaps hunk h0"):
        rebase(current, [applied(prior[0])], lambda t: replace_text(t, [("line 2\nline 3\n", "TWO\n3\n")], "a.py"))


def test_replace_text_errors_say_what_to_do():
    with pytest.raises(ChangeDoesNotFit, match="occurs 10 times"):
        replace_text(BASE, [("line", "x")], "a.py")
    with pytest.raises(ChangeDoesNotFit, match="empty oldText"):
        replace_text(BASE, [("", "x")], "a.py")
    assert replace_text("a\r\nb\r\n", [("a\nb\n", "A\nB\n")], "w.txt") == "A\r\nB\r\n"  # the file's own line breaks


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d", "\n", "é\r\n"]), max_size=12),
    st.lists(st.sampled_from(["a\n", "b\n", "x\n", "d", "\n", "é\r\n"]), max_size=12),
)
def test_line_edits_turn_base_into_result(a, b):
    base, result = "".join(a), "".join(b)
    assert apply_text_edits(base, line_edits(base, result)) == result


# --- the context ------------------------------------------------------------------------------
def file_row(text, lsn=1):
    return FileRow(URI, content_hash(text.encode()) if text is not None else None, "2026-01-01T00:00:00.000Z", lsn)


def context_for(hunks, files=(), notes=(), steps=()):
    task = TaskRow("t", "Title", "The goal", "w1", "open", None, "c", "u", 1)
    return build_context("t", task, list(steps), list(notes), list(files), hunks, lambda u: u.rsplit("/", 1)[-1])


def test_files_read_tell_the_task_own_edits_from_others():
    prior = hunks_of(BASE, make(BASE))
    for h in prior:
        h.lsn = 5
    now = BASE.replace("line 2\n", "TWO\n")
    applied(prior[0])
    ctx = context_for(prior, files=[(file_row(BASE, lsn=3), now.encode())])
    (f,) = ctx["filesRead"]
    assert f["changedSinceRead"] and f["changedBy"] == "task"
    ctx = context_for(prior, files=[(file_row(BASE, lsn=3), (now + "more\n").encode())])
    assert ctx["filesRead"][0]["changedBy"] == "others"
    assert ctx["openQuestions"][-1]["kind"] == "fileChanged"
    ctx = context_for(prior, files=[(file_row(BASE, lsn=9), now.encode())])  # read after the hunk applied
    assert ctx["filesRead"][0]["changedBy"] == "others"
    ctx = context_for([], files=[(file_row(BASE), BASE.encode())])
    assert not ctx["filesRead"][0]["changedSinceRead"] and ctx["openQuestions"] == []
    ctx = context_for([], files=[(file_row(BASE), None)])
    assert ctx["filesRead"][0]["changedSinceRead"] and not ctx["filesRead"][0]["exists"]


def test_a_hunk_applied_before_the_read_and_moved_after_it_is_not_taken_back():
    """A hunk's lsn is the last operation that changed its row, a move included: EIGHT, applied
    before the agent read the file, moved when TWO (two lines for one) was applied above it
    after the read. Only TWO is the task's change since the read."""
    later = BASE.replace("line 2\n", "TWO\nTWO b\n")
    two, eight = hunks_of(BASE, later.replace("line 8\n", "EIGHT\n"))
    read = BASE.replace("line 8\n", "EIGHT\n")
    applied(eight).decided_at, applied(two).decided_at = "2025-12-31T23:59:59.000Z", "2026-01-01T00:00:03.000Z"
    eight.line += 1
    two.lsn = eight.lsn = 8  # TWO's effect (lsn 8) recorded where EIGHT moved
    now = later.replace("line 8\n", "EIGHT\n")
    (f,) = context_for([two, eight], files=[(file_row(read, lsn=6), now.encode())])["filesRead"]
    assert f["changedSinceRead"] and f["changedBy"] == "task"
    (f,) = context_for([two, eight], files=[(file_row(read, lsn=6), (now + "more\n").encode())])["filesRead"]
    assert f["changedBy"] == "others"


def test_context_groups_hunks_and_lists_open_questions():
    result = BASE
    for i in (1, 3, 5, 7, 9):
        result = result.replace(f"line {i}\n", f"LINE {i}\n")
    hs = hunks_of(BASE, result)
    hs[0].status = Status.APPLIED
    hs[1].status = Status.ACCEPTED
    applied(hs[2], "Line 5 by the developer\n")
    hs[3].status, hs[3].feedback = Status.REJECTED, "keep it lower case"
    hs[4].status = Status.STALE
    extra = hunks_of(BASE, BASE.replace("line 10\n", "TEN\n"), prefix="x")
    extra[0].status = Status.REJECTED  # without feedback
    pending = hunks_of(BASE, BASE.replace("line 4\n", "FOUR\n"), prefix="p")
    notes = [
        NoteRow(1, "decision", "Upper case", "house style", None, "a", 1),
        NoteRow(2, "question", "All lines?", None, None, "a", 1),
        NoteRow(3, "question", "Tabs?", None, None, "a", 1),
        NoteRow(4, "answer", "No tabs", None, 3, "a", 1),
    ]
    steps = [StepRow(1, "Read", "completed", "a", 1), StepRow(2, "Ask", "pending_confirmation", "a", 1)]
    ctx = context_for(hs + extra + pending, notes=notes, steps=steps)
    groups = {k: [h["id"] for h in v] for k, v in ctx["hunks"].items()}
    assert groups == {
        "completed": ["h0"],
        "staged": ["h1"],
        "acceptedWithChanges": ["h2"],
        "pendingConfirmation": ["p0"],
        "rejected": ["h3", "x0"],
        "stale": ["h4"],
        "superseded": [],
        "removedSinceApplied": [],
    }
    assert "+Line 5 by the developer" in ctx["hunks"]["acceptedWithChanges"][0]["developerChanges"]
    assert [d["text"] for d in ctx["decisions"]] == ["Upper case"]
    assert [q["answer"] for q in ctx["questions"]][1]["text"] == "No tabs"
    kinds = [q["kind"] for q in ctx["openQuestions"]]
    assert kinds == ["question", "stepNeedsConfirmation", "rejectedWithoutFeedback", "stale"]
    assert ctx["openQuestions"][0]["text"] == "All lines?"

    md = render(ctx)
    for needle in (
        "# Task t: Title",
        "## Goal",
        "The goal",
        "Upper case (why: house style)",
        "Tabs? (answered: No tabs; do not ask again)",
        "keep it lower case",
        "### Accepted with the developer's changes (1)",
        "+Line 5 by the developer",
        "### Pending confirmation (1)",
        "### Stale (1)",
        "1. All lines?",
    ):
        assert needle in md, needle
    assert md.index("### Completed") < md.index("### Rejected") < md.index("## Open questions")


def test_render_fences_survive_backticks_and_long_hunks():
    text = "".join(f"```{i}\n" for i in range(100))
    hs = hunks_of(text, text.replace("```5\n", "````five\n"))
    md = render(context_for(hs))
    assert "`````diff" in md
    big = hunks_of(BASE, "".join(f"new {i}\n" for i in range(60)))
    assert "more lines)" in render(context_for(big))
