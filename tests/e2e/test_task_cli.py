"""`stet task ...` and `stet resume` as real processes: output, JSON, replays, exit codes."""

import json

from support.workers import stet, stet_json


def test_a_task_from_the_command_line(ws):
    done = stet(ws, "task", "start", "Capitalise b", "--goal", "BETA in b.txt", "--agent", "cli-bot")
    assert done.returncode == 0, done.stderr
    task = done.stdout.strip()
    assert task.startswith("t-capitalise-b-")
    assert (ws / ".stet" / "stet.db").is_file()  # the first command makes the store
    assert (
        stet(ws, "task", "step", task, "Read b.txt", "--status", "completed").stdout.strip()
        == "step 1 [completed] Read b.txt"
    )
    assert stet(ws, "task", "step", task, "Capitalise").returncode == 0
    assert (
        stet(ws, "task", "step", task, "--n", "2", "--status", "in_progress").stdout.strip()
        == "step 2 [in_progress] Capitalise"
    )
    assert (
        stet(ws, "task", "note", task, "Only beta", "--why", "the developer said so").stdout.strip()
        == "decision 1 recorded"
    )
    assert stet(ws, "task", "note", task, "Also gamma?", "--question").stdout.strip() == "question 2 recorded"
    (ws / "sub").mkdir()
    read = stet(ws / "sub", "task", "read", task, "../b.txt")  # paths are relative to where you are
    assert read.returncode == 0 and read.stdout.startswith("b.txt  sha256:")
    listed = stet(ws, "task", "list")
    assert task in listed.stdout and "open" in listed.stdout
    md = stet(ws, "resume", task).stdout
    assert "## Goal\n\n> BETA in b.txt" in md and "Only beta (why: the developer said so)" in md
    assert "2. Also gamma? (open)" in md and "### In progress\n\n2. Capitalise" in md
    ctx = stet_json(ws, "resume", task)
    assert ctx["task"]["agent"] == "cli-bot" and ctx["filesRead"][0]["path"] == "b.txt"
    assert stet(ws, "task", "done", task, "--summary", "nothing to do").stdout.strip() == f"task {task} is done"
    assert stet_json(ws, "task", "list", "--status", "done")["tasks"][0]["summary"] == "nothing to do"


def test_request_ids_make_commands_safe_to_repeat(ws):
    assert stet(ws, "task", "start", "T", "--id", "t1").returncode == 0
    first = stet_json(ws, "task", "note", "t1", "Use a queue", "--request-id", "r-1")
    again = stet_json(ws, "task", "note", "t1", "Use a queue", "--request-id", "r-1")
    assert first == again
    assert len(stet_json(ws, "resume", "t1")["decisions"]) == 1
    again = stet(ws, "task", "start", "T", "--id", "t1")
    assert again.returncode == 0 and again.stdout == "t1\n" and "already started" in again.stderr


def test_exit_codes(ws):
    missing = stet(ws, "resume", "t1")
    assert missing.returncode == 2 and "no Stet store found" in missing.stderr
    assert stet(ws, "task", "start", "T", "--id", "t1").returncode == 0
    unknown = stet(ws, "task", "note", "nope", "x", "--json")
    assert unknown.returncode == 1 and json.loads(unknown.stdout)["error"]["name"] == "UnknownTask"
    assert stet(ws, "resume", "nope").returncode == 1
    conflict = stet(ws, "task", "start", "Another title", "--id", "t1")
    assert conflict.returncode == 1 and "stet resume t1" in conflict.stderr
    assert stet(ws, "task", "step", "t1", "x", "--status", "finished").returncode == 2  # usage
    bad = stet(ws, "task", "step", "t1", "--n", "3", "--status", "completed")
    assert bad.returncode == 2 and "no step 3" in bad.stderr
    outside = stet(ws, "task", "read", "t1", "/etc/hostname")
    assert outside.returncode == 2 and "OutsideWorkspace" in outside.stderr


PATCH = """\
--- a/b.txt
+++ b/b.txt
@@ -1,3 +1,3 @@
 alpha
-beta
+BETA
 gamma
"""


def test_a_patch_that_fits_neither_the_files_nor_the_task_history_is_refused(ws):
    assert stet(ws, "task", "start", "T", "--id", "t1").returncode == 0
    (ws / "b.txt").write_text("alpha\nbeta, changed\ngamma\n")
    (ws / "p.patch").write_text(PATCH)
    for task in ([], ["--task", "t1"]):
        refused = stet(ws, "propose", "--patch", "p.patch", *task)
        assert refused.returncode == 2 and "does not match the patch" in refused.stderr, refused.stderr
    assert stet_json(ws, "status", "--all")["hunks"] == []


def test_a_re_proposal_from_the_terminal_says_what_was_rejected_and_why(ws):
    assert stet(ws, "task", "start", "T", "--id", "t1").returncode == 0
    (ws / "p.patch").write_text(PATCH)
    (hunk,) = stet_json(ws, "propose", "--patch", "p.patch", "--task", "t1", "--id", "first")["hunks"]
    assert stet(ws, "reject", hunk["id"], "--feedback", "beta stays lower case").returncode == 0
    again = stet(ws, "propose", "--patch", "p.patch", "--task", "t1", "--id", "second")
    assert again.returncode == 0 and "proposal second: 0 hunk(s)" in again.stdout
    assert (
        f"rejected before by the developer, not proposed again: {hunk['id']} b.txt: beta stays lower case"
        in again.stdout
    )
    assert len(stet_json(ws, "status", "--all")["hunks"]) == 1
