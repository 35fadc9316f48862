"""The instant path: `stet` hands the calls agents run often to a resident process
per workspace (stet/resident/), started by the first call, over `.stet/resident.sock`.

Real processes throughout: the thin client as installed, the resident it starts, SIGKILL for
real. What is checked: the answers are the ones a call in its own process gives; the socket and
its folder are this user's alone; a resident killed mid-call loses and doubles nothing (the
client replays the call by its request id); what is planted at its place is refused, never used;
it stops when idle or when its folder goes; several checkouts of one PostgreSQL review each
have theirs."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.clitools import commit_all, git, make_repo, stet, stet_json
from support.engines import Databases, cluster
from support.residents import ON, alive, calls, faulty_resident, resident_pid, stop, wait_for

BASE = b"".join(b"line %d\n" % i for i in range(1, 21))
PATCH = "--- a/a.txt\n+++ b/a.txt\n@@ -5 +5,2 @@\n-line 5\n+LINE FIVE\n+inserted after five\n"
DONE = BASE.replace(b"line 5\n", b"LINE FIVE\ninserted after five\n")


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / "a.txt").write_bytes(BASE)
    (root / "b.txt").write_bytes(b"alpha\nbeta\ngamma\n")
    commit_all(root)
    yield root
    stop(root)


def propose(root: Path, env: dict | None = None) -> str:
    out = stet_json("propose", "--patch", "-", "--id", "p1", cwd=root, input=PATCH, env=env)
    (h,) = out["hunks"]
    return h["id"]


def started(root: Path) -> int:
    """Make a call that starts the resident, and wait until it answers."""
    assert stet("status", cwd=root, env=ON).returncode == 0
    return wait_for(lambda: resident_pid(root), "the resident to answer")


def test_the_resident_answers_as_the_command_in_its_own_process(repo):
    hid = propose(repo)
    started(repo)
    before = calls(repo)
    own = {"STET_RESIDENT": "off"}
    for args in (["status"], ["status", "--json"], ["status", "--all"], ["log"], ["log", "--json"]):
        here, there = stet(*args, cwd=repo, env=own), stet(*args, cwd=repo, env=ON)
        assert (there.returncode, there.stdout, there.stderr) == (here.returncode, here.stdout, here.stderr), args
    # Errors too: the same words, the same exit code.
    for args in (["accept", "h-nope"], ["status", "--bogus"], ["reject"]):
        here, there = stet(*args, cwd=repo, env=own), stet(*args, cwd=repo, env=ON)
        assert (there.returncode, there.stdout, there.stderr) == (here.returncode, here.stdout, here.stderr), args
    assert calls(repo) == before + 8, "each of those calls was answered by the resident"
    # A decision through the resident is the durable one: the file and the store say so.
    accepted = stet("accept", hid, "--json", cwd=repo, env=ON)
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["hunks"][0]["status"] == "applied"
    assert (repo / "a.txt").read_bytes() == DONE
    assert stet_json("status", "--all", cwd=repo, env=own)["hunks"][0]["status"] == "applied"
    # What another process did since is seen at once by the resident's next answer.
    assert stet("undo", hid, cwd=repo, env=own).returncode == 0
    assert stet_json("status", cwd=repo, env=ON)["hunks"][0]["status"] == "pending"
    assert (repo / "a.txt").read_bytes() == BASE


def test_every_decision_goes_through_the_resident(repo):
    """Every decision kind of the table is routed, reapply too (it once ran in its own process)."""
    hid = propose(repo)
    started(repo)
    assert stet("accept", hid, cwd=repo, env=ON).returncode == 0
    (repo / "a.txt").write_bytes(BASE)  # the applied change removed from the file
    before = calls(repo)
    p = stet("reapply", hid, "--json", cwd=repo, env=ON)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["hunks"][0]["status"] == "applied"
    assert (repo / "a.txt").read_bytes() == DONE
    assert calls(repo) == before + 1, "the resident answered the reapply"


def test_the_socket_and_its_folder_are_this_users_alone(repo):
    propose(repo)
    pid = started(repo)
    home = repo / ".stet"
    sock = home / "resident.sock"
    assert stat.S_ISSOCK(sock.lstat().st_mode)
    assert stat.S_IMODE(sock.lstat().st_mode) == 0o600
    assert stat.S_IMODE(home.lstat().st_mode) == 0o700
    assert (home / "resident.pid").read_text().strip() == str(pid)
    # The resident checks who connects: its peer is this user, and it says which pid it is.
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        creds = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        assert int.from_bytes(creds[:4], sys.byteorder) == pid
        assert int.from_bytes(creds[4:8], sys.byteorder) == os.geteuid()
    # Garbage on the socket does nothing and does not stop it.
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        s.sendall(b"\x00\x00\x00\x05hello and more")
        s.shutdown(socket.SHUT_WR)
        assert s.recv(100) == b""
    assert resident_pid(repo) == pid


@pytest.mark.parametrize("point", ["decide:after-commit", "effect:before-write", "effect:after-write"])
def test_a_resident_killed_mid_accept_loses_and_doubles_nothing(repo, point):
    """SIGKILL inside the resident, at the points where a decision is committed but its edit not
    yet (or just) made: the client gets no answer, replays the call in its own process with the
    same request id, and the hunk is applied exactly once."""
    hid = propose(repo)
    with faulty_resident(repo, point) as killed:
        p = stet("accept", hid, "--json", cwd=repo, env=ON)
        assert killed.wait(timeout=60) == -signal.SIGKILL
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert json.loads(p.stdout)["hunks"][0]["status"] == "applied"
    assert (repo / "a.txt").read_bytes() == DONE
    conn = sqlite3.connect(repo / ".stet" / "stet.db")
    try:
        decisions = conn.execute("SELECT COUNT(*) FROM oplog WHERE kind = 'accept'").fetchone()[0]
    finally:
        conn.close()
    assert decisions == 1, "one decision in the operation log"
    # The next call finds a new resident (the client started one) and the same truth.
    wait_for(lambda: resident_pid(repo) not in (None, killed.pid), "a new resident")
    assert stet_json("status", "--all", cwd=repo, env=ON)["hunks"][0]["status"] == "applied"
    assert (repo / "a.txt").read_bytes() == DONE


def test_a_resident_killed_mid_propose_leaves_one_proposal(repo):
    other = "--- a/b.txt\n+++ b/b.txt\n@@ -2 +2 @@\n-beta\n+BETA\n"
    assert stet("propose", "--patch", "-", cwd=repo, input=other).returncode == 0  # the store, made
    with faulty_resident(repo, "propose:after-commit") as killed:
        p = stet("propose", "--patch", "-", cwd=repo, input=PATCH, env=ON)
        assert killed.wait(timeout=60) == -signal.SIGKILL
    assert p.returncode == 0, (p.stdout, p.stderr)
    hunks = stet_json("status", "--all", cwd=repo, env={"STET_RESIDENT": "off"})["hunks"]
    assert sorted(h["uri"].rsplit("/", 1)[1] for h in hunks) == ["a.txt", "b.txt"], hunks
    assert {h["status"] for h in hunks} == {"pending"}


def test_a_killed_residents_socket_is_replaced_and_calls_go_on(repo):
    hid = propose(repo)
    pid = started(repo)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), "the resident to die")
    assert (repo / ".stet" / "resident.sock").exists(), "a SIGKILL leaves its socket behind"
    # The next call is answered (in its own process) and starts a new resident.
    assert stet_json("accept", hid, cwd=repo, env=ON)["hunks"][0]["status"] == "applied"
    new = wait_for(lambda: resident_pid(repo), "a new resident")
    assert new != pid
    assert stet_json("status", "--all", cwd=repo, env=ON)["hunks"][0]["status"] == "applied"
    assert (repo / "a.txt").read_bytes() == DONE


@pytest.mark.parametrize("planted", ["symlink", "file", "fifo", "other-users-socket"])
def test_what_is_planted_at_the_residents_place_is_refused(repo, tmp_path, planted):
    propose(repo)
    home = repo / ".stet"
    target = tmp_path / "victim"
    target.write_bytes(b"precious\n")
    sock = home / "resident.sock"
    if planted == "symlink":
        sock.symlink_to(target)
    elif planted == "file":
        sock.write_bytes(b"not a socket")
    elif planted == "fifo":
        os.mkfifo(sock)
    else:
        if os.geteuid() != 0:
            pytest.skip("making a file of another user needs root")
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(sock))
            os.chown(sock, 65534, 65534, follow_symlinks=False)
            s.listen()
            p = stet("status", "--json", cwd=repo, env=ON)
    if planted != "other-users-socket":
        p = stet("status", "--json", cwd=repo, env=ON)
    # The call is answered all the same, in its own process, and says what it refused.
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["counts"]["pending"] == 1
    assert "resident.sock" in p.stderr and "without the resident" in p.stderr
    if planted == "other-users-socket":
        return
    time.sleep(0.5)  # give a wrongly started resident the time to do harm: there must be none
    assert target.read_bytes() == b"precious\n"
    assert resident_pid(repo) is None
    # A resident started by hand refuses the place too, and says why.
    p = subprocess.run(
        [sys.executable, "-m", "stet", "resident"], cwd=repo, env={**os.environ, **ON}, capture_output=True, timeout=60
    )
    assert p.returncode != 0 and "resident.sock" in p.stderr.decode(), p.stderr
    assert target.read_bytes() == b"precious\n"
    assert os.path.lexists(sock), "refused, never removed"


def test_a_planted_pid_file_is_refused(repo, tmp_path):
    propose(repo)
    target = tmp_path / "victim"
    target.write_bytes(b"precious\n")
    (repo / ".stet" / "resident.pid").symlink_to(target)
    p = subprocess.run(
        [sys.executable, "-m", "stet", "resident"], cwd=repo, env={**os.environ, **ON}, capture_output=True, timeout=60
    )
    assert p.returncode != 0 and "resident.pid" in p.stderr.decode(), p.stderr
    assert target.read_bytes() == b"precious\n"
    # Calls are still answered.
    assert stet_json("status", cwd=repo, env=ON)["counts"]["pending"] == 1


def test_it_stops_when_idle_and_when_its_folder_is_removed(repo):
    propose(repo)
    assert stet("status", cwd=repo, env={**ON, "STET_RESIDENT_IDLE": "2"}).returncode == 0
    pid = wait_for(lambda: resident_pid(repo), "the resident")
    wait_for(lambda: not alive(pid), "the idle resident to stop")
    assert not (repo / ".stet" / "resident.sock").exists(), "it removes its socket"
    # `git clean -fdx` under a running resident: it goes too; the next call says there is no store.
    pid = started(repo)
    git("clean", "-fdxq", cwd=repo)
    wait_for(lambda: not alive(pid), "the resident to notice its folder gone")
    p = stet("status", cwd=repo, env=ON)
    assert p.returncode == 2 and "no Stet store" in p.stderr


def test_other_settings_take_over_and_another_store_has_its_own(repo, tmp_path):
    propose(repo)
    pid = started(repo)
    # Other STET_* settings than the resident's: answered here, the same answer; the newest
    # settings win: that resident stops and one with the caller's settings takes its place.
    other_settings = {**ON, "STET_SYNC_INTERVAL": "0.3"}
    p = stet("status", "--json", cwd=repo, env=other_settings)
    assert p.returncode == 0 and json.loads(p.stdout)["counts"]["pending"] == 1
    wait_for(lambda: not alive(pid), "the resident of the old settings to stop")
    new = wait_for(lambda: resident_pid(repo) not in (None, pid) and resident_pid(repo), "the new resident")
    before = calls(repo)
    assert stet("status", cwd=repo, env=other_settings).returncode == 0
    assert calls(repo) == before + 1 and resident_pid(repo) == new
    # --db names another store: its call goes to that store's resident, never to this one.
    other = make_repo(tmp_path / "other")
    (other / "a.txt").write_bytes(BASE)
    commit_all(other)
    propose(other)
    p = stet("status", "--json", "--db", str(other / ".stet" / "stet.db"), cwd=repo, env=other_settings)
    assert p.returncode == 0 and json.loads(p.stdout)["root"] == str(other.resolve())
    assert calls(repo) == before + 1, "not answered by this store's resident"
    stop(other)


def test_many_callers_at_once_are_answered_one_by_one(repo):
    (repo / "c.txt").write_bytes(BASE)
    commit_all(repo)
    propose(repo)
    started(repo)
    patches = [f"--- a/c.txt\n+++ b/c.txt\n@@ -{n} +{n} @@\n-line {n}\n+LINE {n}\n" for n in range(1, 13, 2)]
    results: list = [None] * len(patches)

    def go(i: int) -> None:
        results[i] = stet("propose", "--patch", "-", "--json", cwd=repo, input=patches[i], env=ON)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(patches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    ids = [json.loads(r.stdout)["hunks"][0]["id"] for r in results]
    for hid in ids:
        assert stet("accept", hid, cwd=repo, env=ON).returncode == 0
    text = (repo / "c.txt").read_bytes()
    for n in range(1, 13, 2):
        assert text.count(b"LINE %d\n" % n) == 1


def test_the_hooks_of_claude_code_through_the_resident(repo):
    propose(repo)
    started(repo)
    before = calls(repo)
    payload = {
        "session_id": "s-1",
        "transcript_path": str(repo / "t.jsonl"),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / "b.txt"), "old_string": "beta", "new_string": "BETA"},
        "tool_use_id": "toolu_1",
    }
    pre = stet("hook", "claude-code", cwd=repo, input=json.dumps(payload), env=ON)
    assert pre.returncode == 0, pre.stderr
    (repo / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    post = stet(
        "hook", "claude-code", cwd=repo, input=json.dumps({**payload, "hook_event_name": "PostToolUse"}), env=ON
    )
    assert post.returncode == 0, post.stderr
    stop_hook = {k: payload[k] for k in ("session_id", "transcript_path", "cwd", "permission_mode")}
    done = stet("hook", "claude-code", cwd=repo, input=json.dumps({**stop_hook, "hook_event_name": "Stop"}), env=ON)
    assert done.returncode == 0, done.stderr
    assert calls(repo) == before + 3
    # What SessionStart and UserPromptSubmit tell is recorded as told once written: only the
    # hook's own process knows whether its stdout took it, so they run there.
    for event in ("UserPromptSubmit", "SessionStart"):
        extra = {"prompt": "go on"} if event == "UserPromptSubmit" else {"source": "startup"}
        told = stet(
            "hook", "claude-code", cwd=repo, input=json.dumps({**stop_hook, "hook_event_name": event, **extra}), env=ON
        )
        assert told.returncode == 0, told.stderr
    assert calls(repo) == before + 3
    hunks = stet_json("status", cwd=repo, env={"STET_RESIDENT": "off"})["hunks"]
    assert any(h["uri"].endswith("/b.txt") for h in hunks), hunks


def test_two_checkouts_of_one_postgresql_review_each_have_their_resident(tmp_path):
    databases = Databases(cluster())
    origin = make_repo(tmp_path / "origin")
    (origin / "a.txt").write_bytes(BASE)
    commit_all(origin)
    dev, agent = tmp_path / "dev", tmp_path / "agent"
    for clone in (dev, agent):
        git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    env = {**ON, "STET_DB": databases.new()}
    try:
        proposed = stet("propose", "--patch", "-", "--id", "p1", "--json", cwd=agent, input=PATCH, env=env)
        assert proposed.returncode == 0, proposed.stderr
        (hid,) = [h["id"] for h in json.loads(proposed.stdout)["hunks"]]
        for clone in (dev, agent):
            assert stet("status", cwd=clone, env=env).returncode == 0
        pids = [wait_for(lambda c=c: _pid(c, env), f"the resident of {c.name}") for c in (dev, agent)]
        assert pids[0] != pids[1]
        accepted = stet("accept", hid, "--json", cwd=dev, env=env)
        assert accepted.returncode == 0, accepted.stderr
        assert (dev / "a.txt").read_bytes() == DONE
        # The other checkout's resident sees the decision at once, and pulls it into its files.
        seen = json.loads(stet("status", "--all", "--json", cwd=agent, env=env).stdout)["hunks"]
        assert seen[0]["status"] == "applied"
        assert stet("pull", cwd=agent, env=env).returncode == 0
        assert (agent / "a.txt").read_bytes() == DONE
        for clone in (dev, agent):
            out = stet("resident", "--status", cwd=clone, env=env).stdout
            assert "call(s) answered" in out and int(out.split(": ", 1)[1].split()[0]) >= 1, out
    finally:
        for clone in (dev, agent):
            pid = _pid(clone, env)
            stet("resident", "--stop", cwd=clone, env=env)
            if pid:
                wait_for(lambda pid=pid: not alive(pid), "the resident to stop")
        databases.drop()


def _pid(root: Path, env: dict) -> int | None:
    p = stet("resident", "--status", cwd=root, env=env)
    return int(p.stdout.split()[1].rstrip(":")) if p.returncode == 0 and p.stdout.startswith("resident ") else None


def test_a_call_larger_than_a_socket_buffer_is_answered_by_the_resident(repo):
    """A propose of a few hundred KB on stdin arrives whole, in many reads."""
    lines = [f"line number {i} of a long file, padded to make the patch big\n" for i in range(6000)]
    (repo / "big.txt").write_text("".join(lines))
    commit_all(repo)
    propose(repo)
    started(repo)
    before = calls(repo)
    patch = ["--- a/big.txt\n", "+++ b/big.txt\n"]
    for i in range(0, 6000, 3):
        patch += [f"@@ -{i + 1} +{i + 1} @@\n", f"-{lines[i]}", f"+{lines[i].upper()}"]
    text = "".join(patch)
    assert len(text.encode()) > 200_000
    out = stet_json("propose", "--patch", "-", cwd=repo, input=text, env=ON)
    assert len(out["hunks"]) == 2000
    assert calls(repo) == before + 1, "answered by the resident"


def test_stop_never_signals_a_process_that_took_a_dead_residents_pid(repo):
    """After a SIGKILL the pid file still names the dead resident; by the time someone runs
    `stet resident --stop` that pid may be another process's: it must not be signalled."""
    propose(repo)
    pid = started(repo)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), "the resident to die")
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        (repo / ".stet" / "resident.pid").write_text(f"{bystander.pid}\n")  # as if the pid was reused
        p = stet("resident", "--stop", cwd=repo, env=ON)
        assert p.returncode == 0 and "none runs here" in p.stdout, p.stdout
        assert bystander.poll() is None, "the bystander was not signalled"
    finally:
        bystander.kill()
        bystander.wait()


