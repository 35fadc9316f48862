"""The resident process (stet/resident/) serves many callers, and
none of them can make it act for another, hold it, or reach the wrong workspace through it.

1. It made files with the umask of whichever call started it: a file `stet accept` created under
   umask 077 came out 0666 when a hook had started the resident under umask 000. What a call makes
   gets its caller's umask (workspace/modes.py), whatever the resident's own.
2. Connections that never send a call were held forever: 1,100 of them took every descriptor and
   every later call waited the client's 120 s. A call must arrive within a few seconds, and past a
   bound connections are declined at once (the client runs the call itself). A resident that does
   not start a call (busy or wedged) holds no client past ask.START: the client runs it, and the
   resident never starts it after that (nothing is done twice).
3. Moving the workspace: the old resident, reached through the moved socket, took its store for
   lost and wrote `stet.db.rescued-*` (the whole review) into whatever project now sat at the old
   path. It notices its folder moved, stops, and the call runs (and a fresh resident starts) for
   the moved workspace; nothing is written at the old path.
4. The thin client sent any hook whose stdin merely contained `SessionStart` or
   `UserPromptSubmit` (a PostToolUse carries the whole file) to its own process. It routes by the
   parsed event.

Real processes throughout: the thin client as installed, the resident it starts (or one started
by hand with a fault point that pauses it inside a call), real sockets and files."""

from __future__ import annotations

import json
import os
import resource
import socket
import sqlite3
import stat
import subprocess
import time
from pathlib import Path

import pytest

from support.clitools import STET, commit_all, make_repo, stet, stet_json
from support.residents import ON, alive, calls, faulty_resident, resident_pid, stop, wait_for

OFF = {"STET_RESIDENT": "off"}
BASE = b"".join(b"line %d\n" % i for i in range(1, 11))
PATCH = "--- a/a.txt\n+++ b/a.txt\n@@ -3 +3 @@\n-line 3\n+LINE THREE\n"
NEW_FILE = "--- /dev/null\n+++ b/sub/deeper/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "a.txt").write_bytes(BASE)
    commit_all(root)
    assert stet("init", cwd=root, env=OFF).returncode == 0
    yield root
    stop(root)


def started(root: Path, umask: int | None = None) -> int:
    """A call that starts the resident (under `umask`, as the caller that starts it has), and
    the resident's pid once it answers."""
    if umask is None:
        assert stet("status", cwd=root, env=ON).returncode == 0
    else:
        assert call(root, ["status"], umask=umask).returncode == 0
    return wait_for(lambda: resident_pid(root), "the resident to answer")


