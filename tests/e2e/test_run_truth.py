"""`stet run` and `stet capture` tell the truth (issue 21, items 5-7): the same agent run twice
before anyone reviews, files Stet refused, and the agent's relative paths in a worktree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.capturetools import AGENT, agent_repo, captures, duplicates, hunks, kinds
from support.clitools import snapshot, stet, stet_json


@pytest.fixture
def repo(tmp_path):
    return agent_repo(tmp_path / "repo")


def tally(hs: list[dict]) -> dict:
    out: dict = {}
    for k in kinds(hs):
        out[k] = out.get(k, 0) + 1
    return out


ROUND1 = {
    ("edit", "a.py", "pending"): 3,
    ("create", "new.py", "pending"): 1,
    ("delete", "old.txt", "pending"): 1,
    ("rename", "r.txt", "pending"): 1,
    ("edit", "r.txt", "pending"): 1,
}


def doctor(root: Path) -> tuple[int, list[dict]]:
    p = stet("doctor", "--json", cwd=root)
    return p.returncode, json.loads(p.stdout)["findings"]


# --- item 5: the same run twice before anyone reviews ------------------------------------------


def test_the_same_run_twice_gives_the_files_their_baseline_back_and_adds_nothing(repo):
    baseline = snapshot(repo)
    p = stet("run", "--task", "t", "--", *AGENT, "1", cwd=repo)
    assert p.returncode == 0, p.stderr
    first = hunks(repo, "--task", "t")
    assert tally(first) == ROUND1 and snapshot(repo) == baseline

    # Nobody reviewed; the same agent runs again and writes exactly the same.
    p = stet("run", "--task", "t", "--", *AGENT, "1", cwd=repo)
    assert p.returncode == 0, p.stderr
    assert snapshot(repo) == baseline, "the files have their baseline back, as the line says"
    again = hunks(repo, "--task", "t")
    assert tally(again) == ROUND1, "the hunks stay pending, none added"
    assert {h["id"] for h in again} == {h["id"] for h in first} and duplicates(again) == []
    line = next(s for s in p.stderr.splitlines() if s.startswith("stet: proposal"))
    assert "no new hunks (7 change(s) proposed before, not again)" in line, line
    assert line.endswith("the files have their baseline back"), line
    assert {state for _, state in captures(repo / ".stet" / "stet.db")} == {"done"}

    # Nothing is left for doctor to send anyone back to: no snapshot waiting, nothing stale.
    code, findings = doctor(repo)
    assert code == 0, findings
    assert not any("snapshot" in f["what"] for f in findings), findings

    # A third time, through `stet capture` after the agent alone: the same again.
    p = stet("capture", "--task", "t", "--json", cwd=repo)
    assert p.returncode == 0 and json.loads(p.stdout)["proposalId"] is None  # no snapshot: nothing to capture


def test_the_same_edits_captured_again_under_the_same_id(repo):
    baseline = snapshot(repo)
    (repo / "b.txt").write_text("alpha\nBETA\ngamma\n")
    first = stet_json("capture", "--id", "x", cwd=repo)
    assert first["proposalId"] == "x" and len(first["hunks"]) == 1 and first["restored"] == ["b.txt"]
    assert snapshot(repo) == baseline

    (repo / "b.txt").write_text("alpha\nBETA\ngamma\n")  # the same edit, redone
    second = stet_json("capture", "--id", "x", cwd=repo)
    assert snapshot(repo) == baseline, "the baseline is back again"
    assert second["proposalId"] == "x" and second["hunks"] == [] and second["restored"] == ["b.txt"]
    assert [h["id"] for h in second["alreadyProposed"]] == [first["hunks"][0]["id"]]
    assert second["alreadyProposed"][0]["status"] == "pending"
    every = hunks(repo)
    assert [(h["id"], h["status"]) for h in every] == [(first["hunks"][0]["id"], "pending")]
    p = stet("capture", "--id", "x", cwd=repo)
    assert p.returncode == 0 and p.stdout.startswith("nothing new to capture"), p.stdout

    # And once more, the text form says what happened.
    (repo / "b.txt").write_text("alpha\nBETA\ngamma\n")
    p = stet("capture", "--id", "x", cwd=repo)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == (
        "proposal x: no new hunks (1 change(s) proposed before, not again) (baseline: index); "
        "the files have their baseline back"
    )
    assert snapshot(repo) == baseline and [h["status"] for h in hunks(repo)] == ["pending"]


def test_a_run_that_changed_nothing_leaves_no_snapshot_to_take_the_developers_work_for_the_agents(repo):
    p = stet("run", "--task", "t", "--", "true", cwd=repo)
    assert p.returncode == 0 and "nothing new to capture" in p.stderr, p.stderr
    code, findings = doctor(repo)
    assert code == 0 and not any("snapshot" in f["what"] for f in findings), findings
    # The developer works; the next run of the task must not take that for an earlier run's work.
    (repo / "b.txt").write_text("alpha\nbeta (mine)\ngamma\n")
    p = stet("run", "--task", "t", "--", "true", cwd=repo)
    assert p.returncode == 0 and "interrupted earlier run" not in p.stderr, p.stderr
    assert (repo / "b.txt").read_text() == "alpha\nbeta (mine)\ngamma\n"
    assert hunks(repo) == []


# --- item 6: files Stet refused are an exit code of their own -----------------------------------

REFUSING = (
    "printf 'x\\000y' > blob.bin; ln -s a.py link.py; echo 'alpha' > b.txt; "
    "head -c 11000000 /dev/zero | tr '\\000' 'a' > big.txt; exit {code}"
)


def test_run_exits_1_naming_the_files_it_refused_when_the_agent_succeeded(repo):
    p = stet("run", "--", "sh", "-c", REFUSING.format(code=0), cwd=repo)
    assert p.returncode == 1, (p.returncode, p.stderr)
    for name, why in (("blob.bin", "binary"), ("link.py", "symlink"), ("big.txt", "larger than")):
        assert any(line.startswith(f"stet: {name}: ") and why in line for line in p.stderr.splitlines()), p.stderr
    assert "3 file(s) not captured, left as the agent left them: big.txt, blob.bin, link.py" in p.stderr
    # What could be captured was: b.txt has its baseline back, the refused files are the agent's.
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert (repo / "blob.bin").read_bytes() == b"x\0y" and (repo / "link.py").is_symlink()
    assert [Path(h["uri"]).name for h in hunks(repo)] == ["b.txt"]


def test_the_agents_own_failure_wins_over_refusals(repo):
    p = stet("run", "--", "sh", "-c", REFUSING.format(code=5), cwd=repo)
    assert p.returncode == 5, p.stderr
    assert "stet: blob.bin: " in p.stderr and "not captured, left as the agent left them" in p.stderr


def test_a_worktree_run_whose_result_could_not_be_carried_over_exits_1(repo):
    p = stet(
        "run", "--worktree", "--", "sh", "-c", f"echo 'LIMIT = 20' > a.py; echo 'LIMIT = 99' > {repo}/a.py", cwd=repo
    )
    assert p.returncode == 1, p.stderr
    assert "stet: a.py: changed by the agent and, meanwhile, in the workspace in the same lines" in p.stderr
    assert "1 file(s) not proposed, the agent's version is in the kept worktree: a.py" in p.stderr
    assert (repo / "a.py").read_text() == "LIMIT = 99\n"
