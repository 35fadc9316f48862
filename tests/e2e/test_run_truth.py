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
