"""Claude Code's hooks against what the model chooses to send.

A PreToolUse Edit with `replace_all` (old `a`, new 30,000 characters, on a file of
30,000 `a`) made the redo check build the whole 900-million-character result: the process grew
by 858 MB whenever anything had ever been rejected. The result's size is now worked out before
it is built; beyond what Stet checks and reviews the developer is asked (when they rejected
something in that file) or nothing is said. Each hook is the real `stet hook claude-code`, run
in its own process and in the resident, its peak memory measured."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from support.capturetools import agent_repo, hunks
from support.claudecode import Claude
from support.clitools import PEAK_LAUNCHER, commit_all, stet
from support.residents import ON, resident_pid, stop, wait_for

STET = f"{shlex.quote(sys.executable)} -m stet"
SESSION = "29a7c0de-1111-4222-8333-944455556666"
OFF = {"STET_RESIDENT": "off"}
BIG = 30_000
PEAK_MB = 300  # the interpreter, the file and its edit held a few times; 900 MB before


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    assert stet("integrate", "claude-code", "--stet", STET, cwd=root).returncode == 0
    for name in ("f.txt", "g.txt"):
        (root / name).write_text("a" * BIG + "\nend\n")
    commit_all(root, "claude code set up, two files of 30,000 a")
    return root


def _hook_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def _pre_tool_use(root: Path, name: str, env: dict) -> tuple[subprocess.CompletedProcess, float]:
    """The hostile PreToolUse on `name`, run as Claude Code runs the hook; its answer and the
    peak memory (MB) of the process that worked it out (the hook's own, or the resident's)."""
    claude = Claude(root, SESSION)
    (cmd,) = claude.commands["PreToolUse"]
    tool_input = {"file_path": str(root / name), "old_string": "a", "new_string": "b" * BIG, "replace_all": True}
    body = json.dumps(claude.payload("PreToolUse", tool_name="Edit", tool_input=tool_input, tool_use_id="toolu_x"))
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    full.update({"NO_COLOR": "1", **env})
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        argv = [sys.executable, "-c", PEAK_LAUNCHER, str(peak), "/bin/sh", "-c", cmd]
        p = subprocess.run(argv, input=body, capture_output=True, text=True, cwd=root, env=full, timeout=300)
        own = int(peak.read_text()) / 1024
    pid = resident_pid(root) if env is ON else None
    return p, (_hook_rss_kb(pid) / 1024 if pid is not None else own)


@pytest.mark.parametrize("resident", [False, True], ids=["own process", "resident"])
def test_a_replace_all_that_multiplies_the_file_is_never_built(repo, resident):
    claude = Claude(repo, SESSION)
    assert claude.edit("f.txt", "end", "END") == {}
    claude.stop()
    (h,) = hunks(repo, "--task", f"claude-{SESSION}")
    assert stet("reject", h["id"], "--feedback", "keep it lower case", cwd=repo).returncode == 0
    env = ON if resident else OFF
    try:
        if resident:
            assert stet("status", cwd=repo, env=ON).returncode == 0
            wait_for(lambda: resident_pid(repo), "the resident to answer")
        # The file with a rejected change: the developer is asked, with why.
        p, peak = _pre_tool_use(repo, "f.txt", env)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        out = json.loads(p.stdout)["hookSpecificOutput"]
        assert out["permissionDecision"] == "ask", out
        assert "cannot check this change to f.txt" in out["permissionDecisionReason"]
        assert "900,000,005 characters" in out["permissionDecisionReason"]
        assert peak < PEAK_MB, f"peak {peak:.0f} MB"
        # Another file: nothing the developer rejected there, nothing to say.
        p, peak = _pre_tool_use(repo, "g.txt", env)
        assert p.returncode == 0 and p.stdout == "" and p.stderr == "", (p.stdout, p.stderr)
        assert peak < PEAK_MB, f"peak {peak:.0f} MB"
        assert (repo / "f.txt").read_text() == "a" * BIG + "\nend\n"
    finally:
        if resident:
            stop(repo)
