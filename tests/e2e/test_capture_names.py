"""A file whose name is not UTF-8 (`bad-\\xff.txt`) made every capture crash
(UnicodeEncodeError), leaving the agent's other edits unreviewed. Such a file is named on
stderr (and in `refused`) and left exactly as it is; the other files are captured as usual - in
`stet capture` and `stet run`, against git and against a snapshot, in place and in a worktree."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from support.capturetools import B_BASE, agent_repo, hunks
from support.clitools import STET, commit_all, git
from support.scripted_agent import A_BASE

BAD = b"bad-\xff.txt"
SHOWN = "bad-\\xff.txt"  # as Stet names it
NOTE = "its name is not UTF-8"


def stet_bytes(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`stet ARGS`, its output as bytes: what a terminal or a pipe gets, decoded strictly below."""
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    p = subprocess.run([*STET, *args], cwd=cwd, capture_output=True, env={**env, "NO_COLOR": "1"}, timeout=120)
    p.stdout, p.stderr = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")  # strict: no stray bytes
    assert "Traceback" not in p.stderr, p.stderr
    return p


def write(root: Path, name: bytes, data: bytes) -> bytes:
    path = os.path.join(os.fsencode(root), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(path: bytes) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture
def repo(tmp_path):
    return agent_repo(tmp_path / "repo")


def test_capture_against_git_names_the_file_and_captures_the_others(repo):
    tracked = write(repo, b"old-\xfe.txt", b"tracked\n")  # committed, then changed by the agent
    commit_all(repo, "a file named in latin-1")
    write(repo, b"old-\xfe.txt", b"tracked, changed\n")
    bad = write(repo, BAD, b"made by the agent\n")
    (repo / "a.py").write_text(A_BASE.replace("LIMIT = 10", "LIMIT = 20"))
    p = stet_bytes("capture", "--json", cwd=repo)
    assert p.returncode == 1, p.stderr
    answer = json.loads(p.stdout)
    assert sorted(r["path"] for r in answer["refused"]) == [SHOWN, "old-\\xfe.txt"]
    assert all(NOTE in r["why"] for r in answer["refused"])
    assert [h["newText"] for h in answer["hunks"]] == ["LIMIT = 20\n"]
    assert (repo / "a.py").read_text() == A_BASE, "the other files are captured as usual"
    assert read(bad) == b"made by the agent\n" and read(tracked) == b"tracked, changed\n", "left as they are"
    p = stet_bytes("capture", cwd=repo)  # the table, and the names on stderr
    assert p.returncode == 1 and f"stet: {SHOWN}: {NOTE}" in p.stderr, p.stderr


def test_capture_against_a_snapshot_names_the_file_and_captures_the_others(repo):
    there = write(repo, b"there-\xe9.txt", b"before the agent\n")
    p = stet_bytes("snapshot", "--all", "--task", "t", cwd=repo)
    assert p.returncode == 0 and f"there-\\xe9.txt: not snapshotted ({NOTE})" in p.stderr, p.stderr
    bad = write(repo, BAD, b"made by the agent\n")
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    p = stet_bytes("capture", "--task", "t", "--json", cwd=repo)
    assert p.returncode == 1, p.stderr
    answer = json.loads(p.stdout)
    assert answer["baseline"] == "snapshot"
    assert sorted(r["path"] for r in answer["refused"]) == [SHOWN, "there-\\xe9.txt"]
    assert [h["newText"] for h in answer["hunks"]] == ["delta\n"]
    assert (repo / "b.txt").read_text() == B_BASE
    assert read(bad) == b"made by the agent\n" and read(there) == b"before the agent\n"


def test_a_snapshot_recorded_before_such_names_were_refused(repo):
    """An older Stet recorded the name in its uri (%FF): the capture names it, creates nothing."""
    assert stet_bytes("snapshot", "--all", "--task", "t", cwd=repo).returncode == 0
    db = sqlite3.connect(repo / ".stet" / "stet.db")
    with db:
        db.execute(
            "INSERT INTO snapshots SELECT task_key, replace(uri, 'b.txt', 'bad-%FF.txt'), hash, agent_hash, lsn, at "
            "FROM snapshots WHERE uri LIKE '%/b.txt'"
        )
    db.close()
    write(repo, BAD, B_BASE.encode())
    (repo / "a.py").write_text(A_BASE + "# more\n")
    p = stet_bytes("capture", "--task", "t", "--json", cwd=repo)
    answer = json.loads(p.stdout)
    assert [r["path"] for r in answer["refused"]] == [SHOWN] and NOTE in answer["refused"][0]["why"]
    assert [h["newText"] for h in answer["hunks"]] == ["# more\n"]
    assert not any("\ufffd" in n for n in os.listdir(repo)), "nothing made under another name"


def test_stet_run_in_place_and_in_a_worktree(repo):
    agent = ["sh", "-c", "printf 'from the agent\\n' > \"$(printf 'bad-\\377.txt')\" && echo more >> b.txt"]
    p = stet_bytes("run", "--task", "r", "--", *agent, cwd=repo)
    # The agent succeeded and Stet left a file of it: exit 1, as for any refused file.
    assert p.returncode == 1 and f"stet: {SHOWN}: {NOTE}" in p.stderr, p.stderr
    assert [h["newText"] for h in hunks(repo, "--task", "r")] == ["more\n"]
    assert (repo / "b.txt").read_text() == B_BASE
    assert read(os.path.join(os.fsencode(repo), BAD)) == b"from the agent\n"
    os.unlink(os.path.join(os.fsencode(repo), BAD))

    p = stet_bytes("run", "--worktree", "--task", "w", "--", *agent, cwd=repo)
    assert p.returncode == 1 and f"stet: {SHOWN}: {NOTE}" in p.stderr, p.stderr
    assert [h["newText"] for h in hunks(repo, "--task", "w")] == ["more\n"]
    assert not os.path.exists(os.path.join(os.fsencode(repo), BAD)), "the developer's files are not written"
    kept = p.stderr.split("the worktree is kept at ")[1].split(" ")[0]  # not everything could be proposed
    git("worktree", "remove", "--force", kept, cwd=repo)
