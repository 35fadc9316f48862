"""The presenters: one place turns a hunk into the answer every door sends, and the domain
names no field of an answer."""

from __future__ import annotations

import ast
import json
import pathlib
import re

from stet.domain.capture import Refused, Snapped
from stet.domain.decided import Decided, Split
from stet.domain.model import Hunk, Kind
from stet.domain.proposed import Captured, Proposed
from stet.domain.recovered import Recovered
from stet.domain.status import Status
from stet.domain.task import FileRow, NoteRow, StepRow, TaskListed, TaskPicture, TaskRow, TaskWritten
from stet.present import decision, hunk_json, proposal, restored, task_json, who

SERVER = pathlib.Path(__file__).resolve().parents[2] / "server" / "stet"
# Keys only a HunkState has (a TextEdit has newText, an effect newUri, many answers proposalId).
HUNK_STATE_ONLY = {"inFile", "oldText", "decidedAt", "appliedText", "messageTruncated"}


def built_keys(path: pathlib.Path) -> list[tuple[int, str]]:
    """The string keys a module writes: in dict literals and `x["key"] = ...`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            out += [
                (node.lineno, k.value) for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
        elif (
            isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant)
        ):
            out.append((node.lineno, node.slice.value))
    return out


def modules(under: pathlib.Path) -> list[pathlib.Path]:
    return sorted(under.rglob("*.py"))


def test_no_module_outside_present_builds_a_hunk_state():
    built = [
        f"{p.relative_to(SERVER)}:{line} {key}"
        for p in modules(SERVER)
        if "present" not in p.relative_to(SERVER).parts[:1]
        for line, key in built_keys(p)
        if key in HUNK_STATE_ONLY
    ]
    assert not built, "a HunkState is built outside stet/present: " + ", ".join(built)


def test_the_domain_names_no_field_of_an_answer():
    camel = [
        f"{p.relative_to(SERVER)}:{line} {key}"
        for p in modules(SERVER / "domain")
        for line, key in built_keys(p)
        if isinstance(key, str) and re.fullmatch(r"[a-z]+[A-Z]\w*", key)
    ]
    assert not camel, "camelCase keys (the doors' names) in domain/: " + ", ".join(camel)


def hunk(status: Status = Status.APPLIED, **more) -> Hunk:
    return Hunk(
        id="h1",
        proposal_id="p1",
        task_id="t1",
        seq=0,
        uri="file:///w/a.py",
        kind=Kind.EDIT,
        status=status,
        line=2,
        old=("a\n",),
        new=("b\n", "c😀"),
        ctx_before=(),
        ctx_after=(),
        **more,
    )


def test_a_new_field_of_a_hunk_reaches_every_hunk_shape_from_one_function(monkeypatch):
    """Every shape that carries a hunk's state (the editor's and the CLI's lists, MCP's status
    with its path, a task's context) is built from `hunk_json.state`: a field added there is
    in all of them."""
    plain = hunk_json.state

    monkeypatch.setattr(hunk_json, "state", lambda h: {**plain(h), "newField": 1})
    h = hunk()
    assert hunk_json.states([h])[0]["newField"] == 1
    assert hunk_json.located(h, lambda uri: "a.py")["newField"] == 1
    context = task_json.build_context("t1", None, [], [], [], [h], lambda uri: "a.py")
    assert context["hunks"]["completed"][0]["newField"] == 1
    made = Proposed("p1", (h,), (h,), (h,))
    assert all(proposal.proposed(made)[k][0]["newField"] == 1 for k in ("hunks", "alreadyProposed", "rejectedBefore"))
    assert proposal.captured(Captured(made))["hunks"][0]["newField"] == 1


def test_the_hunk_state_counts_utf16_and_says_in_file_once():
    h = hunk(shows_new=True)
    state = hunk_json.state(h)
    # "c😀": the emoji is two UTF-16 code units.
    assert state["range"] == {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 3}}
    assert state["inFile"] is True and hunk(in_file=False).in_file_state() is False
    assert hunk_json.state(hunk(Status.PENDING))["inFile"] is None
    assert hunk_json.state(hunk(Status.PENDING, kept=True, in_file=False))["inFile"] is False
    assert hunk(Status.PENDING, kept=True).shown_when_loaded() and not hunk(in_file=False).shown_when_loaded()


def test_a_decision_is_a_domain_value_each_door_presents():
    """The review answers what a decision did (hunks, not wire dicts); the answer's shape is
    present/decision.py's: `{hunks}`, plus `notTaken` only when an effect did not take."""
    took = hunk()
    stale = hunk(Status.STALE, problem="pkg is a symlink")
    stale.id = "h2"
    decided = Decided((took, stale))
    assert [(m.hunk.id, m.why) for m in decided.not_taken()] == [("h2", "pkg is a symlink")]
    assert decision.answer(decided) == {
        "hunks": [hunk_json.state(took), hunk_json.state(stale)],
        "notTaken": [{"hunkId": "h2", "status": "stale", "why": "pkg is a symlink"}],
    }
    assert decision.answer(Decided((took,))) == {"hunks": [hunk_json.state(took)]}
    assert decision.split(Split(took, None)) == {"part": hunk_json.state(took), "rest": None}
    assert Split(stale, took).not_taken()[0].hunk is stale


