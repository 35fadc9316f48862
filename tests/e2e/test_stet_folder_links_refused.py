"""Every file Stet keeps in `.stet/` is Stet's own, or it is refused.

The attacks, for real, with the real `stet` CLI: a file of Stet's (the MCP token, a lock, a
snapshot's content or folder, the inbox's state, the database's write-ahead log, the
database itself) planted as a symlink - or a hard link - to a file of the user's outside the
workspace, as a cloned repository or an unpacked archive can leave it. Each time the user's
file is neither read (its access time, older than its mtime, would move: the file system is
mounted relatime), nor chmodded, nor written, nor created; and the command says what is wrong
and where (exit 2), instead of quietly following the link."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.clitools import STET, commit_all, make_repo, stet

SECRET = "the user's own secret, long enough to pass for a token: 0123456789abcdef\n"


class UserFile:
    """A file of the user's outside the workspace, and a way to tell it was not touched."""

    def __init__(self, path: Path, text: str = SECRET, mode: int = 0o644):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.chmod(path, mode)
        st = path.stat()
        # An access time older than the mtime: under relatime, any read now records itself.
        os.utime(path, ns=(st.st_mtime_ns - 3_600 * 10**9, st.st_mtime_ns))
        st = path.stat()
        self.text, self.mode, self.atime, self.mtime = text, mode, st.st_atime_ns, st.st_mtime_ns

    def untouched(self) -> None:
        st = self.path.stat()  # before reading it here
        assert stat.S_IMODE(st.st_mode) == self.mode, f"{self.path} was chmodded"
        assert st.st_mtime_ns == self.mtime, f"{self.path} was written"
        assert st.st_atime_ns == self.atime, f"{self.path} was read"
        assert self.path.read_text() == self.text


@pytest.fixture
def ws(tmp_path):
    root = make_repo(tmp_path / "ws")
    (root / "a.py").write_text("one\ntwo\n")
    commit_all(root)
    assert stet("init", cwd=root).returncode == 0
    return root


