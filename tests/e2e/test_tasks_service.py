"""The task service over a real store (SQLite and PostgreSQL): durable, idempotent writes and their rules."""

import sqlite3

import pytest

from stet.agents.tasks import Tasks
from stet.domain.proposed import Proposed
from stet.domain.task import TaskPicture, TaskWritten
from stet.errors import Conflict, InvalidParams, OutsideWorkspace, UnknownTask
from stet.present import proposal, task_json
from stet.review import Review
from stet.review import open_review as bootstrap
from stet.store.schema import MIGRATIONS, SCHEMA_VERSION
from support.harness import uri, write


async def open_review(root) -> Review:
    """The review a CLI command gets: the one bootstrap, no editor."""
    return (await bootstrap([str(root)], str(root / ".stet" / "stet.db"))).review


class Answered:
    """The task service as the doors answer: each domain result through its presenter."""

    def __init__(self, tasks: Tasks):
        self.tasks, self.review = tasks, tasks.review

    def __getattr__(self, name):
        method, rel = getattr(self.tasks, name), self.review.ws.rel

        async def call(*args, **kwargs):
            out = await method(*args, **kwargs)
            if isinstance(out, TaskWritten):
                return task_json.written(out, rel)
            if isinstance(out, TaskPicture):
                return task_json.context(out, rel)
            if isinstance(out, Proposed):
                return proposal.proposed(out)
            return task_json.listed(out)

        return call


@pytest.fixture
async def tasks(ws, engine):
    """The task service over each store engine (the contract is the same on both)."""
    review = (await bootstrap([str(ws)], engine.db(ws))).review
    yield Answered(Tasks(review))
    await review.close()


async def test_start_is_idempotent_and_refuses_another_goal_under_the_same_id(tasks):
    first = await tasks.start("Rate limit", "limit login attempts", agent="w1", task_id="t1")
    assert first["created"] and first["task"]["status"] == "open" and first["task"]["agent"] == "w1"
    again = await tasks.start("Rate limit", "limit login attempts", task_id="t1")
    assert not again["created"] and again["task"]["createdAt"] == first["task"]["createdAt"]
    with pytest.raises(Conflict, match="stet resume t1"):
        await tasks.start("Rate limit", "something else", task_id="t1")
    made = await tasks.start("Fix the CSV export!", "quotes in cells")
    assert made["task"]["id"].startswith("t-fix-the-csv-export-") and made["created"]
    again = await tasks.start("Fix the CSV export!", "quotes in cells")  # a retry finds it
    assert again["task"]["id"] == made["task"]["id"] and not again["created"]
    other = await tasks.start("Fix the CSV export!", "commas in cells")
    assert other["task"]["id"] != made["task"]["id"]


async def test_request_ids_replay_the_first_answer_and_write_nothing(tasks, ws):
    await tasks.start("T", "g", task_id="t1")
    a = await tasks.note("t1", "Use a token bucket", why="bursts", request_id="r1")
    b = await tasks.note("t1", "Use a token bucket", why="bursts", request_id="r1")
    assert a == b and a["note"]["n"] == 1
    s1 = await tasks.start("Other", "g", request_id="r-start")
    s2 = await tasks.start("Other", "g", request_id="r-start")
    assert s1 == s2  # the generated id included
    with pytest.raises(Conflict, match="already used for a task.note"):
        await tasks.step("t1", "x", request_id="r1")
    write(ws / "b.txt", "changed\n")
    r1 = await tasks.read("t1", ["b.txt"], request_id="r-read")
    write(ws / "b.txt", "changed again\n")
    r2 = await tasks.read("t1", ["b.txt"], request_id="r-read")
    assert r1 == r2  # the hash first recorded
    ctx = await tasks.context("t1")
    assert len(ctx["decisions"]) == 1 and ctx["filesRead"][0]["changedSinceRead"]


async def test_steps_by_text_or_number(tasks):
    await tasks.start("T", "g", task_id="t1")
    assert (await tasks.step("t1", "Read the handler"))["step"] == {**(await tasks.context("t1"))["steps"][0]}
    await tasks.step("t1", "Write the limiter", "in_progress")
    again = await tasks.step("t1", "Read the handler", "completed")  # the same text: the same step
    assert again["step"]["n"] == 1 and again["step"]["status"] == "completed"
    await tasks.step("t1", status="pending_confirmation", n=2)
    steps = (await tasks.context("t1"))["steps"]
    assert [(s["n"], s["text"], s["status"]) for s in steps] == [
        (1, "Read the handler", "completed"),
        (2, "Write the limiter", "pending_confirmation"),
    ]
    with pytest.raises(InvalidParams, match="no step 7"):
        await tasks.step("t1", status="completed", n=7)
    with pytest.raises(InvalidParams, match="step status"):
        await tasks.step("t1", "x", "done")