def call(root: Path, args: list[str], *, umask: int = -1, input: bytes | None = None, timeout: float = 60, **kw):
    """`stet ARGS` in `root` with the resident on, run under `umask` (-1: this process's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    env.update({"NO_COLOR": "1", **ON})
    return subprocess.run(
        [*STET, *args], cwd=root, env=env, input=input, capture_output=True, timeout=timeout, umask=umask, **kw
    )


def umask_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        line = next(line for line in f if line.startswith("Umask:"))
    return int(line.split()[1], 8)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# --- 2. the caller's umask ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resident_umask", "caller_umask", "file_mode", "folder_mode"),
    [(0o000, 0o077, 0o600, 0o700), (0o077, 0o022, 0o644, 0o755), (0o022, 0o027, 0o640, 0o750)],
    ids=["started under 000, called under 077", "started under 077, called under 022", "022 then 027"],
)
def test_what_a_call_makes_gets_its_callers_umask(repo, resident_umask, caller_umask, file_mode, folder_mode):
    pid = started(repo, umask=resident_umask)
    assert umask_of(pid) == resident_umask
    out = stet_json("propose", "--patch", "-", cwd=repo, input=NEW_FILE, env=OFF)
    (hid,) = [h["id"] for h in out["hunks"]]
    before = calls(repo)
    p = call(repo, ["accept", hid, "--json"], umask=caller_umask)
    assert p.returncode == 0, p.stderr
    assert calls(repo) == before + 1, "the accept was answered by the resident"
    made = repo / "sub" / "deeper" / "new.txt"
    assert made.read_bytes() == b"one\ntwo\n"
    assert oct(mode(made)) == oct(file_mode)
    assert oct(mode(repo / "sub")) == oct(folder_mode)
    assert oct(mode(repo / "sub" / "deeper")) == oct(folder_mode)
    assert umask_of(pid) == resident_umask, "the resident's own umask is never changed"


# --- 4. connections that send nothing, a resident that does not start a call ---------------------


def _connect(root: Path) -> socket.socket:
    """A connection to the resident's socket, through its folder's handle (a short address);
    while its backlog is full (it has not accepted yet), tried again for a few seconds."""
    folder = os.open(root / ".stet", os.O_RDONLY | os.O_DIRECTORY)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    end = time.monotonic() + 10
    try:
        while True:
            try:
                s.connect(f"/proc/self/fd/{folder}/resident.sock")
                return s
            except BlockingIOError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.01)
    except OSError:
        s.close()
        raise
    finally:
        os.close(folder)


def _common_descriptor_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, soft), hard))


def test_connections_that_send_no_call_are_not_held(repo):
    # The resident starts with the common default of 1,024 descriptors (the call that starts it has it).
    assert call(repo, ["status"], preexec_fn=_common_descriptor_limit).returncode == 0
    pid = wait_for(lambda: resident_pid(repo), "the resident to answer")
    assert resource.prlimit(pid, resource.RLIMIT_NOFILE)[0] <= 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1_100
    if hard != resource.RLIM_INFINITY and hard < want + 200:
        pytest.skip(f"needs {want + 200} descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want + 200), hard))
    idle: list[socket.socket] = []
    try:
        for _ in range(want):
            try:
                idle.append(_connect(repo))
            except OSError:
                break  # the backlog stays full: connecting does not hold anything either
        assert len(idle) > 1024, f"only {len(idle)} connections"
        # While they are open (and silent), a call is answered at once: by the resident, or,
        # when it declines for too many connections, by the client in its own process.
        t0 = time.monotonic()
        p = call(repo, ["status", "--json"], timeout=60)
        took = time.monotonic() - t0
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["hunks"] == []
        assert took < 20, f"the call took {took:.1f} s"
        # What it holds is bounded (the connections it declines are closed as it accepts them).
        wait_for(lambda: len(os.listdir(f"/proc/{pid}/fd")) < 200, "the resident to hold under 200 descriptors")
        # The silent ones are closed by the resident within its deadline.
        first = idle[0]
        first.setblocking(True)
        first.settimeout(60)
        assert first.recv(1) == b"", "a connection that sent no call is closed"
    finally:
        for s in idle:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    # The same resident answers the next calls.
    before = calls(repo)
    assert stet("status", cwd=repo, env=ON).returncode == 0
    assert calls(repo) == before + 1
    assert resident_pid(repo) == pid


def test_a_call_a_wedged_resident_does_not_start_runs_in_the_callers_process_once(repo):
    """The resident pauses inside a propose (a blocking sleep: nothing of it runs). An accept
    and a status meanwhile do not wait for it: each runs in its own process after ask.START
    (10 s), well within the minute an agent gives a hook; when the resident wakes, it never
    starts them (the accept is applied once)."""
    out = stet_json("propose", "--patch", "-", "--id", "p1", cwd=repo, input=PATCH, env=OFF)
    (hid,) = [h["id"] for h in out["hunks"]]
    other = "--- a/a.txt\n+++ b/a.txt\n@@ -8 +8 @@\n-line 8\n+LINE EIGHT\n"
    with faulty_resident(repo, "propose:after-commit~35") as slow:
        before = calls(repo)
        wedging = subprocess.Popen(
            [*STET, "propose", "--patch", "-", "--id", "p2"],
            cwd=repo,
            env={**os.environ, **ON, "NO_COLOR": "1"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            wedging.stdin.write(other.encode())
            wedging.stdin.close()
            wait_for(lambda: _proposals(repo) == 2, "the second proposal to be committed")
            t0 = time.monotonic()
            accept = call(repo, ["accept", hid, "--json"], timeout=60)
            status = call(repo, ["status", "--json"], timeout=60)
            took = time.monotonic() - t0
            assert slow.poll() is None and wedging.poll() is None, "the resident was still inside the propose"
        finally:
            wedging.wait(timeout=120)
        # Awake, the resident answered the propose and nothing else: it never started the two.
        assert calls(repo) == before + 1
    assert accept.returncode == 0, accept.stderr
    assert b"did not start the call within 10 s: it runs in this process" in accept.stderr
    assert json.loads(accept.stdout)["hunks"][0]["status"] == "applied"
    assert status.returncode == 0, status.stderr
    assert [h["proposalId"] for h in json.loads(status.stdout)["hunks"]] == ["p2"]  # the pending one
    assert took < 2 * 40, f"the two calls took {took:.1f} s"
    assert wedging.returncode == 0, wedging.stderr
    assert (repo / "a.txt").read_bytes() == BASE.replace(b"line 3\n", b"LINE THREE\n")
    assert _op_count(repo, "accept") == 1


def _proposals(root: Path) -> int:
    conn = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        return conn.execute("SELECT count(*) FROM proposals").fetchone()[0]
    finally:
        conn.close()


def _op_count(root: Path, kind: str) -> int:
    conn = sqlite3.connect(root / ".stet" / "stet.db")
    try:
        return conn.execute("SELECT count(*) FROM oplog WHERE kind = ?", (kind,)).fetchone()[0]
    finally:
        conn.close()


# --- 5. a moved workspace ---------------------------------------------------------------------


def test_a_moved_workspaces_resident_never_writes_at_its_old_place(repo, tmp_path):
    """The resident pauses inside a propose; meanwhile the workspace is moved and another
    project takes its old path. A call from the moved workspace reaches the old resident through
    the moved socket: it notices, stops, writes nothing at the old path; the call runs and a new
    resident answers for the moved workspace."""
    moved = tmp_path / "moved"
    with faulty_resident(repo, "propose:after-commit~8") as slow:
        proposing = subprocess.Popen(
            [*STET, "propose", "--patch", "-", "--id", "p1"],
            cwd=repo,
            env={**os.environ, **ON, "NO_COLOR": "1"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proposing.stdin is not None
        proposing.stdin.write(PATCH.encode())
        proposing.stdin.close()
        wait_for(lambda: _proposals(repo) == 1, "the proposal to be committed")
        repo.rename(moved)
        other = make_repo(tmp_path / "repo")  # another project where the workspace was
        (other / "README").write_text("another project\n")
        commit_all(other)
        assert stet("init", cwd=other, env=OFF).returncode == 0
        there = _tree(other)
        status = subprocess.Popen(
            [*STET, "status", "--json"],
            cwd=moved,
            env={**os.environ, **ON, "NO_COLOR": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = status.communicate(timeout=120)
        proposing.wait(timeout=120)
        slow.wait(timeout=60)  # it stopped
    assert status.returncode == 0, err
    assert [h["status"] for h in json.loads(out)["hunks"]] == ["pending"]
    assert _tree(other) == there, "nothing was written into the project at the old path"
    assert not list((other / ".stet").glob("stet.db.rescued-*"))
    # A resident of its own answers for the moved workspace.
    pid = wait_for(lambda: _new_resident(moved, slow.pid), "a resident for the moved workspace")
    assert alive(pid)
    stop(moved)


def _new_resident(root: Path, old: int) -> int | None:
    stet("status", cwd=root, env=ON)
    pid = resident_pid(root)
    return pid if pid not in (None, old) else None


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `root` but git's own: its mode and content (the store: its size)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git/") or rel == ".git" or path.is_dir() or rel.startswith(".stet/resident."):
            continue
        data = path.read_bytes() if path.suffix != ".db" else str(path.stat().st_size).encode()
        out[rel] = (mode(path), data)
    return out


# --- 15. hooks routed by their parsed event ---------------------------------------------------


def _hook(root: Path, event: str, **fields: object) -> bytes:
    payload = {
        "session_id": "s1",
        "transcript_path": str(root / "t.jsonl"),
        "cwd": str(root),
        "hook_event_name": event,
        **fields,
    }
    return json.dumps(payload).encode()


def test_a_hook_is_routed_by_its_event_not_by_words_in_it(repo):
    started(repo)
    text = 'if event == "SessionStart" or event == "UserPromptSubmit":\n    pass\n'
    (repo / "hooks.py").write_text(text)
    post = _hook(
        repo,
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(repo / "hooks.py"), "content": text},
        tool_response={"filePath": str(repo / "hooks.py"), "originalFile": text, "type": "update"},
        tool_use_id="toolu_1",
    )
    assert b"SessionStart" in post and b"UserPromptSubmit" in post
    before = calls(repo)
    p = call(repo, ["hook", "claude-code"], input=post)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert calls(repo) == before + 1, "the PostToolUse was answered by the resident"
    # The events whose answer is recorded as told once written run in the caller's process.
    for event, extra in (("SessionStart", {"source": "startup"}), ("UserPromptSubmit", {"prompt": "go on"})):
        p = call(repo, ["hook", "claude-code"], input=_hook(repo, event, **extra))
        assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    escaped = b'{"hook_event_name": "Session\\u0053tart", "session_id": "s1", "cwd": "%s"}' % str(repo).encode()
    assert call(repo, ["hook", "claude-code"], input=escaped).returncode == 0
    assert calls(repo) == before + 1, "neither was answered by the resident"


# --- 6. calls that only read, side by side -------------------------------------------------------


def test_calls_that_only_read_are_answered_side_by_side(repo):
    """The resident pauses inside every call that only reads (its event loop free). A second
    `stet status` is taken while the first is still inside: both are the resident's (neither
    falls back to its own process after ask.START), and both answer. A write still runs alone:
    see the wedged propose above, which a status waits for."""
    stet_json("propose", "--patch", "-", "--id", "p1", cwd=repo, input=PATCH, env=OFF)
    stop(repo)
    with faulty_resident(repo, "resident:read~30"):
        before = calls(repo)
        env = {**{k: v for k, v in os.environ.items() if k != "STET_FAULT"}, **ON, "NO_COLOR": "1"}
        first, second = (
            subprocess.Popen(
                [*STET, "status", "--json"], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for _ in range(2)
        )
        try:
            wait_for(lambda: calls(repo) == before + 2, "both reads to be inside the resident at once", 25)
            assert first.poll() is None and second.poll() is None, "a read ended before the other was taken"
        finally:
            outs = [p.communicate(timeout=120) for p in (first, second)]
        assert calls(repo) == before + 2  # neither was answered twice, nor by its own process
    for p, (out, err) in zip((first, second), outs):
        assert p.returncode == 0, err
        assert b"runs in this process" not in err, err
        assert [h["proposalId"] for h in json.loads(out)["hunks"]] == ["p1"]
