"""`stet run -- CMD` in place through the resident: the resident takes the baseline,
the thin client starts the agent itself (it has the terminal), the resident captures after.

Real processes throughout: the thin client as installed, the resident, SIGKILL for real. What is
checked: the run gives what a run in its own process gives (proposal, hunks, output, exit code);
the agent is the client's child, with its stdin; a resident killed before, while or after the
agent works loses nothing and captures once; SIGTERM and Ctrl-C reach the agent as before."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from support.capturetools import AGENT, agent_repo, captures, duplicates, hunks, kinds
from support.clitools import FOREGROUND_JOB, STET, snapshot, stet
from support.residents import ON, alive, calls, faulty_resident, resident_pid, stop, wait_for

OFF = {"STET_RESIDENT": "off"}


@pytest.fixture
def repo(tmp_path):
    root = agent_repo(tmp_path / "repo")
    yield root
    stop(root)


def made(root: Path) -> None:
    """The store made (a capture that finds nothing makes it and adds nothing)."""
    p = stet("capture", cwd=root, env=OFF)
    assert p.returncode == 0 and "nothing new to capture" in p.stdout, (p.stdout, p.stderr)


def started(root: Path) -> int:
    """The store made and the resident answering in `root`."""
    made(root)
    assert stet("status", cwd=root, env=ON).returncode == 0
    return wait_for(lambda: resident_pid(root), "the resident to answer")


def snapshots_left(root: Path) -> int:
    conn = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        return conn.execute("SELECT COUNT(*) FROM snapshot_sets").fetchone()[0]
    finally:
        conn.close()


def proposals(root: Path) -> int:
    conn = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        return conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0]
    finally:
        conn.close()


REFUSING = "printf 'x\\000y' > blob.bin; echo 'alpha' > b.txt; exit {code}"


@pytest.mark.parametrize(
    "agent",
    [
        [*AGENT, "1"],
        ["sh", "-c", REFUSING.format(code=0)],
        ["sh", "-c", REFUSING.format(code=5)],
        ["sh", "-c", "echo delta >> b.txt; kill -9 $$"],
        ["true"],
        ["no-such-agent-anywhere"],
    ],
    ids=["agent", "refused", "fails", "killed", "nothing", "not-found"],
)
def test_a_run_through_the_resident_is_the_run_in_its_own_process(tmp_path, agent):
    mine, theirs = agent_repo(tmp_path / "mine"), agent_repo(tmp_path / "theirs")
    try:
        made(theirs)
        started(mine)
        before = calls(mine)
        here = stet("run", "--task", "t", "--", *agent, cwd=theirs, env=OFF)
        there = stet("run", "--task", "t", "--", *agent, cwd=mine, env=ON)
        assert calls(mine) == before + 2, "the resident took the baseline and the capture"
        assert (there.returncode, there.stdout, there.stderr) == (here.returncode, here.stdout, here.stderr)
        assert kinds(hunks(mine)) == kinds(hunks(theirs))
        assert snapshot(mine) == snapshot(theirs)
        assert snapshots_left(mine) == snapshots_left(theirs) == 0
    finally:
        stop(mine)


def test_the_agent_is_the_clients_child_with_the_terminals_stdin(repo, tmp_path):
    pid = started(repo)
    script = 'read line; echo "$line" > got.txt; echo "$PPID $STET_TASK" > "$OUT"'
    out = tmp_path / "who"
    full = {**os.environ, **ON, "OUT": str(out), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [*STET, "run", "--task", "t", "--", "sh", "-c", script],
        cwd=repo,
        env=full,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(b"hello from the terminal\n", timeout=60)
    assert proc.returncode == 0, err
    parent, task = out.read_text().split()
    assert int(parent) == proc.pid != pid, "the client started the agent, not the resident"
    assert task == "t"
    (h,) = hunks(repo)
    assert h["kind"] == "create" and h["newText"] == "hello from the terminal\n"
    assert not (repo / "got.txt").exists(), "the files have their baseline back"


WAITS = 'echo delta >> b.txt; echo $$ > "$READY"; while [ ! -e "$GO" ]; do sleep 0.05; done; exit 4'


def test_a_resident_killed_while_the_agent_works_the_run_captures_once(repo, tmp_path):
    pid = started(repo)
    ready, go = tmp_path / "ready", tmp_path / "go"
    full = {**os.environ, **ON, "READY": str(ready), "GO": str(go), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [*STET, "run", "--", "sh", "-c", WAITS], cwd=repo, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for(lambda: ready.exists() and ready.read_text().strip(), "the agent to start")
        assert snapshots_left(repo) == 1, "the resident took the baseline"
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not alive(pid), "the resident to die")
        go.touch()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 4, err  # the agent's own code
    assert "stet: proposal c-" in err.decode() and "1 hunk(s) in 1 file(s)" in err.decode(), err
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"]
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert snapshots_left(repo) == 0 and proposals(repo) == 1
    assert {state for _, state in captures(repo / ".stet" / "stet.db")} == {"done"}


@pytest.mark.parametrize("point", ["run:after-snapshot", "run:after-agent"])
def test_a_resident_killed_in_a_half_of_the_run_the_run_captures_once(repo, point):
    """SIGKILL inside the resident as it takes the baseline (the client then does the whole run
    itself) or as it starts the capture (the client does the capture itself)."""
    made(repo)
    with faulty_resident(repo, point) as killed:
        p = stet("run", "--task", "t", "--", *AGENT, "1", cwd=repo, env=ON)
        assert killed.wait(timeout=60) == -signal.SIGKILL
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("check: ok") == 1, "the agent ran once"
    listed = hunks(repo)
    assert len(listed) == 7 and duplicates(listed) == [], listed
    assert proposals(repo) == 1 and snapshots_left(repo) == 0
    assert (repo / "a.py").read_text().startswith("LIMIT = 10\n"), "the files have their baseline back"


SLOW = """import os, time
with open("b.txt", "a") as f:
    f.write("delta\\n")
