"""The `stet` CLI through real processes, with patches made by real `git diff` of real edits."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from stet.workspace.safe import temp_name
from support import clitools
from support.clitools import STET as STET_CMD
from support.clitools import commit_all, db_summary, git, make_repo, snapshot, stet, stet_json

BASE = {
    "src/app.py": b"".join(b"line %d\n" % i for i in range(1, 31)),
    "crlf.txt": b"alpha\r\nbeta\r\ngamma\r\ndelta\r\n",
    "nonl.txt": b"first\nsecond\nlast",
    "notes.md": b"# Notes\n\nkeep\n",
}
EDITED = {
    "src/app.py": BASE["src/app.py"]
    .replace(b"line 3\n", b"LINE THREE\n")
    .replace(b"line 20\n", b"line 20\nnew 20a\nnew 20b\n"),
    "crlf.txt": b"alpha\r\nBETA\r\ngamma\r\ndelta\r\nepsilon\r\n",
    "nonl.txt": b"first\nsecond\nLAST",
    "notes.md": BASE["notes.md"],
}


def _base_repo(root: Path) -> Path:
    make_repo(root)
    for name, data in BASE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    commit_all(root)
    return root


@pytest.fixture
def repo(tmp_path, engine):
    """A git repository with the BASE files; its review on each store engine in turn."""
    root = _base_repo(tmp_path / "repo")
    clitools.ENGINE_ENV.clear()
    if engine.pg:
        clitools.ENGINE_ENV["STET_DB"] = engine.db(root)
    yield root
    clitools.ENGINE_ENV.clear()


@pytest.fixture
def local_repo(tmp_path):
    """The same, with the store the CLI finds in the workspace (for what is about finding it, or about
    the command line's own output whatever the engine)."""
    return _base_repo(tmp_path / "repo")


def edited_patch(root: Path) -> str:
    """Make the edits for real, take `git diff`, put the files back."""
    for name, data in EDITED.items():
        (root / name).write_bytes(data)
    diff = git("diff", cwd=root)
    git("checkout", "-q", "--", ".", cwd=root)
    return diff


def test_propose_status_accept_all_gives_the_edited_files(repo):
    patch = edited_patch(repo)
    out = stet_json("propose", "--patch", "-", "--agent", "claude", "-m", "tidy up", cwd=repo, input=patch)
    hunks = out["hunks"]
    assert len(hunks) == 5  # two in app.py, two in crlf.txt (BETA, epsilon), one in nonl.txt
    assert {h["status"] for h in hunks} == {"pending"}
    assert snapshot(repo) == {**BASE}, "proposing writes nothing to the files"
    status = stet_json("status", cwd=repo)
    assert status["counts"]["pending"] == 5 and len(status["hunks"]) == 5
    table = stet("status", cwd=repo).stdout
    assert "src/app.py" in table and "crlf.txt" in table and "\x1b[" not in table  # no colour into a pipe
    accepted = stet_json("accept", *[h["id"] for h in hunks], cwd=repo)
    assert {h["status"] for h in accepted["hunks"]} == {"applied"}
    assert snapshot(repo) == EDITED  # byte for byte: CRLF kept, last line without newline kept


def test_propose_is_idempotent_and_the_same_id_with_another_patch_conflicts(repo):
    patch = edited_patch(repo)
    first = stet_json("propose", "--patch", "-", "--id", "p1", cwd=repo, input=patch)
    again = stet_json("propose", "--patch", "-", "--id", "p1", cwd=repo, input=patch)
    assert again == first
    before = db_summary(repo / ".stet" / "stet.db")
    other = patch.replace("+LINE THREE", "+LINE 3!")
    p = stet("propose", "--patch", "-", "--id", "p1", cwd=repo, input=other)
    assert p.returncode == 1 and "Conflict" in p.stderr
    assert db_summary(repo / ".stet" / "stet.db") == before
    # Without --id the id comes from the content: the same patch twice is one proposal.
    a = stet_json("propose", "--patch", "-", cwd=repo, input=patch)
    b = stet_json("propose", "--patch", "-", cwd=repo, input=patch)
    assert a["proposalId"] == b["proposalId"] and a["hunks"] == b["hunks"]


def test_export_round_trips_through_git_apply(repo, tmp_path):
    patch = edited_patch(repo)
    hunks = stet_json("propose", "--patch", "-", cwd=repo, input=patch)["hunks"]
    exported = stet("export", "--status", "pending", cwd=repo)
    assert exported.returncode == 0, exported.stderr
    check = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=repo, input=exported.stdout.encode(), capture_output=True
    )
    assert check.returncode == 0, check.stderr
    # Applied in a copy, it gives exactly the edited files.
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".stet"))
    subprocess.run(["git", "apply", "-"], cwd=copy, input=exported.stdout.encode(), check=True)
    assert snapshot(copy) == EDITED
    # Accept some: `export` (accepted + applied by default) shows them, and `git apply -R --check` agrees they are in.
    stet_json("accept", hunks[0]["id"], hunks[2]["id"], cwd=repo)
    done = stet("export", cwd=repo).stdout
    assert done.count("\n@@") == 2 or done.count("@@ -") == 2
    back = subprocess.run(["git", "apply", "-R", "--check", "-"], cwd=repo, input=done.encode(), capture_output=True)
    assert back.returncode == 0, (done, back.stderr)
    # And what is still pending exports against the tree as it now is.
    rest = stet("export", "--status", "pending", cwd=repo).stdout
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=rest.encode(), capture_output=True)
    assert check.returncode == 0, (rest, check.stderr)


