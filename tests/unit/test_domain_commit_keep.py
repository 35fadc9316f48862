"""A commit keeps: the pure rule that says whether a kept hunk's new text is in a commit's version
of its file, at its place (domain/commit_keep.py)."""

from stet.domain.commit_keep import first_keeping, kept_in, op_id
from stet.domain.hunks import EDGE, diff_hunks
from stet.domain.model import Hunk, Kind
from stet.domain.status import Status
from stet.domain.text import split_lines

BASE = "".join(f"line {i}\n" for i in range(1, 16))
AGENT = BASE.replace("line 8\n", "line eight\n")


def kept(base: str = BASE, now: str = AGENT, status: Status = Status.PENDING, is_kept: bool = True) -> Hunk:
    (spec,) = diff_hunks(base, now)
    return Hunk(
        id="h1",
        proposal_id="p",
        task_id=None,
        seq=0,
        uri="file:///w/f.txt",
        kind=Kind.EDIT,
        status=status,
        line=spec.start,
        old=spec.old,
        new=spec.new,
        ctx_before=spec.ctx_before,
        ctx_after=spec.ctx_after,
        kept=is_kept,
    )


def fileop(kind: Kind, old: str, new: str) -> Hunk:
    return Hunk(
        id="h2",
        proposal_id="p",
        task_id=None,
        seq=0,
        uri="file:///w/g.txt",
        kind=kind,
        status=Status.PENDING,
        line=0,
        old=tuple(split_lines(old)),
        new=tuple(split_lines(new)),
        ctx_before=(EDGE,),
        ctx_after=(EDGE,),
        kept=True,
    )


def test_the_agents_text_committed_as_it_is_keeps_it():
    assert kept_in(kept(), AGENT)


def test_text_the_developer_changed_before_committing_does_not():
    assert not kept_in(kept(), AGENT.replace("line eight\n", "line 8 (mine)\n"))
    assert not kept_in(kept(), BASE)  # committed without the agent's change
    assert not kept_in(kept(), None)  # the file is not in the commit


def test_found_where_the_file_moved_it_around_the_context():
    assert kept_in(kept(), "new first line\n" + AGENT + "an extra last line\n")


def test_only_a_kept_hunk_waiting_for_review_is_decided_by_a_commit():
    assert not kept_in(kept(is_kept=False), AGENT)  # a pending proposal: its text is not the file's
    for status in (Status.ACCEPTED, Status.APPLIED, Status.REJECTED, Status.STALE, Status.SUPERSEDED):
        assert not kept_in(kept(status=status), AGENT)


def test_file_operations():
    assert kept_in(fileop(Kind.CREATE, "", "hello\n"), "hello\n")
    assert not kept_in(fileop(Kind.CREATE, "", "hello\n"), "hello, edited\n")
    assert not kept_in(fileop(Kind.CREATE, "", "hello\n"), None)
    assert kept_in(fileop(Kind.DELETE, "bye\n", ""), None)
    assert not kept_in(fileop(Kind.DELETE, "bye\n", ""), "bye\n")
    assert kept_in(fileop(Kind.RENAME, "", ""), None, "moved\n")
    assert not kept_in(fileop(Kind.RENAME, "", ""), "still here\n", "moved\n")


def test_the_commit_that_put_it_there():
    assert first_keeping([]) is None
    assert first_keeping([False, True]) is None  # HEAD's version does not hold it
    assert first_keeping([True]) == 0
    assert first_keeping([True, True, False, True]) == 1  # the oldest of the newest run


def test_one_op_id_per_hunk_and_commit():
    assert op_id("h1", "abc") == op_id("h1", "abc")
    assert op_id("h1", "abc") != op_id("h1", "abd") != op_id("h2", "abc")


def test_a_commit_that_holds_the_files_baseline_keeps_none_of_its_hunks():
    """Lines that repeat can show an agent's inserted line at its place in the file as it was
    before the edit (here a commit made before the agent worked): that commit holds the
    baseline there too, so it did not keep the agent's text, and nothing is decided by it.
    The commit of the agent's file keeps each hunk."""
    base, agent = "\nb\na\nc\n\nb\na\n", "a\n\na\nb\nc\n"
    hunks, shift = [], 0
    for i, spec in enumerate(diff_hunks(base, agent)):
        hunks.append(
            Hunk(
                id=f"h{i}",
                proposal_id="p",
                task_id=None,
                seq=i,
                uri="file:///w/f.txt",
                kind=Kind.EDIT,
                status=Status.PENDING,
                line=spec.start + shift,  # where the kept text is in the agent's file
                old=spec.old,
                new=spec.new,
                ctx_before=spec.ctx_before,
                ctx_after=spec.ctx_after,
                kept=True,
            )
        )
        shift += len(spec.new) - len(spec.old)
    assert len(hunks) == 4
    assert [kept_in(h, base) for h in hunks] == [False] * 4
    assert [kept_in(h, agent) for h in hunks] == [True] * 4
