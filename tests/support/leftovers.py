"""What a test's `stet run --worktree` leaves in the temporary folder: the worktrees it kept for
the developer (`stet-run-*`), which a test must remove as the user is told to. A worktree whose
repository is under this session's base folder is this suite's (other jobs on the machine have
their own): found after each test, removed without running git in it (its checkout may hold an
agent's planted attributes), and its registration pruned from its repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def ours(base: Path) -> list[tuple[Path, Path | None]]:
    """(worktree folder, its repository or None when gone) of each `stet-run-*` worktree in the
    temporary folder whose git folder is under `base`."""
    base_real = os.path.realpath(base) + os.sep
    out = []
    for folder in Path(tempfile.gettempdir()).glob("stet-run-*"):
        try:
            link = (folder / ".git").read_text()
        except OSError:
            continue
        gitdir = os.path.realpath(link.removeprefix("gitdir: ").strip())
        if not gitdir.startswith(base_real):
            continue
        common = Path(gitdir).parent.parent  # <repo>/.git/worktrees/NAME -> <repo>/.git
        out.append((folder, common if common.is_dir() else None))
    return out


def remove(folder: Path, common: Path | None) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if common is not None:
        subprocess.run(
            [
                "git",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false",
                f"--git-dir={common}",
                "worktree",
                "prune",
            ],
            capture_output=True,
            env={**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_CONFIG_NOSYSTEM": "1"},
        )
