"""A review with a bit of everything, made through the real `stet` command line in a folder: the
store the migration tests open (make_store_v8.py, with Stet 8's own code) and the one the tests
of a moved, copied or mounted project carry along (tests/e2e/test_moved.py, with this one).

In `root`, a git repository: a task with a step, a note and a file read; hunks pending, applied,
rejected, stale, split into parts (the part applied, the rest pending), accepted and undone, kept
by a capture (with its snapshot); file operations (a create and a rename applied, a delete
pending); a snapshot waiting for its capture; a hunk whose text holds the project's own uri. `expected` holds what was answered: every hunk
(`stet status --all --json`), the op log, the decisions' answers by request id, the task's
resume and the files."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Run = Callable[..., subprocess.CompletedProcess]  # run(*args, env=None, check=True) in the root


def _git(root: Path, *args: str, input: str | None = None) -> str:
    who = ("-c", "user.email=t@example.invalid", "-c", "user.name=t")
    p = subprocess.run(["git", *who, *args], cwd=root, input=input, capture_output=True, text=True)
    return p.stdout


def build(root: Path, run: Run) -> dict:
    """Make the review in `root` (a new folder) with `run`; returns what was answered."""

    def js(*args: str) -> dict:
        p = run(*args, "--json")
        return json.loads(p.stdout)

    root.mkdir(parents=True)
    files = {
        "a.py": "".join(f"a{i} = {i}\n" for i in range(1, 31)),
        "d.py": "d1\nd2\nd3\n",
        "c.py": "c1\nc2\nc3\n",
        "b.txt": "alpha\nbeta\n",
        "old.txt": "old\n",
        "gone.txt": "gone\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    _git(root, "init", "-q", ".")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    answers: dict[str, object] = {}
    answers["r-task"] = js("task", "start", "--id", "t1", "--goal", "louder", "Shout", "--request-id", "r-task")
    answers["r-step"] = js("task", "step", "t1", "edit a.py", "--request-id", "r-step")
    answers["r-note"] = js("task", "note", "t1", "capitals", "--why", "louder", "--request-id", "r-note")
    answers["r-read"] = js("task", "read", "t1", "a.py", "--request-id", "r-read")

    new = files["a.py"].splitlines(keepends=True)
    for i in (1, 7, 13, 25):
        new[i] = new[i].upper()
    new[19], new[20] = "A20 = 20\n", "A21 = 21\n"  # two lines: one accepted apart (parts)
    diff = _git(root, "diff", "--no-index", "--", "a.py", "-", input="".join(new)).replace("b/-", "b/a.py")
    (root.parent / "a.diff").write_text(diff)
    run("propose", "--patch", str(root.parent / "a.diff"), "--task", "t1", "--id", "p-a", "-m", "shout")

    uri = root.as_uri()
    start = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    edit = {
        "documentChanges": [
            {"kind": "create", "uri": f"{uri}/new.txt"},
            {
                "textDocument": {"uri": f"{uri}/new.txt", "version": None},
                "edits": [{"range": start, "newText": "made\n"}],
            },
            {"kind": "rename", "oldUri": f"{uri}/old.txt", "newUri": f"{uri}/renamed.txt"},
            {"kind": "delete", "uri": f"{uri}/gone.txt"},
        ]
    }
    (root.parent / "files.json").write_text(json.dumps(edit))
    run("propose", "--edit", str(root.parent / "files.json"), "--id", "p-files", "-m", "files")

    (root.parent / "d.diff").write_text("--- a/d.py\n+++ b/d.py\n@@ -1,3 +1,3 @@\n d1\n-d2\n+D2\n d3\n")
    run("propose", "--patch", str(root.parent / "d.diff"), "--id", "p-d")
    (root / "d.py").write_text("d1\nX\nd3\n")  # its old text gone: stale at the next look

    # A text that holds the project's own uri: text, never taken for a path (read back as written).
    (root / "links.txt").write_text(f"top\n{uri}/a.py\n{uri}/c.py\nbottom\n")
    (root.parent / "links.diff").write_text(
        f"--- a/links.txt\n+++ b/links.txt\n@@ -1,4 +1,4 @@\n top\n-{uri}/a.py\n+{uri}/b.txt\n {uri}/c.py\n bottom\n"
    )
    run("propose", "--patch", str(root.parent / "links.diff"), "--id", "p-links")

    answers["r-snap"] = js("snapshot", "--task", "t2", "c.py", "--request-id", "r-snap")
    (root / "c.py").write_text("c1\nC2\nc3\n")  # the agent's write
    answers["c-cap"] = js("capture", "--task", "t2", "--keep", "--id", "c-cap", "-m", "captured")
    js("snapshot", "--task", "t3", "b.txt", "--request-id", "r-snap-3")  # waits for a capture

    hunks = js("status", "--all")["hunks"]
    by = {(h["uri"].rsplit("/", 1)[1], h["kind"], h["range"]["start"]["line"]): h["id"] for h in hunks}
    a1, a2, a3, a4, a5 = (by[("a.py", "edit", n)] for n in (1, 7, 13, 19, 25))
    create, rename = by[("new.txt", "create", 0)], by[("old.txt", "rename", 0)]
    answers["r-accept-1"] = js("accept", a1, "--request-id", "r-accept-1")
    answers["r-reject-2"] = js("reject", a2, "--feedback", "keep it low", "--request-id", "r-reject-2")
    answers["r-part-4"] = js("accept", a4, "--old", "1", "--new", "1", "--request-id", "r-part-4")
    answers["r-accept-5"] = js("accept", a5, "--request-id", "r-accept-5")
    answers["r-undo-5"] = js("undo", a5, "--request-id", "r-undo-5")
    answers["r-files"] = js("accept", create, rename, "--request-id", "r-files")
    return {
        "root": str(root),
        "ids": {"a1": a1, "a2": a2, "a3": a3, "a4": a4, "a5": a5, "create": create, "rename": rename},
        "answers": answers,
        "status": js("status", "--all"),
        "log": js("log"),
        "resume": js("resume", "t1"),
        "files": {p.name: p.read_text() for p in sorted(root.iterdir()) if p.is_file()},
    }


def kill_an_accept(run: Run, expected: dict) -> None:
    """Last: an accept killed right after its commit (accepted, its edit journaled, not made)."""
    killed = run(
        "accept",
        expected["ids"]["a3"],
        "--request-id",
        "r-accept-3",
        env={"STET_FAULT": "decide:after-commit"},
        check=False,
    )
    if killed.returncode != -9:
        raise AssertionError(f"the accept was not killed: {killed.returncode} {killed.stderr}")
