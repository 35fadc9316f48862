"""Running the real `stet` CLI and real git in subprocesses, for the CLI tests."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

STET = [sys.executable, "-m", "stet"]
# Set by a test's engine fixture (tests/support/engines.py): {"STET_DB": url} runs every `stet` call of
# that test against PostgreSQL; empty for SQLite, the store the CLI finds in the workspace.
ENGINE_ENV: dict[str, str] = {}


def _ctrl_c_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


# Popen arguments that start `stet` as a shell starts the job in the foreground of a terminal: its own
# process group (the test sends "Ctrl-C" to the group) with Ctrl-C not ignored. A suite started as a
# background job of a non-interactive shell (`.ci/run &`) inherits SIGINT ignored, and so would every
# process under it: the agent then never sees the Ctrl-C a test sends.
FOREGROUND_JOB = {"start_new_session": True, "preexec_fn": _ctrl_c_as_in_a_terminal}


def stet(*args: str, cwd: Path, input: str | bytes | None = None, env: dict | None = None, timeout: float = 60):
    """Run `stet ARGS` in `cwd`; returns the CompletedProcess (text mode unless input is bytes)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("STET_DB", "STET_FAULT")}
    full_env.update({"NO_COLOR": "1", **ENGINE_ENV, **(env or {})})
    data = input.encode() if isinstance(input, str) else input
    p = subprocess.run([*STET, *args], cwd=cwd, input=data, capture_output=True, env=full_env, timeout=timeout)
    # Decoded without newline translation: CRLF in a diff must reach the test as it was written.
    p.stdout, p.stderr = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")
    return p


def stet_json(*args: str, cwd: Path, **kw) -> dict:
    p = stet(*args, "--json", cwd=cwd, **kw)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout)


def git(*args: str, cwd: Path, input: str | None = None) -> str:
    """Run git; its output exactly as written (bytes decoded, CRLF kept)."""
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=None if input is None else input.encode())
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout.decode("utf-8")


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git("init", "-q", ".", cwd=root)
    for key, value in (("user.email", "t@example.invalid"), ("user.name", "t"), ("core.autocrlf", "false")):
        git("config", key, value, cwd=root)
    return root


def commit_all(root: Path, message: str = "base") -> None:
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", message, cwd=root)


def read_bytes(path: Path) -> bytes:
    return path.read_bytes()


def db_summary(db: Path) -> tuple:
    """What a test compares to prove nothing was written: op log length, hunks, proposals."""
    if not db.exists():
        return (None,)
    conn = sqlite3.connect(db)
    try:
        return tuple(
            conn.execute(q).fetchone()[0]
            for q in (
                "SELECT COUNT(*) FROM oplog",
                "SELECT COUNT(*) FROM hunks",
                "SELECT COUNT(*) FROM proposals",
            )
        )
    finally:
        conn.close()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root except .git and .stet, by relative path."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".stet")]
        for name in filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = p.read_bytes() if not p.is_symlink() else b"-> " + os.readlink(p).encode()
    return out


# `python -c PEAK_LAUNCHER FILE ARGV...`: runs ARGV (stdin passed on), writes its peak resident
# memory (KB) into FILE, exits with its exit code.
PEAK_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""
