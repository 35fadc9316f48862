"""A review in real Emacs + eglot (Debian's emacs-nox 28 and elpa-eglot 1.9), configured as
the README says: diagnostics, accept through a code action (applied once in the file, never
stale although eglot sends its didChange only when Emacs is idle), reject, restart.

Skipped where Emacs or eglot is missing, unless STET_REQUIRE_EMACS is set (CI sets it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.clitools import stet_json
from support.figures import FIGURES
from support.harness import read, write

HERE = Path(__file__).parent / "editors"
BASE = "".join(f"line_{i} = {i}\n" for i in range(1, 13))
DIFF = (
    "--- a/app.py\n+++ b/app.py\n"
    "@@ -2 +2 @@\n-line_2 = 2\n+line_2 = 'two'\n"
    "@@ -6 +6 @@\n-line_6 = 6\n+line_6 = 'six'\n"
    "@@ -10 +10 @@\n-line_10 = 10\n+line_10 = 'ten'\n"
)


def _emacs_with_eglot() -> bool:
    if not shutil.which("emacs"):
        return False
    p = subprocess.run(["emacs", "--batch", "--eval", "(require 'eglot)"], capture_output=True, timeout=60)
    return p.returncode == 0


pytestmark = pytest.mark.skipif(
    not os.environ.get("STET_REQUIRE_EMACS") and not _emacs_with_eglot(), reason="Emacs with eglot not installed"
)


def test_review_in_real_emacs_with_eglot(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "app.py", BASE)
    hunks = stet_json("propose", "--patch", "-", "--id", "p1", cwd=ws, input=DIFF)["hunks"]
    assert len(hunks) == 3
    out = tmp_path / "emacs.jsonl"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # `stet` as installed
        "STET_EMACS_OUT": str(out),
        "HOME": str(tmp_path),  # no user init of the machine's
    }
    p = subprocess.run(
        ["emacs", "--batch", "-l", str(HERE / "eglot_init.el"), "-l", str(HERE / "eglot_review.el")],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,  # (each wait inside is bounded too; pytest's own limit is 300 s)
    )
    seen = {}
    for line in out.read_text().splitlines() if out.exists() else []:
        item = json.loads(line)
        seen[item["key"]] = item["value"]
    assert "error" not in seen and seen.get("done"), (seen, p.stdout[-3000:], p.stderr[-3000:])
    assert seen["connected"] is True
    assert seen["diagnostics-before"] == 3 and seen["lines"] == [2, 6, 10]
    assert seen["diagnostics-after-accept"] == 2 and seen["diagnostics-after-reject"] == 1
    assert seen["diagnostics-after-restart"] == 1
    states = {h["id"]: h for h in stet_json("status", "--all", cwd=ws)["hunks"]}
    first, second, third = (states[h["id"]] for h in hunks)
    assert first["status"] == "applied" and first["inFile"] is True, first  # never stale
    assert [second["status"], third["status"]] == ["rejected", "pending"] or [
        second["status"],
        third["status"],
    ] == ["pending", "rejected"]
    text = read(ws / "app.py")
    assert text == BASE.replace("line_2 = 2\n", "line_2 = 'two'\n") and text.count("'two'") == 1
    FIGURES["emacs accept (code action to answer)"] = f"{seen['ms:Stet: accept this change']} ms"
