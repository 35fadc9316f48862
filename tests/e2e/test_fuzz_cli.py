"""Fuzzing the agent's other doors: `stet propose` (unified diffs and WorkspaceEdit JSON) and the
inbox. The inputs start from a real `git diff` of real edits (LF, CRLF, no newline at the end, a
new, a deleted and a renamed file) and get one to three things broken: lines dropped, doubled,
swapped or replaced, hunk counts changed (also to huge or negative numbers), paths escaping the
workspace, truncation, NULs and invalid UTF-8, line ends flipped, binary patches.

For every input: exit 0 (the mutation left a valid patch: then it is stored like any proposal)
or exit 2 with a one-line message - never a traceback, never another code; the workspace's files
are untouched (a proposal never writes a file); and when refused, the store is unchanged."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stet.cli import main as cli
from support.clitools import STET, commit_all, git, make_repo, stet
from support.figures import FIGURES
from support.fuzzgen import fingerprint, mutations_of_propose
from support.harness import Session

CASES = {"patch": 0, "patch stored": 0, "edit": 0, "process": 0, "inbox": 0, "inbox done": 0}

BASE = {
    "a.py": b"".join(b"line %d\n" % i for i in range(1, 31)),
    "crlf.txt": b"".join(b"row %d\r\n" % i for i in range(1, 13)),
    "noeol.md": b"first\nsecond\nlast without newline",
    "sub/gone.txt": b"to be deleted\nsecond line\n",
    "sub/old name.txt": b"".join(b"kept %d\n" % i for i in range(1, 9)),
}


def _edited(files: dict[str, bytes]) -> None:
    a = files["a.py"].split(b"\n")
    a[3], a[14] = b"LINE FOUR", b"fifteen changed"
    a.insert(25, b"inserted after 25")
    del a[9]
    files["a.py"] = b"\n".join(a)
    files["crlf.txt"] = files["crlf.txt"].replace(b"row 2\r\n", b"ROW TWO\r\n").replace(b"row 10\r\n", b"")
    files["noeol.md"] = b"first\nsecond\nlast, changed, still without newline"
    del files["sub/gone.txt"]
    files["sub/new name.txt"] = files.pop("sub/old name.txt").replace(b"kept 4", b"moved 4")
    files["brand new.py"] = b"print('hello')\n"


def _write_tree(root, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


@pytest.fixture(scope="module")
def patch_text(tmp_path_factory) -> str:
    """A real `git diff` of the edits above (renames detected, CRLF and no-EOL kept)."""
    repo = make_repo(tmp_path_factory.mktemp("fuzzsrc") / "repo")
    _write_tree(repo, BASE)
    commit_all(repo)
    for p in list(repo.rglob("*")):
        if p.is_file() and ".git" not in p.parts:
            p.unlink()
    files = dict(BASE)
    _edited(files)
    _write_tree(repo, files)
    git("add", "-A", cwd=repo)
    return git("diff", "--cached", "-M", cwd=repo)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, patch_text):
    """The base tree with a store holding one valid proposal of the whole patch."""
    ws = tmp_path_factory.mktemp("fuzzcli") / "ws"
    ws.mkdir()
    _write_tree(ws, BASE)
    p = stet("propose", "--patch", "-", "--id", "valid", "--json", cwd=ws, input=patch_text)
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["hunks"]) >= 8
    return ws


# --- mutations of a patch (bytes) ---------------------------------------------------------
HOSTILE_PATHS = [
    b"../evil.py",
    b"/etc/passwd",
    b"a/../../evil",
    b"sub/../../evil",
    b".stet/stet.db",
    b'"sub/\\001x"',
    b"/dev/zero",
    b"..",
    b"sub/../../../tmp/x",
    b"\xff\xfe.py",
]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def mutation(draw, data: bytes) -> tuple[str, bytes]:
    lines = _lines(data)
    kind = draw(
        st.sampled_from(
            [
                "drop",
                "double",
                "swap",
                "replace",
                "count",
                "path",
                "truncate",
                "junk bytes",
                "line end",
                "binary",
                "no-eol marker",
            ]
        )
    )
    i = draw(st.integers(0, max(0, len(lines) - 1)))
    if kind == "drop" and lines:
        del lines[i]
    elif kind == "double" and lines:
        lines.insert(i, lines[i])
    elif kind == "swap" and len(lines) > 1:
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "replace" and lines:
        lines[i] = draw(
            st.sampled_from([b"", b"\n", b"+", b"-", b" ", b"@@", b"@@ @@\n", b"diff --git\n", b"--- \n"])
            | st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass") + b"\n")
        )
    elif kind == "count":
        # A header with numbers: an earlier mutation may have left one without any ("@@ @@").
        headers = [
            k for k, line in enumerate(lines) if line.startswith(b"@@") and re.search(rb"\d", line.split(b"@@")[1])
        ]
        if headers:
            k = draw(st.sampled_from(headers))
            numbers = list(re.finditer(rb"\d+", lines[k].split(b"@@")[1]))
            m = draw(st.sampled_from(numbers))
            new = draw(st.integers(-5, 60) | st.integers(2**31, 2**70) | st.just(0)).__str__().encode()
            start = m.start() + 2  # the numbers were found after the leading "@@"
            lines[k] = lines[k][:start] + new + lines[k][m.end() + 2 :]
    elif kind == "path":
        names = [k for k, line in enumerate(lines) if line.startswith((b"--- ", b"+++ ", b"diff --git ", b"rename "))]
        if names:
            k = draw(st.sampled_from(names))
            hostile = draw(st.sampled_from(HOSTILE_PATHS))
            head, _, _ = lines[k].partition(b" " if not lines[k].startswith(b"diff --git") else b"--git ")
            prefix = {b"---": b"--- a/", b"+++": b"+++ b/"}.get(head, None)
            if lines[k].startswith(b"rename "):
                lines[k] = b" ".join(lines[k].split(b" ")[:2]) + b" " + hostile + b"\n"
            elif prefix is not None:
                lines[k] = (prefix if not hostile.startswith(b"/") else head + b" ") + hostile + b"\n"
            else:
                lines[k] = b"diff --git a/" + hostile + b" b/" + hostile + b"\n"
    elif kind == "truncate":
        return kind, data[: draw(st.integers(0, max(0, len(data) - 1)))]
    elif kind == "junk bytes" and lines:
        lines[i] = (
            lines[i][:1]
            + draw(st.sampled_from([b"\x00", b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00\x00\x00"]))
            + lines[i][1:]
        )
    elif kind == "line end" and lines:
        lines[i] = lines[i][:-2] + b"\n" if lines[i].endswith(b"\r\n") else lines[i].rstrip(b"\n") + b"\r\n"
    elif kind == "binary":
        lines.insert(i, b"GIT binary patch\nliteral 5\nHcmV?d00001\n\n")
    elif kind == "no-eol marker":
        marks = [k for k, line in enumerate(lines) if line.startswith(b"\\ No newline")]
        if marks and draw(st.booleans()):
            del lines[draw(st.sampled_from(marks))]
        else:
            lines.insert(i, b"\\ No newline at end of file\n")
    return kind, b"".join(lines)


@st.composite
def broken_patches(draw, data: bytes):
    kinds = []
    for _ in range(draw(st.integers(1, 3))):
        kind, data = mutation(draw, data)
        kinds.append(kind)
    return kinds, data


def run_cli(ws, args: list[str]) -> tuple[int, str, str]:
    """`stet ARGS` in this process (the same `main` the console script runs): fast enough for
    hundreds of cases; an exception escaping `main` fails the test as a crash would."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ws)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(args)
    finally:
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()