async def test_questions_and_answers(tasks):
    await tasks.start("T", "g", task_id="t1")
    q = await tasks.note("t1", "Per IP or per user?", kind="question")
    with pytest.raises(InvalidParams, match="no question number 9"):
        await tasks.note("t1", "per IP", kind="answer", answers=9)
    with pytest.raises(InvalidParams):
        await tasks.note("t1", "per IP", kind="decision", answers=q["note"]["n"])
    ctx = await tasks.context("t1")
    assert [x["kind"] for x in ctx["openQuestions"]] == ["question"]
    await tasks.note("t1", "Per IP", kind="answer", answers=q["note"]["n"])
    ctx = await tasks.context("t1")
    assert ctx["openQuestions"] == [] and ctx["questions"][0]["answer"]["text"] == "Per IP"


async def test_unknown_tasks_paths_outside_and_bad_input_are_refused(tasks, tmp_path):
    with pytest.raises(UnknownTask, match="start it first"):
        await tasks.note("nope", "x")
    with pytest.raises(UnknownTask):
        await tasks.context("nope")
    await tasks.start("T", "g", task_id="t1")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    with pytest.raises(OutsideWorkspace):
        await tasks.read("t1", [str(outside)])
    with pytest.raises(InvalidParams):
        await tasks.note("t1", "   ")
    with pytest.raises(InvalidParams):
        await tasks.finish("t1", "finished")
    done = await tasks.finish("t1", summary="limited")
    assert done["task"]["status"] == "done" and done["task"]["summary"] == "limited"
    assert [t["id"] for t in await tasks.list("done")] == ["t1"]


async def test_a_task_known_only_from_its_hunks_has_a_context(tasks, ws):
    answer = await tasks.review.propose("p1", [], task_id="ghost", message="m")
    assert answer.hunks == ()
    with pytest.raises(UnknownTask):
        await tasks.context("ghost")  # no hunks either
    out = await tasks.propose_text_edits("ghost", [("b.txt", "beta\n", "BETA\n")])
    ctx = await tasks.context("ghost")
    assert ctx["task"] is None and [h["id"] for h in ctx["hunks"]["pendingConfirmation"]] == [out["hunks"][0]["id"]]


async def test_propose_text_edits_creates_files_and_explains_mismatches(tasks, ws):
    await tasks.start("T", "g", task_id="t1")
    out = await tasks.propose_text_edits("t1", [("new/c.txt", "", "hello\n")])
    (h,) = out["hunks"]
    assert h["kind"] == "create" and h["uri"] == uri(ws) + "/new/c.txt" and h["newText"] == "hello\n"
    with pytest.raises(InvalidParams, match="occurs 5 times"):
        await tasks.propose_text_edits("t1", [("b.txt", "a", "A")])
    with pytest.raises(InvalidParams, match="not found"):
        await tasks.propose_text_edits("t1", [("b.txt", "delta\n", "D\n")])
    with pytest.raises(InvalidParams, match="does not exist"):
        await tasks.propose_text_edits("t1", [("missing.txt", "x", "y")])


async def test_migration_2_upgrades_a_version_1_store_in_place(ws):
    db = ws / ".stet" / "stet.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    for statement in MIGRATIONS[0]:
        con.execute(statement)
    con.execute("INSERT INTO proposals VALUES ('p1', 't1', 'bot', NULL, 'e', 'r', 1, '2026-01-01T00:00:00.000Z')")
    con.execute("PRAGMA user_version=1")
    con.commit()
    con.close()
    review = await open_review(ws)
    try:
        tasks = Tasks(review)
        await tasks.start("T", "g", task_id="t1")
        assert (await review.require_store().op("nope")) is None
    finally:
        await review.close()
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2
        assert con.execute("SELECT id FROM proposals").fetchall() == [("p1",)]
        assert con.execute("SELECT id, status FROM tasks").fetchall() == [("t1", "open")]
    finally:
        con.close()