def test_temp_files_of_killed_writes_are_tidied_between_calls(repo):
    """A write killed mid-way leaves Stet's temp file beside the file: the resident removes it
    once a call is answered (never on a call's way), and only Stet's own, not a look-alike."""
    from stet.workspace.safe import temp_name

    propose(repo)
    started(repo)
    left = repo / temp_name("a.txt")
    left.write_bytes(b"half a write")
    alike = repo / ".a.txt.stet-tmp-0000-not-ours"
    alike.write_bytes(b"the developer's")
    assert stet("status", cwd=repo, env=ON).returncode == 0
    wait_for(lambda: not left.exists(), "the leftover temp file to be removed")
    assert alike.read_bytes() == b"the developer's"


def test_a_resident_hands_over_when_stets_code_on_disk_changes(repo, tmp_path):
    """An upgrade or an edit of Stet while a resident runs: the next call is not answered with
    the old code; that resident stops and one running the new code takes over."""
    import shutil

    import stet as package

    src = tmp_path / "src"
    shutil.copytree(Path(package.__file__).parent, src / "stet", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**ON, "PYTHONPATH": str(src)}
    propose(repo)
    assert stet("status", cwd=repo, env=env).returncode == 0
    pid = wait_for(lambda: resident_pid(repo), "the resident of the copied code")
    assert stet("status", cwd=repo, env=env).returncode == 0
    assert resident_pid(repo) == pid, "unchanged code: the same resident answers"
    module = src / "stet" / "domain" / "headline.py"
    module.write_text(module.read_text() + "\n# edited while a resident runs\n")
    p = stet("status", "--json", cwd=repo, env=env)
    assert p.returncode == 0 and json.loads(p.stdout)["counts"]["pending"] == 1
    wait_for(lambda: not alive(pid), "the resident of the old code to stop")
    assert stet("status", cwd=repo, env=env).returncode == 0
    wait_for(lambda: resident_pid(repo) not in (None, pid), "a resident of the new code")