def tree(ws) -> dict[str, bytes]:
    return {
        str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file() and ".stet" not in p.parts
    }


def check_refusal(code: int, err: str, what) -> None:
    assert code == 2, (what, code, err)
    message = err.strip()
    assert message.startswith("stet: ") and "Traceback" not in message, (what, err)
    assert len(message.splitlines()) <= 3, (what, err)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_broken_patches_are_refused_with_a_message_and_nothing_written(workspace, patch_text, tmp_path_factory, data):
    ws = workspace
    kinds, broken = data.draw(broken_patches(patch_text.encode()))
    path = tmp_path_factory.mktemp("p") / "broken.patch"
    path.write_bytes(broken)
    before, files = fingerprint(ws), tree(ws)
    pid = f"fz-patch-{CASES['patch']}"
    code, out, err = run_cli(ws, ["propose", "--patch", str(path), "--id", pid])
    CASES["patch"] += 1
    assert tree(ws) == files, kinds  # a proposal never writes a file
    if code == 0:  # the mutation left a valid patch (a dropped context line, say): stored, nothing else
        CASES["patch stored"] += 1
        return
    check_refusal(code, err, (kinds, broken[:400]))
    assert fingerprint(ws) == before, (kinds, err)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_broken_workspace_edits_are_refused_and_nothing_written(workspace, tmp_path_factory, data):
    ws = workspace
    u = (ws / "a.py").resolve().as_uri()
    what, params = data.draw(mutations_of_propose(u))
    raw = json.dumps(params)  # lone surrogates become \\ud800 escapes, as an agent's JSON would carry them
    if data.draw(st.booleans()):
        raw = json.dumps(params["edit"]) if isinstance(params, dict) and "edit" in params else raw
    path = tmp_path_factory.mktemp("e") / "edit.json"
    path.write_text(raw)
    before = fingerprint(ws)
    code, out, err = run_cli(ws, ["propose", "--edit", str(path)])
    CASES["edit"] += 1
    # An edit list alone (no params object) gets a fresh proposal id, so it may be valid: then stored.
    if code != 0 or "proposalId" in raw:
        assert code in (1, 2), (what, raw[:300], code, err)  # 1: Conflict (a file to create exists, ...)
        assert err.startswith("stet: ") and "Traceback" not in err, (what, err)
        assert fingerprint(ws) == before, (what, raw[:300], err)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_real_processes_exit_2_on_broken_patches_from_stdin(workspace, patch_text, data):
    """The same through the console script and stdin: exit codes as a shell sees them."""
    ws = workspace
    kinds, broken = data.draw(broken_patches(patch_text.encode()))
    before, files = fingerprint(ws), tree(ws)
    p = stet("propose", "--patch", "-", "--id", f"fz-proc-{CASES['process']}", cwd=ws, input=broken)
    CASES["process"] += 1
    assert tree(ws) == files
    if p.returncode != 0:
        check_refusal(p.returncode, p.stderr, kinds)
        assert fingerprint(ws) == before


