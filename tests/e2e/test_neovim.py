"""A review in real Neovim (Debian's 0.7.2 or newer), headless, with its built-in LSP client.

Skipped only where no `nvim` is installed and STET_REQUIRE_NEOVIM is unset; .ci/run
installs Neovim and sets it, so in CI a missing Neovim fails instead of skipping."""

import os
import shutil
import subprocess
import sys

import pytest

from support.harness import read, write

A_TEXT = "".join(f"line {i}\n" for i in range(1, 11))
SCRIPT = os.path.join(os.path.dirname(__file__), "editors", "neovim_review.lua")


@pytest.mark.skipif(
    shutil.which("nvim") is None and not os.environ.get("STET_REQUIRE_NEOVIM"), reason="Neovim is not installed"
)
def test_review_in_real_neovim(ws, tmp_path):
    write(ws / "a.py", A_TEXT)
    out = tmp_path / "result.txt"
    env = {
        **os.environ,
        "STET_PYTHON": sys.executable,
        "STET_ROOT": str(ws),
        "STET_FILE": str(ws / "a.py"),
        "STET_OUT": str(out),
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-c", f"luafile {SCRIPT}"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,  # (each wait inside is bounded too; pytest's own limit is 300 s)
    )
    result = out.read_text() if out.exists() else proc.stdout + proc.stderr
    assert proc.returncode == 0 and result.startswith("ok"), result
    assert "accept answered: applied" in result and "reject answered: rejected" in result
    # Neovim applied the accepted hunk to its buffer and wrote it; the rejected one is untouched.
    assert read(ws / "a.py") == A_TEXT.replace("line 2\n", "TWO\n")
