"""`stet run` and `stet capture` tell the truth: the same agent run twice
before anyone reviews, files Stet refused, and the agent's relative paths in a worktree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import clitools
from support.capturetools import AGENT, agent_repo, captures, duplicates, hunks, kinds
from support.clitools import FOREGROUND_JOB, STET, snapshot, stet, stet_json


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


# --- the same run twice before anyone reviews ------------------------------------------


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


@pytest.fixture
def engine_repo(tmp_path, engine):
    """The same repository, its review on each store engine in turn."""
    root = agent_repo(tmp_path / "repo")
    clitools.ENGINE_ENV.clear()
    if engine.pg:
        clitools.ENGINE_ENV["STET_DB"] = engine.db(root)
    yield root
    clitools.ENGINE_ENV.clear()


def test_the_same_edits_captured_again_under_the_same_id(engine_repo):
    repo = engine_repo
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


# --- files Stet refused are an exit code of their own -----------------------------------

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
    remove_as_told(p, repo)


# --- the agent's relative paths in a worktree, and nothing left behind --------------------

WRITER = """import os, sys
args = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
plain = [a for a in sys.argv[1:] if not a.startswith("-")]
with open(args["--prompt"]) as f:
    prompt = f.read()
with open(plain[0], "a") as f:
    f.write(prompt)
with open(os.environ["AGENT_LOG"], "w") as f:
    f.write(repr((sys.argv, os.getcwd(), os.environ.get("PWD"))))
sys.exit(int(os.environ.get("AGENT_EXIT", "0")))
"""


def worktree_env(tmp_path: Path, **extra: str) -> tuple[dict, Path]:
    """A private TMPDIR (what `stet run --worktree` leaves there is seen) and the agent's log."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return {"TMPDIR": str(tmp), "AGENT_LOG": str(tmp_path / "agent.log"), **extra}, tmp


def nothing_left(repo: Path, tmp: Path) -> None:
    assert list(tmp.iterdir()) == [], "no temporary folder left"
    out = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    assert len(out.splitlines()) == 1, out


def remove_as_told(p: subprocess.CompletedProcess, cwd: Path) -> None:
    """Run exactly the command `stet run` printed to remove the worktree it kept."""
    advice = p.stderr.split("remove it with `")[1].split("`")[0]
    assert subprocess.run(advice, shell=True, cwd=cwd, capture_output=True).returncode == 0, advice


def test_worktree_run_of_an_agent_outside_the_repository_from_its_root(repo, tmp_path):
    (tmp_path / "agent.py").write_text(WRITER)
    (tmp_path / "prompt.txt").write_text("delta\n")
    env, tmp = worktree_env(tmp_path)
    p = stet("run", "--worktree", "--", "python3", "../agent.py", "--prompt=../prompt.txt", "b.txt", cwd=repo, env=env)
    assert p.returncode == 0, p.stderr
    argv, cwd, pwd = eval((tmp_path / "agent.log").read_text())
    assert argv == [str(tmp_path / "agent.py"), f"--prompt={tmp_path / 'prompt.txt'}", "b.txt"]
    assert cwd == pwd and cwd != str(repo), "the agent works in its worktree"
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"]
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    nothing_left(repo, tmp)


def test_worktree_run_from_a_subfolder_with_a_script_git_does_not_have(repo, tmp_path):
    (repo / "sub").mkdir()
    (repo / "sub" / "x.txt").write_text("x\n")
    subprocess.run(["git", "add", "sub"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "sub"], cwd=repo, check=True)
    (repo / "agent.py").write_text(WRITER)  # the agent's script: not in git, so not in the worktree
    (repo / "sub" / "prompt.txt").write_text("more\n")
    env, tmp = worktree_env(tmp_path)
    p = stet(
        "run", "--worktree", "--", "python3", "../agent.py", "--prompt=./prompt.txt", "x.txt", cwd=repo / "sub", env=env
    )
    assert p.returncode == 0, p.stderr
    argv, cwd, pwd = eval((tmp_path / "agent.log").read_text())
    assert argv == [str(repo / "agent.py"), f"--prompt={repo / 'sub' / 'prompt.txt'}", "x.txt"]
    assert cwd == pwd and cwd.endswith("/sub") and not cwd.startswith(str(repo))
    assert [(Path(h["uri"]).name, h["newText"]) for h in hunks(repo)] == [("x.txt", "more\n")]
    assert (repo / "sub" / "x.txt").read_text() == "x\n"
    assert "stet: ../agent.py is not in the agent's worktree: passed as " in p.stderr
    nothing_left(repo, tmp)


def test_plain_words_options_and_the_command_name_are_passed_as_written(repo, tmp_path):
    (tmp_path / "agent.py").write_text(WRITER)
    (tmp_path / "prompt.txt").write_text("delta\n")
    (repo / "python3").write_text("not the interpreter\n")  # a file named like the command, not in git
    (repo / "note").write_text("a word that is also a file\n")
    env, tmp = worktree_env(tmp_path)
    args = ["python3", str(tmp_path / "agent.py"), "b.txt", "--prompt=../prompt.txt", "-m", "note", "--x=nothing/here"]
    p = stet("run", "--worktree", "--", *args, cwd=repo, env=env)
    assert p.returncode == 0, p.stderr
    argv, _, _ = eval((tmp_path / "agent.log").read_text())
    assert argv == [args[1], "b.txt", f"--prompt={tmp_path / 'prompt.txt'}", "-m", "note", "--x=nothing/here"]
    assert "stet: note is not in the agent's worktree (not in git); to pass yours, write ./note" in p.stderr
    nothing_left(repo, tmp)