def test_arguments_that_are_not_utf8_are_refused_before_the_store(workspace):
    """Linux hands undecodable argv bytes to Python as lone surrogates: refused with exit 2."""
    ws = workspace
    before = fingerprint(ws)
    for args in (
        [b"reject", b"h-none", b"--feedback", b"bad \xff byte"],
        [b"accept", b"h\xfe"],
        [b"task", b"note", b"t1", b"\xc3\x28"],
    ):
        p = subprocess.run([*STET, *args], cwd=ws, capture_output=True, timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        assert p.returncode == 2 and "not UTF-8 text" in err and "Traceback" not in err, (args, p.returncode, err)
    assert fingerprint(ws) == before


# --- the inbox ----------------------------------------------------------------------------
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
async def test_broken_inbox_files_fail_with_a_reason_and_change_nothing(patch_text, tmp_path_factory, data):
    """A batch of broken drops, each ingested once: to done/ (a valid proposal, stored under its
    file's id) or to failed/ beside ID.error - never stuck, never a crash, never a write."""
    ws = tmp_path_factory.mktemp("fuzzinbox") / "ws"
    ws.mkdir()
    _write_tree(ws, BASE)
    drops: dict[str, bytes] = {}
    for n in range(25):
        kinds, broken = data.draw(broken_patches(patch_text.encode()))
        drops[f"fz{n}.patch"] = broken
    u = (ws / "a.py").resolve().as_uri()
    for n in range(15):
        _, params = data.draw(mutations_of_propose(u))
        drops[f"fe{n}.json"] = json.dumps(params).encode()
    s = Session(ws, env={"STET_INBOX_RETRY": "0.1"})
    await s.start()
    try:
        files = tree(ws)
        inbox = ws / ".stet" / "inbox"
        for name, body in drops.items():  # written as an agent should: a temp name, then a rename
            (inbox / (name + ".tmp")).write_bytes(body)
            os.replace(inbox / (name + ".tmp"), inbox / name)
        deadline = time.monotonic() + 30
        while any((inbox / n).exists() for n in drops) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        stuck = [n for n in drops if (inbox / n).exists()]
        assert not stuck, stuck
        done = 0
        for name in drops:
            stem = name.rsplit(".", 1)[0]
            in_done, in_failed = (inbox / "done" / name).exists(), (inbox / "failed" / name).exists()
            assert in_done != in_failed, name
            if in_failed:
                reason = (inbox / "failed" / (stem + ".error")).read_text()
                assert reason.strip() and not reason.startswith("internal error"), (name, reason)
            done += in_done
        CASES["inbox"] += len(drops)
        CASES["inbox done"] += done
        # Exactly the drops that went to done/ were stored, each once; the failed left no trace.
        assert proposal_count(ws) == done, (proposal_count(ws), done)
        assert tree(ws) == files
    finally:
        await s.stop()
    shutil.rmtree(ws, ignore_errors=True)


def proposal_count(ws) -> int:
    con = sqlite3.connect(ws / ".stet" / "stet.db")
    try:
        return con.execute("SELECT COUNT(*) FROM proposals").fetchone()[0]
    finally:
        con.close()


def test_cli_fuzz_figures():
    FIGURES["fuzzing, CLI and inbox"] = (
        f"{CASES['patch']} broken patches in process ({CASES['patch stored']} still valid, stored) + "
        f"{CASES['process']} through real processes + {CASES['edit']} broken WorkspaceEdit files + "
        f"{CASES['inbox']} inbox drops ({CASES['inbox done']} valid): each refused with exit 2 / failed/ + reason "
        f"or stored whole, files untouched, violations=0"
    )