def test_reject_feedback_undo_log_and_request_ids(repo):
    patch = edited_patch(repo)
    hunks = stet_json("propose", "--patch", "-", "--id", "p1", cwd=repo, input=patch)["hunks"]
    h0, h1 = [h["id"] for h in hunks if h["uri"].endswith("/src/app.py")]
    out = stet_json("reject", h0, "--feedback", "keep the old name", "--request-id", "r1", cwd=repo)
    assert out["hunks"][0]["status"] == "rejected" and out["hunks"][0]["feedback"] == "keep the old name"
    # The same request id again: the first answer, nothing changed, whatever the new call asks.
    replay = stet_json("accept", h1, "--request-id", "r1", cwd=repo)
    assert [h["id"] for h in replay["hunks"]] == [h0]
    assert stet_json("status", "--all", cwd=repo)["counts"]["pending"] == len(hunks) - 1
    stet_json("accept", h1, cwd=repo)
    assert (repo / "src/app.py").read_bytes() == BASE["src/app.py"].replace(
        b"line 20\n", b"line 20\nnew 20a\nnew 20b\n"
    )
    undone = stet_json("undo", h1, h0, cwd=repo)
    assert {h["status"] for h in undone["hunks"]} == {"pending"}
    assert (repo / "src/app.py").read_bytes() == BASE["src/app.py"]
    log = stet_json("log", cwd=repo)["ops"]
    assert [o["kind"] for o in log if o["kind"] in ("propose", "accept", "reject", "undo")] == [
        "propose",
        "reject",
        "accept",
        "undo",
    ]
    assert "keep the old name" in stet("log", cwd=repo).stdout


def test_exit_codes(repo):
    patch = edited_patch(repo)
    hunks = stet_json("propose", "--patch", "-", cwd=repo, input=patch)["hunks"]
    assert stet("accept", "h-nope", cwd=repo).returncode == 1  # UnknownHunk
    stet_json("reject", hunks[0]["id"], cwd=repo)
    p = stet("accept", hunks[0]["id"], "--json", cwd=repo)  # rejected -> accepted is forbidden
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["name"] == "Conflict"
    assert stet("frobnicate", cwd=repo).returncode == 2
    assert stet("accept", cwd=repo).returncode == 2  # nothing to accept
    assert stet("propose", cwd=repo).returncode == 2  # neither --patch nor --edit
    assert stet("status", "--status", "bogus", cwd=repo).returncode == 2
    for cmd in ("propose", "status", "log", "accept", "reject", "undo", "export", "doctor"):
        p = stet(cmd, "--help", cwd=repo)
        assert p.returncode == 0 and "usage: stet" in p.stdout


def test_store_discovery_walks_up_and_db_overrides(local_repo, tmp_path):
    patch = edited_patch(local_repo)
    stet_json("propose", "--patch", "-", cwd=local_repo, input=patch)
    deep = local_repo / "src"
    assert len(stet_json("status", cwd=deep)["hunks"]) == 5
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = stet("status", cwd=elsewhere)
    assert p.returncode == 2 and "no Stet store found" in p.stderr
    db = str(local_repo / ".stet" / "stet.db")
    assert len(stet_json("status", "--db", db, cwd=elsewhere)["hunks"]) == 5
    assert len(stet_json("status", cwd=elsewhere, env={"STET_DB": db})["hunks"]) == 5