def test_a_proposal_is_a_domain_value_each_door_presents():
    """Proposing answers what it made (hunks, not wire dicts): `{proposalId, hunks,
    alreadyProposed, rejectedBefore}`, plus `notes` only when a patch left something aside."""
    new, again = hunk(Status.PENDING), hunk(Status.ACCEPTED)
    again.id = "h0"
    made = Proposed("p1", (new,), already_proposed=(again,))
    answer = proposal.proposed(made)
    assert list(answer) == ["proposalId", "hunks", "alreadyProposed", "rejectedBefore"]
    assert answer["proposalId"] == "p1" and answer["hunks"] == [hunk_json.state(new)]
    assert answer["alreadyProposed"] == [hunk_json.state(again)] and answer["rejectedBefore"] == []
    noted = proposal.proposed(Proposed("p2", notes=("a.bin: mode change ignored",)))
    assert noted["notes"] == ["a.bin: mode change ignored"] and noted["hunks"] == []


def test_a_capture_says_its_baseline_and_what_it_refused_once_the_agents_side_chose_it():
    """The review's capture knows what it restored and left; the agents' side adds the baseline,
    the files it refused (and why) and `keep`: the keys, in the order the doors always sent them."""
    stored = Captured(Proposed("c-1", (hunk(Status.PENDING),)), restored=("a.py",), left=("b.py",))
    assert proposal.captured(stored) == {**proposal.proposed(stored.proposed), "restored": ["a.py"], "left": ["b.py"]}
    assert stored.proposal_id == "c-1" and stored.hunks == stored.proposed.hunks
    nothing = Captured(Proposed(None), baseline="snapshot", refused=(Refused("big.bin", "too large"),), keep=True)
    answer = proposal.captured(nothing)
    assert list(answer) == [
        "proposalId", "hunks", "alreadyProposed", "rejectedBefore", "restored", "left", "baseline", "refused", "keep"
    ]  # fmt: skip
    assert answer["proposalId"] is None and answer["baseline"] == "snapshot" and answer["keep"] is True
    assert answer["refused"] == [{"path": "big.bin", "why": "too large"}]


TASK = TaskRow("t1", "Title", "The goal", "w1", "open", None, "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", 3)
STEP = StepRow(1, "read a.py", "completed", "2026-01-01T00:00:00.000Z", 4)
NOTE = NoteRow(2, "answer", "yes", None, 1, "2026-01-01T00:00:00.000Z", 5)
READ = FileRow("file:///w/a.py", "sha256:00", "2026-01-01T00:00:00.000Z", 6)


def test_a_task_write_is_kept_in_the_log_and_read_back_the_same():
    """What a task write recorded goes into the operation log as plain data (JSON), and a replay
    reads back the same value: the doors answer it alike both times."""
    writes = [
        TaskWritten("start", "t1", task=TASK, created=True),
        TaskWritten("step", "t1", step=STEP),
        TaskWritten("note", "t1", note=NOTE, repeated=True),
        TaskWritten("read", "t1", files=(READ,)),
        TaskWritten("finish", "t1", task=TASK),
    ]
    for w in writes:
        assert TaskWritten.from_record(json.loads(json.dumps(w.record()))) == w
    rel = lambda uri: uri.rsplit("/", 1)[-1]  # noqa: E731
    start, step, note, read, finish = (task_json.written(w, rel) for w in writes)
    assert start == {"task": task_json.task(TASK), "created": True}
    assert start["task"]["createdAt"] == "2026-01-01T00:00:00.000Z" and "lsn" not in start["task"]
    assert step == {"taskId": "t1", "step": task_json.step(STEP)}
    assert note == {"taskId": "t1", "note": {**task_json.note(NOTE), "answers": 1}, "repeated": True}
    assert read == {
        "taskId": "t1",
        "files": [{"path": "a.py", "uri": READ.uri, "hash": "sha256:00", "exists": True, "readAt": READ.read_at}],
    }
    assert finish == {"task": task_json.task(TASK)}
    # An answer a Stet of before these records kept in the log: answered as it was kept.
    old = {"taskId": "t1", "step": {"n": 1, "text": "x", "status": "pending", "updatedAt": "u"}}
    assert task_json.written(TaskWritten.from_record(old), rel) == old