@pytest.mark.parametrize("how", ["fails", "killed", "refused", "not-found"])
def test_worktree_run_leaves_nothing_behind_or_says_how_to_remove_all_of_it(repo, tmp_path, how):
    (tmp_path / "agent.py").write_text(WRITER)
    (tmp_path / "prompt.txt").write_text("delta\n")
    env, tmp = worktree_env(tmp_path, AGENT_EXIT="3" if how == "fails" else "0")
    argv = ["python3", "../agent.py", "--prompt=../prompt.txt", "b.txt"]
    if how == "killed":
        argv = ["sh", "-c", "echo delta >> b.txt; kill -9 $$"]
    elif how == "refused":
        (repo / "b.txt").write_text("alpha\nBETA (mine)\ngamma\n")  # the developer's change, same lines
        argv = ["sh", "-c", "printf 'alpha\\nbeta (agent)\\ngamma\\n' > b.txt"]
    elif how == "not-found":
        argv = ["no-such-agent-anywhere"]
    p = stet("run", "--worktree", "--", *argv, cwd=repo, env=env)
    expected = {"fails": 3, "killed": 137, "refused": 1, "not-found": 127}[how]
    assert p.returncode == expected, (p.returncode, p.stderr)
    if how == "not-found":
        assert "the worktree is kept" not in p.stderr
    else:
        assert "the worktree is kept at" in p.stderr, p.stderr
        remove_as_told(p, repo)
    nothing_left(repo, tmp)


SLOW = """import os, sys, time
with open("b.txt", "a") as f:
    f.write("delta\\n")
with open(os.environ["AGENT_PID"], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("worktree", [True, False], ids=["worktree", "in-place"])
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_stopping_stet_run_stops_the_agent_captures_and_leaves_nothing_behind(repo, tmp_path, how, worktree):
    (tmp_path / "slow.py").write_text(SLOW)
    pid_file = tmp_path / "agent.pid"
    env, tmp = worktree_env(tmp_path, AGENT_PID=str(pid_file))
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    full.update({"NO_COLOR": "1", **env})
    args = [*STET, "run", *(["--worktree"] if worktree else []), "--", sys.executable, str(tmp_path / "slow.py")]
    proc = subprocess.Popen(args, cwd=repo, env=full, stderr=subprocess.PIPE, text=True, **FOREGROUND_JOB)
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate()
            raise AssertionError(f"the agent did not start: stet exited {proc.returncode}: {err}")
        time.sleep(0.05)
    agent_pid = int(pid_file.read_text())
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)  # to stet alone, as `kill` or a CI timeout does
    else:
        os.killpg(proc.pid, signal.SIGINT)  # the terminal sends Ctrl-C to the foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (143 if how == "SIGTERM" else 130), err
    assert not alive(agent_pid), "the agent was stopped, not orphaned"
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"], "what the agent did is captured"
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    if worktree:
        assert "the worktree is kept at" in err
        remove_as_told(subprocess.CompletedProcess(args, proc.returncode, "", err), repo)
    nothing_left(repo, tmp)
    code, findings = doctor(repo)
    assert code == 0, findings


@pytest.mark.parametrize("worktree", [True, False], ids=["worktree", "in-place"])
def test_ctrl_c_as_the_agent_starts_is_the_agents_and_the_run_captures(repo, tmp_path, worktree):
    """Ctrl-C the moment the agent has started (here the agent sends it to the terminal's group
    itself, first thing): it is the agent's. Stet once ignored it only after preparing its
    capture, so a Ctrl-C in between stopped Stet with the agent's change left in the files and
    nothing captured (the Ctrl-C tests above, on a busy machine)."""
    env, tmp = worktree_env(tmp_path)
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    full.update({"NO_COLOR": "1", **env})
    agent = ["sh", "-c", "echo delta >> b.txt; kill -INT 0; sleep 60"]
    args = [*STET, "run", *(["--worktree"] if worktree else []), "--", *agent]
    proc = subprocess.Popen(args, cwd=repo, env=full, stderr=subprocess.PIPE, text=True, **FOREGROUND_JOB)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert [h["newText"] for h in hunks(repo)] == ["delta\n"], ("what the agent did is captured", err)
    assert (repo / "b.txt").read_text() == "alpha\nbeta\ngamma\n"
    if worktree:
        remove_as_told(subprocess.CompletedProcess(args, proc.returncode, "", err), repo)
    nothing_left(repo, tmp)


def test_sigterm_before_the_agent_starts_stops_the_run_and_leaves_nothing(repo, tmp_path):
    env, tmp = worktree_env(tmp_path, STET_FAULT="run:after-snapshot~3")  # Stet pauses before the agent
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    full.update({"NO_COLOR": "1", **env})
    marker = tmp_path / "ran"
    args = [*STET, "run", "--worktree", "--", "touch", str(marker)]
    proc = subprocess.Popen(args, cwd=repo, env=full, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "the agent works in" in line, line
    proc.send_signal(signal.SIGTERM)
    err = proc.stderr.read()
    assert proc.wait(60) == 143, err
    assert "stopped before the agent started" in err and not marker.exists()
    nothing_left(repo, tmp)


def test_doctors_advice_for_a_worktree_a_killed_run_left_leaves_nothing(repo, tmp_path):
    env, tmp = worktree_env(tmp_path, STET_FAULT="run:after-agent")
    p = stet("run", "--worktree", "--", "sh", "-c", "echo delta >> b.txt", cwd=repo, env=env)
    assert p.returncode == -signal.SIGKILL
    code, findings = doctor(repo)
    (left,) = [f for f in findings if "a worktree left by" in f["what"]]
    assert code == 1 and left["level"] == "warn"
    advice = left["todo"].split("then `")[1].rstrip("`")
    assert subprocess.run(advice, shell=True, cwd=repo, capture_output=True).returncode == 0, advice
    nothing_left(repo, tmp)
