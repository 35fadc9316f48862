"""The same capture a second time (an agent run twice before anyone reviewed) killed with SIGKILL
at each of its steps: its journal is opened anew in one transaction, then the files are restored,
then it is closed. The next process sees either the first capture's state with the agent's files
as it left them again, or the baseline back - never a duplicate hunk, never a hunk left stale -
and capturing again converges and then adds nothing."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from support.capturetools import AGENT, agent_repo, captures, duplicates, hunks, kinds, review_summary
from support.clitools import snapshot, stet, stet_json

EXPECTED = {
    ("create", "new.py", "pending"): 1,
    ("delete", "old.txt", "pending"): 1,
    ("edit", "a.py", "pending"): 3,
    ("edit", "r.txt", "pending"): 1,
    ("rename", "r.txt", "pending"): 1,
}
STEPS = [
    "capture:after-commit",
    *[f"capture:after-restore@{n}" for n in range(1, 6)],
    "capture:before-done",
]


def tally(hs: list[dict]) -> dict:
    out: dict = {}
    for k in kinds(hs):
        out[k] = out.get(k, 0) + 1
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return agent_repo(tmp_path_factory.mktemp("template") / "repo")


def first_round(template: Path, tmp_path: Path, *how: str) -> tuple[Path, dict, dict, set[str]]:
    """A copy of the repository after one captured run of the agent: (root, the baseline files,
    the agent's files, the hunk ids)."""
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    baseline = snapshot(root)
    if how:
        assert stet(*how, "--", *AGENT, "1", cwd=root).returncode == 0
    else:
        assert subprocess.run([*AGENT, "1"], cwd=root, capture_output=True).returncode == 0
        assert stet("capture", cwd=root).returncode == 0
    probe = tmp_path / "probe"
    shutil.copytree(template, probe, symlinks=True)
    subprocess.run([*AGENT, "1"], cwd=probe, capture_output=True)
    agent_files = snapshot(probe)
    assert snapshot(root) == baseline
    hs = hunks(root)
    assert tally(hs) == EXPECTED
    return root, baseline, agent_files, {h["id"] for h in hs}


def check(root: Path, baseline: dict, agent_files: dict, ids: set[str]) -> str:
    """The state a new process finds; the hunks are the first capture's, whole, never doubled."""
    hs = hunks(root)
    assert {h["id"] for h in hs} == ids and duplicates(hs) == []
    assert {state for _, state in captures(root / ".stet" / "stet.db")} == {"done"}
    files = snapshot(root)
    if files == baseline:
        assert tally(hs) == EXPECTED, "the baseline is back: every hunk pending"
        return "restored"
    assert files == agent_files, "not restored: the agent's files as it left them"
    return "before"


def converges(root: Path, baseline: dict, ids: set[str], *retry: str) -> None:
    assert stet(*retry, cwd=root).returncode == 0
    hs = hunks(root)
    assert snapshot(root) == baseline and tally(hs) == EXPECTED and {h["id"] for h in hs} == ids
    db = root / ".stet" / "stet.db"
    stored = review_summary(db)
    assert stet_json("capture", cwd=root)["proposalId"] is None
    assert review_summary(db) == stored and snapshot(root) == baseline


@pytest.mark.parametrize("point", STEPS)
def test_second_capture_killed_at_each_step(template, tmp_path, point):
    root, baseline, agent_files, ids = first_round(template, tmp_path)
    assert subprocess.run([*AGENT, "1"], cwd=root, capture_output=True).returncode == 0  # the same work again
    p = stet("capture", cwd=root, env={"STET_FAULT": point})
    assert p.returncode == -signal.SIGKILL, (point, p.returncode, p.stderr)
    # Every step is after the journal was opened anew: the next process restores, exactly once.
    assert check(root, baseline, agent_files, ids) == "restored"
    converges(root, baseline, ids, "capture")


@pytest.mark.parametrize("point", ["run:after-agent", *STEPS[:2], STEPS[-1]])
def test_second_run_killed_at_each_step(template, tmp_path, point):
    root, baseline, agent_files, ids = first_round(template, tmp_path, "run", "--task", "t")
    p = stet("run", "--task", "t", "--", *AGENT, "1", cwd=root, env={"STET_FAULT": point})
    assert p.returncode == -signal.SIGKILL, (point, p.returncode, p.stderr)
    state = check(root, baseline, agent_files, ids)
    assert state == ("before" if point == "run:after-agent" else "restored")
    # The next run of the task captures what the interrupted one left first: the same again.
    converges(root, baseline, ids, "run", "--task", "t", "--", "true")
    code = stet("doctor", cwd=root)
    assert code.returncode == 0, code.stdout
