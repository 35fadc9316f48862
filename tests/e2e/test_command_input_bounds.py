"""What a command reads as its input, named on its command line or
piped in, never stops a process, never reaches the wrong process, never grows one without bound.

1. `stet propose --patch FIFO` blocked opening the pipe: in the resident (stet/resident/) it held
   the one call slot for good, so every later call and hook waited the client's 120 s, and SIGTERM
   or `stet resident --stop` did nothing. A file that is not a regular one is refused at once, and
   a resident inside a slow call still stops when told to (the call is replayed by its client).
2. `--patch <(git diff)` and `--patch /dev/stdin < p` name the caller's own descriptors: the
   resident cannot open the first and opened its own empty stdin for the second. They are read in
   the caller's process, as in a call of its own.
3. Standard input was read whole: `yes | stet hook claude-code` grew to gigabytes, then a
   MemoryError. It is read up to what the input may hold (a hook event: what the HTTP route takes;
   a patch: 40 MiB), then refused on one line.

Real processes throughout: the thin client as installed, the resident it starts, `yes` for an
endless input; peak memory is the `stet` process's own (wait4's rusage), under an address-space
limit so that a regression fails instead of exhausting the machine."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
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


# --- 3. the caller's own descriptors ----------------------------------------------------------


def test_the_callers_own_descriptors_are_read_by_the_caller(repo, tmp_path):
    started(repo)
    before = calls(repo)
    diffs = {}
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        diffs[name] = tmp_path / f"{name}.diff"
        diffs[name].write_text(patch_of(name))
    results = []
    # `--patch /dev/stdin < p`: the caller's stdin is a file.
    with open(diffs["a.txt"], "rb") as f:
        results.append(_run([*STET, "propose", "--patch", "/dev/stdin", "--json"], repo, stdin=f))
    # ... or a pipe.
    results.append(stet("propose", "--patch", "/dev/stdin", "--json", cwd=repo, input=patch_of("b.txt"), env=ON))
    # `--patch <(cat p)`: a process substitution, /dev/fd/63 of the caller.
    script = '"$@" --patch <(cat "$DIFF")'
    results.append(_run(["bash", "-c", script, "-", *STET, "propose", "--json"], repo, DIFF=str(diffs["c.txt"])))
    # `--edit /proc/self/fd/N`: a pipe the caller holds open.
    edit = {"changes": {(repo / "d.txt").as_uri(): [_line_3_edit()]}}
    script = '"$@" --edit /proc/self/fd/3 3< <(printf %s "$EDIT")'
    results.append(_run(["bash", "-c", script, "-", *STET, "propose", "--json"], repo, EDIT=json.dumps(edit)))
    for p in results:
        assert p.returncode == 0, (p.stdout, p.stderr)
        assert len(json.loads(p.stdout)["hunks"]) == 1, p.stdout
    files = sorted(Path(h["uri"]).name for h in stet_json("status", cwd=repo, env=OFF)["hunks"])
    assert files == ["a.txt", "b.txt", "c.txt", "d.txt"]
    assert calls(repo) == before + 4, "each was answered by the resident, with the input the caller read"


def _line_3_edit() -> dict:
    span = {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 6}}
    return {"range": span, "newText": "LINE THREE"}


def _run(argv: list[str], cwd: Path, stdin=None, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, **ON, "NO_COLOR": "1", **env}
    p = subprocess.run(argv, cwd=cwd, stdin=stdin, capture_output=True, env=full, timeout=60, text=True)
    return p


# --- 6. an endless standard input ---------------------------------------------------------------

# Runs argv[3:] under an address-space limit of argv[2] bytes, its stdin that of this process, and
# writes its peak resident memory (KB) into argv[1]; exits with its exit code.
LAUNCHER = """
import os, resource, sys
pid = os.fork()
if pid == 0:
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(sys.argv[3], sys.argv[3:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""
ADDRESS_SPACE = 2 << 30  # far above what a bounded read needs; an unbounded one stops here
PEAK_MB = 400  # a hook of 64 MiB, held twice at most, and the interpreter


def endless(args: list[str], cwd: Path, env: dict) -> tuple[subprocess.CompletedProcess, float]:
    """`yes | stet ARGS`: its result and its peak resident memory (MB)."""
    full = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    full.update({"NO_COLOR": "1", **env})
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
        try:
            launcher = [sys.executable, "-c", LAUNCHER, str(peak), str(ADDRESS_SPACE), *STET, *args]
            p = subprocess.run(
                launcher, cwd=cwd, env=full, stdin=yes.stdout, capture_output=True, text=True, timeout=120
            )
        finally:
            yes.kill()
            yes.wait()
            assert yes.stdout is not None
            yes.stdout.close()
        return p, int(peak.read_text()) / 1024


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "own process"])
def test_an_endless_hook_input_is_refused_in_bounded_memory(repo, resident):
    if resident:
        started(repo)
    store = db_summary(repo / ".stet" / "stet.db")
    p, peak = endless(["hook", "claude-code"], repo, ON if resident else OFF)
    # A hook never blocks the agent: exit 0, the reason on one line.
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert p.stderr == "stet hook: TooLarge: the hook input is larger than 64 MiB\n", p.stderr
    assert p.stdout == ""
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    assert db_summary(repo / ".stet" / "stet.db") == store
    if resident:
        assert resident_pid(repo) is not None


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "own process"])
def test_an_endless_patch_on_stdin_is_refused_in_bounded_memory(repo, resident):
    if resident:
        started(repo)
    store = db_summary(repo / ".stet" / "stet.db")
    p, peak = endless(["propose", "--patch", "-"], repo, ON if resident else OFF)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr == "stet: TooLarge: stdin is larger than 40 MiB: propose the change in smaller parts\n", p.stderr
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    assert db_summary(repo / ".stet" / "stet.db") == store
