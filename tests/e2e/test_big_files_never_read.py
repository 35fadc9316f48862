"""A file far over the size limit (10 MiB) is refused by its size, never read.

An agent can leave a 512 MiB sparse file (no disk used); reading it whole took 1 GB of memory
before it was refused, and a larger one exhausts memory. Every read of capture, snapshots and
the Claude Code hooks checks the size on the opened file first; such a file is never copied into
`.stet/snapshots/`. Peak memory is measured on the real `stet` process (wait4's rusage), forked
from a small launcher: on Linux a child's peak starts at its parent's size when it forks, and the
pytest process itself may be past 250 MB late in a full run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from support.capturetools import B_BASE, agent_repo, hunks
from support.clitools import PEAK_LAUNCHER, STET, commit_all, git

BIG = 512 * 1024 * 1024
LIMIT = 10 * 1024 * 1024
# A `stet` process that reads nothing large stays far below this (about 60 MB here); one that
# reads the big file whole peaks past 1 GB.
PEAK_MB = 250


class Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str, peak_mb: float):
        self.returncode, self.stdout, self.stderr, self.peak_mb = returncode, stdout, stderr, peak_mb


def measured(*args: str, cwd: Path, input: str | None = None) -> Ran:
    """Run `stet ARGS`; its exit code, output and peak resident memory (MB)."""
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        p = subprocess.run(
            [sys.executable, "-c", PEAK_LAUNCHER, str(peak), *STET, *args],
            cwd=cwd,
            env=env,
            input=input,
            capture_output=True,
            text=True,
        )
        return Ran(p.returncode, p.stdout, p.stderr, int(peak.read_text()) / 1024)


def sparse(path: Path, size: int = BIG) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def kept_sizes(root: Path) -> list[int]:
    """The size of every content kept under .stet/snapshots/."""
    return [p.stat().st_size for p in (root / ".stet" / "snapshots").rglob("*") if p.is_file()]


@pytest.fixture
def repo(tmp_path):
    return agent_repo(tmp_path / "repo")


def test_capture_against_git_refuses_a_big_file_by_its_size(repo):
    sparse(repo / "big.bin")
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    r = measured("capture", cwd=repo)
    assert r.returncode == 1, r.stderr
    assert f"big.bin: larger than {LIMIT} bytes; left as it is" in r.stderr
    assert r.peak_mb < PEAK_MB, f"stet capture peaked at {r.peak_mb:.0f} MB"
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"], "the other files are captured as usual"
    assert (repo / "big.bin").stat().st_size == BIG


def test_a_big_baseline_in_git_is_not_read_either(repo):
    """The file is big in git's index (a blob git holds), small in the work tree."""
    sparse(repo / "data.bin")
    commit_all(repo, "a big file")
    (repo / "data.bin").write_text("small now\n")
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    r = measured("capture", cwd=repo)
    assert r.returncode == 1 and f"data.bin: larger than {LIMIT} bytes" in r.stderr, r.stderr
    assert r.peak_mb < PEAK_MB, f"stet capture peaked at {r.peak_mb:.0f} MB"
    assert (repo / "data.bin").read_text() == "small now\n"
    assert git("status", "--porcelain", cwd=repo).split() == ["M", "data.bin"]


def test_snapshots_and_stet_run_never_read_or_keep_a_big_file(repo):
    sparse(repo / "big.bin")
    r = measured("snapshot", "--all", "--task", "s", cwd=repo)
    assert r.returncode == 0 and f"big.bin: not snapshotted (larger than {LIMIT} bytes)" in r.stderr, r.stderr
    assert r.peak_mb < PEAK_MB, f"stet snapshot peaked at {r.peak_mb:.0f} MB"
    assert kept_sizes(repo) and max(kept_sizes(repo)) <= LIMIT

    # stet run: the big file before the agent, and one the agent leaves.
    r = measured("run", "--task", "r", "--", "sh", "-c", "truncate -s 600M made.bin && echo more >> b.txt", cwd=repo)
    assert r.returncode == 1, r.stderr  # files refused: exit 1, the agent's own code being 0
    assert r.peak_mb < PEAK_MB, f"stet run peaked at {r.peak_mb:.0f} MB"
    assert "made.bin: larger than" in r.stderr and "big.bin: larger than" in r.stderr
    assert [h["newText"] for h in hunks(repo, "--task", "r")] == ["more\n"]
    assert (repo / "b.txt").read_text() == B_BASE and (repo / "made.bin").stat().st_size == 600 * 1024 * 1024
    assert max(kept_sizes(repo), default=0) <= LIMIT


def test_the_claude_code_hooks_never_read_a_big_file(repo):
    assert measured("init", cwd=repo).returncode == 0

    def hook(event: str, extra: dict) -> Ran:
        body = {"session_id": "s1", "cwd": str(repo), "hook_event_name": event, **extra}
        r = measured("hook", "claude-code", cwd=repo, input=json.dumps(body))
        assert r.returncode == 0, r.stderr
        assert r.peak_mb < PEAK_MB, f"the {event} hook peaked at {r.peak_mb:.0f} MB"
        return r

    big = {"tool_name": "Write", "tool_input": {"file_path": str(repo / "big.bin")}}
    small = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "b.txt")}}
    sparse(repo / "big.bin")  # there before the agent's write (a Write over a big file)
    hook("PreToolUse", big)
    hook("PreToolUse", small)
    sparse(repo / "big.bin", BIG + 1)
    (repo / "b.txt").write_text(B_BASE + "delta\n")
    hook("PostToolUse", big)
    hook("PostToolUse", small)
    assert max(kept_sizes(repo), default=0) <= LIMIT
    hook("Stop", {})
    assert [h["newText"] for h in hunks(repo, "--task", "claude-s1")] == ["delta\n"]
    assert (repo / "big.bin").stat().st_size == BIG + 1, "left as it is"