def test_propose_workspace_edit_json(repo):
    uri = (repo / "notes.md").resolve().as_uri()
    edit = {
        "changes": {
            uri: [
                {
                    "range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}},
                    "newText": "changed\n",
                }
            ]
        }
    }
    out = stet_json("propose", "--edit", "-", "--id", "e1", cwd=repo, input=json.dumps(edit))
    assert [h["newText"] for h in out["hunks"]] == ["changed\n"]
    params = {"proposalId": "e2", "edit": edit, "message": "why not"}
    (repo / "params.json").write_text(json.dumps(params))
    out = stet_json("propose", "--edit", "params.json", cwd=repo)
    assert out["proposalId"] == "e2" and out["hunks"][0]["message"] == "why not"
    bad = stet("propose", "--edit", "-", cwd=repo, input="{not json")
    assert bad.returncode == 2 and "line 1" in bad.stderr


def test_doctor_finds_drift_and_leftovers_and_fix_settles_them(repo):
    patch = edited_patch(repo)
    hunks = stet_json("propose", "--patch", "-", cwd=repo, input=patch)["hunks"]
    healthy = stet("doctor", cwd=repo)
    assert healthy.returncode == 0, healthy.stdout
    assert "integrity_check ok" in healthy.stdout
    (repo / "nonl.txt").write_bytes(b"rewritten by hand\n")
    leftover = repo / "src" / temp_name("app.py")  # as an interrupted write leaves it
    leftover.write_bytes(b"leftover")
    nonl = [h["id"] for h in hunks if h["uri"].endswith("/nonl.txt")]
    sick = stet("doctor", cwd=repo)
    assert sick.returncode == 1
    # Every process re-checks files changed since Stet last looked: the hunk is stale at once.
    assert "stale hunk" in sick.stdout and nonl[0] in sick.stdout
    assert "1 temp file(s)" in sick.stdout and leftover.exists()  # doctor alone removes no temp file
    fixed = json.loads(stet("doctor", "--fix", "--json", cwd=repo).stdout)
    assert not leftover.exists()
    stale = [f for f in fixed["findings"] if f.get("hunkIds") and "stale" in f["what"]]
    assert stale and stale[0]["hunkIds"] == nonl
    assert stet_json("status", cwd=repo)["counts"]["stale"] == 1


def _file_ops_patch(repo: Path) -> tuple[str, dict]:
    """A real `git diff` with a new, a deleted and a renamed-and-edited file; and the tree it makes."""
    (repo / "fresh.txt").write_bytes(b"brand\nnew")
    (repo / "notes.md").unlink()
    git("mv", "nonl.txt", "renamed.txt", cwd=repo)
    (repo / "renamed.txt").write_bytes(b"first\nsecond\nLAST")
    git("add", "-A", cwd=repo)
    diff = git("diff", "--cached", "-M", cwd=repo)
    after = snapshot(repo)
    git("reset", "-q", "--hard", cwd=repo)
    return diff, after


def test_file_operations_from_a_git_diff(repo, tmp_path):
    diff, after = _file_ops_patch(repo)
    assert "new file mode" in diff and "deleted file mode" in diff and "rename from nonl.txt" in diff
    before = snapshot(repo)
    hunks = stet_json("propose", "--patch", "-", cwd=repo, input=diff)["hunks"]
    assert sorted(h["kind"] for h in hunks) == ["create", "delete", "edit", "rename"]
    assert snapshot(repo) == before, "proposing writes nothing"
    # What is pending exports as a patch for the tree as it is, and makes the edited tree.
    pending = stet("export", "--status", "pending", cwd=repo).stdout
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=pending.encode(), capture_output=True)
    assert check.returncode == 0, (pending, check.stderr)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".stet"))
    subprocess.run(["git", "apply", "-"], cwd=copy, input=pending.encode(), check=True)
    assert snapshot(copy) == after
    # Accepting everything makes the same tree; the export of applied hunks reverses cleanly on it.
    stet_json("accept", *[h["id"] for h in hunks], cwd=repo)
    assert snapshot(repo) == after
    applied = stet("export", cwd=repo).stdout
    back = subprocess.run(["git", "apply", "-R", "--check", "-"], cwd=repo, input=applied.encode(), capture_output=True)
    assert back.returncode == 0, (applied, back.stderr)
    # And undoing everything restores the tree as it was.
    stet_json("undo", *[h["id"] for h in hunks], cwd=repo)
    assert snapshot(repo) == before