def refused(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    for word in words:
        assert word in p.stderr, (word, p.stderr)


PATCH = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-one\n+ONE\n"


# --- the MCP token --------------------------------------------------------------------------
def test_a_token_symlinked_to_a_users_file_is_neither_chmodded_printed_nor_accepted(ws, tmp_path):
    user = UserFile(tmp_path / "home" / "notes.txt")
    os.symlink(user.path, ws / ".stet" / "mcp-token")
    p = stet("mcp", "--print-token", cwd=ws)
    refused(p, "mcp-token", "symlink")
    assert SECRET.strip() not in p.stdout + p.stderr
    p = subprocess.run(
        [*STET, "mcp", "--http", f"127.0.0.1:{_free_port()}"], cwd=ws, capture_output=True, text=True, timeout=60
    )
    refused(p, "mcp-token", "symlink")
    user.untouched()
    assert os.path.islink(ws / ".stet" / "mcp-token")  # left as it is, for the user to look at


def test_a_token_hard_linked_or_readable_by_others_is_refused(ws, tmp_path):
    user = UserFile(tmp_path / "home" / "notes.txt", mode=0o600)
    os.link(user.path, ws / ".stet" / "mcp-token")
    refused(stet("mcp", "--print-token", cwd=ws), "mcp-token", "hard link")
    user.untouched()
    os.unlink(ws / ".stet" / "mcp-token")
    (ws / ".stet" / "mcp-token").write_text("x" * 43 + "\n")
    os.chmod(ws / ".stet" / "mcp-token", 0o644)
    refused(stet("mcp", "--print-token", cwd=ws), "mcp-token", "0644")
    assert stat.S_IMODE((ws / ".stet" / "mcp-token").stat().st_mode) == 0o644  # not chmodded either
    os.chown(ws / ".stet" / "mcp-token", 65534, 65534)
    os.chmod(ws / ".stet" / "mcp-token", 0o600)
    if os.geteuid() != 65534:
        refused(stet("mcp", "--print-token", cwd=ws), "mcp-token", "uid 65534")
    # Gone: a new one is made, 0600, and printed again the same.
    os.unlink(ws / ".stet" / "mcp-token")
    p = stet("mcp", "--print-token", cwd=ws)
    assert p.returncode == 0 and len(p.stdout.strip()) >= 32, p.stderr
    st = (ws / ".stet" / "mcp-token").lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_nlink == 1
    assert stet("mcp", "--print-token", cwd=ws).stdout == p.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the locks ------------------------------------------------------------------------------
@pytest.mark.parametrize("lock", ["files.lock", "snapshots.lock"])
def test_a_lock_symlinked_out_is_not_followed(ws, tmp_path, lock):
    user = UserFile(tmp_path / "home" / "notes.txt")
    missing = tmp_path / "home" / "not-there-yet"
    for n, target in enumerate((user.path, missing)):
        patch = PATCH if n == 0 else "--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-two\n+TWO\n"
        assert stet("propose", "--patch", "-", cwd=ws, input=patch).returncode == 0
        (ws / ".stet" / lock).unlink(missing_ok=True)
        os.symlink(target, ws / ".stet" / lock)
        p = stet("snapshot", "a.py", cwd=ws) if lock == "snapshots.lock" else stet("accept", "--file", "a.py", cwd=ws)
        refused(p, lock, "symlink")
        assert not missing.exists(), "a lock was created outside the workspace"
    user.untouched()
    assert (ws / "a.py").read_text() == "one\ntwo\n"


# --- the snapshots ----------------------------------------------------------------------------
def test_a_snapshots_folder_symlinked_out_gets_nothing_and_loses_nothing(ws, tmp_path):
    out = tmp_path / "home" / "photos"
    user = UserFile(out / "ab" / "holiday.jpg")
    assert stet("task", "start", "fix it", "--id", "t", cwd=ws).returncode == 0
    os.symlink(out, ws / ".stet" / "snapshots")
    refused(stet("snapshot", "--task", "t", "a.py", cwd=ws), "snapshots", "symlink")
    # Made while a snapshot waits: its capture and its end (which collects unused contents) refuse it.
    os.unlink(ws / ".stet" / "snapshots")
    assert stet("snapshot", "--task", "t", "a.py", cwd=ws).returncode == 0
    os.rename(ws / ".stet" / "snapshots", tmp_path / "kept")
    os.symlink(out, ws / ".stet" / "snapshots")
    (ws / "a.py").write_text("one\nTWO\n")
    p = stet("capture", "--task", "t", cwd=ws)
    assert p.returncode == 1 and "snapshots" in p.stderr and "symlink" in p.stderr, p.stderr
    refused(stet("task", "done", "t", cwd=ws), "snapshots", "symlink")
    user.untouched()
    assert sorted(p.name for p in out.rglob("*")) == ["ab", "holiday.jpg"]


def test_a_snapshot_folder_or_content_planted_as_a_symlink_is_refused(ws, tmp_path):
    import hashlib

    user = UserFile(tmp_path / "home" / "notes.txt")
    data = (ws / "a.py").read_bytes()
    h = hashlib.sha256(data).hexdigest()
    blobs = ws / ".stet" / "snapshots"
    blobs.mkdir(mode=0o700)
    (blobs / h[:2]).mkdir(mode=0o700)
    os.symlink(user.path, blobs / h[:2] / h)  # the very name a.py's content is kept under
    refused(stet("snapshot", "a.py", cwd=ws), h[:12], "symlink")
    os.unlink(blobs / h[:2] / h)
    os.rmdir(blobs / h[:2])
    os.symlink(user.path.parent, blobs / h[:2])
    refused(stet("snapshot", "a.py", cwd=ws), f"snapshots/{h[:2]}", "symlink")
    user.untouched()
    assert os.listdir(user.path.parent) == ["notes.txt"]


def test_a_packs_folder_planted_as_a_symlink_gets_nothing(ws, tmp_path):
    """A whole baseline goes into one pack in .stet/snapshots/packs/: planted as a symlink to
    the user's folder, it is refused - nothing written there, nothing removed from it."""
    user = UserFile(tmp_path / "home" / "docs" / "report.pack")
    (ws / "b.py").write_text("b\n")
    blobs = ws / ".stet" / "snapshots"
    blobs.mkdir(mode=0o700)
    os.symlink(user.path.parent, blobs / "packs")
    refused(stet("snapshot", "--all", "--task", "t", cwd=ws), "packs", "symlink")
    user.untouched()
    assert os.listdir(user.path.parent) == ["report.pack"]


# --- the inbox's state --------------------------------------------------------------------------
def test_inbox_state_planted_as_symlinks_is_replaced_never_followed(ws, tmp_path):
    inbox = ws / ".stet" / "inbox"
    err = UserFile(tmp_path / "home" / "err.txt")
    done = UserFile(tmp_path / "home" / "done.txt")
    os.symlink(err.path, inbox / "failed" / "bad.error")
    os.symlink(done.path, inbox / "done" / "good.patch")
    (inbox / "bad.json").write_text('{"edit": 5}')
    (inbox / "good.patch").write_text(PATCH)
    p = stet("doctor", "--fix", cwd=ws)
    assert "Traceback" not in p.stderr, p.stderr
    assert (
        not (inbox / "failed" / "bad.error").is_symlink()
        and "InvalidParams" in (inbox / "failed" / "bad.error").read_text()
    )
    assert (inbox / "done" / "good.patch").read_text() == PATCH and (inbox / "failed" / "bad.json").exists()
    err.untouched()
    done.untouched()


def test_inbox_folders_of_another_user_are_not_used(ws):
    if os.geteuid() == 65534:
        pytest.skip("needs a uid other than 65534")
    inbox = ws / ".stet" / "inbox"
    os.chown(inbox / "failed", 65534, 65534)
    (inbox / "bad.json").write_text('{"edit": 5}')
    p = stet("doctor", "--fix", cwd=ws)
    assert "failed" in p.stdout and "uid 65534" in p.stdout, p.stdout
    assert (inbox / "bad.json").exists() and os.listdir(inbox / "failed") == []


# --- the database ---------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
@pytest.mark.parametrize("how", ["symlink", "hard link"])
def test_the_databases_own_files_planted_as_links_are_refused(ws, tmp_path, suffix, how):
    user = UserFile(tmp_path / "home" / "notes.txt")
    (ws / ".stet" / f"stet.db{suffix}").unlink(missing_ok=True)
    (os.symlink if how == "symlink" else os.link)(user.path, ws / ".stet" / f"stet.db{suffix}")
    for args in (("status",), ("propose", "--patch", "-")):
        p = stet(*args, cwd=ws, input=PATCH)
        refused(p, f"stet.db{suffix}", how)
    user.untouched()


def test_a_database_hard_linked_to_a_users_file_is_refused(tmp_path):
    ws = make_repo(tmp_path / "ws")
    (ws / "a.py").write_text("one\ntwo\n")
    user = UserFile(tmp_path / "home" / "empty.txt", text="")
    (ws / ".stet").mkdir(mode=0o700)
    os.link(user.path, ws / ".stet" / "stet.db")
    refused(stet("propose", "--patch", "-", cwd=ws, input=PATCH), "stet.db", "hard link")
    user.untouched()


def test_a_store_folder_of_another_user_is_refused(tmp_path):
    if os.geteuid() == 65534:
        pytest.skip("needs a uid other than 65534")
    ws = make_repo(tmp_path / "ws")
    (ws / "a.py").write_text("one\ntwo\n")
    (ws / ".stet").mkdir(mode=0o777)
    os.chmod(ws / ".stet", 0o777)
    os.chown(ws / ".stet", 65534, 65534)
    refused(stet("propose", "--patch", "-", cwd=ws, input=PATCH), ".stet", "uid 65534")
    assert os.listdir(ws / ".stet") == [] and stat.S_IMODE((ws / ".stet").stat().st_mode) == 0o777


# --- the token is there before the server listens ----------------------------------------------------
def test_the_token_is_written_before_the_mcp_sdk_is_even_imported(ws, tmp_path):
    """`stet mcp --http` writes the token first: with an MCP SDK that takes forever to import
    (a stand-in package that blocks), the token is there anyway, complete and 0600."""
    slow = tmp_path / "slow"
    for package in ("mcp", "uvicorn"):
        (slow / package).mkdir(parents=True)
        (slow / package / "__init__.py").write_text("import time\ntime.sleep(600)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    env["PYTHONPATH"] = os.pathsep.join([str(slow), *filter(None, [env.get("PYTHONPATH")])])
    token = ws / ".stet" / "mcp-token"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stet", "mcp", "--http", f"127.0.0.1:{_free_port()}"],
        cwd=ws,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not token.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        assert token.exists(), "no token while the MCP SDK was being imported"
        st = token.lstat()
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert len(token.read_text().strip()) >= 32
        assert proc.poll() is None  # still importing: the token came first
    finally:
        proc.kill()
        proc.wait(30)


@pytest.mark.parametrize("how", ["symlink", "another user's"])
def test_a_damaged_store_is_never_moved_into_a_quarantine_stet_did_not_make(tmp_path, how):
    if how != "symlink" and os.geteuid() == 65534:
        pytest.skip("needs a uid other than 65534")
    ws = make_repo(tmp_path / "ws")
    (ws / "a.py").write_text("one\ntwo\n")
    (ws / ".stet").mkdir(mode=0o700)
    (ws / ".stet" / "stet.db").write_text("garbage, once a store")
    out = tmp_path / "home" / "shared"
    out.mkdir(parents=True)
    if how == "symlink":
        os.symlink(out, ws / ".stet" / "quarantine")
    else:
        (ws / ".stet" / "quarantine").mkdir()
        os.chown(ws / ".stet" / "quarantine", 65534, 65534)
    said = "symlink" if how == "symlink" else "uid 65534"
    p = stet("doctor", "--fix", cwd=ws)  # what moves a damaged store aside
    assert "quarantine" in p.stdout + p.stderr and said in p.stdout + p.stderr, p.stdout + p.stderr
    assert os.listdir(out) == [] and os.listdir(ws / ".stet" / "quarantine") == []
    assert (ws / ".stet" / "stet.db").read_text() == "garbage, once a store"