with open(os.environ["READY"], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
"""


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_stopping_a_run_through_the_resident_stops_the_agent_and_captures(repo, tmp_path, how):
    started(repo)
    ready = tmp_path / "ready"
    (tmp_path / "slow.py").write_text(SLOW)
    full = {**os.environ, **ON, "READY": str(ready), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [*STET, "run", "--", sys.executable, str(tmp_path / "slow.py")],
        cwd=repo,
        env=full,
        stderr=subprocess.PIPE,
        **FOREGROUND_JOB,
    )
    try:
        agent = int(wait_for(lambda: ready.exists() and ready.read_text().strip(), "the agent to start"))
        if how == "SIGTERM":
            proc.send_signal(signal.SIGTERM)  # to stet alone, as `kill` or a CI timeout does
        else:
            os.killpg(proc.pid, signal.SIGINT)  # the terminal sends Ctrl-C to the foreground group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == (143 if how == "SIGTERM" else 130), err
    assert not alive(agent), "the agent was stopped, not orphaned"
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"], "what the agent did is captured"
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert snapshots_left(repo) == 0


def test_ctrl_c_as_the_agent_starts_through_the_resident_is_the_agents(repo):
    """Ctrl-C the moment the agent has started (the agent sends it to the terminal's group itself,
    first thing): the thin client ignores it from before the agent exists, and the resident
    captures (in its own process, `stet run` once stopped there with nothing captured:
    tests/e2e/test_run_and_capture_outcomes.py)."""
    started(repo)
    agent = ["sh", "-c", "echo delta >> b.txt; kill -INT 0; sleep 60"]
    full = {**os.environ, **ON, "NO_COLOR": "1"}
    proc = subprocess.Popen([*STET, "run", "--", *agent], cwd=repo, env=full, stderr=subprocess.PIPE, **FOREGROUND_JOB)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"], ("what the agent did is captured", err)
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert snapshots_left(repo) == 0


def test_sigterm_while_the_resident_takes_the_baseline_stops_the_run_before_the_agent(repo, tmp_path):
    made(repo)
    slow = subprocess.Popen(  # a resident that pauses once the baseline is taken
        [sys.executable, "-m", "stet", "resident"],
        cwd=repo,
        env={**os.environ, **ON, "STET_FAULT": "run:after-snapshot~3"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    marker = tmp_path / "ran"
    try:
        wait_for(lambda: resident_pid(repo) == slow.pid, "the pausing resident to answer")
        full = {**os.environ, **ON, "NO_COLOR": "1"}
        proc = subprocess.Popen(
            [*STET, "run", "--", "touch", str(marker)], cwd=repo, env=full, stderr=subprocess.PIPE, text=True
        )
        wait_for(lambda: snapshots_left(repo) == 1, "the resident to take the baseline")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        slow.terminate()
        slow.wait(timeout=60)
    assert proc.returncode == 143, err
    assert "stopped before the agent started" in err and not marker.exists()
    assert snapshots_left(repo) == 0, "the run ended: its baseline is gone"
    assert hunks(repo) == []
