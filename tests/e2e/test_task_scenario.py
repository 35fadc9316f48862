"""The whole story with real processes: an agent worker records its task and proposes over
MCP; the developer reviews in the editor (the real language server); the worker is killed;
a file it read changes; a second worker gets the whole picture from `stet resume`, the MCP
tool and `stet/taskContext`, and re-sends the original change without duplicating anything."""

import asyncio
import os
import time

from support.harness import Session, read, write
from support.workers import Worker, call, mcp_client, stet, stet_json

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))
TASK = "t-shout"
GOAL = "Upper-case lines 2, 5, 8 and 10 of a.py; leave the rest alone."
FEEDBACK = "Keep line 5 as it is: it names a constant that other files import."
ORIGINAL = """\
diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -1,10 +1,10 @@
 line 1
-line 2
+LINE 2
 line 3
 line 4
-line 5
+LINE 5
 line 6
 line 7
-line 8
+LINE 8
 line 9
-line 10
+LINE 10
"""  # worker 1's change, as `git diff` writes it
AS_EDITS = [  # the same change as exact-text edits
    {"path": "a.py", "old_text": f"line {i}\n", "new_text": f"LINE {i}\n"} for i in (2, 5, 8, 10)
]
PLAN = [
    ["start_task", {"title": "Shout the numbers", "goal": GOAL, "task_id": TASK}],
    ["record_files_read", {"task_id": TASK, "paths": ["a.py", "b.txt"]}],
    [
        "record_note",
        {
            "task_id": TASK,
            "text": "Upper-case whole lines, not single words",
            "why": "the developer asked for it in chat",
        },
    ],
    ["record_note", {"task_id": TASK, "kind": "question", "text": "Should line 1 change too?"}],
    ["record_step", {"task_id": TASK, "text": "Read a.py and b.txt", "status": "completed"}],
    ["record_step", {"task_id": TASK, "text": "Propose the upper-casing", "status": "in_progress"}],
    ["propose_patch", {"task_id": TASK, "patch": ORIGINAL, "message": "shout the numbers"}],
    ["propose_edits", {"task_id": TASK, "edits": [{"path": "c.txt", "old_text": "two\n", "new_text": "TWO\n"}]}],
]


