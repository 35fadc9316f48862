"""Issue 29, item 1: what a command reads as its input, named on its command line, never stops a
process, and a resident told to stop stops.

`stet propose --patch FIFO` blocked opening the pipe: in the resident (stet/resident/) it held the
one call slot for good, so every later call and hook waited the client's 120 s, and SIGTERM or
`stet resident --stop` did nothing. A file that is not a regular one is refused at once, and a
resident inside a slow call still stops when told to (the call is replayed by its client).

Real processes throughout: the thin client as installed, the resident it starts."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from support.clitools import STET, commit_all, db_summary, make_repo, stet, stet_json
from support.residents import ON, alive, calls, faulty_resident, resident_pid, stop, wait_for

OFF = {"STET_RESIDENT": "off"}
BASE = b"".join(b"line %d\n" % i for i in range(1, 11))


def patch_of(name: str) -> str:
    return f"--- a/{name}\n+++ b/{name}\n@@ -3 +3 @@\n-line 3\n+LINE THREE\n"


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (root / name).write_bytes(BASE)
    commit_all(root)
    assert stet("init", cwd=root).returncode == 0
    yield root
    stop(root)


def started(root: Path) -> int:
    assert stet("status", cwd=root, env=ON).returncode == 0
    return wait_for(lambda: resident_pid(root), "the resident to answer")


def unblock(fifo: Path) -> None:
    """Give a process blocked opening `fifo` for reading its writer (and an end of file)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # nobody waits on it


# --- 1. a FIFO, a slow call ------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--patch", "--edit"])
@pytest.mark.parametrize("how", ["fifo", "symlink to a fifo"])
@pytest.mark.parametrize("resident", [True, False], ids=["resident", "own process"])
def test_a_fifo_named_as_input_is_refused_at_once(repo, tmp_path, option, how, resident):
    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    named = fifo
    if how != "fifo":
        named = tmp_path / "p.diff"
        named.symlink_to(fifo)
    pid = started(repo) if resident else None
    store = db_summary(repo / ".stet" / "stet.db")
    try:
        p = stet("propose", option, str(named), cwd=repo, env=ON if resident else OFF, timeout=30)
    finally:
        unblock(fifo)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1 and "not a regular file" in p.stderr, p.stderr
    assert str(named) in p.stderr
    assert db_summary(repo / ".stet" / "stet.db") == store
    if resident:
        # The resident was never blocked: it answers the next call, the same process.
        before = calls(repo)
        assert stet("status", cwd=repo, env=ON, timeout=30).returncode == 0
        assert calls(repo) == before + 1
        assert resident_pid(repo) == pid


@pytest.mark.parametrize("how", ["SIGTERM", "stet resident --stop"])
def test_a_resident_inside_a_slow_call_stops_when_told_and_the_call_is_replayed(repo, how):
    """The resident pauses inside an accept, its decision committed, its edit not yet made (a
    blocking sleep: nothing of its event loop runs). Told to stop, it ends within a few seconds;
    the client replays the accept in its own process by its request id: applied once."""
    out = stet_json("propose", "--patch", "-", "--id", "p1", cwd=repo, input=patch_of("a.txt"), env=OFF)
    (hid,) = [h["id"] for h in out["hunks"]]
    with faulty_resident(repo, "decide:after-commit~600") as slow:
        client = subprocess.Popen(
            [*STET, "accept", hid, "--json"],
            cwd=repo,
            env={**os.environ, **ON, "NO_COLOR": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            wait_for(lambda: _status(repo, hid) == "accepted", "the decision to be committed")
            assert slow.poll() is None
            if how == "SIGTERM":
                os.kill(slow.pid, signal.SIGTERM)
            else:
                told = stet("resident", "--stop", cwd=repo, env=ON, timeout=30)
                assert told.returncode == 0 and f"asked {slow.pid} to stop" in told.stdout, told.stdout
            slow.wait(timeout=60)
            out_b, err_b = client.communicate(timeout=60)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    assert client.returncode == 0, err_b
    assert json.loads(out_b)["hunks"][0]["status"] == "applied"
    assert (repo / "a.txt").read_bytes() == BASE.replace(b"line 3\n", b"LINE THREE\n")
    # A new resident can start, and answers.
    pid = started(repo)
    assert pid != slow.pid and alive(pid)


def _status(root: Path, hid: str) -> str | None:
    conn = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        row = conn.execute("SELECT status FROM hunks WHERE id = ?", (hid,)).fetchone()
    finally:
        conn.close()
    return row[0] if row else None
