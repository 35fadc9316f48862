"""docs/CONTRIBUTING.md's walks stay true to the files: every path they name exists, and the
walk "a new decision kind" is followed for real. A throwaway `defer` is added to a copy of the
server by editing only the files the walk lists (and of them only the two it says are enough
for a decision that stores no more than its status and changes no file); the copied server then
offers it through every door the walk says follow: the `stet defer` command (through the
resident too), the LSP commands `stet.defer`/`stet.deferFile`/`stet.deferAll`, and the review
itself (deferred, then undone back to pending)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from support.rawlsp import RawServer
from support.residents import ON

REPO = Path(__file__).resolve().parents[2]
GUIDE = (REPO / "docs" / "CONTRIBUTING.md").read_text()


def _walk(title: str) -> str:
    start = GUIDE.index(f"**{title}**")
    end = GUIDE.find("\n**", start + 1)
    return GUIDE[start : end if end != -1 else len(GUIDE)]


def test_every_path_the_guide_names_exists() -> None:
    named = set(re.findall(r"`((?:server/stet|tests|client-extension|benchmarks|docs)/[\w/.\-]+)`", GUIDE))
    named = {p for p in named if "<" not in p}
    assert len(named) > 20  # the guide names its files; a regex that finds none proves nothing
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert not missing, f"docs/CONTRIBUTING.md names files that do not exist: {missing}"


# The throwaway decision kind: (file, anchor, replacement); each anchor must be found once.
DEFER = [
    (
        "server/stet/domain/status.py",
        '    SUPERSEDED = "superseded"\n',
        '    SUPERSEDED = "superseded"\n    DEFERRED = "deferred"\n',
    ),
    (
        "server/stet/domain/status.py",
        "OPEN = frozenset({Status.PENDING, Status.ACCEPTED, Status.STALE})",
        "OPEN = frozenset({Status.PENDING, Status.ACCEPTED, Status.STALE, Status.DEFERRED})",
    ),
    (
        "server/stet/domain/status.py",
        "TRANSITIONS: dict[tuple[Status, Status], str] = {\n",
        'TRANSITIONS: dict[tuple[Status, Status], str] = {\n    (P, Status.DEFERRED): "defer",\n'
        '    (Status.DEFERRED, P): "undo",\n',
    ),
    ("server/stet/domain/status.py", '    UNDO = "undo"\n', '    UNDO = "undo"\n    DEFER = "defer"\n'),
    (
        "server/stet/domain/status.py",
        "    Decide.UNDO: (P, frozenset({P})),\n",
        "    Decide.UNDO: (P, frozenset({P})),\n    Decide.DEFER: (Status.DEFERRED, frozenset({Status.DEFERRED})),\n",
    ),
    (
        "server/stet/operations.py",
        "DECISIONS = (\n",
        'DECISIONS = (\n    Decision("defer", "set hunks aside to come back to them", ("hunks", "file", "all")),\n',
    ),
]


def _stet(tree: Path, ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **ON, "PYTHONPATH": str(tree / "server")}
    env.pop("STET_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "stet", *args], cwd=ws, env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


def _resident_calls(tree: Path, ws: Path) -> int:
    answer = _stet(tree, ws, "resident", "--status")
    assert answer.returncode == 0, (answer.stdout, answer.stderr)
    return int(answer.stdout.split(": ", 1)[1].split()[0])


def test_a_new_decision_kind_touches_only_the_files_the_walk_lists(tmp_path: Path) -> None:
    walk = _walk("A new decision kind")
    listed = set(re.findall(r"`(server/stet/[\w/]+\.py)`", walk))
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "server", tree / "server", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for path, anchor, replacement in DEFER:
        source = (tree / path).read_text()
        assert source.count(anchor) == 1, f"the walk's edit of {path} no longer finds {anchor!r}"
        (tree / path).write_text(source.replace(anchor, replacement))
    edited = {path for path, _, _ in DEFER}
    assert edited <= listed, f"the walk does not list {sorted(edited - listed)}"

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("a\nb\nc\n")
    try:
        assert _stet(tree, ws, "init").returncode == 0
        patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        proposed = _stet(tree, ws, "propose", "--json", "--patch", "-", stdin=patch)
        assert proposed.returncode == 0, proposed.stderr
        hunk = json.loads(proposed.stdout)["hunks"][0]["id"]

        help_text = _stet(tree, ws, "defer", "--help")
        assert help_text.returncode == 0 and "set hunks aside" in help_text.stdout
        before = _resident_calls(tree, ws)
        deferred = _stet(tree, ws, "defer", "--json", hunk)
        assert deferred.returncode == 0, deferred.stderr
        assert json.loads(deferred.stdout)["hunks"][0]["status"] == "deferred"
        assert _resident_calls(tree, ws) > before  # routed through the resident, as the walk says
        status = json.loads(_stet(tree, ws, "status", "--json").stdout)
        assert status["counts"]["deferred"] == 1 and status["hunks"][0]["status"] == "deferred"
        assert (ws / "f.txt").read_text() == "a\nb\nc\n"  # a decision that changes no file
        undone = _stet(tree, ws, "undo", "--json", hunk)
        assert json.loads(undone.stdout)["hunks"][0]["status"] == "pending", undone.stderr
        assert _stet(tree, ws, "defer", "--json", "--file", "f.txt").returncode == 0
        assert json.loads(_stet(tree, ws, "status", "--json").stdout)["counts"]["deferred"] == 1

        server = RawServer(ws, env={"PYTHONPATH": str(tree / "server")})
        try:
            caps = server.initialize()["capabilities"]
            commands = set(caps["executeCommandProvider"]["commands"])
            assert {"stet.defer", "stet.deferFile", "stet.deferAll"} <= commands
        finally:
            server.stop()
    finally:
        _stet(tree, ws, "resident", "--stop")  # the copied server's resident