def test_multi_root_workspace_with_repeated_root(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    (two / "x.txt").write_bytes(b"x\n")
    edit = {
        "changes": {
            (two / "x.txt").resolve().as_uri(): [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "newText": "X\n"}
            ]
        }
    }
    refused = stet("propose", "--edit", "-", cwd=one, input=json.dumps(edit))
    assert refused.returncode == 2 and "OutsideWorkspace" in refused.stderr  # only one/ is a root by default
    roots = ["--root", str(one), "--root", str(two)]
    (h,) = stet_json("propose", "--edit", "-", *roots, cwd=one, input=json.dumps(edit))["hunks"]
    assert (one / ".stet" / "stet.db").exists() and not (two / ".stet").exists()
    stet_json("accept", h["id"], *roots, cwd=one)
    assert (two / "x.txt").read_bytes() == b"X\n"


def _on_a_terminal(args: list[str], cwd: Path) -> str:
    """Run `stet ARGS` with its stdout on a pseudo-terminal, as a person at a shell sees it."""
    import os
    import pty

    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    p = subprocess.Popen(
        [*STET_CMD, *args], cwd=cwd, stdout=follower, stderr=subprocess.PIPE, env={**env, "NO_COLOR": "1"}
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert p.wait(timeout=60) == 0, p.stderr.read() if p.stderr else ""
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_json_is_one_compact_line_into_a_pipe_and_indented_on_a_terminal(local_repo):
    stet_json("propose", "--patch", "-", "--id", "p1", cwd=local_repo, input=edited_patch(local_repo))
    piped = stet("status", "--json", cwd=local_repo).stdout
    assert piped == json.dumps(json.loads(piped), ensure_ascii=False, separators=(",", ":")) + "\n"
    shown = _on_a_terminal(["status", "--json"], local_repo)
    assert shown.startswith("{\n  ") and shown.count("\n") > 20
    assert json.loads(piped) == json.loads(shown)  # the same document, two layouts
    # Errors asked for as JSON follow the same rule.
    err = stet("accept", "h000000000000", "--json", cwd=local_repo)
    assert err.returncode == 1 and json.loads(err.stdout)["error"]["name"] == "UnknownHunk"
    assert err.stdout.count("\n") == 1


def test_a_closed_stdout_is_not_a_traceback(local_repo):
    import shlex

    stet_json("propose", "--patch", "-", "--id", "p1", cwd=local_repo, input=edited_patch(local_repo))
    for args in (["status"], ["status", "--json"], ["log"]):
        command = " ".join(shlex.quote(a) for a in [*STET_CMD, *args]) + " >&-"
        p = subprocess.run(["sh", "-c", command], cwd=local_repo, capture_output=True, text=True)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (args, p.stderr)


def test_output_that_cannot_be_written_is_a_message_not_a_traceback(local_repo, tmp_path):
    stet_json("propose", "--patch", "-", "--id", "p1", cwd=local_repo, input=edited_patch(local_repo))
    missing = tmp_path / "no-such-folder" / "out.diff"
    p = stet("export", "--status", "pending", "-o", str(missing), cwd=local_repo)
    assert p.returncode == 2 and f"stet: {missing}: No such file or directory" in p.stderr
    assert "Traceback" not in p.stderr
    if Path("/dev/full").exists():  # a full disk: every write fails with ENOSPC
        for args in (["status"], ["status", "--json"], ["log"], ["export", "--status", "pending"]):
            with open("/dev/full", "wb") as full:
                q = subprocess.run([*STET_CMD, *args], cwd=local_repo, stdout=full, stderr=subprocess.PIPE, text=True)
            assert q.returncode == 2, (args, q.returncode, q.stderr)
            assert "cannot write the output: No space left on device" in q.stderr and "Traceback" not in q.stderr
            assert "Exception ignored" not in q.stderr


def test_a_deleted_current_folder_is_said_plainly(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    # The shell's folder removed under it: the process starts in a folder that no longer exists.
    p = subprocess.run(
        ["sh", "-c", f"cd {gone} && rmdir {gone} && exec {' '.join(STET_CMD)} status"], capture_output=True, text=True
    )
    assert p.returncode == 2 and "the current folder no longer exists" in p.stderr and "Traceback" not in p.stderr


def test_init_makes_the_store_stet_db_names(tmp_path):
    root = make_repo(tmp_path / "repo")
    elsewhere = tmp_path / "reviews" / "repo.db"
    elsewhere.parent.mkdir()
    done = stet("init", cwd=root, env={"STET_DB": str(elsewhere)})
    assert done.returncode == 0 and done.stdout.strip() == str(elsewhere), done
    assert elsewhere.is_file() and not (root / ".stet" / "stet.db").exists()