async def wait_status(dev: Session, hunk_id: str, status: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        states = {h["id"]: h["status"] for h in await dev.hunks()}
        if states.get(hunk_id) == status:
            return
        assert time.monotonic() < deadline, f"{hunk_id} is {states.get(hunk_id)}, not {status}"
        await asyncio.sleep(0.05)


def ids(items) -> list[str]:
    return [h["id"] for h in items]


async def test_a_new_worker_carries_on_where_a_killed_one_stopped(ws):
    write(ws / "c.txt", "one\ntwo\nthree\n")
    dev = Session(ws)
    await dev.start()
    w1 = Worker(ws, PLAN)
    try:
        # Worker 1 works, through MCP.
        results = await w1.run()
        assert [r["tool"] for r in results] == [p[0] for p in PLAN]
        assert not any(r["isError"] for r in results), results
        first = w1.result("propose_patch")["data"]
        l2, l5, l8, l10 = ids(first["hunks"])
        (c2,) = ids(w1.result("propose_edits")["data"]["hunks"])

        # The developer reviews in the editor: accepts one, rejects one with feedback, edits one
        # before accepting it, leaves one pending; and edits c.txt under the last hunk.
        await dev.command("stet.accept", {"hunkIds": [l2]})
        await dev.command("stet.reject", {"hunkIds": [l5], "feedback": FEEDBACK})
        await dev.command("stet.accept", {"hunkIds": [l8], "text": "Line Eight\n"})
        write(ws / "c.txt", "one\ndeux\nthree\n")
        dev.files_changed(ws / "c.txt")
        await wait_status(dev, c2, "stale")
        assert read(ws / "a.py") == A_TEXT.replace("line 2\n", "LINE 2\n").replace("line 8\n", "Line Eight\n")

        # Worker 1 dies mid-task; then a file it read changes.
        w1.kill()
        assert w1.proc.returncode is not None
        write(ws / "b.txt", "alpha\nbeta, edited by the developer\ngamma\n")
        dev.files_changed(ws / "b.txt")

        # Worker 2, by the command line: the structured picture...
        ctx = stet_json(ws, "resume", TASK)
        assert ctx["task"]["goal"] == GOAL and ctx["task"]["status"] == "open"
        assert [(d["text"], d["why"]) for d in ctx["decisions"]] == [
            ("Upper-case whole lines, not single words", "the developer asked for it in chat")
        ]
        assert [(s["text"], s["status"]) for s in ctx["steps"]] == [
            ("Read a.py and b.txt", "completed"),
            ("Propose the upper-casing", "in_progress"),
        ]
        files = {f["path"]: f for f in ctx["filesRead"]}
        assert files["a.py"]["changedSinceRead"] and files["a.py"]["changedBy"] == "task"
        assert files["b.txt"]["changedSinceRead"] and files["b.txt"]["changedBy"] == "others"
        groups = {k: ids(v) for k, v in ctx["hunks"].items()}
        assert groups == {
            "completed": [l2],
            "staged": [],
            "acceptedWithChanges": [l8],
            "pendingConfirmation": [l10],
            "rejected": [l5],
            "stale": [c2],
            "superseded": [],
            "removedSinceApplied": [],
        }
        assert ctx["hunks"]["rejected"][0]["feedback"] == FEEDBACK
        changed = ctx["hunks"]["acceptedWithChanges"][0]
        assert changed["newText"] == "LINE 8\n" and changed["appliedText"] == "Line Eight\n"
        assert "-LINE 8" in changed["developerChanges"] and "+Line Eight" in changed["developerChanges"]
        assert [q["kind"] for q in ctx["openQuestions"]] == ["question", "stale", "fileChanged"]
        assert ctx["openQuestions"][0]["text"] == "Should line 1 change too?"

        # ... and the same as Markdown, for a person or an LLM.
        done = stet(ws, "resume", TASK)
        assert done.returncode == 0, done.stderr
        md = done.stdout
        if os.environ.get("STET_RESUME_SAMPLE"):  # how docs/tasks.md got its example
            with open(os.environ["STET_RESUME_SAMPLE"], "w") as f:
                f.write(md)
        for needle in (
            f"# Task {TASK}: Shout the numbers",
            GOAL,
            "Upper-case whole lines, not single words (why: the developer asked",
            "`a.py`",
            "only by this task's applied hunks",
            "`b.txt`",
            "**changed since read** by someone else",
            "### Completed (applied: in the files) (1)",
            f"{l2} · applied",
            "### Accepted with the developer's changes (1)",
            "+Line Eight",
            "### Pending confirmation (1)",
            f"{l10} · pending",
            "### Rejected (1)",
            FEEDBACK,
            "### Stale (1)",
            "1. Should line 1 change too?",
        ):
            assert needle in md, needle

        # Worker 2 through MCP and the editor through LSP get the very same picture.
        async with mcp_client(ws) as mcp:
            error, text, data = await call(mcp, "get_task_context", task_id=TASK)
            assert not error and text == md and data == ctx
            assert await dev.request("stet/taskContext", {"taskId": TASK}) == ctx

            # Worker 2 re-sends the whole original patch (it no longer fits a.py as it is: two of
            # its hunks are in): nothing is duplicated, the developer is not asked again, and
            # the rejected hunk comes back flagged with the feedback.
            before = await dev.hunks()
            error, text, again = await call(mcp, "propose_patch", task_id=TASK, patch=ORIGINAL, proposal_id="w2-again")
            assert not error, text
            assert again["hunks"] == []
            assert sorted(ids(again["alreadyProposed"])) == sorted([l2, l8, l10])
            assert ids(again["rejectedBefore"]) == [l5] and again["rejectedBefore"][0]["feedback"] == FEEDBACK
            assert "REJECTED by the developer" in text and FEEDBACK in text
            # The same through the command line, and as exact-text edits.
            (ws / "original.patch").write_text(ORIGINAL)
            by_cli = stet_json(ws, "propose", "--patch", "original.patch", "--task", TASK, "--id", "w2-cli")
            assert by_cli["hunks"] == [] and ids(by_cli["rejectedBefore"]) == [l5]
            error, text, as_edits = await call(
                mcp, "propose_edits", task_id=TASK, edits=AS_EDITS, proposal_id="w2-edits"
            )
            assert not error and as_edits["hunks"] == [] and ids(as_edits["rejectedBefore"]) == [l5]
            assert sorted(ids(as_edits["alreadyProposed"])) == sorted([l2, l8, l10])
            # Sent exactly as before (the same content gives the same proposal): the first answer, current states.
            error, text, replay = await call(mcp, "propose_patch", task_id=TASK, patch=ORIGINAL)
            assert not error and replay["proposalId"] == first["proposalId"]
            assert ids(replay["hunks"]) == [l2, l5, l8, l10] and ids(replay["rejectedBefore"]) == [l5]
        after = await dev.hunks()
        assert len(after) == len(before) == 5
        assert {h["id"]: h["status"] for h in after} == {h["id"]: h["status"] for h in before}
        assert read(ws / "a.py") == A_TEXT.replace("line 2\n", "LINE 2\n").replace("line 8\n", "Line Eight\n")
        assert stet_json(ws, "resume", TASK)["hunks"]["pendingConfirmation"][0]["id"] == l10
    finally:
        if w1.proc.poll() is None:
            w1.kill()
        await dev.stop()