def test_a_task_list_and_a_task_picture_are_presented_at_the_doors():
    assert task_json.listed([TaskListed(TASK, {"pending": 2})]) == [{**task_json.task(TASK), "counts": {"pending": 2}}]
    h = hunk(Status.PENDING)
    picture = TaskPicture("t1", TASK, (STEP,), (NOTE,), ((READ, None),), (h,))
    rel = lambda uri: "a.py"  # noqa: E731
    assert task_json.context(picture, rel) == task_json.build_context(
        "t1", TASK, [STEP], [NOTE], [(READ, None)], [h], rel
    )


def test_what_a_recovery_found_is_told_the_editor_as_stet_restored():
    found = Recovered(files=2, counts={"pending": 3}, duration_ms=12.5)
    assert restored.restored(found) == {"files": 2, "counts": {"pending": 3}, "durationMs": 12.5}


def test_what_a_snapshot_recorded_is_presented_at_the_doors():
    took = Snapped("t1", True, 3, 2, ("big.bin: larger than the limit",))
    assert proposal.snapped(took) == {
        "taskId": "t1",
        "whole": True,
        "files": 3,
        "new": 2,
        "notes": ["big.bin: larger than the limit"],
    }


def test_the_hunk_state_names_the_agent_where_known_and_bounds_it():
    """`agent`: the name its proposal (else its task) recorded, as `stet integrate` takes it for
    the hooks' captures; absent where nobody said; an agent's name is its own text: bounded."""
    assert "agent" not in hunk_json.state(hunk(Status.PENDING))
    assert hunk_json.state(hunk(Status.PENDING, agent="codex"))["agent"] == "codex"
    long = hunk_json.state(hunk(Status.PENDING, agent="x" * 10_000))["agent"]
    assert len(long) == hunk_json.AGENT_INLINE and long.endswith("…")


def test_a_rejection_sent_back_to_the_agent_is_said_while_it_stands():
    """`sentBack: true` while the rejection that request changes sent back is the hunk's decision:
    an undo, or another rejection since, is not the one sent back."""
    rejected = hunk(Status.REJECTED, feedback="no", decided_at="2026-01-01T00:00:00.000Z")
    assert "sentBack" not in hunk_json.state(rejected)
    rejected.sent_back = rejected.decision
    assert rejected.decision == "rejected 2026-01-01T00:00:00.000Z"
    assert hunk_json.state(rejected)["sentBack"] is True
    rejected.decided_at = "2026-01-02T00:00:00.000Z"  # undone, rejected again: not sent back yet
    assert "sentBack" not in hunk_json.state(rejected)
    pending = hunk(Status.PENDING, sent_back="rejected 2026-01-01T00:00:00.000Z")
    assert "sentBack" not in hunk_json.state(pending) and pending.decision is None


def test_who_decided_and_who_proposed_in_words_for_people():
    """The human-readable doors (`stet status`, `stet show`, the LSP hover) say it in the same
    words as the editor's view; an agent's name is made inert."""
    by_commit = hunk(Status.APPLIED, by_commit="0123456789abcdef0123456789abcdef01234567", agent="claude-code")
    assert who.words(by_commit) == ["accepted by commit 0123456", "proposed by claude-code"]
    sent = hunk(Status.REJECTED, decided_at="t", feedback="no", agent="codex")
    sent.sent_back = sent.decision
    assert who.words(sent) == ["sent back to the agent", "proposed by codex"]
    assert who.words(hunk(Status.PENDING)) == []
    assert who.words(hunk(Status.PENDING, agent="evil\x1b[2J\u202e")) == ["proposed by evil\\x1b[2J\\u202e"]
    # A commit's id is git's (hex): anything else is not shown as one.
    assert who.words(hunk(Status.APPLIED, by_commit="not-a-sha\x1b")) == ["accepted by a commit"]
